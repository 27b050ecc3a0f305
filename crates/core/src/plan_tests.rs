//! Unit tests of `crate::plan` on EXPLAIN's JSON, as PostgreSQL prints it.

use super::*;

/// `EXPLAIN (GENERIC_PLAN, FORMAT JSON, VERBOSE) SELECT id, total FROM plan_orders WHERE
/// customer_ref = $1`, as PostgreSQL 16 prints it.
const FILTER: &str = r#"[{"Plan": {"Node Type": "Seq Scan", "Parallel Aware": false,
    "Async Capable": false, "Relation Name": "plan_orders", "Schema": "public",
    "Alias": "plan_orders", "Startup Cost": 0.00, "Total Cost": 1018.00,
    "Plan Rows": 1, "Plan Width": 12,
    "Output": ["id", "total"], "Filter": "(plan_orders.customer_ref = $1)"}}]"#;

/// `... ORDER BY created_at DESC LIMIT $1` over the same table, no index.
const PAGE: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 5000,
    "Plans": [{"Node Type": "Sort", "Parent Relationship": "Outer",
      "Sort Key": ["o.created_at DESC"],
      "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer",
        "Relation Name": "plan_orders", "Schema": "public", "Alias": "o"}]}]}}]"#;

fn pages() -> BTreeMap<String, i64> {
    BTreeMap::from([
        ("public.plan_orders".to_string(), 393),
        ("public.tiny".into(), 1),
    ])
}

#[test]
fn a_seq_scan_heavy_finding_on_a_small_table_asks_for_no_index() {
    use crate::findings::tests::{report, stmt, table};
    let q = "SELECT id FROM sites WHERE id IN (SELECT id FROM sites WHERE tenant_id = $1)";
    let wanted_for = |pages: i64| {
        let mut sites = table("public.sites", pages);
        sites.seq_scans = 2.0;
        sites.seq_rows_read = 100.0 * pages as f64;
        sites.rows_updated = 1.0;
        let mut r = report(vec![stmt(q, 1.0, 5.0)], vec![sites]);
        r.findings =
            crate::findings::analyze(&crate::findings::Inputs::of(&r), &Default::default());
        assert!(
            (r.findings.iter()).any(|f| f.kind == FindingKind::SeqScanHeavy),
            "{:#?}",
            r.findings
        );
        wanted(&[r])
    };
    // Small, and a self-semi-join: the query's shape, no index.
    let w = wanted_for(9);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(!w[0].propose_index, "{w:?}");
    // Large: the semi-join is named, and an index on the subquery's filter may serve.
    let w = wanted_for(400);
    assert!(w[0].propose_index, "{w:?}");
}

#[test]
fn a_filter_on_an_unindexed_column_proposes_that_column() {
    let root = parse(FILTER).unwrap();
    let scans = seq_scans(&root, &pages(), 8);
    assert_eq!(scans.len(), 1);
    assert_eq!(scans[0].table, "public.plan_orders");
    assert_eq!(scans[0].top_n_sort, None);
    let index = propose_index(&scans).unwrap();
    assert_eq!(
        index.statement,
        "CREATE INDEX CONCURRENTLY ON public.plan_orders (customer_ref);"
    );
    assert_eq!(index.columns, vec!["customer_ref"]);
    assert_eq!(index.verified, None);
    assert_eq!(
        index.hypothetical(),
        "CREATE INDEX ON public.plan_orders (customer_ref)"
    );
    assert!(
        index
            .replaces
            .starts_with("Seq Scan on public.plan_orders (393 pages)")
    );
}

#[test]
fn a_top_n_sort_under_a_limit_proposes_the_sort_key() {
    let root = parse(PAGE).unwrap();
    let scans = seq_scans(&root, &pages(), 8);
    assert_eq!(
        scans[0].top_n_sort,
        Some(vec!["o.created_at DESC".to_string()])
    );
    let index = propose_index(&scans).unwrap();
    assert_eq!(index.columns, vec!["created_at"]);
    assert_eq!(
        index.statement,
        "CREATE INDEX CONCURRENTLY ON public.plan_orders (created_at);"
    );
    assert!(index.replaces.contains("top-N sort"), "{}", index.replaces);
}

#[test]
fn equality_columns_come_before_the_sort_key_and_ranges() {
    let filter = "((o.tenant_id = $1) AND (o.created_at > $2) AND ((o.status)::text = 'x'::text))";
    assert_eq!(
        filter_columns(filter, "o"),
        FilterColumns {
            equality: vec!["tenant_id".into(), "status".into()],
            other: vec!["created_at".into()],
            disjunction: false,
        }
    );
    let scan = SeqScan {
        table: "public.t".into(),
        pages: 100,
        alias: "o".into(),
        filter: Some("(o.tenant_id = $1)".into()),
        top_n_sort: Some(vec!["o.created_at DESC".into(), "o.id".into()]),
        rows: 0.0,
        table_rows: None,
    };
    let index = propose_index(&[scan]).unwrap();
    assert_eq!(index.columns, vec!["tenant_id", "created_at DESC", "id"]);
    // `($1 = o.owner)` reads the same; a column of another alias is not this table's.
    let other = filter_columns("(($1 = o.owner) AND (x.o.id = p.id))", "o");
    assert_eq!(other.equality, vec!["owner"]);
    assert!(other.other.is_empty());
}

#[test]
fn no_proposal_for_small_tables_or_ors_or_expressions() {
    let tiny = FILTER.replace("plan_orders", "tiny");
    assert!(seq_scans(&parse(&tiny).unwrap(), &pages(), 8).is_empty());
    let unknown = FILTER.replace("plan_orders", "elsewhere");
    assert!(seq_scans(&parse(&unknown).unwrap(), &pages(), 8).is_empty());
    let or = SeqScan {
        table: "public.t".into(),
        pages: 100,
        alias: "t".into(),
        filter: Some("((t.a = $1) OR (t.b = $2))".into()),
        top_n_sort: None,
        rows: 0.0,
        table_rows: None,
    };
    assert_eq!(propose_index(&[or]), None);
    let expression = SeqScan {
        table: "public.t".into(),
        pages: 100,
        alias: "t".into(),
        filter: None,
        top_n_sort: Some(vec!["lower(t.name)".into()]),
        rows: 0.0,
        table_rows: None,
    };
    assert_eq!(propose_index(&[expression]), None);
}

/// `SELECT o.id, c.name FROM plan_orders o JOIN plan_customers c ON c.ref =
/// o.customer_ref ORDER BY {key} LIMIT 25`, as PostgreSQL 16 plans it without an index
/// on the key: the top-N sort sits above the join, the scans below its Hash.
fn join_page(key: &str, join: &str) -> String {
    format!(
        r#"[{{"Plan": {{"Node Type": "Limit", "Plans": [{{"Node Type": "Sort",
        "Sort Key": ["{key}"], "Plans": [{{"Node Type": "{join}", "Plans": [
          {{"Node Type": "Seq Scan", "Relation Name": "plan_orders", "Schema": "public",
           "Alias": "o", "Filter": "(o.total = 7)"}},
          {{"Node Type": "Hash", "Plans": [{{"Node Type": "Seq Scan",
           "Relation Name": "plan_customers", "Schema": "public", "Alias": "c"}}]}}]}}]}}]}}}}]"#
    )
}

#[test]
fn a_top_n_sort_over_joins_proposes_the_sorted_tables_keys() {
    let pages = BTreeMap::from([
        ("public.plan_orders".to_string(), 393),
        ("public.plan_customers".to_string(), 60),
    ]);
    for join in ["Hash Join", "Nested Loop", "Merge Join"] {
        let root = parse(&join_page("o.created_at DESC", join)).unwrap();
        let scans = seq_scans(&root, &pages, 8);
        assert_eq!(scans.len(), 2, "{join}");
        assert_eq!(
            scans[0].top_n_sort,
            Some(vec!["o.created_at DESC".to_string()]),
            "{join}"
        );
        // The keys are not the customers': their scan takes none.
        assert_eq!(scans[1].top_n_sort, None, "{join}");
        let all = propose_indexes(&scans);
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(all[0].table, "public.plan_orders");
        assert_eq!(all[0].columns, vec!["total", "created_at"]);
    }
    // Keys of the other table: that table's scan gets them, through the Hash.
    let root = parse(&join_page("c.name", "Hash Join")).unwrap();
    let scans = seq_scans(&root, &pages, 8);
    assert_eq!(scans[0].top_n_sort, None);
    assert_eq!(scans[1].top_n_sort, Some(vec!["c.name".to_string()]));
    let all = propose_indexes(&scans);
    let tables: Vec<&str> = all.iter().map(|p| p.table.as_str()).collect();
    // Biggest first: the orders' filter, then the customers' sort key.
    assert_eq!(tables, vec!["public.plan_orders", "public.plan_customers"]);
    assert_eq!(all[1].columns, vec!["name"]);
    // Keys of both tables: no one index serves the sort.
    let both = join_page("o.created_at DESC\", \"c.name", "Hash Join");
    let scans = seq_scans(&parse(&both).unwrap(), &pages, 8);
    assert!(scans.iter().all(|s| s.top_n_sort.is_none()), "{scans:?}");
    // An aggregate between the sort and the join sorts groups, not rows of one table.
    let grouped = r#"[{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Sort",
        "Sort Key": ["o.created_at"], "Plans": [{"Node Type": "Aggregate", "Plans": [
          {"Node Type": "Memoize", "Plans": [{"Node Type": "Seq Scan",
           "Relation Name": "plan_orders", "Schema": "public", "Alias": "o"}]}]}]}]}}]"#;
    let scans = seq_scans(&parse(grouped).unwrap(), &pages, 8);
    assert_eq!(scans[0].top_n_sort, None);
    assert!(propose_indexes(&scans).is_empty());
    // Materialize and Memoize pass the keys on.
    let memoized = grouped.replace("Aggregate", "Materialize");
    let scans = seq_scans(&parse(&memoized).unwrap(), &pages, 8);
    assert_eq!(scans[0].top_n_sort, Some(vec!["o.created_at".to_string()]));
}

#[test]
fn the_shape_names_node_types_indexes_and_relations_in_plan_order() {
    let indexed = r#"[{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Nested Loop",
        "Plans": [{"Node Type": "Index Scan", "Scan Direction": "Backward",
          "Index Name": "plan_orders_created_idx", "Relation Name": "plan_orders",
          "Schema": "public", "Alias": "o"},
         {"Node Type": "Bitmap Heap Scan", "Relation Name": "plan_customers",
          "Schema": "public", "Alias": "c", "Plans": [{"Node Type": "Bitmap Index Scan",
          "Index Name": "plan_customers_pkey"}]}]}]}}]"#;
    assert_eq!(
        shape(&parse(indexed).unwrap()),
        vec![
            "Limit",
            "Nested Loop",
            "Index Scan using plan_orders_created_idx on public.plan_orders",
            "Bitmap Heap Scan on public.plan_customers",
            "Bitmap Index Scan on plan_customers_pkey",
        ]
    );
    assert_eq!(
        shape(&parse(PAGE).unwrap()),
        vec!["Limit", "Sort", "Seq Scan on public.plan_orders"]
    );
}

#[test]
fn hypothetical_index_use_is_read_from_index_names() {
    let used = r#"[{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Index Scan",
        "Index Name": "<13543>btree_plan_orders_created_at"}]}}]"#;
    let root = parse(used).unwrap();
    assert!(uses_index(&root, "<13543>btree_plan_orders_created_at"));
    assert!(!uses_index(
        &parse(PAGE).unwrap(),
        "<13543>btree_plan_orders_created_at"
    ));
    assert!(parse("[]").is_err());
    assert!(parse("not json").is_err());
}

#[test]
fn quoted_identifiers() {
    assert_eq!(quote_ident("Orders"), "\"Orders\"");
    assert_eq!(quote_ident("orders_2"), "orders_2");
    let columns = filter_columns("(\"O\".\"Ref\" = $1)", "O");
    assert_eq!(columns.equality, vec!["\"Ref\""]);
}

/// `PREPARE q AS SELECT rails_issues.* FROM rails_issues WHERE rails_issues.project_id = $1
/// ORDER BY rails_issues.updated_on DESC LIMIT $2` over 6,000 issues, 5,700 of them in
/// project 1, indexed by project_id: the generic plan (`EXECUTE q(NULL, NULL)` under
/// force_generic_plan) reads the index...
const RAILS_GENERIC: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 2, "Plans": [{"Node Type": "Sort", "Parent Relationship": "Outer", "Plan Rows": 20, "Sort Key": ["rails_issues.updated_on DESC"], "Plans": [{"Node Type": "Index Scan", "Parent Relationship": "Outer", "Relation Name": "rails_issues", "Schema": "public", "Alias": "rails_issues", "Index Name": "rails_issues_project_id", "Plan Rows": 20, "Index Cond": "(rails_issues.project_id = $1)"}]}]}}]"#;
/// ... the custom plan for the most common project (`EXECUTE q('1', '25')` under
/// force_custom_plan) scans the whole table ...
const RAILS_CUSTOM: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 25, "Plans": [{"Node Type": "Sort", "Parent Relationship": "Outer", "Plan Rows": 5700, "Sort Key": ["rails_issues.updated_on DESC"], "Plans": [{"Node Type": "Seq Scan", "Parent Relationship": "Outer", "Relation Name": "rails_issues", "Schema": "public", "Alias": "rails_issues", "Plan Rows": 5700, "Filter": "(rails_issues.project_id = 1)"}]}]}}]"#;
/// ... and with hypopg's index on updated_on, reads it backwards and stops at the page.
const RAILS_INDEXED: &str = r#"[{"Plan": {"Node Type": "Limit", "Plan Rows": 25, "Plans": [{"Node Type": "Index Scan", "Parent Relationship": "Outer", "Relation Name": "rails_issues", "Schema": "public", "Alias": "rails_issues", "Index Name": "<13556>btree_rails_issues_updated_on", "Plan Rows": 5700, "Filter": "(rails_issues.project_id = 1)"}]}}]"#;

#[test]
fn ran_reads_per_row_subplans_and_sequential_scans() {
    use crate::findings::plan_rules_tests::{DERIVED, HASHED, NESTED_LOOP, SUBPLAN};
    let of = |json: &str| ran(&parse(json).unwrap());
    assert_eq!(of(SUBPLAN).per_row_tables, vec!["public.comments"]);
    assert_eq!(of(SUBPLAN).seq_scanned, vec!["public.comments"]);
    // Hashed: run once. A derived table, a semi-join, a nested loop: no SubPlan.
    for json in [HASHED, DERIVED, NESTED_LOOP] {
        assert!(of(json).per_row_tables.is_empty(), "{json}");
    }
    assert_eq!(
        of(DERIVED).seq_scanned,
        vec!["public.workflow", "public.shared_workflow"]
    );
    // `hashed SubPlan 1` does not hash SubPlan 12.
    assert!(mentions_hashed("(NOT (hashed SubPlan 1))", "SubPlan 1"));
    assert!(!mentions_hashed("(NOT (hashed SubPlan 12))", "SubPlan 1"));
    // The inner side of a nested loop is rescanned per outer row; a SubPlan's scan is not.
    assert_eq!(of(NESTED_LOOP).loop_rescanned, vec!["public.api_users"]);
    assert!(of(SUBPLAN).loop_rescanned.is_empty());
    assert!(of(DERIVED).loop_rescanned.is_empty());
    let init = SUBPLAN.replace("\"SubPlan\"", "\"InitPlan\"");
    assert!(of(&init).per_row_tables.is_empty());
}

#[test]
fn a_custom_plans_parameters_are_the_limit_and_the_compared_column() {
    let generic = parse(RAILS_GENERIC).unwrap();
    let query = "SELECT rails_issues.* FROM rails_issues WHERE rails_issues.project_id = $1 ORDER BY rails_issues.updated_on DESC LIMIT $2 OFFSET $3";
    assert_eq!(
        parameters(query, &generic, 4),
        vec![
            Parameter::Column {
                table: "public.rails_issues".into(),
                column: "project_id".into()
            },
            Parameter::Limit,
            Parameter::Offset,
            Parameter::Unknown,
        ]
    );
    // `$n = alias.column`, a cast, a quoted column.
    let cast = FILTER.replace(
        "(plan_orders.customer_ref = $1)",
        "(($1 = (plan_orders.\\\"Ref\\\")::text))",
    );
    assert_eq!(
        parameters("SELECT 1", &parse(&cast).unwrap(), 1),
        vec![Parameter::Column {
            table: "public.plan_orders".into(),
            column: "Ref".into()
        }]
    );
    assert_eq!(first_element("{1,2,3}"), Some("1".into()));
    assert_eq!(
        first_element(r#"{"a \"b\", c",d}"#),
        Some(r#"a "b", c"#.into())
    );
    assert_eq!(first_element("{NULL}"), None);
    assert_eq!(first_element(""), None);
}

#[test]
fn the_custom_plan_of_a_common_value_gets_the_sort_key_index_and_its_rows_read() {
    let pages = BTreeMap::from([("public.rails_issues".to_string(), 80)]);
    let rows = BTreeMap::from([("public.rails_issues".to_string(), 6000)]);
    // The generic plan has no sequential scan: nothing to propose.
    assert!(seq_scans(&parse(RAILS_GENERIC).unwrap(), &pages, 8).is_empty());
    let custom = parse(RAILS_CUSTOM).unwrap();
    let scans = with_table_rows(seq_scans(&custom, &pages, 8), &rows);
    // project 1 is 95% of the table: an equality column that narrows nothing is left out.
    let index = propose_index(&scans).unwrap();
    assert_eq!(index.columns, vec!["updated_on"]);
    assert_eq!(
        index.statement,
        "CREATE INDEX CONCURRENTLY ON public.rails_issues (updated_on);"
    );
    // A rare value keeps the equality column first.
    let rare = RAILS_CUSTOM.replace(
        "\"Plan Rows\": 5700, \"Filter\"",
        "\"Plan Rows\": 20, \"Filter\"",
    );
    let scans = with_table_rows(seq_scans(&parse(&rare).unwrap(), &pages, 8), &rows);
    assert_eq!(
        propose_index(&scans).unwrap().columns,
        vec!["project_id", "updated_on"]
    );
    // Rows read, by the estimates: the whole table to sort it, then 25 of the 5,700
    // matching rows, reading the index backwards (6,000 × 25 / 5,700).
    assert_eq!(rows_read(&custom, &rows), 6000.0);
    let after = rows_read(&parse(RAILS_INDEXED).unwrap(), &rows);
    assert_eq!(after.round(), 26.0);
    // A per-row SubPlan counts per outer row: 20 posts of 200 (the LIMIT), 6,000 comments
    // each (the table's rows).
    let comments = BTreeMap::from([("public.comments".to_string(), 6000)]);
    let subplan = parse(crate::findings::plan_rules_tests::SUBPLAN).unwrap();
    assert_eq!(rows_read(&subplan, &comments), 20.0 + 20.0 * 6000.0);
}

#[test]
fn statements_with_a_subquery_are_wanted() {
    assert!(has_subquery("SELECT a, ( select 1 FROM b) FROM c"));
    assert!(has_subquery("SELECT * FROM (SELECT 1) x"));
    assert!(!has_subquery("SELECT count(*) FROM t WHERE id IN ($1, $2)"));
}
