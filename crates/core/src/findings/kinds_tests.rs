//! The plumbing and page kinds on hand-built reports (`checkout_ping`,
//! `transaction_around_single_read`, `overfetch`, `duplicate_load`), and the page's children
//! that are no `collection_to_boolean`: each fires on its pattern and stays quiet on the
//! look-alikes.

use super::tests::{report, stmt, table};
use super::*;
use crate::report::{Report, StatementRow};

fn kinds(report: &Report) -> Vec<FindingKind> {
    analyze(&Inputs::of(report), &Thresholds::default())
        .iter()
        .map(|f| f.kind)
        .collect()
}

fn only(report: &Report, kind: FindingKind) -> Finding {
    let found = analyze(&Inputs::of(report), &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, kind);
    found[0].clone()
}

const DETAIL: &str = "SELECT id, title FROM events WHERE id = $1";

// checkout_ping -----------------------------------------------------------------------------

#[test]
fn a_ping_per_checkout_is_a_checkout_ping_and_nothing_else() {
    let r = report(
        vec![stmt("SELECT $1", 3.0, 1.0), stmt(DETAIL, 1.0, 1.0)],
        vec![],
    );
    let f = only(&r, FindingKind::CheckoutPing);
    assert_eq!(f.query.as_deref(), Some("SELECT $1"));
    assert_eq!(f.saves_per_request.statements, 3.0);
    assert_eq!(f.severity, Severity::High);
    assert!(
        f.suggestion.contains("connectionTestQuery"),
        "{}",
        f.suggestion
    );

    let once = report(vec![stmt("/* ping */ SELECT $1", 1.0, 1.0)], vec![]);
    let f = only(&once, FindingKind::CheckoutPing);
    assert_eq!(f.severity, Severity::Medium);
    assert_eq!(f.evidence["calls_per_request"], 1.0);
}

#[test]
fn a_rare_ping_or_a_constant_read_is_no_checkout_ping() {
    // A validation interval: one check every ten requests.
    let rare = report(vec![stmt("SELECT $1", 0.1, 1.0)], vec![]);
    assert_eq!(kinds(&rare), []);
    let clock = report(vec![stmt("SELECT now()", 1.0, 1.0)], vec![]);
    assert_eq!(kinds(&clock), []);
}

#[test]
fn round_trips_leave_the_ping_to_its_own_finding() {
    let lookups = [
        "SELECT plan FROM tenants WHERE id = $1",
        "SELECT role FROM members WHERE user_id = $1",
        "SELECT id FROM flags WHERE tenant_id = $1",
        "SELECT id FROM quotas WHERE tenant_id = $1",
    ];
    let mut statements: Vec<_> = lookups.iter().map(|q| stmt(q, 1.0, 1.0)).collect();
    statements.push(stmt("SELECT $1", 4.0, 1.0));
    let tables = ["tenants", "members", "flags", "quotas"]
        .map(|t| table(&format!("public.{t}"), 100))
        .to_vec();
    let found = analyze(
        &Inputs::of(&report(statements, tables)),
        &Thresholds::default(),
    );
    let trips = found
        .iter()
        .find(|f| f.kind == FindingKind::RoundTrips)
        .unwrap();
    assert!(
        !trips.suggestion.contains("SELECT $1"),
        "{}",
        trips.suggestion
    );
    assert_eq!(trips.saves_per_request.statements, 3.0);
    assert_eq!(found[0].kind, FindingKind::CheckoutPing);
}

// transaction_around_single_read --------------------------------------------------------------

/// A report of these statements, with `transactions` per request.
fn in_transactions(statements: Vec<StatementRow>, transactions: f64) -> Report {
    let mut r = report(statements, vec![]);
    r.per_request.transactions = transactions;
    r
}

/// `inside` between a BEGIN and a COMMIT on every request: one transaction per request.
fn one_transaction(inside: &[(&str, f64)]) -> Report {
    let mut statements = vec![stmt("BEGIN", 1.0, 0.0)];
    statements.extend(inside.iter().map(|(q, rows)| stmt(q, 1.0, *rows)));
    statements.push(stmt("COMMIT", 1.0, 0.0));
    in_transactions(statements, 1.0)
}

const TAG: &str = "SELECT name FROM tags WHERE id = $1";

#[test]
fn begin_and_commit_around_one_read_are_two_round_trips() {
    let r = one_transaction(&[(DETAIL, 1.0)]);
    let f = only(&r, FindingKind::TransactionAroundSingleRead);
    assert_eq!(f.saves_per_request.statements, 2.0);
    assert_eq!(f.query.as_deref(), Some(DETAIL));
    assert_eq!(f.evidence["reads_per_transaction"], 1.0);
    assert_eq!(f.severity, Severity::Medium);
    assert!(f.suggestion.contains("autocommit"));

    // SQLAlchemy returns the connection with a ROLLBACK; a read in autocommit beside it
    // is its own transaction.
    let r = in_transactions(
        vec![
            stmt("BEGIN", 1.0, 0.0),
            stmt(DETAIL, 1.0, 1.0),
            stmt("ROLLBACK", 1.0, 0.0),
            stmt(TAG, 1.0, 1.0),
        ],
        2.0,
    );
    let f = only(&r, FindingKind::TransactionAroundSingleRead);
    assert_eq!(f.evidence["reads_per_transaction"], 1.0);
    assert_eq!(
        f.query, None,
        "two reads run once per request: which one is unknown"
    );
}

#[test]
fn transactions_that_hold_more_than_one_read_are_left_alone() {
    let two_reads = one_transaction(&[(DETAIL, 1.0), (TAG, 1.0)]);
    assert_eq!(kinds(&two_reads), []);
    let write = one_transaction(&[
        (DETAIL, 1.0),
        ("INSERT INTO audit (action) VALUES ($1)", 1.0),
    ]);
    assert!(!kinds(&write).contains(&FindingKind::TransactionAroundSingleRead));
    let set_local = one_transaction(&[("SET LOCAL work_mem = '64kB'", 0.0), (DETAIL, 1.0)]);
    assert_eq!(kinds(&set_local), []);
    let autocommit = in_transactions(vec![stmt(DETAIL, 1.0, 1.0)], 1.0);
    assert_eq!(kinds(&autocommit), []);
    // One request in ten.
    let rare = in_transactions(
        vec![
            stmt("BEGIN", 0.1, 0.0),
            stmt(DETAIL, 1.0, 1.0),
            stmt("COMMIT", 0.1, 0.0),
        ],
        1.0,
    );
    assert_eq!(kinds(&rare), []);
}

// overfetch -----------------------------------------------------------------------------------

const POSTS_PAGE: &str = "SELECT id, title, hidden FROM posts ORDER BY id DESC LIMIT $1";

fn with_items(statements: Vec<StatementRow>, items: Option<u64>) -> Report {
    let mut r = report(statements, vec![]);
    r.load.response_items = items;
    r
}

#[test]
fn a_page_four_times_the_response_is_an_overfetch() {
    let r = with_items(vec![stmt(POSTS_PAGE, 1.0, 100.0)], Some(25));
    let f = only(&r, FindingKind::Overfetch);
    assert_eq!(f.evidence["rows_per_item"], 4.0);
    assert_eq!(f.evidence["response_items"], 25.0);
    assert_eq!(f.saves_per_request.rows_returned, 75.0);
    assert_eq!(f.saves_per_request.db_time_ms, 0.1 * 75.0 / 100.0);
    assert_eq!(f.severity, Severity::Medium);
}

#[test]
fn a_page_the_size_of_the_response_or_no_item_count_is_no_overfetch() {
    for (rows, items) in [
        (25.0, Some(25)),
        (49.0, Some(25)),
        (100.0, None),
        (100.0, Some(0)),
    ] {
        let r = with_items(vec![stmt(POSTS_PAGE, 1.0, rows)], items);
        assert_eq!(kinds(&r), [], "{rows} rows, {items:?} items");
    }
    // Its count is a page statement too, and returns one row.
    let counted = with_items(
        vec![
            stmt("SELECT count(*) FROM posts", 1.0, 1.0),
            stmt(POSTS_PAGE, 1.0, 25.0),
        ],
        Some(25),
    );
    assert_eq!(kinds(&counted), []);
}

// The page's children ---------------------------------------------------------------------

const RUNS_PAGE: &str = "SELECT id, name FROM runs WHERE project_id = $1 ORDER BY id DESC LIMIT $2";

#[test]
fn the_current_state_of_each_run_on_the_page_is_no_collection() {
    for children in [
        "SELECT run_id, state FROM run_states WHERE current AND run_id IN \
         (SELECT id FROM runs WHERE project_id = $1 ORDER BY id DESC LIMIT $2)",
        "SELECT s.run_id, s.state FROM run_states s JOIN runs r ON r.id = s.run_id \
         WHERE r.project_id = $1 AND s.current",
    ] {
        let r = report(
            vec![stmt(RUNS_PAGE, 1.0, 50.0), stmt(children, 1.0, 50.0)],
            vec![],
        );
        assert_eq!(kinds(&r), [], "{children}");
    }
    // Without a page statement of the same relation, the response's 50 items say it.
    let by_items = with_items(
        vec![stmt(
            "SELECT run_id, state FROM run_states WHERE project_id = $1",
            1.0,
            60.0,
        )],
        Some(50),
    );
    assert_eq!(kinds(&by_items), []);
}

#[test]
fn a_set_unrelated_to_the_page_or_far_larger_is_still_a_collection() {
    const GRANTS: &str = "SELECT g.action FROM group_grants g JOIN group_members m \
                          ON m.group_id = g.group_id WHERE m.user_id = $1";
    let beside_a_page = report(
        vec![stmt(RUNS_PAGE, 1.0, 50.0), stmt(GRANTS, 1.0, 40.0)],
        vec![],
    );
    assert_eq!(kinds(&beside_a_page), [FindingKind::CollectionToBoolean]);
    let every_state = report(
        vec![
            stmt(RUNS_PAGE, 1.0, 5.0),
            stmt(
                "SELECT s.state FROM run_states s JOIN runs r ON r.id = s.run_id \
                 WHERE r.project_id = $1",
                1.0,
                400.0,
            ),
        ],
        vec![],
    );
    assert_eq!(kinds(&every_state), [FindingKind::CollectionToBoolean]);
    // A response of 50 items does not excuse a set of 40 times as many rows.
    let huge = with_items(vec![stmt(GRANTS, 1.0, 2000.0)], Some(50));
    assert_eq!(kinds(&huge), [FindingKind::CollectionToBoolean]);
}

// duplicate_load ------------------------------------------------------------------------------

#[test]
fn the_same_user_loaded_by_two_statements_is_a_duplicate_load() {
    let r = report(
        vec![
            stmt("SELECT id, email FROM users WHERE id = $1", 1.0, 1.0),
            stmt(
                "SELECT u.name FROM users u WHERE u.id = $1 LIMIT $2",
                1.0,
                1.0,
            ),
        ],
        vec![table("public.users", 100)],
    );
    let f = only(&r, FindingKind::DuplicateLoad);
    assert_eq!(f.table.as_deref(), Some("public.users"));
    assert_eq!(f.saves_per_request.statements, 1.0);
    assert_eq!(f.evidence["statements"], 2.0);
    // One statement saved is medium; the keys may differ, so one step lower.
    assert_eq!(f.severity, Severity::Low);
    assert!(
        f.suggestion.contains("u.name FROM users u"),
        "{}",
        f.suggestion
    );
}

#[test]
fn other_keys_counts_pages_and_loops_are_no_duplicate_load() {
    let cases: [&[(&str, f64, f64)]; 4] = [
        // The page and its total, by the same owner.
        &[
            ("SELECT count(*) FROM items WHERE owner = $1", 1.0, 1.0),
            ("SELECT id FROM items WHERE owner = $1 LIMIT $2", 1.0, 5.0),
        ],
        // Another unique key of the same table.
        &[
            (
                "SELECT id FROM items WHERE tenant_id = $1 AND slug = $2",
                1.0,
                1.0,
            ),
            (
                "SELECT name FROM items WHERE tenant_id = $1 AND id = $2",
                1.0,
                1.0,
            ),
        ],
        // The same key of another table.
        &[
            ("SELECT user_id FROM sessions WHERE id = $1", 1.0, 1.0),
            ("SELECT email FROM users WHERE id = $1", 1.0, 1.0),
        ],
        // A loop over the page's authors beside the signed-in user: different keys.
        &[
            ("SELECT email FROM users WHERE id = $1", 1.0, 1.0),
            ("SELECT name FROM users WHERE id = $1", 5.0, 1.0),
        ],
    ];
    for case in cases {
        let statements = case.iter().map(|(q, c, r)| stmt(q, *c, *r)).collect();
        let found = kinds(&report(statements, vec![]));
        assert!(!found.contains(&FindingKind::DuplicateLoad), "{case:?}");
    }
}

#[test]
fn round_trips_come_before_the_duplicate_loads_they_list() {
    let columns = [
        "title",
        "category",
        "created_at",
        "id, title",
        "title, category",
    ];
    let statements: Vec<_> = columns
        .iter()
        .map(|c| stmt(&format!("SELECT {c} FROM events WHERE id = $1"), 1.0, 1.0))
        .collect();
    let found = kinds(&report(statements, vec![table("public.events", 1000)]));
    assert_eq!(
        found,
        [FindingKind::RoundTrips, FindingKind::DuplicateLoad],
        "same severity and statements saved: the wider advice first"
    );
}
