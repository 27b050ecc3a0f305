//! A finding, the named waste of a report (`report.findings`): plain data. `crate::findings`
//! finds them, ranks them and gives their names, severities and savings their behaviour.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumMessage,
    strum::VariantArray,
    strum::EnumCount,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
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
    /// A GET or HEAD changes data on every request.
    WritesOnRead,
    /// A sort or hash outgrows work_mem and writes temp files.
    SpillsToDisk,
    /// The pool checks each connection it hands out with a `SELECT 1`.
    CheckoutPing,
    /// BEGIN and COMMIT around a single read, on every request.
    TransactionAroundSingleRead,
    /// The page fetches several times the rows the response shows.
    Overfetch,
    /// Different statements load the same row by the same key.
    DuplicateLoad,
    /// Rows read grow far faster than rows returned as the page grows (`pgcost scale`).
    ScanGrowsWithPage,
    /// Session settings (SET, RESET) sent on every pool checkout, not once per connection.
    SessionSetupPerCheckout,
    /// An exact COUNT with the page's filter, run beside the page on every request.
    CountPerPage,
    /// A subquery that runs once per row: its table scanned far more often than called.
    PerRowSubquery,
    /// Planning takes as long as execution or longer, on every call (`track_planning`).
    PlanningDominates,
}

/// How much a finding matters, from what fixing it would save per request: the rule is
/// [`severity`](crate::findings::severity). Ordered most severe first
/// (`High < Medium < Low`), the order findings are ranked in.
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
    JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Severity {
    High,
    Medium,
    Low,
}

/// One piece of named waste.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
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
    /// Round trips to Postgres the fix would save, per request (for a new connection, its
    /// set-up statements; one per connection when none was recognised).
    pub round_trips_per_request: f64,
    /// The plan Postgres would use for `query`, as `EXPLAIN` prints it; null when not
    /// fetched (`--no-plans`, no `query`, or a role that may not read the tables).
    #[serde(default)]
    pub plan: Option<String>,
    /// seq_scan_heavy: the index the plan calls for; null when none was made.
    #[serde(default)]
    pub index: Option<super::IndexProposal>,
    /// What the fix would save per request, by unit; the formula of each kind is in
    /// `docs/findings.md`.
    #[serde(default)]
    pub saves_per_request: Saving,
    /// The database the finding is in, when the request touches several (`--db`
    /// repeated); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Where to look in the app's source: each file:line the statement was tagged with,
    /// most seen first, then with `--source` the statement's literal SQL where the source
    /// holds it, and the model of each table the finding touches. Absent when none is
    /// known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<crate::source::location::CodeLocation>,
    /// The tags of `query`'s statement (its `statements[].tags`): the route, controller
    /// and file:line the app sent it from. Absent when it carried none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<super::tags::StatementTags>,
}

/// The estimated saving, per request, if a finding's suggestion is applied. The formula
/// of each kind is written in `docs/findings.md`; a part pgcost cannot estimate is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Saving {
    /// Statements (round trips to Postgres) no longer sent; a new connection counts as one.
    pub statements: f64,
    /// Rows Postgres no longer reads.
    pub rows_read: f64,
    /// Rows Postgres no longer sends back.
    pub rows_returned: f64,
    /// Execution time of top-level statements no longer spent, in ms.
    pub db_time_ms: f64,
    /// Bytes of WAL no longer written.
    #[serde(default)]
    pub wal_bytes: f64,
    /// Temp-file blocks (8 kB) no longer written and read back.
    #[serde(default)]
    pub temp_blocks_written: f64,
    /// Planning time no longer spent, in ms (not part of `db_time_ms`, which counts
    /// execution only).
    #[serde(default)]
    pub plan_time_ms: f64,
}
