//! The issue tracker of tests/fixtures/django_drf, as its tests seed it: the rows (users,
//! the caller's token, groups and permissions, projects, milestones, labels, issues) and
//! the rules they follow, which the tests compute their truth from. Shared by
//! tests/django_drf.rs (the API alone) and tests/support/survey_app.rs (the whole web app).

use super::TestDb;
use super::django::Site;

/// The caller's token (DRF's authtoken, user 1), sent as `Authorization: Token …`.
pub const TOKEN: &str = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b";

/// Users 1 to 10; user 1 calls the API.
pub const USERS: i64 = 10;
pub const PROJECTS: i64 = 8;
/// Issues 1 to 20,000, 20 to a milestone; the milestones of a project follow each other
/// in turn.
pub const ISSUES: i64 = 20_000;
pub const PER_MILESTONE: i64 = 20;
pub const MILESTONES: i64 = ISSUES / PER_MILESTONE;
/// Labels on every 40th issue, and a second one on every 400th: 550 rows of the issues'
/// labels, a few pages, never written, as the labels themselves.
pub const LABELS: i64 = 12;
pub const LABEL_EVERY: i64 = 40;
pub const SECOND_LABEL_EVERY: i64 = 400;
/// The caller is the assignee of every 375th issue.
pub const MINE_EVERY: i64 = 375;
/// Models of a billing app: 4 permissions each (add, change, delete, view). Group
/// `reporters` holds their view permissions and `tracker.view_issue`, `developers` all of
/// them; the caller is in both.
pub const BILLING_MODELS: i64 = 75;
/// DRF's PAGE_SIZE in the site's settings.
pub const PAGE_SIZE: i64 = 20;

pub fn is_open(issue: i64) -> bool {
    issue % 2 == 1
}

pub fn labels_of(issue: i64) -> i64 {
    i64::from(issue % LABEL_EVERY == 0) + i64::from(issue % SECOND_LABEL_EVERY == 0)
}

pub fn is_mine(issue: i64) -> bool {
    issue % MINE_EVERY == 0
}

pub fn milestone_of(issue: i64) -> i64 {
    (issue - 1) / PER_MILESTONE + 1
}

pub fn project_of(issue: i64) -> i64 {
    (milestone_of(issue) - 1) % PROJECTS + 1
}

/// The caller's issues, newest first.
pub fn my_issues() -> Vec<i64> {
    (1..=ISSUES).rev().filter(|&g| is_mine(g)).collect()
}

/// Permission rows the caller's groups give: the join returns one row per group
/// holding a permission, so the 75 billing view permissions come twice.
pub fn group_permission_rows() -> i64 {
    (BILLING_MODELS + 1) + BILLING_MODELS * 4
}

/// The users, the caller's token, groups and permissions.
fn auth_rows() -> String {
    format!(
        "INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name,
                                email, is_staff, is_active, date_joined)
           SELECT g, '!', false, 'user' || g, '', '', 'user' || g || '@example.com', false,
                  true, '2024-01-01'
           FROM generate_series(1, {USERS}) g;
         INSERT INTO authtoken_token (key, user_id, created)
           VALUES ('{TOKEN}', 1, '2024-01-01');
         INSERT INTO django_content_type (app_label, model)
           SELECT 'billing', 'model' || g FROM generate_series(1, {BILLING_MODELS}) g;
         INSERT INTO auth_permission (name, content_type_id, codename)
           SELECT 'Can ' || a || ' ' || ct.model, ct.id, a || '_' || ct.model
           FROM django_content_type ct, unnest(ARRAY['add', 'change', 'delete', 'view']) a
           WHERE ct.app_label = 'billing';
         INSERT INTO auth_group (id, name) VALUES (1, 'reporters'), (2, 'developers');
         INSERT INTO auth_group_permissions (group_id, permission_id)
           SELECT 1, p.id FROM auth_permission p
           JOIN django_content_type ct ON ct.id = p.content_type_id
           WHERE (ct.app_label = 'billing' AND p.codename LIKE 'view\\_%')
              OR (ct.app_label = 'tracker' AND p.codename = 'view_issue');
         INSERT INTO auth_group_permissions (group_id, permission_id)
           SELECT 2, p.id FROM auth_permission p
           JOIN django_content_type ct ON ct.id = p.content_type_id
           WHERE ct.app_label = 'billing';
         INSERT INTO auth_user_groups (user_id, group_id) VALUES (1, 1), (1, 2);"
    )
}

/// The tracker's projects, milestones, labels and issues, by the rules of the functions
/// above.
fn tracker_rows() -> String {
    format!(
        "INSERT INTO tracker_project (id, key, name)
           SELECT g, 'P' || g, 'Project ' || g FROM generate_series(1, {PROJECTS}) g;
         INSERT INTO tracker_milestone (id, project_id, title)
           SELECT m, (m - 1) % {PROJECTS} + 1, 'Milestone ' || m
           FROM generate_series(1, {MILESTONES}) m;
         INSERT INTO tracker_label (id, name, color)
           SELECT g, 'label ' || g, '#2e7d32' FROM generate_series(1, {LABELS}) g;
         INSERT INTO tracker_issue (id, project_id, milestone_id, assignee_id, title, status,
                                    created)
           SELECT g, ((g - 1) / {PER_MILESTONE}) % {PROJECTS} + 1, (g - 1) / {PER_MILESTONE} + 1,
                  CASE WHEN g % {MINE_EVERY} = 0 THEN 1 ELSE g % ({USERS} - 1) + 2 END,
                  'Issue ' || g, CASE WHEN g % 2 = 1 THEN 'open' ELSE 'closed' END,
                  '2024-01-01'::timestamptz + g * interval '1 hour'
           FROM generate_series(1, {ISSUES}) g;
         INSERT INTO tracker_issue_labels (issue_id, label_id)
           SELECT g, (g / {LABEL_EVERY}) % {LABELS} + 1
           FROM generate_series({LABEL_EVERY}, {ISSUES}, {LABEL_EVERY}) g
           UNION ALL
           SELECT g, (g / {LABEL_EVERY} + 5) % {LABELS} + 1
           FROM generate_series({SECOND_LABEL_EVERY}, {ISSUES}, {SECOND_LABEL_EVERY}) g;"
    )
}

/// Creates the site's database, Django's tables (`manage.py migrate`) and the rows, then
/// `extra` (SQL the caller adds); checks a few counts against the rules above, and empties
/// pg_stat_statements. Returns a connection to the site's database.
pub async fn seed(site: &Site, db: &TestDb, extra: &str) -> tokio_postgres::Client {
    let tracker = site.create_database(db).await;
    tracker.batch_execute(&auth_rows()).await.unwrap();
    tracker.batch_execute(&tracker_rows()).await.unwrap();
    tracker.batch_execute(extra).await.unwrap();
    tracker.batch_execute("VACUUM ANALYZE").await.unwrap();
    let count = async |sql: &str| -> i64 { tracker.query_one(sql, &[]).await.unwrap().get(0) };
    let mine = "SELECT count(*) FROM tracker_issue WHERE assignee_id = 1";
    assert_eq!(count(mine).await, my_issues().len() as i64);
    let labelled = "SELECT count(*) FROM tracker_issue_labels";
    assert_eq!(
        count(labelled).await,
        (1..=ISSUES).map(labels_of).sum::<i64>()
    );
    let permissions = "SELECT count(*) FROM auth_group_permissions";
    assert_eq!(count(permissions).await, group_permission_rows());
    // The count of the caller's issues above has the queryid of the view's own count
    // (aliases and quotes aside): pg_stat_statements would keep the test's text for it.
    (tracker.batch_execute("SELECT pg_stat_statements_reset()"))
        .await
        .unwrap();
    tracker
}
