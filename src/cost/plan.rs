//! Plans: which statements get one, what `EXPLAIN (FORMAT JSON, VERBOSE)` says about them
//! (the sequential scans of tables bigger than a few pages), and the index that would
//! replace such a scan. No I/O: `postgres::plans` fetches the plans, this module reads
//! them, and `Report::build` attaches them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cost::findings::{Finding, FindingKind, proposes_no_index};
use crate::cost::notes::Note;
pub use crate::cost::report::model::IndexProposal;
use crate::cost::report::model::Report;

/// How many of a report's statements, by shared buffers touched, get a plan besides the
/// statements of its findings.
pub const TOP_STATEMENTS: usize = 3;

/// The plans fetched after the last measured window, by normalized statement text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plans {
    pub by_query: BTreeMap<String, StatementPlan>,
    /// Why plans were skipped; each joins the notes of every report built with them.
    pub notes: Vec<Note>,
}

/// One statement's generic plan.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementPlan {
    /// `EXPLAIN`'s text format, as psql prints it.
    pub text: String,
    /// The index that would replace a sequential scan of a big table, when one was asked
    /// for (`Wanted::propose_index`) and the plan shows one. Never one that hypopg showed
    /// the planner would not use.
    pub index: Option<IndexProposal>,
    /// The plan's fingerprint, from its JSON: see [`shape`]. Empty when it did not parse.
    pub shape: Vec<String>,
}

impl IndexProposal {
    /// The same index as `hypopg_create_index` takes it: no `CONCURRENTLY`.
    pub fn hypothetical(&self) -> String {
        format!(
            "CREATE INDEX ON {} ({})",
            self.table,
            self.columns.join(", ")
        )
    }
}

/// A statement that needs a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub query: String,
    /// Its report has a `seq_scan_heavy` finding that it may cause: propose an index.
    pub propose_index: bool,
}

/// The statements the reports need plans for: every finding's statement, and the top
/// [`TOP_STATEMENTS`] top-level statements by buffers touched (utility statements have no
/// plan). Each text once, in the order first met. Where a report has a `seq_scan_heavy`
/// finding, its top statements get a proposal too: a finding read by several statements
/// (a page and its count, a join) names none of them.
pub fn wanted(reports: &[Report]) -> Vec<Wanted> {
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut add =
        |query: &str, propose_index: bool| match wanted.iter_mut().find(|w| w.query == query) {
            Some(w) => w.propose_index |= propose_index,
            None => wanted.push(Wanted {
                query: query.to_string(),
                propose_index,
            }),
        };
    for report in reports {
        // A finding on a small table blames the query's shape and asks for no index.
        let wants_index =
            |f: &Finding| f.kind == FindingKind::SeqScanHeavy && !proposes_no_index(f);
        let heavy = report.findings.iter().any(wants_index);
        for finding in &report.findings {
            if let Some(query) = &finding.query {
                add(query, wants_index(finding));
            }
        }
        let mut top: Vec<_> = (report.statements.iter())
            .filter(|s| s.toplevel && !s.utility)
            .collect();
        top.sort_by(|a, b| b.blocks_per_request.total_cmp(&a.blocks_per_request));
        for statement in top.into_iter().take(TOP_STATEMENTS) {
            add(&statement.query, heavy);
        }
    }
    wanted
}

/// The tables' sizes in 8 kB pages, by `schema.table`, as the reports saw them.
pub fn table_pages(reports: &[Report]) -> BTreeMap<String, i64> {
    (reports.iter())
        .flat_map(|r| r.tables.iter())
        .map(|t| (t.table.clone(), t.pages))
        .collect()
}

/// One node of a plan, as much of it as the proposals read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Node {
    pub node_type: String,
    /// `schema.table` of a scan.
    pub relation: Option<String>,
    pub alias: Option<String>,
    pub filter: Option<String>,
    pub sort_key: Vec<String>,
    pub index_name: Option<String>,
    pub children: Vec<Node>,
}

/// Reads the output of `EXPLAIN (FORMAT JSON)`: an array of one object with a "Plan".
pub fn parse(json: &str) -> Result<Node, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let plan = value
        .get(0)
        .and_then(|v| v.get("Plan"))
        .ok_or("EXPLAIN (FORMAT JSON) returned no \"Plan\"")?;
    Ok(node(plan))
}

fn node(value: &Value) -> Node {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let relation = text("Relation Name").map(|name| match text("Schema") {
        Some(schema) => format!("{schema}.{name}"),
        None => name,
    });
    Node {
        node_type: text("Node Type").unwrap_or_default(),
        relation,
        alias: text("Alias"),
        filter: text("Filter"),
        sort_key: (value.get("Sort Key").and_then(Value::as_array))
            .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string))
            .into_iter()
            .flatten()
            .collect(),
        index_name: text("Index Name"),
        children: (value.get("Plans").and_then(Value::as_array))
            .map(|plans| plans.iter().map(node).collect())
            .unwrap_or_default(),
    }
}

/// A sequential scan of a table of at least `min_pages` pages, and the sort keys of the
/// top-N sort above it under a LIMIT, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct SeqScan {
    pub table: String,
    pub pages: i64,
    pub alias: String,
    pub filter: Option<String>,
    pub top_n_sort: Option<Vec<String>>,
}

/// The sequential scans of tables of at least `min_pages` pages (by `pages`; a table of
/// unknown size is left out), in plan order.
pub fn seq_scans(root: &Node, pages: &BTreeMap<String, i64>, min_pages: i64) -> Vec<SeqScan> {
    let mut scans = Vec::new();
    collect_scans(root, None, false, pages, min_pages, &mut scans);
    scans
}

/// `limited`: a Limit is above; `sort`: the keys of the Sort between it and this node, as
/// long as only joins and the nodes that feed them (Hash, Materialize, Memoize, Gather)
/// stand in between. A scan takes the keys only when they are all its own: an index on
/// them lets the planner read that table in order and stop after the first rows, the
/// joins following row by row.
fn collect_scans(
    node: &Node,
    sort: Option<&[String]>,
    limited: bool,
    pages: &BTreeMap<String, i64>,
    min_pages: i64,
    scans: &mut Vec<SeqScan>,
) {
    if node.node_type == "Seq Scan"
        && let Some(table) = &node.relation
        && let Some(&size) = pages
            .get(table)
            .or_else(|| pages.get(&format!("public.{table}")))
        && size >= min_pages
    {
        let alias = node.alias.clone().unwrap_or_else(|| table.clone());
        scans.push(SeqScan {
            table: table.clone(),
            pages: size,
            top_n_sort: (sort.filter(|keys| sort_columns(keys, &alias).is_some()))
                .map(<[String]>::to_vec),
            alias,
            filter: node.filter.clone(),
        });
    }
    for child in &node.children {
        let (sort, limited) = match node.node_type.as_str() {
            "Limit" => (None, true),
            "Sort" | "Incremental Sort" if limited => (Some(node.sort_key.as_slice()), false),
            "Gather" | "Gather Merge" | "Nested Loop" | "Hash Join" | "Merge Join" | "Hash"
            | "Materialize" | "Memoize" => (sort, limited),
            _ => (None, false),
        };
        collect_scans(child, sort, limited, pages, min_pages, scans);
    }
}

/// The indexes that could replace the scans, biggest table first, one per scan that has
/// one: under a LIMIT, the filter's equality columns then the sort keys (a top-N sort
/// over the whole table stops after the first rows with them); otherwise the filter's
/// columns, equality columns first. The first the planner would use is the proposal.
pub fn propose_indexes(scans: &[SeqScan]) -> Vec<IndexProposal> {
    let mut scans: Vec<&SeqScan> = scans.iter().collect();
    scans.sort_by_key(|s| std::cmp::Reverse(s.pages));
    let mut out: Vec<IndexProposal> = Vec::new();
    for proposal in scans.into_iter().filter_map(proposal) {
        if !out.iter().any(|p| p.statement == proposal.statement) {
            out.push(proposal);
        }
    }
    out
}

/// The first of [`propose_indexes`], unverified.
pub fn propose_index(scans: &[SeqScan]) -> Option<IndexProposal> {
    propose_indexes(scans).into_iter().next()
}

fn proposal(scan: &SeqScan) -> Option<IndexProposal> {
    let filter = scan
        .filter
        .as_deref()
        .map(|f| filter_columns(f, &scan.alias));
    let (columns, replaces) = match &scan.top_n_sort {
        Some(keys) => {
            let sort = sort_columns(keys, &scan.alias)?;
            let mut columns = filter.map(|f| f.equality).unwrap_or_default();
            columns.retain(|c| !sort.iter().any(|s| s.split(' ').next() == Some(c)));
            columns.extend(sort);
            let replaces = format!(
                "a top-N sort of {} by {} under a LIMIT, over a sequential scan of the \
                 whole table ({} pages)",
                scan.table,
                keys.join(", "),
                scan.pages
            );
            (columns, replaces)
        }
        None => {
            let filter = filter?;
            if filter.disjunction {
                return None;
            }
            let mut columns = filter.equality;
            columns.extend(filter.other.into_iter().take(1));
            let replaces = format!(
                "Seq Scan on {} ({} pages), Filter: {}",
                scan.table,
                scan.pages,
                scan.filter.as_deref().unwrap_or_default()
            );
            (columns, replaces)
        }
    };
    if columns.is_empty() {
        return None;
    }
    Some(IndexProposal {
        statement: format!(
            "CREATE INDEX CONCURRENTLY ON {} ({});",
            scan.table,
            columns.join(", ")
        ),
        table: scan.table.clone(),
        columns,
        replaces,
        verified: None,
    })
}

/// The columns of one table a filter tests, as `EXPLAIN VERBOSE` prints them
/// (`alias.column`).
#[derive(Debug, Default, PartialEq)]
struct FilterColumns {
    /// Compared with `=`.
    equality: Vec<String>,
    /// Compared otherwise (ranges, LIKE, function calls).
    other: Vec<String>,
    /// The filter has an OR: no one index serves it.
    disjunction: bool,
}

fn filter_columns(filter: &str, alias: &str) -> FilterColumns {
    let mut columns = FilterColumns {
        disjunction: filter.contains(" OR "),
        ..FilterColumns::default()
    };
    let prefix = format!("{}.", quote_ident(alias));
    let mut from = 0;
    while let Some(found) = filter[from..].find(&prefix) {
        let start = from + found;
        from = start + prefix.len();
        let before = filter[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"' || c == '.') {
            continue;
        }
        let Some((column, length)) = identifier(&filter[from..]) else {
            continue;
        };
        let after = &filter[from + length..];
        let equality = compared_with_equals(after) || filter[..start].trim_end().ends_with(" =");
        let list = if equality {
            &mut columns.equality
        } else {
            &mut columns.other
        };
        if !list.contains(&column) {
            list.push(column);
        }
    }
    let equality = columns.equality.clone();
    columns.other.retain(|c| !equality.contains(c));
    columns
}

/// After a column: closing parentheses and casts (`)::text`), then ` = `.
fn compared_with_equals(mut after: &str) -> bool {
    loop {
        after = after.trim_start_matches(')');
        match after.strip_prefix("::") {
            Some(rest) => {
                let cast_end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '[' || c == ']'))
                    .unwrap_or(rest.len());
                after = &rest[cast_end..];
            }
            None => break,
        }
    }
    after.trim_start().starts_with("= ")
}

/// A plain or double-quoted identifier at the start of `text`, as it must be written in
/// SQL, and its length in `text`.
fn identifier(text: &str) -> Option<(String, usize)> {
    if let Some(rest) = text.strip_prefix('"') {
        let end = rest.find('"')?;
        return Some((format!("\"{}\"", &rest[..end]), end + 2));
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    (end > 0).then(|| (text[..end].to_string(), end))
}

/// The columns of sort keys (`alias.created_at DESC`), or None when a key is an expression.
/// Directions are kept only when they differ: a btree is read backwards just as well.
fn sort_columns(keys: &[String], alias: &str) -> Option<Vec<String>> {
    let prefix = format!("{}.", quote_ident(alias));
    let mut columns = Vec::new();
    let mut descending = Vec::new();
    for key in keys {
        let mut words: Vec<&str> = key.split(' ').collect();
        let mut desc = false;
        while let Some(last) = words.last() {
            match *last {
                "DESC" => desc = true,
                "ASC" | "NULLS" | "FIRST" | "LAST" => {}
                _ => break,
            }
            words.pop();
        }
        let expression = words.join(" ");
        let column = expression.strip_prefix(&prefix).unwrap_or(&expression);
        let (name, length) = identifier(column)?;
        if length != column.len() {
            return None;
        }
        columns.push(name);
        descending.push(desc);
    }
    if descending.iter().any(|d| *d != descending[0]) {
        for (column, desc) in columns.iter_mut().zip(descending) {
            if desc {
                column.push_str(" DESC");
            }
        }
    }
    Some(columns)
}

/// An identifier as SQL must spell it.
fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// True when some node of the plan reads the index named `index`.
pub fn uses_index(root: &Node, index: &str) -> bool {
    root.index_name.as_deref() == Some(index) || root.children.iter().any(|c| uses_index(c, index))
}

/// The plans of the report: its statements' and its findings', with the index proposal
/// for `seq_scan_heavy` findings. Part of building a report; nothing changes it afterwards.
pub fn attach(report: &mut Report, plans: &Plans) {
    for statement in &mut report.statements {
        let plan = plans.by_query.get(&statement.query);
        statement.plan = plan.map(|p| p.text.clone());
        statement.plan_shape = plan
            .filter(|p| !p.shape.is_empty())
            .map(|p| p.shape.clone());
    }
    for finding in &mut report.findings {
        let plan = finding.query.as_ref().and_then(|q| plans.by_query.get(q));
        finding.plan = plan.map(|p| p.text.clone());
        if finding.kind == FindingKind::SeqScanHeavy && !proposes_no_index(finding) {
            // A join's proposal may be for another of its tables.
            let table = finding.table.as_deref();
            finding.index = (plan.and_then(|p| p.index.clone()))
                .filter(|i| table.is_none_or(|t| t == i.table))
                .or_else(|| index_on(plans, table));
        }
    }
    report.notes.extend(plans.notes.iter().cloned());
}

/// The proposal of any statement's plan on `table`, a verified one first: the index of
/// a `seq_scan_heavy` finding that names no single statement.
fn index_on(plans: &Plans, table: Option<&str>) -> Option<IndexProposal> {
    let table = table?;
    let mut on_table: Vec<&IndexProposal> = (plans.by_query.values())
        .filter_map(|p| p.index.as_ref())
        .filter(|i| i.table == table)
        .collect();
    on_table.sort_by_key(|i| i.verified != Some(true));
    on_table.first().map(|i| (*i).clone())
}

/// A plan's fingerprint, node by node in plan order: the node type, the index it reads
/// and the relation, as EXPLAIN's text names them (`Index Scan using orders_idx on
/// public.orders`, `Bitmap Index Scan on orders_idx`, `Hash Join`). Costs, row estimates
/// and conditions are left out: they move with the data, the shape does not.
pub fn shape(root: &Node) -> Vec<String> {
    let mut out = Vec::new();
    shape_into(root, &mut out);
    out
}

fn shape_into(node: &Node, out: &mut Vec<String>) {
    out.push(match (&node.index_name, &node.relation) {
        (Some(index), Some(table)) => format!("{} using {index} on {table}", node.node_type),
        (Some(index), None) => format!("{} on {index}", node.node_type),
        (None, Some(table)) => format!("{} on {table}", node.node_type),
        (None, None) => node.node_type.clone(),
    });
    for child in &node.children {
        shape_into(child, out);
    }
}

#[cfg(test)]
mod tests {
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
        use crate::cost::findings::tests::{report, stmt, table};
        let q = "SELECT id FROM sites WHERE id IN (SELECT id FROM sites WHERE tenant_id = $1)";
        let wanted_for = |pages: i64| {
            let mut sites = table("public.sites", pages);
            sites.seq_scans = 2.0;
            sites.seq_rows_read = 100.0 * pages as f64;
            sites.rows_updated = 1.0;
            let mut r = report(vec![stmt(q, 1.0, 5.0)], vec![sites]);
            r.findings = crate::cost::findings::analyze(
                &crate::cost::findings::Inputs::of(&r),
                &Default::default(),
            );
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
        let filter =
            "((o.tenant_id = $1) AND (o.created_at > $2) AND ((o.status)::text = 'x'::text))";
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
        };
        assert_eq!(propose_index(&[or]), None);
        let expression = SeqScan {
            table: "public.t".into(),
            pages: 100,
            alias: "t".into(),
            filter: None,
            top_n_sort: Some(vec!["lower(t.name)".into()]),
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
}
