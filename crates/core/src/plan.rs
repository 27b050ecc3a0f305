//! Plans: which statements get one, what `EXPLAIN (FORMAT JSON, VERBOSE)` says about them
//! (the sequential scans of tables bigger than a few pages), and the index that would
//! replace such a scan. No I/O: `postgres::plans` fetches the plans, this module reads
//! them, and `Report::build` attaches them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::findings::{Finding, FindingKind, RanPlan, proposes_no_index};
pub use crate::report::model::IndexProposal;
use crate::report::model::Report;
use crate::report::model::notes::Note;

/// How many of a report's statements, by shared buffers touched, get a plan besides the
/// statements of its findings.
pub const TOP_STATEMENTS: usize = 3;

/// The plans fetched after the last measured window, by normalized statement text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plans {
    pub by_query: BTreeMap<String, StatementPlan>,
    /// Why plans were skipped; each joins the notes of every report built with them.
    pub notes: Vec<Note>,
    /// Plans were fetched: the findings are judged by them (see `findings::Inputs::plans`).
    pub fetched: bool,
}

impl Plans {
    /// What the findings read of the plans, by statement; `None` when none were fetched.
    pub fn ran(&self) -> Option<BTreeMap<String, RanPlan>> {
        let ran = self
            .by_query
            .iter()
            .map(|(q, p)| (q.clone(), p.ran.clone()));
        self.fetched.then(|| ran.collect())
    }
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
    /// What the findings read of it (the custom plan's scans where one was explained).
    pub ran: RanPlan,
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
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    pub query: String,
    /// Its report has a `seq_scan_heavy` finding that it may cause: propose an index.
    pub propose_index: bool,
    /// Rows per call as measured: the value of a `LIMIT $n` in its custom plan.
    pub rows_per_call: f64,
}

/// The statements the reports need plans for: every finding's statement, every statement
/// with a subquery in its text (`per_row_subquery` reads its plan), and the top
/// [`TOP_STATEMENTS`] top-level statements by buffers touched (utility statements have no
/// plan). Each text once, in the order first met. Where a report has a `seq_scan_heavy`
/// finding, its top statements get a proposal too: a finding read by several statements
/// (a page and its count, a join) names none of them.
pub fn wanted(reports: &[Report]) -> Vec<Wanted> {
    let mut wanted: Vec<Wanted> = Vec::new();
    for report in reports {
        let mut add = |query: &str, propose_index: bool| {
            let rows_per_call = (report.statements.iter())
                .find(|s| s.query == query)
                .map_or(0.0, |s| s.rows_per_call);
            match wanted.iter_mut().find(|w| w.query == query) {
                Some(w) => w.propose_index |= propose_index,
                None => wanted.push(Wanted {
                    query: query.to_string(),
                    propose_index,
                    rows_per_call,
                }),
            }
        };
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
        for statement in &top {
            if has_subquery(&statement.query) {
                add(&statement.query, false);
            }
        }
        for statement in top.into_iter().take(TOP_STATEMENTS) {
            add(&statement.query, heavy);
        }
    }
    wanted
}

/// Whether a statement's text has a `(SELECT` anywhere: a subquery the plan may run per row.
fn has_subquery(query: &str) -> bool {
    let lower = query.to_lowercase();
    lower
        .match_indices('(')
        .any(|(at, _)| lower[at + 1..].trim_start().starts_with("select"))
}

/// The tables' sizes in 8 kB pages, by `schema.table`, as the reports saw them.
pub fn table_pages(reports: &[Report]) -> BTreeMap<String, i64> {
    (reports.iter())
        .flat_map(|r| r.tables.iter())
        .map(|t| (t.table.clone(), t.pages))
        .collect()
}

/// The tables' rows, by `schema.table`: what each measured sequential scan read, or the
/// live rows of a table with none (an estimate the statistics collector may have
/// counted twice after a bulk load and a VACUUM).
pub fn table_rows(reports: &[Report]) -> BTreeMap<String, i64> {
    let rows = |t: &crate::report::model::TableRow| match t.seq_scans > 0.0 {
        true => (t.seq_rows_read / t.seq_scans).round() as i64,
        false => t.live_rows,
    };
    (reports.iter())
        .flat_map(|r| r.tables.iter())
        .map(|t| (t.table.clone(), rows(t)))
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
    /// `Index Cond` or `Recheck Cond`: what an index scan looks up.
    pub index_cond: Option<String>,
    pub sort_key: Vec<String>,
    pub index_name: Option<String>,
    /// The planner's estimate of the rows the node returns.
    pub plan_rows: f64,
    /// `SubPlan`, `InitPlan`, `Outer`, `Inner`...
    pub parent_relationship: Option<String>,
    /// A SubPlan its parent runs once, into a hash table (`hashed SubPlan 1`).
    pub hashed: bool,
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
    // The node's own expressions, where a SubPlan below is named `hashed SubPlan n`.
    let expressions: String = (value.as_object().into_iter().flatten())
        .filter(|(key, _)| *key != "Plans")
        .map(|(_, v)| v.to_string())
        .collect();
    let child = |plan: &Value| {
        let mut child = node(plan);
        child.hashed = plan
            .get("Subplan Name")
            .and_then(Value::as_str)
            .is_some_and(|name| mentions_hashed(&expressions, name));
        child
    };
    Node {
        node_type: text("Node Type").unwrap_or_default(),
        relation,
        alias: text("Alias"),
        filter: text("Filter"),
        index_cond: text("Index Cond").or_else(|| text("Recheck Cond")),
        sort_key: (value.get("Sort Key").and_then(Value::as_array))
            .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string))
            .into_iter()
            .flatten()
            .collect(),
        index_name: text("Index Name"),
        plan_rows: value
            .get("Plan Rows")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        parent_relationship: text("Parent Relationship"),
        hashed: false,
        children: (value.get("Plans").and_then(Value::as_array))
            .map(|plans| plans.iter().map(child).collect())
            .unwrap_or_default(),
    }
}

/// Whether `expressions` name `hashed {subplan}` (`SubPlan 1`, not `SubPlan 12`).
fn mentions_hashed(expressions: &str, subplan: &str) -> bool {
    let needle = format!("hashed {subplan}");
    expressions.match_indices(&needle).any(|(at, _)| {
        !(expressions[at + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// What the findings read of a plan: the tables under a SubPlan run once per row of the
/// outer query (not hashed; an InitPlan runs once), and the tables read sequentially.
pub fn ran(root: &Node) -> RanPlan {
    let mut ran = RanPlan::default();
    ran_into(root, false, false, &mut ran);
    ran
}

/// `inner`: on the inner side of a Nested Loop, through nodes that pass its rescans on.
fn ran_into(node: &Node, per_row: bool, inner: bool, ran: &mut RanPlan) {
    let per_row =
        per_row || (node.parent_relationship.as_deref() == Some("SubPlan") && !node.hashed);
    let add = |list: &mut Vec<String>, table: &String| {
        if !list.contains(table) {
            list.push(table.clone());
        }
    };
    if let Some(table) = &node.relation {
        if per_row {
            add(&mut ran.per_row_tables, table);
        }
        if node.node_type == "Seq Scan" {
            add(&mut ran.seq_scanned, table);
            if inner {
                add(&mut ran.loop_rescanned, table);
            }
        }
    }
    for (i, child) in node.children.iter().enumerate() {
        let inner = match node.node_type.as_str() {
            "Nested Loop" => inner || i == 1,
            // A Materialize, a Memoize or a Hash keeps the rows: no rescan of the table.
            "Materialize" | "Memoize" | "Hash" => false,
            _ => inner && child.parent_relationship.as_deref() != Some("SubPlan"),
        };
        ran_into(child, per_row, inner, ran);
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
    /// The rows the scan returns, by the planner's estimate.
    pub rows: f64,
    /// The table's live rows, where known (see [`with_table_rows`]).
    pub table_rows: Option<f64>,
}

impl SeqScan {
    /// The filter keeps most of the table (the plan of a common value): its equality
    /// columns would narrow nothing, an index on the sort key alone serves the page.
    fn keeps_most(&self) -> bool {
        self.table_rows
            .is_some_and(|n| n > 0.0 && self.rows >= 0.5 * n)
    }
}

/// The scans with their tables' live rows, by `schema.table`.
pub fn with_table_rows(mut scans: Vec<SeqScan>, rows: &BTreeMap<String, i64>) -> Vec<SeqScan> {
    for scan in &mut scans {
        scan.table_rows = rows.get(&scan.table).map(|&n| n as f64);
    }
    scans
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
            rows: node.plan_rows,
            table_rows: None,
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
            let mut columns = (filter.filter(|_| !scan.keeps_most()))
                .map(|f| f.equality)
                .unwrap_or_default();
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
        estimated_rows_read_before: None,
        estimated_rows_read_after: None,
        plan_with_index: None,
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

/// The rows a plan reads from its tables, by the planner's estimates (EXPLAIN without
/// ANALYZE): each scan's rows visited per execution times its executions, a LIMIT cutting
/// short the nodes that stream rows to it and blocking nodes (sorts, hashes, aggregates)
/// reading all their input. A sequential scan, or an index scan with no condition, visits
/// the whole table (`table_rows` by `schema.table`, else its own estimate).
pub fn rows_read(root: &Node, table_rows: &BTreeMap<String, i64>) -> f64 {
    rows_read_times(root, 1.0, table_rows)
}

/// `times`: how often the node runs, a fraction when a LIMIT above stops it early.
fn rows_read_times(node: &Node, times: f64, table_rows: &BTreeMap<String, i64>) -> f64 {
    let whole = || {
        (node.relation.as_ref())
            .and_then(|t| table_rows.get(t))
            .map_or(node.plan_rows, |&n| n as f64)
    };
    let visited = match node.node_type.as_str() {
        "Seq Scan" => whole(),
        "Index Scan" | "Index Only Scan" if node.index_cond.is_none() => whole(),
        "Index Scan" | "Index Only Scan" | "Bitmap Heap Scan" => node.plan_rows,
        _ => 0.0,
    };
    let mut read = visited * times;
    for (i, child) in node.children.iter().enumerate() {
        let child_times = match (
            node.node_type.as_str(),
            child.parent_relationship.as_deref(),
        ) {
            (_, Some("InitPlan")) => 1.0,
            (_, Some("SubPlan")) if child.hashed => 1.0,
            (_, Some("SubPlan")) => times * node.plan_rows.max(1.0),
            ("Limit", _) if child.plan_rows > 0.0 => {
                times * (node.plan_rows / child.plan_rows).min(1.0)
            }
            ("Nested Loop", _) if i == 1 => times * node.children[0].plan_rows.max(1.0),
            ("Sort" | "Hash" | "Aggregate" | "SetOp" | "WindowAgg" | "Materialize", _) => {
                times.max(1.0)
            }
            _ => times,
        };
        read += rows_read_times(child, child_times, table_rows);
    }
    read
}

/// The first element of an array's text (`{1,2}`, `{"a b",c}`): the most common value of
/// `pg_stats.most_common_vals`, as a literal's content.
pub fn first_element(array: &str) -> Option<String> {
    let rest = array.strip_prefix('{')?;
    if let Some(quoted) = rest.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => value.push(chars.next()?),
                '"' => return Some(value),
                c => value.push(c),
            }
        }
        return None;
    }
    let end = rest.find([',', '}'])?;
    let value = &rest[..end];
    (!value.is_empty() && value != "NULL").then(|| value.to_string())
}

/// What a custom plan needs to know about each parameter `$n` of a statement: a `LIMIT $n`
/// or `OFFSET $n` (by the text), or the column a condition of the generic plan compares it
/// with (`alias.column = $n`), as `(schema.table, column)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Parameter {
    Limit,
    Offset,
    Column { table: String, column: String },
    Unknown,
}

/// The parameters `$1..=$count` of `query`, read off its text and its generic plan.
pub fn parameters(query: &str, root: &Node, count: usize) -> Vec<Parameter> {
    let words: Vec<String> = query
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let after = |keyword: &str, n: usize| {
        let placeholder = format!("${n}");
        words
            .windows(2)
            .any(|w| w[0] == keyword && w[1] == placeholder)
    };
    (1..=count)
        .map(|n| {
            if after("limit", n) {
                Parameter::Limit
            } else if after("offset", n) {
                Parameter::Offset
            } else {
                compared_column(root, n).unwrap_or(Parameter::Unknown)
            }
        })
        .collect()
}

/// The column a scan's condition compares with `$n` by `=`, in either order.
fn compared_column(node: &Node, n: usize) -> Option<Parameter> {
    let conditions = [node.filter.as_deref(), node.index_cond.as_deref()];
    if let (Some(table), Some(alias)) = (&node.relation, &node.alias) {
        let prefix = format!("{}.", quote_ident(alias));
        for condition in conditions.into_iter().flatten() {
            for pattern in [format!(" = ${n})"), format!("(${n} = ")] {
                let Some(at) = condition.find(&pattern) else {
                    continue;
                };
                let side = match pattern.starts_with('(') {
                    true => &condition[at + pattern.len()..],
                    false => condition[..at].rsplit('(').next().unwrap_or_default(),
                };
                let side = side.replace(")::", "::");
                let side = side.trim_start_matches('(').trim_end_matches(')');
                let column = side.strip_prefix(&prefix).unwrap_or(side);
                if let Some((name, length)) = identifier(column)
                    && (length == column.len() || column[length..].starts_with("::"))
                {
                    let column = name.trim_matches('"').to_string();
                    return Some(Parameter::Column {
                        table: table.clone(),
                        column,
                    });
                }
            }
        }
    }
    node.children.iter().find_map(|c| compared_column(c, n))
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
#[path = "plan_tests.rs"]
mod tests;
