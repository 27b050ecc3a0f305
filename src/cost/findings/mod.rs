//! Findings: names the waste in a measured request pipeline.
//!
//! [`analyze`] reads a [`Report`] and returns what a reader should change, each finding
//! with its evidence, a suggestion and how many rows and round trips per request it
//! would save. It does no I/O: everything it knows is in the report, its connections
//! ([`Pool`](crate::cost::report::Pool)) included.
//!
//! Statement texts are parsed with `sqlparser` (Postgres dialect). A text that does not
//! parse (pg_stat_statements truncates long ones) is still read from its tokens, and the
//! findings that depend on it say so with `unparsed: true`.

mod advice;
mod identity;
mod repeated;
mod saving;
mod sql;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::cost::report::{Report, TableRow};
use crate::cost::text::one_line;
pub use advice::{explain, summary};
pub use saving::{Saving, rank, severity};
use sql::{Access, Shape};

/// Every threshold the findings apply. `Default` gives the documented defaults; a
/// configuration file may override any subset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// collection_to_boolean: the statement runs at least this often per request (0.5).
    pub collection_min_calls_per_request: f64,
    /// collection_to_boolean: and returns at least this many rows per call (10).
    pub collection_min_rows_per_call: f64,
    /// n_plus_one: the same statement runs at least this often per request (3)...
    pub n_plus_one_min_calls_per_request: f64,
    /// ...returning at most this many rows per call (2).
    pub n_plus_one_max_rows_per_call: f64,
    /// round_trips: top-level statements per request, BEGIN and COMMIT included (5).
    pub round_trips_min_statements_per_request: f64,
    /// round_trips: a statement runs "once per request" when its calls per request are
    /// within this distance of 1 (0.01).
    pub once_per_request_tolerance: f64,
    /// round_trips: a statement worth memoising within the request runs at least this
    /// often per request (1.5).
    pub memoise_min_calls_per_request: f64,
    /// connection_per_request: new connections per request (0.5).
    pub connection_min_new_sessions_per_request: f64,
    /// cache_candidate: the statement runs at least this often per request (0.99: once per
    /// request, allowing for rounding).
    pub cache_min_calls_per_request: f64,
    /// seq_scan_heavy: rows read by sequential scans per request, as a multiple of the
    /// rows the request gets back from the table (10).
    pub seq_scan_min_read_to_returned_ratio: f64,
    /// seq_scan_heavy: tables smaller than this many 8 kB pages are never flagged: a scan
    /// of a tiny table is as cheap as an index lookup (8).
    pub seq_scan_min_pages: i64,
    /// seq_scan_heavy: and at least this many rows read by sequential scans per request,
    /// so that an occasional scan is not reported (100).
    pub seq_scan_min_rows_read_per_request: f64,
    /// repeated_statement: the same read runs at least this often per request (1.99:
    /// twice per request, allowing for rounding).
    pub repeated_min_calls_per_request: f64,
    /// cache_candidate: every table the read touches has at most this many 8 kB pages
    /// (8): reference data, not the app's growing tables.
    pub cache_max_table_pages: i64,
    /// cache_candidate: and it returns at most this many rows per call (5): a keyed
    /// lookup, not a listing.
    pub cache_max_rows_per_call: f64,
    /// Severity: high from this many avoidable rows per request (100).
    pub high_avoidable_rows_per_request: f64,
    /// Severity: high from this many avoidable round trips per request (3).
    pub high_round_trips_per_request: f64,
    /// Severity: medium from this many avoidable rows per request (10).
    pub medium_avoidable_rows_per_request: f64,
    /// Severity: medium from this many avoidable round trips per request (1).
    pub medium_round_trips_per_request: f64,
    /// Severity: high from this much avoidable db time per request, in ms (10).
    pub high_db_time_ms_per_request: f64,
    /// Severity: medium from this much avoidable db time per request, in ms (1).
    pub medium_db_time_ms_per_request: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            collection_min_calls_per_request: 0.5,
            collection_min_rows_per_call: 10.0,
            n_plus_one_min_calls_per_request: 3.0,
            n_plus_one_max_rows_per_call: 2.0,
            round_trips_min_statements_per_request: 5.0,
            once_per_request_tolerance: 0.01,
            memoise_min_calls_per_request: 1.5,
            connection_min_new_sessions_per_request: 0.5,
            cache_min_calls_per_request: 0.99,
            seq_scan_min_read_to_returned_ratio: 10.0,
            seq_scan_min_pages: 8,
            seq_scan_min_rows_read_per_request: 100.0,
            repeated_min_calls_per_request: 1.99,
            cache_max_table_pages: 8,
            cache_max_rows_per_call: 5.0,
            high_avoidable_rows_per_request: 100.0,
            high_round_trips_per_request: 3.0,
            medium_avoidable_rows_per_request: 10.0,
            medium_round_trips_per_request: 1.0,
            high_db_time_ms_per_request: 10.0,
            medium_db_time_ms_per_request: 1.0,
        }
    }
}

/// The kind of waste a finding names. Written in snake_case everywhere: JSON, the
/// command line and configuration files.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum FindingKind {
    /// A statement fetches a set where the caller needs a yes or no.
    CollectionToBoolean,
    /// The same read runs more than once per request.
    RepeatedStatement,
    /// The same statement runs once per item.
    NPlusOne,
    /// Too many statements per request.
    RoundTrips,
    /// The app opens a connection per request.
    ConnectionPerRequest,
    /// A read of tables nothing wrote during the window.
    CacheCandidate,
    /// Sequential scans read far more rows than the request gets back.
    SeqScanHeavy,
}

impl FindingKind {
    pub const ALL: [FindingKind; 7] = [
        FindingKind::CollectionToBoolean,
        FindingKind::RepeatedStatement,
        FindingKind::NPlusOne,
        FindingKind::RoundTrips,
        FindingKind::ConnectionPerRequest,
        FindingKind::CacheCandidate,
        FindingKind::SeqScanHeavy,
    ];

    /// The snake_case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::CollectionToBoolean => "collection_to_boolean",
            FindingKind::RepeatedStatement => "repeated_statement",
            FindingKind::NPlusOne => "n_plus_one",
            FindingKind::RoundTrips => "round_trips",
            FindingKind::ConnectionPerRequest => "connection_per_request",
            FindingKind::CacheCandidate => "cache_candidate",
            FindingKind::SeqScanHeavy => "seq_scan_heavy",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

/// How much a finding matters, from what fixing it would save per request: the rule is
/// [`severity`]. Ordered most severe first (`High < Medium < Low`), the order findings are
/// ranked in.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Severity {
    High,
    Medium,
    Low,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::High, Severity::Medium, Severity::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

/// One piece of named waste.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    /// The statement's normalized text, when the finding is about one statement.
    pub query: Option<String>,
    /// The table (`schema.table`), when the finding is about one table.
    pub table: Option<String>,
    /// The figures behind the finding, by snake_case name; per-request figures end in
    /// `_per_request`.
    pub evidence: BTreeMap<String, f64>,
    /// What to change, in plain text; SQL examples are indented by four spaces.
    pub suggestion: String,
    /// True when the statement text did not parse and the finding rests on its tokens.
    pub unparsed: bool,
    /// Rows Postgres reads or sends that the fix would save, per request.
    pub avoidable_rows_per_request: f64,
    /// Round trips to Postgres the fix would save, per request (a new connection counts
    /// as one, though its set-up takes several).
    pub round_trips_per_request: f64,
    /// The plan Postgres would use for `query`, as `EXPLAIN` prints it; null when not
    /// fetched (`--no-plans`, no `query`, or a role that may not read the tables).
    #[serde(default)]
    pub plan: Option<String>,
    /// seq_scan_heavy: the index the plan calls for; null when none was made.
    #[serde(default)]
    pub index: Option<crate::cost::plan::IndexProposal>,
    /// What the fix would save per request, by unit; the formula of each kind is in
    /// `docs/findings.md`.
    #[serde(default)]
    pub saves_per_request: Saving,
    /// The database the finding is in, when the request touches several (`--db`
    /// repeated); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
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
        }
    }
}

/// Statements whose text parses, and all statements, counting the top-level statements
/// other than BEGIN, COMMIT, SET and the like (the ones [`analyze`] reads).
pub fn parse_rate(report: &Report) -> (usize, usize) {
    let analysed: Vec<&str> = report
        .statements
        .iter()
        .filter(|s| s.toplevel && !s.utility)
        .map(|s| s.query.as_str())
        .collect();
    let parsed = analysed.iter().filter(|q| sql::parses(q)).count();
    (parsed, analysed.len())
}

/// Names the waste in the report, ranked by what fixing it saves (see [`rank`]). Reads
/// the report whether or not it is valid: whether to show findings of an untrustworthy
/// measurement is the caller's decision.
///
/// Only top-level statements other than BEGIN, COMMIT, SET and the like are read, and
/// rows with the same text (other users, other query ids) count as one statement.
/// Statements nested in functions are left out: their cost shows in the caller.
pub fn analyze(report: &Report, t: &Thresholds) -> Vec<Finding> {
    let statements = statements(report);
    let mut findings = Vec::new();
    for statement in &statements {
        findings.extend(statement_findings(statement, &statements, t));
    }
    findings.extend(round_trips(report, &statements, t));
    findings.extend(connection_per_request(report, t));
    findings.extend(
        report
            .tables
            .iter()
            .filter_map(|table| seq_scan_heavy(table, &statements, t)),
    );
    for finding in &mut findings {
        finding.severity = severity(finding, t);
    }
    rank(&mut findings);
    keep_top_cache_candidates(&mut findings);
    findings
}

/// The findings about one statement. Fix the waste before caching it: a cache in front
/// of a set-building, N+1 or repeated query hides the problem and adds staleness.
fn statement_findings(s: &Statement, all: &[Statement], t: &Thresholds) -> Vec<Finding> {
    let wasteful: Vec<Finding> = collection_to_boolean(s, all, t)
        .into_iter()
        .chain(n_plus_one(s, t))
        .chain(repeated::repeated_statement(s, t))
        .collect();
    if wasteful.is_empty() {
        cache_candidate(s, t).into_iter().collect()
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
    /// Rows read per request from its tables, when it is the only statement that reads
    /// its only table (otherwise unknown: 0).
    rows_read: f64,
    /// Part of the page the endpoint returns (see [`mark_pages`]).
    page: bool,
    shape: Shape,
    /// The report's tables it touches.
    tables: Vec<&'a TableRow>,
    /// It names a relation that is no table of the report (a view, a partitioned parent,
    /// a table whose counters did not move): what it reads is not fully known.
    unknown_relation: bool,
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
/// other query ids) added together.
fn statements(report: &Report) -> Vec<Statement<'_>> {
    let mut texts: Vec<&str> = Vec::new();
    for row in report
        .statements
        .iter()
        .filter(|s| s.toplevel && !s.utility)
    {
        if !texts.contains(&row.query.as_str()) {
            texts.push(&row.query);
        }
    }
    let mut statements: Vec<Statement> = texts
        .into_iter()
        .map(|query| statement(report, query))
        .collect();
    attribute_rows_read(&mut statements);
    mark_pages(&mut statements);
    statements
}

/// The statement of one text, its rows (other users, other query ids) added together.
fn statement<'a>(report: &'a Report, query: &'a str) -> Statement<'a> {
    let rows: Vec<_> = report
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
    let (tables, unknown_relation) = touched_tables(&shape, &report.tables);
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
        rows_read: 0.0,
        page: false,
        shape,
        tables,
        unknown_relation,
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
        s.rows_read = rows_read;
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
/// is none of them. Token-scan names count only when they name a table of the report.
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

/// Whether `s` is the list an N+1 of the same request walks: the loop runs at most once
/// per row of it and at least once per two rows (a per-request query cache answers
/// repeated keys, so a loop may run fewer times than the list has rows).
fn walked_by_n_plus_one(s: &Statement, all: &[Statement], t: &Thresholds) -> bool {
    all.iter().any(|loop_| {
        loop_.is_n_plus_one(t)
            && loop_.calls_per_request <= s.rows_per_request + t.once_per_request_tolerance
            && loop_.calls_per_request >= s.rows_per_request / 2.0
    })
}

fn collection_to_boolean(s: &Statement, all: &[Statement], t: &Thresholds) -> Option<Finding> {
    let outer = s.shape.outer.as_ref()?;
    let answers_already = outer.aggregate || outer.exists || outer.group_by || outer.limit;
    // The page, a batch load and the list a loop walks: their rows are used.
    let rows_used = s.page || s.shape.keyed_by_list || walked_by_n_plus_one(s, all, t);
    if s.shape.access != Access::Read
        || answers_already
        || rows_used
        || s.calls_per_request < t.collection_min_calls_per_request
        || s.rows_per_call < t.collection_min_rows_per_call
    {
        return None;
    }
    let saved_rows = (s.rows_per_request - s.calls_per_request).max(0.0);
    let question = "<the condition the caller tests>";
    let rewrite = match &outer.filter {
        Some(filter) => format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE {filter} AND {question})",
            outer.from
        ),
        None => format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE {question})",
            outer.from
        ),
    };
    let caveat = if s.shape.parsed {
        ""
    } else {
        "\n\n(The statement's text did not parse, perhaps because pg_stat_statements \
         truncated it: the rewrite was rebuilt from its tokens, so check it.)"
    };
    let suggestion = format!(
        "This statement returns {} rows per call ({} per request) with no LIMIT: it builds \
         a whole set. If the caller only tests whether a matching row exists (a permission, \
         a membership, a flag), ask the question you actually have:\n\n    {rewrite}\n\n\
         Postgres stops at the first matching row and sends back one boolean instead of \
         the set. Keep the set-building query for screens that really need the whole set.\
         {caveat}",
        amount(s.rows_per_call),
        amount(s.rows_per_request),
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        table: s.only_table().map(|table| table.table.clone()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
            ("rows_per_request", s.rows_per_request),
            ("share_of_rows_returned", s.share_of_rows_returned),
        ]),
        unparsed: !s.shape.parsed,
        // An EXISTS sends back one row per call.
        avoidable_rows_per_request: saved_rows,
        saves_per_request: Saving {
            rows_returned: saved_rows,
            db_time_ms: s.db_time_ms * saved_rows / s.rows_per_request,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::CollectionToBoolean, suggestion)
    })
}

fn n_plus_one(s: &Statement, t: &Thresholds) -> Option<Finding> {
    if !s.is_n_plus_one(t) {
        return None;
    }
    let saved = s.calls_per_request - 1.0;
    let batch = if s.shape.access == Access::Write {
        "Send all the items in one statement: one multi-row INSERT, or an INSERT, UPDATE \
         or DELETE that reads the items from arrays with `unnest($1, $2)`; or fold the \
         write into the statement that produced the list."
            .to_string()
    } else {
        let example = match &s.shape.batched {
            Some(batched) => format!(", for example:\n\n    {batched}\n\n"),
            None => " (`WHERE id = ANY($1)`), ".to_string(),
        };
        format!(
            "Batch it: pass all the keys as one array parameter and match them with \
             `= ANY($1)`{example}returning the key column so the app can match rows to \
             items; or JOIN this table into the statement that produced the list."
        )
    };
    let suggestion = format!(
        "This statement runs {} times per request and returns {} row(s) per call: one \
         round trip per item, the N+1 pattern. {batch} That saves about {} round trips \
         per request.",
        amount(s.calls_per_request),
        amount(s.rows_per_call),
        amount(saved),
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        table: s.only_table().map(|table| table.table.clone()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
            ("rows_per_request", s.rows_per_request),
        ]),
        unparsed: !s.shape.parsed,
        round_trips_per_request: saved,
        saves_per_request: Saving {
            statements: saved,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::NPlusOne, suggestion)
    })
}

fn round_trips(report: &Report, statements: &[Statement], t: &Thresholds) -> Option<Finding> {
    let per_request = report.per_request.statements?;
    if per_request < t.round_trips_min_statements_per_request {
        return None;
    }
    let utility = report
        .per_request
        .statements_excluding_utility
        .map(|non_utility| (per_request - non_utility).max(0.0));
    let once: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.runs_once_per_request(t))
        .collect();
    // N+1 statements have their own finding and their own fix.
    let repeated: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.calls_per_request >= t.memoise_min_calls_per_request && !s.is_n_plus_one(t))
        .collect();
    let saved = once.len().saturating_sub(1) as f64
        + repeated
            .iter()
            .map(|s| s.calls_per_request - 1.0)
            .sum::<f64>();

    let mut suggestion = format!(
        "Each request makes {} round trips to Postgres",
        amount(per_request)
    );
    if let Some(utility) = utility.filter(|u| *u > 0.0) {
        suggestion.push_str(&format!(
            " ({} of them BEGIN, COMMIT, SET and the like)",
            amount(utility)
        ));
    }
    suggestion.push_str(", and each one waits for the network and the server in turn.");
    if !once.is_empty() {
        suggestion.push_str(
            "\n\nThese statements run exactly once per request; such statements are \
             usually auth, tenant, session, entitlement or permission lookups. Independent \
             lookups keyed by the same user or tenant can be collapsed into one statement \
             (one SELECT that joins them, or scalar subqueries side by side in one select \
             list):",
        );
        for s in &once {
            suggestion.push_str(&format!("\n  - {}", quoted(s.query)));
        }
    }
    if !repeated.is_empty() {
        suggestion.push_str(
            "\n\nThese statements run more than once per request with the same text; when \
             the parameters repeat too, memoise the result for the rest of the request:",
        );
        for s in &repeated {
            suggestion.push_str(&format!(
                "\n  - {} ({} times per request)",
                quoted(s.query),
                amount(s.calls_per_request)
            ));
        }
    }
    let mut figures = vec![
        ("statements_per_request", per_request),
        ("statements_once_per_request", once.len() as f64),
        ("statements_repeated_per_request", repeated.len() as f64),
    ];
    if let Some(utility) = utility {
        figures.push(("utility_statements_per_request", utility));
    }
    Some(Finding {
        evidence: evidence(&figures),
        round_trips_per_request: saved,
        saves_per_request: Saving {
            statements: saved,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::RoundTrips, suggestion)
    })
}

fn connection_per_request(report: &Report, t: &Thresholds) -> Option<Finding> {
    let pool = &report.pool;
    let new_sessions = report.per_request.new_sessions?;
    if new_sessions < t.connection_min_new_sessions_per_request {
        return None;
    }
    let mut figures = vec![("new_sessions_per_request", new_sessions)];
    let mut suggestion = format!(
        "The app opened {} per request. Each one costs Postgres a new \
         backend process, authentication and cold catalog caches before its first query, \
         and all of it is billed to this endpoint. Create one connection pool per process, \
         at start-up, and borrow a connection from it for each request.",
        counted(new_sessions, "new connection", "new connections")
    );
    if let Some(peak) = pool.peak_backends {
        figures.push(("peak_backends", peak as f64));
    }
    if let Some(max) = pool.max_connections {
        figures.push(("max_connections", f64::from(max)));
    }
    if let (Some(peak), Some(max)) = (pool.peak_backends.filter(|p| *p > 0), pool.max_connections) {
        let processes = i64::from(max) / peak;
        figures.push(("processes_supported", processes as f64));
        suggestion.push_str(&format!(
            " At its peak the app held {peak} backends; with max_connections = {max}, the \
             server can take at most {processes} such processes."
        ));
    }
    Some(Finding {
        evidence: evidence(&figures),
        round_trips_per_request: new_sessions,
        saves_per_request: Saving {
            statements: new_sessions,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::ConnectionPerRequest, suggestion)
    })
}

/// A reference-like read: keyed, of small tables nothing wrote in the window, and neither
/// the page nor a credential check ([`identity::decides_identity`]).
fn cache_candidate(s: &Statement, t: &Thresholds) -> Option<Finding> {
    let written =
        |table: &&TableRow| table.rows_inserted + table.rows_updated + table.rows_deleted != 0.0;
    let large = |table: &&TableRow| table.pages > t.cache_max_table_pages;
    let names = || s.tables.iter().map(|table| table.table.as_str());
    if s.shape.access != Access::Read
        || s.page
        || s.calls_per_request < t.cache_min_calls_per_request
        || s.rows_per_call > t.cache_max_rows_per_call
        || s.tables.is_empty()
        || s.unknown_relation
        || s.tables.iter().any(written)
        || s.tables.iter().any(large)
        || identity::decides_identity(names(), s.query)
    {
        return None;
    }
    let names: Vec<&str> = s.tables.iter().map(|table| table.table.as_str()).collect();
    let suggestion = format!(
        "This read runs {} per request, returns {} per call and reads only {}, small \
         tables which nothing inserted, \
         updated or deleted during the measured window. Its result is a candidate for an \
         application cache; first check that the app's other paths rarely write these \
         tables. If you cache it:\n\
         \x20 - tenant first in the key, so one tenant's entry can never answer another's;\n\
         \x20 - cache only the reachable path: the result for the keys this request used, \
         not a copy of the tables;\n\
         \x20 - drop everything on mutation: any write to these tables invalidates every \
         entry built from them;\n\
         \x20 - the TTL is the real guarantee across instances: another instance's write \
         never reaches this cache, so the TTL bounds how stale an answer can be;\n\
         \x20 - never cache session revocation: a revoked session or token must fail on \
         the very next request.",
        counted(s.calls_per_request, "time", "times"),
        counted(s.rows_per_call, "row", "rows"),
        names.join(", "),
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        table: s.only_table().map(|table| table.table.clone()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_request", s.rows_per_request),
            ("tables_read", s.tables.len() as f64),
        ]),
        unparsed: !s.shape.parsed,
        avoidable_rows_per_request: s.rows_per_request,
        round_trips_per_request: s.calls_per_request,
        saves_per_request: Saving {
            statements: s.calls_per_request,
            rows_read: s.rows_read,
            rows_returned: s.rows_per_request,
            db_time_ms: s.db_time_ms,
        },
        ..Finding::new(FindingKind::CacheCandidate, suggestion)
    })
}

fn seq_scan_heavy(table: &TableRow, statements: &[Statement], t: &Thresholds) -> Option<Finding> {
    if table.pages < t.seq_scan_min_pages
        || table.seq_rows_read < t.seq_scan_min_rows_read_per_request
    {
        return None;
    }
    let readers: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.tables.iter().any(|touched| touched.table == table.table))
        .collect();
    // What the request gets back from the table: the rows its readers return, joins
    // included; without a reader, the rows fetched through its indexes.
    let returned = if readers.is_empty() {
        table.idx_rows_fetched
    } else {
        readers.iter().map(|s| s.rows_per_request).sum()
    };
    if table.seq_rows_read < t.seq_scan_min_read_to_returned_ratio * returned {
        return None;
    }
    let saved = (table.seq_rows_read - returned).max(0.0);
    let readers_time: f64 = readers.iter().map(|s| s.db_time_ms).sum();
    let suggestion = seq_scan_suggestion(table, &readers, returned);
    let mut figures = vec![
        ("seq_rows_read_per_request", table.seq_rows_read),
        ("seq_scans_per_request", table.seq_scans),
        ("rows_returned_per_request", returned),
        ("pages", table.pages as f64),
        ("live_rows", table.live_rows as f64),
    ];
    if returned > 0.0 {
        figures.push(("read_to_returned_ratio", table.seq_rows_read / returned));
    }
    Some(Finding {
        query: match readers.as_slice() {
            [only] => Some(only.query.to_string()),
            _ => None,
        },
        table: Some(table.table.clone()),
        evidence: evidence(&figures),
        avoidable_rows_per_request: saved,
        saves_per_request: Saving {
            rows_read: saved,
            db_time_ms: readers_time * saved / table.seq_rows_read,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::SeqScanHeavy, suggestion)
    })
}

fn seq_scan_suggestion(table: &TableRow, readers: &[&Statement], returned: f64) -> String {
    let estimate = if readers.is_empty() {
        "rows fetched through its indexes"
    } else {
        "rows returned by the statements that read this table, joins included"
    };
    let mut suggestion = format!(
        "Sequential scans read {} rows of {} per request ({}) to return about {} \
         ({estimate}). The table has {} pages and {} live rows, so each scan reads all of \
         it. An index on the columns these statements filter or join by lets Postgres \
         fetch just the matching rows; confirm with EXPLAIN (ANALYZE, BUFFERS).",
        amount(table.seq_rows_read),
        table.table,
        counted(table.seq_scans, "scan", "scans"),
        amount(returned),
        table.pages,
        table.live_rows,
    );
    if readers.iter().any(|s| s.page) {
        suggestion.push_str(
            " A page (ORDER BY ... LIMIT) reads this table: without an index on its ORDER \
             BY columns, Postgres sorts every matching row to return the first few; with \
             one, it stops after the page.",
        );
    }
    if readers.is_empty() {
        suggestion.push_str(
            " No measured statement names this table: look for a view or a function that \
             reads it, or a foreign key whose referencing column has no index.",
        );
    } else {
        suggestion.push_str("\n\nStatements that read it:");
        for s in readers {
            suggestion.push_str(&format!("\n  - {}", quoted(s.query)));
        }
    }
    suggestion
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

/// A statement quoted in a suggestion: on one line, its first 200 characters and the mark
/// of a cut.
fn quoted(query: &str) -> String {
    one_line(query, 201)
}
