//! The rules that read the plans (`per_row_subquery`, and `seq_scan_heavy` naming the
//! statement whose plan scans), on hand-built reports and plans captured from PostgreSQL 15
//! (`EXPLAIN (FORMAT JSON, VERBOSE)`, keys the rules do not read left out).

use std::collections::BTreeMap;

use super::tests::{report, stmt, table};
use super::*;
use crate::plan::{parse, ran};
use crate::report::Report;

/// `SELECT p.id, (SELECT count(*) FROM comments c WHERE c.post_id = p.id) AS n FROM posts p
/// ORDER BY p.id LIMIT 20`: a correlated subquery, a SubPlan run per post.
pub(crate) const SUBPLAN: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 20, "Plans": [{"Node Type": "Index Only Scan", "Parent Relationship": "Outer", "Relation Name": "posts", "Schema": "public", "Alias": "p", "Index Name": "posts_pkey", "Plan Rows": 200, "Plans": [{"Node Type": "Aggregate", "Parent Relationship": "SubPlan", "Subplan Name": "SubPlan 1", "Plan Rows": 1, "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "comments", "Schema": "public", "Alias": "c", "Plan Rows": 30, "Filter": "(c.post_id = p.id)"}]}]}]}}]"#;

/// `SELECT id FROM workflow WHERE id NOT IN (SELECT workflow_id FROM shared_workflow)`: a
/// hashed SubPlan, run once.
pub(crate) const HASHED: &str = r#"[{"Plan": {"Node Type": "Seq Scan", "Relation Name": "workflow", "Schema": "public", "Alias": "workflow", "Plan Rows": 1500, "Filter": "(NOT (hashed SubPlan 1))", "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "SubPlan", "Subplan Name": "SubPlan 1", "Relation Name": "shared_workflow", "Schema": "public", "Alias": "shared_workflow", "Plan Rows": 3000}]}}]"#;

/// TypeORM's page: `SELECT DISTINCT "distinctAlias"."workflow_id" ... FROM (SELECT ... FROM
/// workflow w JOIN shared_workflow sw ... WHERE w.id IN (SELECT sw2.workflow_id FROM
/// shared_workflow sw2 WHERE sw2.project_id = 3)) "distinctAlias" ORDER BY ... LIMIT 25`:
/// a derived table and an uncorrelated `IN (SELECT …)`, hash joins, shared_workflow
/// scanned twice because it is named twice.
pub(crate) const DERIVED: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 25, "Plans": [{"Node Type": "Sort", "Parent Relationship": "Outer", "Plan Rows": 429, "Sort Key": ["w.updated_at DESC", "w.id"], "Plans": [{"Node Type": "Aggregate", "Parent Relationship": "Outer", "Plan Rows": 429, "Plans": [{"Node Type": "Hash Join", "Parent Relationship": "Outer", "Join Type": "Inner", "Plan Rows": 429, "Hash Cond": "(w.id = sw.workflow_id)", "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "workflow", "Schema": "public", "Alias": "w", "Plan Rows": 3000}, {"Node Type": "Hash", "Parent Relationship": "Inner", "Plan Rows": 429, "Plans": [{"Node Type": "Hash Join", "Parent Relationship": "Outer", "Join Type": "Inner", "Plan Rows": 429, "Hash Cond": "(sw.workflow_id = sw2.workflow_id)", "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "shared_workflow", "Schema": "public", "Alias": "sw", "Plan Rows": 3000}, {"Node Type": "Hash", "Parent Relationship": "Inner", "Plan Rows": 429, "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "shared_workflow", "Schema": "public", "Alias": "sw2", "Plan Rows": 429, "Filter": "(sw2.project_id = 3)"}]}]}]}]}]}]}]}}]"#;

/// `SELECT u.id, u.email FROM api_users u JOIN user_api_keys k ON k.user_id = u.id WHERE
/// k.key = 'k1'`: a nested loop rescanning a 3-row table, the planner's right plan.
pub(crate) const NESTED_LOOP: &str = r#"[{"Plan": {"Node Type": "Nested Loop", "Join Type": "Inner", "Plan Rows": 1, "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "user_api_keys", "Schema": "public", "Alias": "k", "Plan Rows": 1, "Filter": "(k.key = 'k1'::text)"}, {"Node Type": "Seq Scan", "Parent Relationship": "Inner", "Relation Name": "api_users", "Schema": "public", "Alias": "u", "Plan Rows": 3}]}}]"#;

const POSTS: &str = "SELECT p.id, (SELECT count(*) FROM comments c WHERE c.post_id = p.id) AS n FROM posts p ORDER BY p.id LIMIT $1";

/// A table of `pages` pages scanned `seq` times and probed `idx` times per request.
fn scanned(name: &str, pages: i64, seq: f64, idx: f64) -> TableRow {
    let mut t = table(name, pages);
    t.seq_scans = seq;
    t.seq_rows_read = seq * t.live_rows as f64;
    t.idx_scans = idx;
    t.idx_rows_fetched = idx;
    t
}

fn plans<J: AsRef<str>>(of: &[(&str, J)]) -> BTreeMap<String, RanPlan> {
    (of.iter())
        .map(|(query, json)| (query.to_string(), ran(&parse(json.as_ref()).unwrap())))
        .collect()
}

fn judged(report: &Report, plans: Option<&BTreeMap<String, RanPlan>>) -> Vec<Finding> {
    analyze(
        &Inputs::of(report).with_plans(plans),
        &Thresholds::default(),
    )
}

fn of_kind(found: Vec<Finding>, kind: FindingKind) -> Vec<Finding> {
    found.into_iter().filter(|f| f.kind == kind).collect()
}

#[test]
fn a_subplan_run_per_row_is_one_per_row_subquery_finding() {
    // 20 posts on the page, each a scan of the 3-page comments.
    let mut r = report(
        vec![stmt(POSTS, 1.0, 20.0)],
        vec![
            scanned("public.posts", 1, 0.0, 1.0),
            scanned("public.comments", 3, 20.0, 0.0),
        ],
    );
    r.load.response_items = Some(20);
    let plans = plans(&[(POSTS, SUBPLAN)]);
    let found = judged(&r, Some(&plans));
    let kinds: Vec<FindingKind> = found.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::PerRowSubquery], "{found:#?}");
    let f = &found[0];
    assert_eq!(f.query.as_deref(), Some(POSTS));
    assert_eq!(f.table.as_deref(), Some("public.comments"));
    assert_eq!(f.evidence["scans_per_call"], 20.0);
    assert_eq!(f.evidence["tables"], 1.0);
    assert_eq!(f.evidence["rows_read_per_request"], 3000.0);
    assert_eq!(f.evidence["rows_read_per_request.public.comments"], 3000.0);
    // Read once per call instead of 20 times.
    assert_eq!(f.saves_per_request.rows_read, 2850.0);
    assert!(f.suggestion.contains("SubPlan"), "{}", f.suggestion);
    assert!(f.suggestion.contains("public.comments (3 pages)"));
}

#[test]
fn without_a_plan_the_rule_says_nothing() {
    let r = report(
        vec![stmt(POSTS, 1.0, 20.0)],
        vec![scanned("public.comments", 3, 20.0, 0.0)],
    );
    // Plans off, or not fetched yet.
    assert!(of_kind(judged(&r, None), FindingKind::PerRowSubquery).is_empty());
    // Fetched, but this statement could not be explained.
    let other = plans(&[("SELECT 1", SUBPLAN)]);
    assert!(of_kind(judged(&r, Some(&other)), FindingKind::PerRowSubquery).is_empty());
}

#[test]
fn the_subplans_of_one_statement_are_one_finding_with_each_tables_rows() {
    let two = r#"SELECT b.*, (SELECT count(*) FROM cards c WHERE c.board_id = b.id), (SELECT max(at) FROM events e WHERE e.board_id = b.id) FROM boards b"#;
    let mut r = report(
        vec![stmt(two, 1.0, 30.0)],
        vec![
            scanned("public.boards", 1, 1.0, 0.0),
            scanned("public.cards", 3, 30.0, 0.0),
            scanned("public.events", 10, 30.0, 0.0),
        ],
    );
    r.load.response_items = Some(30);
    let plan = RanPlan {
        per_row_tables: vec!["public.cards".into(), "public.events".into()],
        seq_scanned: vec![
            "public.boards".into(),
            "public.cards".into(),
            "public.events".into(),
        ],
        loop_rescanned: Vec::new(),
    };
    let plans = BTreeMap::from([(two.to_string(), plan)]);
    let found = of_kind(judged(&r, Some(&plans)), FindingKind::PerRowSubquery);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    // The table that adds the most rows leads.
    assert_eq!(f.table.as_deref(), Some("public.events"));
    assert_eq!(f.evidence["tables"], 2.0);
    assert_eq!(f.evidence["rows_read_per_request.public.events"], 15000.0);
    assert_eq!(f.evidence["rows_read_per_request.public.cards"], 4500.0);
    assert_eq!(f.evidence["scans_per_request.public.cards"], 30.0);
    assert_eq!(f.saves_per_request.rows_read, 14500.0 + 4350.0);
}

#[test]
fn derived_tables_semi_joins_hashed_subplans_and_nested_loops_are_no_per_row_subquery() {
    let derived = r#"SELECT DISTINCT "distinctAlias"."workflow_id" AS "ids_workflow_id" FROM (SELECT w.id AS workflow_id FROM workflow w JOIN shared_workflow sw ON sw.workflow_id = w.id WHERE w.id IN (SELECT sw2.workflow_id FROM shared_workflow sw2 WHERE sw2.project_id = $1)) "distinctAlias" ORDER BY 1 LIMIT $2"#;
    let hashed =
        "SELECT id FROM workflow WHERE id NOT IN (SELECT workflow_id FROM shared_workflow)";
    let nested = "SELECT u.id, u.email FROM api_users u JOIN user_api_keys k ON k.user_id = u.id WHERE k.key = $1";
    let cases = [
        // shared_workflow named twice: two scans per call.
        (derived, DERIVED, "public.shared_workflow", 2.0),
        (hashed, HASHED, "public.shared_workflow", 6.0),
        // The inner side of a nested loop, rescanned per outer row.
        (nested, NESTED_LOOP, "public.api_users", 6.0),
    ];
    for (query, json, scanned_table, per_call) in cases {
        let mut r = report(
            vec![stmt(query, 3.0, 25.0)],
            vec![scanned(scanned_table, 3, 3.0 * per_call, 0.0)],
        );
        r.load.response_items = Some(25);
        let plans = plans(&[(query, json)]);
        let found = of_kind(judged(&r, Some(&plans)), FindingKind::PerRowSubquery);
        assert!(found.is_empty(), "{query}: {found:#?}");
    }
}

#[test]
fn seq_scan_heavy_names_the_reader_whose_plan_scans_the_table() {
    // Three readers of a large table, none with as many calls as scans: the counters alone
    // name none of them; the custom plan of the page seq-scans it.
    let page = "SELECT issues.* FROM issues WHERE issues.project_id = $1 ORDER BY issues.updated_on DESC LIMIT $2";
    let count =
        "SELECT count(*) FROM issues WHERE issues.project_id = $1 AND issues.status_id = $2";
    let by_id = "SELECT issues.* FROM issues WHERE issues.id = $1";
    let mut issues = table("public.issues", 200);
    issues.seq_scans = 3.0;
    issues.seq_rows_read = 18000.0;
    let r = report(
        vec![
            stmt(page, 1.0, 25.0),
            stmt(count, 1.0, 1.0),
            stmt(by_id, 1.0, 1.0),
        ],
        vec![issues],
    );
    let heavy = |found: Vec<Finding>| of_kind(found, FindingKind::SeqScanHeavy);
    let without = heavy(judged(&r, None));
    assert_eq!(without.len(), 1, "{without:#?}");
    assert_eq!(without[0].query, None);
    let scans = RanPlan {
        seq_scanned: vec!["public.issues".into()],
        ..RanPlan::default()
    };
    let plans = BTreeMap::from([
        (page.to_string(), scans),
        (count.to_string(), RanPlan::default()),
        (by_id.to_string(), RanPlan::default()),
    ]);
    let with = heavy(judged(&r, Some(&plans)));
    assert_eq!(with[0].query.as_deref(), Some(page));
}

#[test]
fn a_costly_nested_loop_is_named_by_seq_scan_heavy_not_per_row_subquery() {
    // The inner side of a nested loop rescans 100 pages for each of the 30 outer rows.
    let join =
        "SELECT o.id, i.sku FROM orders o JOIN items i ON i.order_ref = o.ref WHERE o.day = $1";
    let mut items = table("public.items", 100);
    items.seq_scans = 30.0;
    items.seq_rows_read = 30.0 * items.live_rows as f64;
    let r = report(vec![stmt(join, 1.0, 30.0)], vec![items]);
    let plans = plans(&[(join, NESTED_LOOP.replace("api_users", "items"))]);
    let found = judged(&r, Some(&plans));
    assert!(of_kind(found.clone(), FindingKind::PerRowSubquery).is_empty());
    let heavy = of_kind(found, FindingKind::SeqScanHeavy);
    assert_eq!(heavy.len(), 1, "{heavy:#?}");
    assert_eq!(heavy[0].evidence["nested_loop_inner"], 1.0);
    assert!(
        heavy[0].suggestion.contains("inner side of a Nested Loop")
            && heavy[0].suggestion.contains("index on the join column"),
        "{}",
        heavy[0].suggestion
    );
    // Without the plan, the same counters name no join.
    let blind = of_kind(judged(&r, None), FindingKind::SeqScanHeavy);
    assert!(!blind[0].evidence.contains_key("nested_loop_inner"));
}
