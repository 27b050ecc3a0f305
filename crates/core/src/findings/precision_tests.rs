//! The shapes of issue 34 on hand-built reports: batch loads keyed by the page and empty
//! tables are no cache candidates, and the new kinds (`session_setup_per_checkout`,
//! `count_per_page`, `per_row_subquery`) fire on their pattern and stay quiet on the
//! look-alikes.

use super::tests::{report, stmt, table};
use super::*;
use crate::report::Report;

fn of_kind(report: &Report, kind: FindingKind) -> Vec<Finding> {
    analyze(&Inputs::of(report), &Thresholds::default())
        .into_iter()
        .filter(|f| f.kind == kind)
        .collect()
}

// cache_candidate ---------------------------------------------------------------------------

/// A page of devices (Django), and its racks prefetched by the page's rack ids.
const DEVICES_PAGE: &str = r#"SELECT "dcim_device"."id", "dcim_device"."name", "dcim_device"."rack_id" FROM "dcim_device" ORDER BY "dcim_device"."name" ASC LIMIT 50"#;

#[test]
fn a_prefetch_by_the_pages_ids_is_no_cache_candidate() {
    let prefetches = [
        r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE "dcim_rack"."id" IN ($1, $2, $3, $4)"#,
        r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE "dcim_rack"."id" = ANY($1)"#,
        r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE "dcim_rack"."id" IN ($1)"#,
        // Django 6.1's row constructors, of one column and of two.
        r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE ("dcim_rack"."id") IN (($1), ($2), ($3), ($4))"#,
        r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE ("dcim_rack"."id", "dcim_rack"."site_id") IN (($1, $2), ($3, $4))"#,
    ];
    for prefetch in prefetches {
        let r = report(
            vec![stmt(DEVICES_PAGE, 1.0, 50.0), stmt(prefetch, 1.0, 4.0)],
            vec![
                table("public.dcim_device", 100),
                table("public.dcim_rack", 1),
            ],
        );
        assert!(
            of_kind(&r, FindingKind::CacheCandidate).is_empty(),
            "{prefetch}"
        );
    }
}

#[test]
fn a_list_of_one_key_written_as_equality_is_a_batch_load_too() {
    // ActiveRecord: `IN (...)` for several keys, `= $1` for one, in the same window.
    let one = r#"SELECT "labels".* FROM "labels" WHERE "labels"."id" = $1"#;
    let many = r#"SELECT "labels".* FROM "labels" WHERE "labels"."id" IN ($1, $2)"#;
    let r = report(
        vec![stmt(one, 1.0, 1.0), stmt(many, 0.5, 2.0)],
        vec![table("public.labels", 1)],
    );
    assert!(of_kind(&r, FindingKind::CacheCandidate).is_empty());
}

#[test]
fn a_lookup_by_id_after_a_page_that_holds_its_key_is_keyed_by_the_page() {
    let page = r#"SELECT "issues".* FROM "issues" ORDER BY "issues"."id" DESC LIMIT $1"#;
    let milestone = r#"SELECT "milestones".* FROM "milestones" WHERE "milestones"."id" = $1"#;
    let r = report(
        vec![stmt(page, 1.0, 25.0), stmt(milestone, 1.0, 1.0)],
        vec![table("public.issues", 100), table("public.milestones", 1)],
    );
    assert!(of_kind(&r, FindingKind::CacheCandidate).is_empty());
    // Without the page, the same lookup is reference data.
    let r = report(
        vec![stmt(milestone, 1.0, 1.0)],
        vec![table("public.milestones", 1)],
    );
    assert_eq!(of_kind(&r, FindingKind::CacheCandidate).len(), 1);
}

#[test]
fn a_lookup_keyed_by_the_token_before_a_page_filtered_by_it_is_no_batch_load() {
    // The demo's tenant, by the token's tenant; the page is the tenant's, so its tenant_id
    // never chose which tenant was read.
    let page = "SELECT id, name, tenant_id FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2";
    let tenant = "SELECT id, status FROM tenants WHERE id = $1";
    let r = report(
        vec![stmt(page, 1.0, 20.0), stmt(tenant, 1.0, 1.0)],
        vec![table("public.projects", 100), table("public.tenants", 1)],
    );
    let found = of_kind(&r, FindingKind::CacheCandidate);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].query.as_deref(), Some(tenant));
}

#[test]
fn a_lookup_by_another_key_beside_a_page_stays_a_cache_candidate() {
    let page = "SELECT id, title FROM events ORDER BY id DESC LIMIT 20";
    let rate = "SELECT rate FROM currencies WHERE code = $1";
    let r = report(
        vec![stmt(page, 1.0, 20.0), stmt(rate, 1.0, 1.0)],
        vec![table("public.events", 100), table("public.currencies", 1)],
    );
    let found = of_kind(&r, FindingKind::CacheCandidate);
    assert_eq!(found.len(), 1, "{found:#?}");
    let why = &found[0].evidence;
    assert_eq!(why["largest_table_pages"], 1.0);
    assert_eq!(why["smallest_table_live_rows"], 50.0);
    assert_eq!(why["rows_written_per_request"], 0.0);
    assert_eq!(why["keys_from_the_page"], 0.0);
    assert_eq!(why["rows_per_call"], 1.0);
}

#[test]
fn an_empty_table_or_a_read_that_finds_nothing_is_no_evidence() {
    let tags = "SELECT tag FROM article_tags WHERE article_id = $1";
    let mut empty = table("public.article_tags", 0);
    empty.live_rows = 0;
    let r = report(vec![stmt(tags, 1.0, 0.0)], vec![empty]);
    assert!(of_kind(&r, FindingKind::CacheCandidate).is_empty());
    // Rows in the table, but the read returns none: nothing to cache.
    let r = report(
        vec![stmt(tags, 1.0, 0.0)],
        vec![table("public.article_tags", 1)],
    );
    assert!(of_kind(&r, FindingKind::CacheCandidate).is_empty());
}

// session_setup_per_checkout ------------------------------------------------------------------

const SEARCH_PATH: &str = r#"SET search_path TO "app", public"#;
const TIMEOUT: &str = "SET statement_timeout = $1";

/// Lookups of the request, one per table, each once per request.
fn lookups(n: usize) -> (Vec<crate::report::StatementRow>, Vec<TableRow>) {
    let names = ["tenants", "members", "flags", "quotas", "plans", "projects"];
    let statements = names[..n]
        .iter()
        .map(|t| stmt(&format!("SELECT id FROM {t} WHERE owner_id = $1"), 1.0, 1.0))
        .collect();
    let tables = names[..n]
        .iter()
        .map(|t| table(&format!("public.{t}"), 100))
        .collect();
    (statements, tables)
}

#[test]
fn settings_sent_on_every_checkout_are_named_with_their_round_trips() {
    // TypeORM with a schema and a timeout: two SETs on each of two checkouts.
    let (mut statements, tables) = lookups(3);
    statements.push(stmt(SEARCH_PATH, 2.0, 0.0));
    statements.push(stmt(TIMEOUT, 2.0, 0.0));
    let r = report(statements, tables);
    let found = analyze(&Inputs::of(&r), &Thresholds::default());
    let kinds: Vec<FindingKind> = found.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::SessionSetupPerCheckout], "{found:#?}");
    let f = &found[0];
    assert_eq!(f.saves_per_request.statements, 4.0);
    assert_eq!(f.round_trips_per_request, 4.0);
    assert_eq!(f.severity, Severity::High);
    assert_eq!(f.query, None, "two texts");
    assert_eq!(f.evidence["session_settings_per_request"], 4.0);
    assert_eq!(f.evidence["distinct_settings"], 2.0);
    assert_eq!(f.evidence["statements_per_request"], 7.0);
    for advice in ["ALTER ROLE", "connection init", "options=-c search_path"] {
        assert!(f.suggestion.contains(advice), "{advice}: {}", f.suggestion);
    }
    assert!(
        f.suggestion
            .contains("SET statement_timeout = $1 (2 per request)")
    );
}

#[test]
fn round_trips_leave_the_settings_out_of_their_count_and_advice() {
    let (mut statements, tables) = lookups(5);
    statements.push(stmt(SEARCH_PATH, 1.0, 0.0));
    statements.push(stmt(TIMEOUT, 1.0, 0.0));
    let found = analyze(
        &Inputs::of(&report(statements, tables)),
        &Thresholds::default(),
    );
    let trips = found
        .iter()
        .find(|f| f.kind == FindingKind::RoundTrips)
        .expect("five lookups");
    assert_eq!(trips.evidence["statements_per_request"], 5.0);
    assert_eq!(trips.evidence["session_settings_per_request"], 2.0);
    assert_eq!(trips.evidence["utility_statements_per_request"], 0.0);
    assert!(!trips.suggestion.contains("SET search_path"));
    assert!(
        trips
            .suggestion
            .contains("besides 2 session settings sent per checkout")
    );
    let setup = found
        .iter()
        .find(|f| f.kind == FindingKind::SessionSetupPerCheckout)
        .unwrap();
    assert_eq!(setup.saves_per_request.statements, 2.0);
}

#[test]
fn transaction_identity_rare_and_per_connection_settings_are_no_checkout_set_up() {
    let cases = [
        stmt("SET LOCAL statement_timeout = '2s'", 1.0, 0.0),
        stmt("SET app.tenant_id = $1", 1.0, 0.0),
        stmt("SET ROLE tenant_42", 1.0, 0.0),
        // Once per connection: a connection recycled every ten requests.
        stmt(SEARCH_PATH, 0.1, 0.0),
    ];
    for setting in cases {
        let query = setting.query.clone();
        let (mut statements, tables) = lookups(1);
        statements.push(setting);
        let r = report(statements, tables);
        assert!(
            of_kind(&r, FindingKind::SessionSetupPerCheckout).is_empty(),
            "{query}"
        );
    }
    // A connection per request: its set-up is connection_per_request's.
    let (mut statements, tables) = lookups(1);
    statements.push(stmt(SEARCH_PATH, 1.0, 0.0));
    let mut r = report(statements, tables);
    r.per_request.new_sessions = Some(1.0);
    assert!(of_kind(&r, FindingKind::SessionSetupPerCheckout).is_empty());
}

// count_per_page ------------------------------------------------------------------------------

const NOTES_PAGE: &str = r#"SELECT "notes".* FROM "notes" WHERE "notes"."user_id" = $1 ORDER BY "notes"."created_at" DESC LIMIT $2 OFFSET $3"#;
const NOTES_COUNT: &str = r#"SELECT COUNT(*) FROM "notes" WHERE "notes"."user_id" = $1"#;

/// The notes table, its rows read per request: `seq` by sequential scans, `fetched` through
/// its indexes.
fn notes(seq: f64, fetched: f64) -> TableRow {
    let mut notes = table("public.notes", 200);
    notes.seq_rows_read = seq;
    notes.seq_scans = 1.0;
    notes.idx_rows_fetched = fetched;
    notes
}

#[test]
fn an_exact_count_beside_every_page_is_count_per_page() {
    // ActiveRecord's page and its count: the count scans 4,000 rows, the page fetches 20.
    let r = report(
        vec![stmt(NOTES_PAGE, 1.0, 20.0), stmt(NOTES_COUNT, 1.0, 1.0)],
        vec![notes(4000.0, 20.0)],
    );
    let found = of_kind(&r, FindingKind::CountPerPage);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.query.as_deref(), Some(NOTES_COUNT));
    assert_eq!(f.table.as_deref(), Some("public.notes"));
    assert_eq!(f.evidence["counted_rows_read_per_request"], 2000.0);
    assert_eq!(f.evidence["table_rows_read_per_request"], 4020.0);
    assert_eq!(f.evidence["page_rows_per_request"], 20.0);
    assert_eq!(f.saves_per_request.rows_read, 2000.0);
    assert_eq!(f.saves_per_request.db_time_ms, 0.1);
    assert_eq!(f.severity, Severity::High);
    for advice in ["keyset pagination", "estimated count", "first page"] {
        assert!(f.suggestion.contains(advice), "{advice}");
    }
}

#[test]
fn a_scan_the_named_count_makes_is_left_to_count_per_page() {
    // knex: the page goes through an index, the count of half the table scans it whole.
    let pages = |scans: f64| {
        let mut notes = notes(4000.0 * scans, 20.0);
        notes.seq_scans = scans;
        report(
            vec![stmt(NOTES_PAGE, 1.0, 20.0), stmt(NOTES_COUNT, 1.0, 1.0)],
            vec![notes],
        )
    };
    let r = pages(1.0);
    assert_eq!(of_kind(&r, FindingKind::CountPerPage).len(), 1);
    assert!(of_kind(&r, FindingKind::SeqScanHeavy).is_empty());
    // Two scans per request: the count makes one at most, the other is seq_scan_heavy's.
    let r = pages(2.0);
    assert_eq!(of_kind(&r, FindingKind::CountPerPage).len(), 1);
    assert_eq!(of_kind(&r, FindingKind::SeqScanHeavy).len(), 1);
}

#[test]
fn a_count_over_a_subquery_of_the_pages_filter_is_count_per_page() {
    // Flask-SQLAlchemy's paginate counts a subquery with the page's filter.
    let count = "SELECT count(*) AS count_1 FROM (SELECT orders.id AS orders_id, orders.total AS orders_total FROM orders WHERE orders.customer_id = $1) AS anon_1";
    let page = "SELECT orders.id AS orders_id, orders.total AS orders_total FROM orders WHERE orders.customer_id = $1 ORDER BY orders.id DESC LIMIT $2 OFFSET $3";
    let mut orders = table("public.orders", 400);
    orders.idx_rows_fetched = 12_020.0;
    let r = report(
        vec![stmt(count, 1.0, 1.0), stmt(page, 1.0, 20.0)],
        vec![orders],
    );
    let found = of_kind(&r, FindingKind::CountPerPage);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].saves_per_request.rows_read, 6000.0);
    // Vacuumed, the count is an index-only scan of (customer_id, id): it fetches no heap
    // row, and reads 6,000 index entries; the page, through the same index, 20 more.
    let mut orders = table("public.orders", 400);
    orders.idx_rows_fetched = 20.0;
    orders.idx_entries_read = 6_020.0;
    let r = report(
        vec![stmt(count, 1.0, 1.0), stmt(page, 1.0, 20.0)],
        vec![orders],
    );
    let found = of_kind(&r, FindingKind::CountPerPage);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].saves_per_request.rows_read, 3000.0);
}

#[test]
fn other_filters_small_counts_rare_counts_and_grouped_counts_are_no_count_per_page() {
    let all = r#"SELECT COUNT(*) FROM "notes""#;
    let grouped = r#"SELECT "notes"."user_id", COUNT(*) FROM "notes" WHERE "notes"."user_id" = $1 GROUP BY "notes"."user_id""#;
    let cases = [
        (stmt(all, 1.0, 1.0), notes(4000.0, 20.0)),
        (stmt(grouped, 1.0, 1.0), notes(4000.0, 20.0)),
        (stmt(NOTES_COUNT, 0.5, 1.0), notes(4000.0, 20.0)),
        // 40 notes counted: cheap.
        (stmt(NOTES_COUNT, 1.0, 1.0), notes(40.0, 20.0)),
    ];
    for (count, notes) in cases {
        let query = count.query.clone();
        let r = report(vec![stmt(NOTES_PAGE, 1.0, 20.0), count], vec![notes]);
        assert!(of_kind(&r, FindingKind::CountPerPage).is_empty(), "{query}");
    }
    // No page beside it: a dashboard's figure.
    let r = report(vec![stmt(NOTES_COUNT, 1.0, 1.0)], vec![notes(4000.0, 0.0)]);
    assert!(of_kind(&r, FindingKind::CountPerPage).is_empty());
}

// per_row_subquery: see plan_rules_tests.rs (judged from the plans).

// collection_to_boolean on auth steps ------------------------------------------------------

/// The key owner's scopes as TypeORM loads them: the ORM adds `id IN ($3)`.
const SCOPES: &str = r#"SELECT "Scope"."id" AS "Scope_id", "Scope"."name" AS "Scope_name" FROM "api_key_scopes" "Scope" WHERE "Scope"."key_id" = $1 AND "Scope"."active" = $2 AND "Scope"."owner_id" IN ($3)"#;
/// A page of tasks, the endpoint's own rows.
const TASKS_PAGE: &str =
    r#"SELECT "t"."id", "t"."title" FROM "tasks" "t" ORDER BY "t"."id" DESC LIMIT 25"#;

#[test]
fn an_auth_step_loading_a_constant_collection_is_named_whatever_its_in_list() {
    let r = report(
        vec![stmt(TASKS_PAGE, 1.0, 25.0), stmt(SCOPES, 1.0, 186.0)],
        vec![
            table("public.tasks", 100),
            table("public.api_key_scopes", 20),
        ],
    );
    let found = of_kind(&r, FindingKind::CollectionToBoolean);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].query.as_deref(), Some(SCOPES));
    assert_eq!(found[0].evidence["rows_per_call"], 186.0);
    assert_eq!(found[0].saves_per_request.rows_returned, 185.0);
}

#[test]
fn an_auth_step_is_named_however_many_items_the_response_lists() {
    // TypeORM's relation load of the key owner's role with its 186 scopes, as a list of
    // one key or a row constructor, beside a page of 100 workflows the response lists.
    let scopes = r#"SELECT "Role"."id" AS "Role_id", "scopes"."slug" AS "scopes_slug" FROM "role" "Role" LEFT JOIN "role_scope" "rs" ON "rs"."roleSlug" = "Role"."slug" LEFT JOIN "scope" "scopes" ON "scopes"."slug" = "rs"."scopeSlug" WHERE (("Role"."id" IN ($1)))"#;
    let page = r#"SELECT "w"."id", "w"."name" FROM "workflow_entity" "w" ORDER BY "w"."updatedAt" DESC LIMIT $1"#;
    for scopes in [scopes.to_string(), scopes.replace("IN ($1)", "IN (($1))")] {
        let mut r = report(
            vec![stmt(page, 1.0, 100.0), stmt(&scopes, 1.0, 186.0)],
            vec![
                table("public.workflow_entity", 20),
                table("public.role", 1),
                table("public.role_scope", 2),
                table("public.scope", 2),
            ],
        );
        r.load.response_items = Some(100);
        let found = of_kind(&r, FindingKind::CollectionToBoolean);
        assert_eq!(found.len(), 1, "{scopes}: {found:#?}");
        assert_eq!(found[0].evidence["rows_per_call"], 186.0);
    }
    // A list of two roles' keys beside the page may be the page's: still exempt.
    let two = scopes.replace("IN ($1)", "IN (($1), ($2))");
    let mut r = report(
        vec![stmt(page, 1.0, 100.0), stmt(&two, 1.0, 186.0)],
        vec![table("public.workflow_entity", 20), table("public.role", 1)],
    );
    r.load.response_items = Some(100);
    assert!(of_kind(&r, FindingKind::CollectionToBoolean).is_empty());
}

#[test]
fn a_batch_load_by_a_key_list_stays_exempt_outside_auth_and_beside_the_page() {
    // Tags of the page's tasks: a batch load, not an auth step.
    let tags = r#"SELECT "tags"."id", "tags"."name", "tags"."task_id" FROM "tags" WHERE "tags"."task_id" IN ($1, $2, $3)"#;
    // The roles of a page of 25 users, prefetched by their ids: a list of several keys.
    let roles = r#"SELECT "roles"."id", "roles"."user_id" FROM "roles" WHERE "roles"."user_id" IN ($1, $2, $3)"#;
    let users = r#"SELECT "u"."id", "u"."name" FROM "users" "u" ORDER BY "u"."id" LIMIT 25"#;
    let r = once_each(&[
        (TASKS_PAGE, 25.0, "public.tasks", 100),
        (tags, 60.0, "public.tags", 20),
        (users, 25.0, "public.users", 20),
        (roles, 40.0, "public.roles", 5),
    ]);
    assert!(
        of_kind(&r, FindingKind::CollectionToBoolean).is_empty(),
        "{:#?}",
        of_kind(&r, FindingKind::CollectionToBoolean)
    );
    // The same scopes load on every other request only is no per-request auth step.
    let r = report(
        vec![stmt(TASKS_PAGE, 1.0, 25.0), stmt(SCOPES, 0.5, 186.0)],
        vec![
            table("public.tasks", 100),
            table("public.api_key_scopes", 20),
        ],
    );
    assert!(of_kind(&r, FindingKind::CollectionToBoolean).is_empty());
}

#[test]
fn an_auth_step_keyed_by_the_users_roles_is_named_where_no_page_could_feed_its_list() {
    // Sequelize: the permissions of the user's two roles, then the document asked for.
    let permissions = r#"SELECT "Permission"."id", "Permission"."name" FROM "permissions" AS "Permission" INNER JOIN "role_permissions" AS "RolePermission" ON "Permission"."id" = "RolePermission"."permission_id" WHERE "RolePermission"."role_id" IN ($1, $2)"#;
    let document = r#"SELECT "Document"."id", "Document"."title" FROM "documents" AS "Document" WHERE "Document"."id" = $1"#;
    let r = report(
        vec![stmt(permissions, 1.0, 120.0), stmt(document, 1.0, 1.0)],
        vec![
            table("public.permissions", 2),
            table("public.role_permissions", 2),
            table("public.documents", 20),
        ],
    );
    let found = of_kind(&r, FindingKind::CollectionToBoolean);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].query.as_deref(), Some(permissions));
    assert_eq!(found[0].saves_per_request.rows_returned, 119.0);
    // Beside a page of documents, the same list may hold the page's keys: exempt.
    let page = r#"SELECT "Document"."id", "Document"."title" FROM "documents" AS "Document" ORDER BY "Document"."id" LIMIT 25"#;
    let r = report(
        vec![stmt(permissions, 1.0, 120.0), stmt(page, 1.0, 25.0)],
        vec![
            table("public.permissions", 2),
            table("public.role_permissions", 2),
            table("public.documents", 20),
        ],
    );
    assert!(of_kind(&r, FindingKind::CollectionToBoolean).is_empty());
}

// seq_scan_heavy: the statement behind the runtime scans ------------------------------------

#[test]
fn the_reader_whose_calls_match_the_scans_is_named() {
    // Rails with prepared statements: the page's custom plan scans, its generic plan (the
    // one EXPLAIN shows) does not. Two statements read posts; the page runs as often as
    // the table is scanned.
    let page = r#"SELECT "posts".* FROM "posts" WHERE "posts"."state" = $1 ORDER BY "posts"."published_at" DESC LIMIT $2"#;
    let by_id = r#"SELECT "posts".* FROM "posts" WHERE "posts"."id" = $1 LIMIT $2"#;
    let mut posts = table("public.posts", 300);
    posts.seq_scans = 3.0;
    posts.seq_rows_read = 6_000.0;
    posts.idx_scans = 1.0;
    posts.rows_updated = 1.0;
    let r = report(
        vec![stmt(page, 3.0, 25.0), stmt(by_id, 1.0, 1.0)],
        vec![posts.clone()],
    );
    let found = of_kind(&r, FindingKind::SeqScanHeavy);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].query.as_deref(), Some(page));
    assert_eq!(found[0].evidence["scans_match_calls"], 1.0);
    // When the calls of both readers match, neither is named: the finding carries both
    // readers' tags as one, and their places in the code.
    let tagged = |query, calls, line| {
        let mut row = stmt(query, calls, 1.0);
        row.tags = Some(crate::tags::seen_always("/posts", "app/posts.rb", line, 30));
        row
    };
    let mut r = report(
        vec![tagged(page, 3.0, 12), tagged(by_id, 3.0, 40)],
        vec![posts],
    );
    r.findings = of_kind(&r, FindingKind::SeqScanHeavy);
    locate(&mut r.findings, &r.statements, None);
    let found = &r.findings;
    assert_eq!(found[0].query, None);
    assert!(!found[0].evidence.contains_key("scans_match_calls"));
    let tags = found[0].tags.as_ref().expect("the readers' tags");
    assert_eq!(tags.samples, 60);
    let lines: Vec<u32> = found[0].locations.iter().map(|l| l.line).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.contains(&12) && lines.contains(&40), "{lines:?}");
}

// round_trips: statements by class ----------------------------------------------------------

#[test]
fn round_trips_sorts_its_statements_into_auth_page_batch_loads_and_other_lookups() {
    let session = r#"SELECT "django_session"."session_data" FROM "django_session" WHERE "django_session"."session_key" = $1"#;
    let perms = r#"SELECT "auth_permission"."codename" FROM "auth_permission" WHERE "auth_permission"."id" = $1"#;
    let racks = r#"SELECT "dcim_rack"."id", "dcim_rack"."name" FROM "dcim_rack" WHERE "dcim_rack"."id" IN ($1, $2, $3, $4)"#;
    let tenant = r#"SELECT "tenancy_tenant"."name" FROM "tenancy_tenant" WHERE "tenancy_tenant"."slug" = $1"#;
    let r = once_each(&[
        (session, 1.0, "public.django_session", 10),
        (perms, 1.0, "public.auth_permission", 2),
        (DEVICES_PAGE, 50.0, "public.dcim_device", 100),
        (racks, 4.0, "public.dcim_rack", 1),
        (tenant, 1.0, "public.tenancy_tenant", 1),
    ]);
    let found = of_kind(&r, FindingKind::RoundTrips);
    assert_eq!(found.len(), 1, "{found:#?}");
    let advice = &found[0].suggestion;
    let section = |heading: &str| {
        let start = advice
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading:?} in {advice}"));
        let rest = &advice[start..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
    };
    let auth = section("Auth steps");
    assert!(
        auth.contains("django_session") && auth.contains("auth_permission"),
        "{auth}"
    );
    assert!(!auth.contains("dcim_"), "{auth}");
    let batch = section("Batch loads keyed by the page");
    assert!(
        batch.contains("dcim_rack") && !batch.contains("dcim_device"),
        "{batch}"
    );
    let page = section("The page:");
    assert!(page.contains("dcim_device"), "{page}");
    let other = section("Other lookups");
    assert!(other.contains("tenancy_tenant"), "{other}");
    assert!(!advice.contains("usually auth"), "{advice}");
    // The saving is unchanged: five statements once per request, four avoidable at most.
    assert_eq!(found[0].saves_per_request.statements, 4.0);
}

/// A write request's statements are writes, not lookups: the advice for lookups (collapse
/// those keyed by the same user, merge, cache) is not given about them (issue 50: a CMS's
/// three INSERTs were told to collapse like auth lookups).
#[test]
fn round_trips_give_writes_the_advice_of_writes() {
    let session =
        r#"SELECT "directus_sessions"."user" FROM "directus_sessions" WHERE "token" = $1"#;
    let article = r#"INSERT INTO "articles" ("title", "status") VALUES ($1, $2) RETURNING "id""#;
    let activity = r#"INSERT INTO "directus_activity" ("action", "user", "item") VALUES ($1, $2, $3) RETURNING "id""#;
    let revision = r#"INSERT INTO "directus_revisions" ("activity", "item", "data") VALUES ($1, $2, $3) RETURNING "id""#;
    let settings = r#"SELECT "project_name" FROM "directus_settings" LIMIT $1"#;
    let r = once_each(&[
        (session, 1.0, "public.directus_sessions", 2),
        (article, 1.0, "public.articles", 3),
        (activity, 1.0, "public.directus_activity", 3),
        (revision, 1.0, "public.directus_revisions", 3),
        (settings, 1.0, "public.directus_settings", 1),
    ]);
    let found = of_kind(&r, FindingKind::RoundTrips);
    assert_eq!(found.len(), 1, "{found:#?}");
    let advice = &found[0].suggestion;
    let start = advice
        .find("Writes, each its own round trip")
        .expect(advice);
    let writes = &advice[start..];
    let writes = &writes[..writes.find("\n\n").unwrap_or(writes.len())];
    for table in ["\"articles\"", "directus_activity", "directus_revisions"] {
        assert!(writes.contains(table), "{writes}");
    }
    assert!(writes.contains("multi-row INSERT"), "{writes}");
    let lookups: String = (advice.split("\n\n"))
        .filter(|section| !section.starts_with("Writes"))
        .collect();
    assert!(!lookups.contains("INSERT"), "{advice}");
}

#[test]
fn round_trips_names_the_tenant_that_scopes_the_page_and_the_count_apart() {
    let token = "SELECT user_id FROM api_tokens WHERE token = $1";
    let user = "SELECT id, tenant_id FROM users WHERE id = $1";
    let tenant = "SELECT id, status FROM tenants WHERE id = $1";
    let page = "SELECT id, title FROM events WHERE tenant_id = $1 ORDER BY id DESC LIMIT 20";
    let count = "SELECT count(*) FROM events WHERE tenant_id = $1";
    let r = once_each(&[
        (token, 1.0, "public.api_tokens", 2),
        (user, 1.0, "public.users", 2),
        (tenant, 1.0, "public.tenants", 1),
        (page, 20.0, "public.events", 100),
        (count, 1.0, "public.events", 100),
    ]);
    let found = of_kind(&r, FindingKind::RoundTrips);
    let advice = &found[0].suggestion;
    let section = |heading: &str| {
        let rest = &advice[advice.find(heading).expect(heading)..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
    };
    let scoping = section("The tenant that scopes the page");
    assert!(scoping.contains("FROM tenants"), "{advice}");
    assert!(!section("Auth steps").contains("FROM tenants"), "{advice}");
    assert!(
        !advice.contains("Batch loads keyed by the page"),
        "{advice}"
    );
    assert!(
        section("The page:").contains("FROM events WHERE"),
        "{advice}"
    );
    assert!(
        section("The count of the page").contains("count(*)"),
        "{advice}"
    );
}

/// Each statement once per request with its rows per call, and its table of that many pages.
fn once_each(reads: &[(&str, f64, &str, i64)]) -> Report {
    report(
        (reads.iter())
            .map(|(q, rows, _, _)| stmt(q, 1.0, *rows))
            .collect(),
        (reads.iter())
            .map(|(_, _, t, pages)| table(t, *pages))
            .collect(),
    )
}

// seq_scan_heavy: a small table, or a self-semi-join, blames the query's shape ----------------

/// Django's object permissions: the sites a user may see, as a list of the table's own ids.
const RESTRICTED_SITES: &str = r#"SELECT "dcim_site"."id", "dcim_site"."name" FROM "dcim_site" WHERE "dcim_site"."id" IN (SELECT U0."id" FROM "dcim_site" U0 WHERE U0."tenant_id" = $1) ORDER BY "dcim_site"."name" ASC"#;

fn seq_scanned(name: &str, pages: i64, scans: f64, rows_read: f64) -> TableRow {
    let mut t = table(name, pages);
    t.seq_scans = scans;
    t.seq_rows_read = rows_read;
    t.rows_updated = 1.0; // no cache candidate in the way
    t
}

#[test]
fn a_small_table_read_by_a_self_semi_join_blames_the_shape_not_an_index() {
    // 9 pages, read twice per request (the list and the outer scan), for 5 rows.
    let sites = seq_scanned("public.dcim_site", 9, 2.0, 900.0);
    let r = report(vec![stmt(RESTRICTED_SITES, 1.0, 5.0)], vec![sites]);
    let found = of_kind(&r, FindingKind::SeqScanHeavy);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.evidence["small_table"], 1.0);
    assert_eq!(f.evidence["self_semi_join"], 1.0);
    assert_eq!(f.query.as_deref(), Some(RESTRICTED_SITES));
    assert!(proposes_no_index(f));
    let s = &f.suggestion;
    assert!(s.contains("At 9 pages the table is small"), "{s}");
    assert!(s.contains("a list of its own keys"), "{s}");
    assert!(!s.contains("An index on the columns"), "{s}");
    // The saving stands: the rows read beyond the rows returned.
    assert_eq!(f.saves_per_request.rows_read, 895.0);
}

#[test]
fn a_large_table_behind_a_self_semi_join_gets_both_remedies() {
    let sites = seq_scanned("public.dcim_site", 400, 2.0, 40_000.0);
    let r = report(vec![stmt(RESTRICTED_SITES, 1.0, 5.0)], vec![sites]);
    let f = &of_kind(&r, FindingKind::SeqScanHeavy)[0];
    assert!(!f.evidence.contains_key("small_table"), "{f:#?}");
    assert_eq!(f.evidence["self_semi_join"], 1.0);
    assert!(!proposes_no_index(f));
    assert!(
        f.suggestion.contains("a list of its own keys"),
        "{}",
        f.suggestion
    );
    assert!(
        f.suggestion.contains("An index on the columns"),
        "{}",
        f.suggestion
    );
}

#[test]
fn a_small_table_without_a_self_semi_join_still_blames_the_shape() {
    let q = r#"SELECT "tags"."id" FROM "tags" WHERE lower("tags"."name") = $1 OR "tags"."id" = $2"#;
    let tags = seq_scanned("public.tags", 12, 6.0, 3_600.0);
    let r = report(vec![stmt(q, 6.0, 1.0)], vec![tags]);
    let f = &of_kind(&r, FindingKind::SeqScanHeavy)[0];
    assert_eq!(f.evidence["small_table"], 1.0);
    assert!(!f.evidence.contains_key("self_semi_join"), "{f:#?}");
    assert!(
        f.suggestion.contains("read the table once"),
        "{}",
        f.suggestion
    );
    assert!(
        !f.suggestion.contains("An index on the columns"),
        "{}",
        f.suggestion
    );
    // At the threshold the table is no longer small: the index advice is back.
    let tags = seq_scanned("public.tags", 16, 6.0, 3_600.0);
    let r = report(vec![stmt(q, 6.0, 1.0)], vec![tags]);
    let f = &of_kind(&r, FindingKind::SeqScanHeavy)[0];
    assert!(!proposes_no_index(f), "{f:#?}");
    assert!(
        f.suggestion.contains("An index on the columns"),
        "{}",
        f.suggestion
    );
}

#[test]
fn only_a_list_of_the_same_tables_keys_is_a_self_semi_join() {
    let joins = |sql: &str| {
        (sql::shape(sql).self_semi_joins.iter())
            .map(|r| r.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(joins(RESTRICTED_SITES), ["dcim_site"]);
    // Another table's keys, a negated list, a list of values: none.
    let other = r#"SELECT "a"."id" FROM "a" WHERE "a"."b_id" IN (SELECT "b"."id" FROM "b" WHERE "b"."x" = $1)"#;
    assert!(joins(other).is_empty());
    let negated = r#"SELECT "a"."id" FROM "a" WHERE "a"."id" NOT IN (SELECT "a"."id" FROM "a" WHERE "a"."x" = $1)"#;
    assert!(joins(negated).is_empty());
    assert!(joins(r#"SELECT "a"."id" FROM "a" WHERE "a"."id" IN ($1, $2)"#).is_empty());
    // Nested in the WHERE, and through a join of the outer FROM.
    let nested = r#"SELECT p.id FROM posts p JOIN users u ON u.id = p.user_id WHERE p.state = $1 AND (u.id IN (SELECT id FROM users WHERE org_id = $2) OR p.public)"#;
    assert_eq!(joins(nested), ["users"]);
}
