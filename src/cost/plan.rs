//! Plans: which statements get one, what `EXPLAIN (FORMAT JSON, VERBOSE)` says about them
//! (the sequential scans of tables bigger than a few pages), and the index that would
//! replace such a scan. No I/O: `postgres::plans` fetches the plans, this module reads
//! them, and `Report::build` attaches them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cost::findings::FindingKind;
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
    /// for (`Wanted::propose_index`) and the plan shows one.
    pub index: Option<IndexProposal>,
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
    /// It is the statement of a `seq_scan_heavy` finding: propose an index.
    pub propose_index: bool,
}

/// The statements the reports need plans for: every finding's statement, and the top
/// [`TOP_STATEMENTS`] top-level statements by buffers touched (utility statements have no
/// plan). Each text once, in the order first met.
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
        for finding in &report.findings {
            if let Some(query) = &finding.query {
                add(query, finding.kind == FindingKind::SeqScanHeavy);
            }
        }
        let mut top: Vec<_> = (report.statements.iter())
            .filter(|s| s.toplevel && !s.utility)
            .collect();
        top.sort_by(|a, b| b.blocks_per_request.total_cmp(&a.blocks_per_request));
        for statement in top.into_iter().take(TOP_STATEMENTS) {
            add(&statement.query, false);
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
/// long as nothing but a Gather stands in between.
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
        scans.push(SeqScan {
            table: table.clone(),
            pages: size,
            alias: node.alias.clone().unwrap_or_else(|| table.clone()),
            filter: node.filter.clone(),
            top_n_sort: sort.map(<[String]>::to_vec),
        });
    }
    for child in &node.children {
        let (sort, limited) = match node.node_type.as_str() {
            "Limit" => (None, true),
            "Sort" | "Incremental Sort" if limited => (Some(node.sort_key.as_slice()), false),
            "Gather" | "Gather Merge" => (sort, limited),
            _ => (None, false),
        };
        collect_scans(child, sort, limited, pages, min_pages, scans);
    }
}

/// The index for the biggest scan that has one: under a LIMIT, the filter's equality
/// columns then the sort keys (a top-N sort over the whole table stops after the first
/// rows with them); otherwise the filter's columns, equality columns first.
pub fn propose_index(scans: &[SeqScan]) -> Option<IndexProposal> {
    let mut scans: Vec<&SeqScan> = scans.iter().collect();
    scans.sort_by_key(|s| std::cmp::Reverse(s.pages));
    scans.into_iter().find_map(proposal)
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
        statement.plan = (plans.by_query.get(&statement.query)).map(|p| p.text.clone());
    }
    for finding in &mut report.findings {
        let plan = finding.query.as_ref().and_then(|q| plans.by_query.get(q));
        finding.plan = plan.map(|p| p.text.clone());
        if finding.kind == FindingKind::SeqScanHeavy {
            finding.index = plan.and_then(|p| p.index.clone());
        }
    }
    report.notes.extend(plans.notes.iter().cloned());
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
        // A sort above a join is no top-N sort of one table.
        let join = r#"[{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Sort",
            "Sort Key": ["o.created_at"], "Plans": [{"Node Type": "Hash Join", "Plans": [
              {"Node Type": "Seq Scan", "Relation Name": "plan_orders", "Schema": "public",
               "Alias": "o"}]}]}]}}]"#;
        let scans = seq_scans(&parse(join).unwrap(), &pages(), 8);
        assert_eq!(scans[0].top_n_sort, None);
        assert_eq!(propose_index(&scans), None);
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
