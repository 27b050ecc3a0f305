//! Findings: names the waste in a measured request pipeline.
//!
//! [`analyze`] reads a [`Report`] and returns what a reader should change, each finding
//! with its evidence, a suggestion and how many rows and round trips per request it
//! would save. It does no I/O: everything it knows is in the report, its connections
//! ([`Pool`](crate::report::model::Pool)) included.
//!
//! Statement texts are parsed with `sqlparser` (Postgres dialect). A text that does not
//! parse (pg_stat_statements truncates long ones) is still read from its tokens, and the
//! findings that depend on it say so with `unparsed: true`.

mod advice;
mod batch_load;
mod connection;
mod count_per_page;
mod duplicate_load;
mod identity;
mod inputs;
#[cfg(test)]
mod kinds_tests;
mod overfetch;
mod per_row_subquery;
#[cfg(test)]
pub(crate) mod plan_rules_tests;
pub mod planning;
#[cfg(test)]
mod precision_tests;
mod repeated;
mod round_trips;
mod rules;
mod saving;
pub mod sent_from;
mod seq_scan;
mod session_setup;
mod sql;
/// Its tests, and the hand-built values they share with the binary's tests (the feature
/// `fixtures`, which only the binary's dev-dependency turns on).
#[cfg(any(test, feature = "fixtures"))]
pub mod tests;
mod writes;

use std::collections::BTreeMap;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use strum::{EnumCount, VariantArray};

use crate::report::model::TableRow;
pub use crate::report::model::finding::{Finding, FindingKind, Saving, Severity};
use crate::text::shown_sql;
pub use advice::{explain, summary};
use connection::connection_per_request;
pub use inputs::{Inputs, RanPlan};
use rules::{cache_candidate, collection_to_boolean, n_plus_one, round_trips};
pub use saving::{rank, severity};
pub use seq_scan::proposes_no_index;
use seq_scan::seq_scan_heavy;
use sql::{Access, Shape};

/// `Thresholds` and its `Default`: each threshold declared once, with its doc and its
/// default.
macro_rules! thresholds {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $default:expr,)*) => {
        /// Every threshold the findings apply. `Default` gives the documented defaults; a
        /// configuration file may override any subset.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(default, deny_unknown_fields)]
        pub struct Thresholds {
            $($(#[$doc])* pub $name: $ty,)*
        }

        impl Default for Thresholds {
            fn default() -> Self {
                Thresholds {
                    $($name: $default,)*
                }
            }
        }
    };
}

thresholds! {
    /// collection_to_boolean: the statement runs at least this often per request (0.5).
    collection_min_calls_per_request: f64 = 0.5,
    /// collection_to_boolean: and returns at least this many rows per call (10).
    collection_min_rows_per_call: f64 = 10.0,
    /// n_plus_one: the same statement runs at least this often per request (3)...
    n_plus_one_min_calls_per_request: f64 = 3.0,
    /// ...returning at most this many rows per call (2).
    n_plus_one_max_rows_per_call: f64 = 2.0,
    /// round_trips: top-level statements per request, BEGIN and COMMIT included (5).
    round_trips_min_statements_per_request: f64 = 5.0,
    /// round_trips: a statement runs "once per request" when its calls per request are
    /// within this distance of 1 (0.01).
    once_per_request_tolerance: f64 = 0.01,
    /// round_trips: a statement worth memoising within the request runs at least this
    /// often per request (1.5).
    memoise_min_calls_per_request: f64 = 1.5,
    /// connection_per_request: new connections per request (0.5).
    connection_min_new_sessions_per_request: f64 = 0.5,
    /// cache_candidate: the statement runs at least this often per request (0.99: once per
    /// request, allowing for rounding).
    cache_min_calls_per_request: f64 = 0.99,
    /// seq_scan_heavy: rows read by sequential scans per request, as a multiple of the
    /// rows the request gets back from the table (10).
    seq_scan_min_read_to_returned_ratio: f64 = 10.0,
    /// seq_scan_heavy: tables smaller than this many 8 kB pages are never flagged: a scan
    /// of a tiny table is as cheap as an index lookup (8).
    seq_scan_min_pages: i64 = 8,
    /// seq_scan_heavy: tables under this many 8 kB pages (16: 128 kB) are small: their
    /// finding blames the query's shape and proposes no index.
    seq_scan_small_table_pages: i64 = 16,
    /// seq_scan_heavy: and at least this many rows read by sequential scans per request,
    /// so that an occasional scan is not reported (100).
    seq_scan_min_rows_read_per_request: f64 = 100.0,
    /// repeated_statement: the same read runs at least this often per request (1.99:
    /// twice per request, allowing for rounding).
    repeated_min_calls_per_request: f64 = 1.99,
    /// cache_candidate: every table the read touches has at most this many 8 kB pages
    /// (8): reference data, not the app's growing tables.
    cache_max_table_pages: i64 = 8,
    /// cache_candidate: and it returns at most this many rows per call (5): a keyed
    /// lookup, not a listing.
    cache_max_rows_per_call: f64 = 5.0,
    /// Severity: high from this many avoidable rows per request (100).
    high_avoidable_rows_per_request: f64 = 100.0,
    /// Severity: high from this many avoidable round trips per request (3).
    high_round_trips_per_request: f64 = 3.0,
    /// Severity: medium from this many avoidable rows per request (10).
    medium_avoidable_rows_per_request: f64 = 10.0,
    /// Severity: medium from this many avoidable round trips per request (1).
    medium_round_trips_per_request: f64 = 1.0,
    /// Severity: high from this much avoidable db time per request, in ms (10).
    high_db_time_ms_per_request: f64 = 10.0,
    /// Severity: medium from this much avoidable db time per request, in ms (1).
    medium_db_time_ms_per_request: f64 = 1.0,
    /// writes_on_read: a writing statement runs and changes something (WAL records, or
    /// rows before PG 13) at least this often per request of a GET or HEAD (0.99).
    writes_min_per_request: f64 = 0.99,
    /// spills_to_disk: temp-file blocks (8 kB) a statement writes per request (1).
    spill_min_temp_blocks_per_request: f64 = 1.0,
    /// checkout_ping: the pool's `SELECT 1` runs at least this often per request (0.9).
    checkout_ping_min_calls_per_request: f64 = 0.9,
    /// transaction_around_single_read: BEGINs per request (0.99: on every request).
    transaction_min_per_request: f64 = 0.99,
    /// transaction_around_single_read: reads per transaction within this distance of 1
    /// (0.25).
    reads_per_transaction_tolerance: f64 = 0.25,
    /// overfetch: the page returns at least this many rows per item of the response (2).
    overfetch_min_ratio: f64 = 2.0,
    /// collection_to_boolean: a read that returns at most this many rows per row of the
    /// page, or per item of the response, loads the page's children (4).
    eager_max_rows_per_page_item: f64 = 4.0,
    /// duplicate_load: each statement loading the same key runs at least this often per
    /// request (0.99).
    duplicate_min_calls_per_request: f64 = 0.99,
    /// session_setup_per_checkout: a session setting (SET, RESET, DISCARD) runs at least
    /// this often per request (0.9: on about every checkout).
    session_setup_min_calls_per_request: f64 = 0.9,
    /// count_per_page: the page's total runs at least this often per request (0.99)...
    count_min_calls_per_request: f64 = 0.99,
    /// ...and reads at least this many rows per request (100).
    count_min_rows_read_per_request: f64 = 100.0,
    /// per_row_subquery: a table is scanned at least this often per request (5)...
    per_row_min_scans_per_request: f64 = 5.0,
    /// ...and this many times per call of the statements that read it (5).
    per_row_min_scans_per_call: f64 = 5.0,
    /// planning_dominates: plan time per request at least this many ms (0.5)...
    planning_min_ms_per_request: f64 = 0.5,
    /// ...and at least this multiple of the statement's execution time (1).
    planning_min_ratio_to_execution: f64 = 1.0,
}

impl FindingKind {
    /// Every kind, in the order they are declared.
    pub const ALL: [FindingKind; Self::COUNT] = *Self::VARIANTS.first_chunk().unwrap();

    /// The snake_case name, as in JSON.
    /// The kind in one line, its doc comment: the command line's help and SARIF's short
    /// description.
    pub fn one_line(self) -> &'static str {
        strum::EnumMessage::get_documentation(&self)
            .unwrap_or_default()
            .trim()
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A name that is no finding kind or severity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`; expected one of: {expected}")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    pub expected: String,
}

impl FromStr for FindingKind {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        FindingKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| UnknownName {
                what: "finding kind",
                name: name.to_string(),
                expected: FindingKind::ALL.map(FindingKind::as_str).join(", "),
            })
    }
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::High, Severity::Medium, Severity::Low];

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl FromStr for Severity {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Severity::ALL
            .into_iter()
            .find(|severity| severity.as_str() == name)
            .ok_or_else(|| UnknownName {
                what: "severity",
                name: name.to_string(),
                expected: Severity::ALL.map(Severity::as_str).join(", "),
            })
    }
}

impl Finding {
    fn new(kind: FindingKind, suggestion: String) -> Finding {
        Finding {
            kind,
            severity: Severity::Low,
            query: None,
            table: None,
            evidence: BTreeMap::new(),
            suggestion,
            unparsed: false,
            avoidable_rows_per_request: 0.0,
            round_trips_per_request: 0.0,
            plan: None,
            index: None,
            saves_per_request: Saving::default(),
            database: None,
            locations: Vec::new(),
            tags: None,
        }
    }
}

/// Adds to each finding the tags of its statement (a finding over several statements
/// has theirs already) and the places to open: each tagged file:line first (the call
/// site), then with `source` where the app's source declares its tables and writes its SQL. `root` is `source`'s directory made absolute, to make
/// a tag's absolute path relative.
pub fn locate(
    findings: &mut [Finding],
    statements: &[crate::report::model::StatementRow],
    source: Option<(&crate::source::SourceMap, &std::path::Path)>,
) {
    for finding in findings {
        let query = finding.query.as_deref();
        // A finding over several statements has their tags, as one, from its rule.
        let over_several = match finding.kind {
            FindingKind::RoundTrips
            | FindingKind::SessionSetupPerCheckout
            | FindingKind::CountPerPage => true,
            FindingKind::SeqScanHeavy => query.is_none(),
            _ => false,
        };
        if !over_several || finding.tags.is_none() {
            finding.tags = query.and_then(|q| sent_from::tags_of(statements, q).cloned());
        }
        let root = source.map(|(_, root)| root);
        let tagged = finding.tags.as_ref().map(|t| sent_from::locations(t, root));
        finding.locations = tagged.unwrap_or_default();
        if let Some((source, _)) = source {
            let found = source.locate(&tables_of(finding), finding.query.as_deref());
            finding.locations.extend(found);
        }
    }
}

/// The tables a finding is about: its table, else those its statement reads or writes
/// (from the tokens when the text does not parse).
fn tables_of(finding: &Finding) -> Vec<String> {
    if let Some(table) = &finding.table {
        return vec![table.clone()];
    }
    let Some(query) = &finding.query else {
        return Vec::new();
    };
    let shape = sql::shape(query);
    let relations = match shape.parsed {
        true => shape.relations,
        false => shape.mentioned,
    };
    let mut names: Vec<String> = Vec::new();
    for relation in relations {
        if !names.contains(&relation.name) {
            names.push(relation.name);
        }
    }
    names
}

/// Statements whose text parses, and all statements, counting the top-level statements
/// other than BEGIN, COMMIT, SET and the like (the ones [`analyze`] reads) among a report's
/// `statements`.
pub fn parse_rate(statements: &[crate::report::model::StatementRow]) -> (usize, usize) {
    let analysed: Vec<&str> = (statements.iter())
        .filter(|s| s.toplevel && !s.utility)
        .map(|s| s.query.as_str())
        .collect();
    let parsed = analysed.iter().filter(|q| sql::parses(q)).count();
    (parsed, analysed.len())
}

/// Names the waste in a measurement's [`Inputs`], ranked by what fixing it saves (see
/// [`rank`]). Reads them whether or not the report is valid: whether to show findings of
/// an untrustworthy measurement is the caller's decision.
///
/// Only top-level statements other than BEGIN, COMMIT, SET and the like are read, and
/// rows with the same text (other users, other query ids) count as one statement; a new
/// connection's set-up is read by `connection_per_request` alone.
/// Statements nested in functions are left out: their cost shows in the caller.
pub fn analyze(inputs: &Inputs, t: &Thresholds) -> Vec<Finding> {
    let statements = statements(inputs);
    let items = inputs.response_items.map(|n| n as f64);
    let mut findings = Vec::new();
    for statement in &statements {
        findings.extend(statement_findings(statement, &statements, items, t));
        findings.extend(writes::writes_on_read(inputs, statement, t));
        findings.extend(writes::spills_to_disk(inputs, statement, t));
        findings.extend(planning::planning_dominates(statement, t));
    }
    findings.extend(round_trips(inputs, &statements, t));
    findings.extend(round_trips::transaction_around_single_read(
        inputs,
        &statements,
        t,
    ));
    findings.extend(connection_per_request(inputs, t));
    findings.extend(session_setup::session_setup_per_checkout(inputs, t));
    findings.extend(
        inputs
            .tables
            .iter()
            .filter_map(|table| seq_scan_heavy(table, &statements, inputs, t)),
    );
    findings.extend(statements.iter().filter_map(|s| {
        let plan = inputs.plan(s.query)?;
        per_row_subquery::per_row_subquery(s, plan, &statements, t)
    }));
    seq_scan::leave_to_counts(&mut findings, &statements, t);
    // After round_trips: on a tie in the ranking, its wider advice comes first.
    findings.extend(duplicate_load::duplicate_load(&statements, t));
    for finding in &mut findings {
        finding.severity = severity(finding, t);
    }
    rank(&mut findings);
    keep_top_cache_candidates(&mut findings);
    findings
}

/// The findings about one statement. Fix the waste before caching it: a cache in front
/// of a set-building, N+1 or repeated query hides the problem and adds staleness. A pool's
/// ping is only ever a `checkout_ping`: it is no loop, no repeated read, no lookup.
fn statement_findings(
    s: &Statement,
    all: &[Statement],
    items: Option<f64>,
    t: &Thresholds,
) -> Vec<Finding> {
    if s.ping {
        return round_trips::checkout_ping(s, t).into_iter().collect();
    }
    let wasteful: Vec<Finding> = collection_to_boolean(s, all, items, t)
        .into_iter()
        .chain(overfetch::overfetch(s, items, t))
        .chain(n_plus_one(s, t))
        .chain(repeated::repeated_statement(s, t))
        .chain(count_per_page::count_per_page(s, all, t))
        .collect();
    if wasteful.is_empty() {
        cache_candidate(s, all, t).into_iter().collect()
    } else {
        wasteful
    }
}

/// At most this many cache candidates are reported, the best savings first.
const CACHE_CANDIDATES_SHOWN: usize = 3;

/// Drops the cache candidates after the first [`CACHE_CANDIDATES_SHOWN`] of the ranked
/// findings.
fn keep_top_cache_candidates(findings: &mut Vec<Finding>) {
    let mut seen = 0;
    findings.retain(|f| {
        if f.kind != FindingKind::CacheCandidate {
            return true;
        }
        seen += 1;
        seen <= CACHE_CANDIDATES_SHOWN
    });
}

/// One top-level, non-utility statement text with what the findings need of it.
struct Statement<'a> {
    query: &'a str,
    calls_per_request: f64,
    rows_per_request: f64,
    rows_per_call: f64,
    share_of_rows_returned: f64,
    /// Execution time per request, in ms.
    db_time_ms: f64,
    /// Plan time per request, in ms; `None` when not counted (before PG 13, or with
    /// pg_stat_statements.track_planning off).
    plan_time_ms: Option<f64>,
    /// Rows read per request from its tables, when it is the only statement that reads
    /// its only table (otherwise unknown: 0).
    table_rows_read: f64,
    /// Part of the page the endpoint returns (see [`mark_pages`]).
    page: bool,
    /// A pool's liveness check (`SELECT 1`).
    ping: bool,
    shape: Shape,
    /// The report's tables it touches.
    tables: Vec<&'a TableRow>,
    /// It names a relation that is no table of the report (a view, a partitioned parent,
    /// a table whose counters did not move): what it reads is not fully known.
    unknown_relation: bool,
    /// The tags the app sent it with, when it carried any.
    tags: Option<&'a crate::tags::StatementTags>,
}

impl Statement<'_> {
    fn runs_once_per_request(&self, t: &Thresholds) -> bool {
        (self.calls_per_request - 1.0).abs() <= t.once_per_request_tolerance
    }

    /// One call per item: a keyed statement run at least 3 times, a row or two each. A
    /// read without parameters is no loop over items: it is a repeated statement.
    fn is_n_plus_one(&self, t: &Thresholds) -> bool {
        self.calls_per_request >= t.n_plus_one_min_calls_per_request
            && self.rows_per_call <= t.n_plus_one_max_rows_per_call
            && (self.shape.placeholders > 0 || self.shape.access != Access::Read)
    }

    /// A finding of `kind` about this statement: its text, its one table, whether the
    /// text parsed.
    fn finding(&self, kind: FindingKind, suggestion: String) -> Finding {
        Finding {
            query: Some(self.query.to_string()),
            table: self.only_table().map(|table| table.table.clone()),
            unparsed: !self.shape.parsed,
            ..Finding::new(kind, suggestion)
        }
    }

    fn only_table(&self) -> Option<&TableRow> {
        match self.tables.as_slice() {
            [table] if !self.unknown_relation => Some(table),
            _ => None,
        }
    }

    /// The relations it names, bare and lower-case, to compare statements.
    fn relation_names(&self) -> Vec<String> {
        let relations = if self.shape.relations.is_empty() {
            &self.shape.mentioned
        } else {
            &self.shape.relations
        };
        let mut names: Vec<String> = relations.iter().map(|r| r.name.to_lowercase()).collect();
        names.sort();
        names.dedup();
        names
    }

    /// What sending `rows` fewer rows per request saves: those rows, and the statement's db
    /// time in proportion.
    fn saving_of_rows_returned(&self, rows: f64) -> Saving {
        Saving {
            rows_returned: rows,
            db_time_ms: self.db_time_ms * rows / self.rows_per_request,
            ..Saving::default()
        }
    }

    /// A `count(...)` with no GROUP BY: the total of a listing.
    fn is_total(&self) -> bool {
        self.shape.counts
            && self
                .shape
                .outer
                .as_ref()
                .is_some_and(|o| o.aggregate && !o.group_by)
    }
}

/// The top-level, non-utility statements, with rows of the same text (other users,
/// other query ids) added together. A new connection's set-up is left out: it runs once
/// per connection, and `connection_per_request` names it.
fn statements<'a>(inputs: &Inputs<'a>) -> Vec<Statement<'a>> {
    let setup = inputs.per_request.setup.as_ref();
    let mut texts: Vec<&str> = Vec::new();
    for row in inputs
        .statements
        .iter()
        .filter(|s| s.toplevel && !s.utility && !crate::setup::is_setup(setup, &s.query))
    {
        if !texts.contains(&row.query.as_str()) {
            texts.push(&row.query);
        }
    }
    let mut statements: Vec<Statement> = texts
        .into_iter()
        .map(|query| statement(inputs, query))
        .collect();
    attribute_rows_read(&mut statements);
    mark_pages(&mut statements);
    statements
}

/// The statement of one text, its rows (other users, other query ids) added together.
fn statement<'a>(inputs: &Inputs<'a>, query: &'a str) -> Statement<'a> {
    let rows: Vec<_> = inputs
        .statements
        .iter()
        .filter(|s| s.toplevel && !s.utility && s.query == query)
        .collect();
    let calls_per_request: f64 = rows.iter().map(|s| s.calls_per_request).sum();
    let rows_per_request: f64 = rows.iter().map(|s| s.rows_per_request).sum();
    let rows_per_call = match rows.as_slice() {
        [row] => row.rows_per_call,
        _ if calls_per_request > 0.0 => rows_per_request / calls_per_request,
        _ => 0.0,
    };
    let shape = sql::shape(query);
    let (tables, unknown_relation) = touched_tables(&shape, inputs.tables);
    Statement {
        query,
        calls_per_request,
        rows_per_request,
        rows_per_call,
        share_of_rows_returned: rows.iter().map(|s| s.share_of_rows_returned).sum(),
        db_time_ms: rows
            .iter()
            .map(|s| s.mean_exec_ms * s.calls_per_request)
            .sum(),
        plan_time_ms: (rows.iter())
            .map(|s| s.mean_plan_ms.map(|p| p * s.calls_per_request))
            .sum(),
        table_rows_read: 0.0,
        page: false,
        ping: sql::is_ping(query),
        shape,
        tables,
        unknown_relation,
        tags: sent_from::tags_of(inputs.statements, query),
    }
}

/// A table's rows read (sequential and index) belong to a statement when it is the only
/// statement that touches the table and the table is the only one it touches.
fn attribute_rows_read(statements: &mut [Statement]) {
    let readers = |table: &str, statements: &[Statement]| {
        statements
            .iter()
            .filter(|s| s.tables.iter().any(|t| t.table == table))
            .count()
    };
    let read: Vec<f64> = statements
        .iter()
        .map(|s| match s.only_table() {
            Some(t) if readers(&t.table, statements) == 1 => t.seq_rows_read + t.idx_rows_fetched,
            _ => 0.0,
        })
        .collect();
    for (s, rows_read) in statements.iter_mut().zip(read) {
        s.table_rows_read = rows_read;
    }
}

/// The page the endpoint returns, whose rows are the response: every statement with
/// LIMIT, OFFSET or FETCH FIRST, and a count over the same relations as one (its total).
/// When the endpoint counts the relations of a statement that has no LIMIT, the response
/// is a listing with its total, and the statement returning the most rows per request
/// among those is the page.
fn mark_pages(statements: &mut [Statement]) {
    let limited = |s: &Statement| s.shape.outer.as_ref().is_some_and(|o| o.limit);
    let totals: Vec<Vec<String>> = statements
        .iter()
        .filter(|s| s.is_total())
        .map(Statement::relation_names)
        .collect();
    let pages: Vec<Vec<String>> = statements
        .iter()
        .filter(|s| limited(s))
        .map(Statement::relation_names)
        .collect();
    let listing = statements
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_total() && totals.contains(&s.relation_names()))
        .max_by(|(_, a), (_, b)| a.rows_per_request.total_cmp(&b.rows_per_request))
        .map(|(i, s)| (i, s.relation_names()));
    let page_marks: Vec<bool> = statements
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let names = s.relation_names();
            limited(s)
                || (s.is_total() && pages.contains(&names))
                || listing
                    .as_ref()
                    .is_some_and(|(at, of)| *at == i || (s.is_total() && *of == names))
        })
        .collect();
    for (s, page) in statements.iter_mut().zip(page_marks) {
        s.page = page;
    }
}

/// The report's tables the statement touches, and whether it also names a relation that
/// is none of them. Token-scan names count only when they name a table of the inputs.
fn touched_tables<'a>(shape: &Shape, tables: &'a [TableRow]) -> (Vec<&'a TableRow>, bool) {
    let mut touched: Vec<&TableRow> = Vec::new();
    let mut unknown_relation = false;
    for (relation, from_parser) in shape
        .relations
        .iter()
        .map(|r| (r, true))
        .chain(shape.mentioned.iter().map(|r| (r, false)))
    {
        let mut matched = false;
        for table in tables.iter().filter(|t| relation.designates(&t.table)) {
            matched = true;
            if !touched.iter().any(|t| t.table == table.table) {
                touched.push(table);
            }
        }
        unknown_relation |= from_parser && !matched;
    }
    (touched, unknown_relation)
}

/// Evidence keeps finite figures only: JSON has no NaN or infinity.
fn evidence(figures: &[(&str, f64)]) -> BTreeMap<String, f64> {
    figures
        .iter()
        .filter(|(_, value)| value.is_finite())
        .map(|(key, value)| (key.to_string(), *value))
        .collect()
}

/// A figure for prose: whole numbers without decimals, small ones to one decimal.
fn amount(value: f64) -> String {
    if value >= 100.0 || (value - value.round()).abs() < 0.05 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// A figure and its noun: `1 scan`, `0.5 scans`, `3 scans`.
fn counted(value: f64, one: &str, many: &str) -> String {
    let figure = amount(value);
    let noun = if figure == "1" { one } else { many };
    format!("{figure} {noun}")
}

/// A statement quoted in a suggestion: without the app's tag comments, on one line, its
/// first 200 characters and the mark of a cut.
fn quoted(query: &str) -> String {
    shown_sql(query, 201)
}
