//! The report's model: plain data, what a measured window cost per request, with its parts
//! (target, load, per-request figures, statements, tables). Table, JSON and Markdown are
//! views of it; JSON keys are documented in `docs/json.md`. `build` assembles it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod background;
pub mod baseline;
pub mod counters;
pub mod figure;
pub use figure::Writes;
pub mod figures;
pub mod finding;
pub mod invalid;
pub mod keyed;
pub mod node;
mod note_messages;
pub mod notes;
#[cfg(test)]
mod notes_tests;
pub mod odd_events;
pub mod setup;
pub mod tags;

use counters::{DatabaseCounters, WriteCounters};

/// Bumped whenever a key is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// One endpoint's measured cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    /// False when any entry of `invalid_reasons` applies: do not use the numbers.
    pub valid: bool,
    /// Why the numbers cannot be trusted; empty when `valid`.
    pub invalid_reasons: Vec<invalid::Invalid>,
    /// Caveats that leave the numbers usable: JSON's `warnings` (their messages, kept for
    /// compatibility) and `notes` (code, message and fields).
    #[serde(flatten, with = "notes::keys")]
    #[schemars(with = "notes::keys::Schema")]
    pub notes: Vec<notes::Note>,
    pub target: Target,
    pub load: Load,
    pub settle: Settle,
    pub per_request: PerRequest,
    /// Raw counter growth over the window, before division.
    pub totals: Totals,
    /// One row per statement, most expensive first.
    pub statements: Vec<StatementRow>,
    /// One row per table whose counters moved.
    pub tables: Vec<TableRow>,
    /// Named waste, most avoidable rows first; empty with `--no-findings`.
    #[serde(default)]
    pub findings: Vec<finding::Finding>,
    /// Connections seen on the target during the burst, against the server's limit.
    #[serde(default)]
    pub pool: Pool,
    /// Deprecated: the same as `unauthenticated`, under its old name, written for one more
    /// release (it never meant `check --baseline`'s previous run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::Baseline>,
    /// With `--compare-unauthenticated`: the same burst without credentials, side by side
    /// with this one, and the difference. Absent otherwise, and in reports written before
    /// it had this name (they carry `baseline` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unauthenticated: Option<baseline::Baseline>,
    /// Windows measured and discarded before this one, because app connections opened or
    /// closed in them.
    #[serde(default)]
    pub windows: Windows,
    /// Each database the request touches, when `--db` names more than one: its own
    /// figures, statements and tables. `per_request`, `statements` and `tables` above are
    /// their sum. Absent with one database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<node::Node>,
    /// Other traffic on the database (`--app-role`, `--control`): what was left out or
    /// subtracted, and how far off the corrected figures may be. Absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<background::Background>,
    /// With `--pgbouncer`: PgBouncer's own figures over the window, per request. Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbouncer: Option<PgBouncerFigures>,
    /// How many statements carried tags in their SQL comments, and how many samples of
    /// `pg_stat_activity` were read; absent without pg_stat_statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<tags::TagSummary>,
}

/// Pool headroom: how many processes like the audited one the server can take.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Pool {
    /// Most client backends connected to the target at once during the burst (null when
    /// not sampled, as in target mode).
    pub peak_backends: Option<i64>,
    /// The server's `max_connections`.
    pub max_connections: Option<i32>,
}

/// What was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Target {
    pub method: String,
    pub url: String,
    /// The target database, without password.
    pub database: String,
    pub server_version: String,
    pub server_version_num: i32,
    /// Where the cluster-wide views were read: `admin` (another database, no footprint
    /// in the target) or `target` (fallback, the tool's own footprint subtracted).
    pub stats_source: String,
    /// The installed `pg_stat_statements` version, or null when unavailable.
    pub pg_stat_statements: Option<String>,
    /// What authenticated the requests, by name only ("Authorization: Bearer (minted HS256
    /// JWT)", "Cookie: sid (--cookie)"); never a value. Empty without credentials.
    #[serde(default)]
    pub credentials: Vec<String>,
}

/// The HTTP side of the burst.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Load {
    /// Requests in the measured burst (the divisor of every per-request figure).
    pub requests: u64,
    pub concurrency: u32,
    pub warmup: u64,
    /// The warm-up actually sent, when it went on to a steady state (`crate::steady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_done: Option<Warmed>,
    pub wall_seconds: f64,
    /// Requests per second over the burst's wall time.
    pub rps: f64,
    /// Responses per HTTP status code.
    pub status: BTreeMap<String, u64>,
    /// Transport errors per kind: timeout, connect, body, redirect, request, other.
    pub errors: BTreeMap<String, u64>,
    /// 2xx responses that held an error all the same (in the body or a header), by what
    /// was seen: `body "errors"`, `header mediawiki-api-error`, `body /POINTER`.
    #[serde(default)]
    pub error_answers: BTreeMap<String, u64>,
    /// The items of the burst's first 2xx response: the length of a top-level JSON array,
    /// or of the largest array among a top-level object's values, the page size of the
    /// `overfetch` finding. Null when that body is not JSON or holds no array, for `pgcost
    /// measure`, and in reports written before it existed.
    #[serde(default)]
    pub response_items: Option<u64>,
    pub latency_ms: LatencySummary,
    /// The latency curve: the latency at each percentile of
    /// [`CURVE_PERCENTILES`](crate::load::CURVE_PERCENTILES), in ms. Empty in reports
    /// written before it existed.
    #[serde(default)]
    pub latency_percentiles_ms: Vec<LatencyPoint>,
    /// What made the load and counted its requests: `pgcost` (the burst of `audit` and
    /// `check`); for `pgcost measure`, `given` (`--requests N`) or the load tool whose
    /// result file gave the count (`autocannon`, `locust`, `k6`, `oha`).
    #[serde(default = "pgcost_source")]
    pub source: String,
    /// `pgcost measure`: the exit code of the command that made the load (128 + the
    /// signal's number when a signal ended it); null for pgcost's own burst.
    #[serde(default)]
    pub command_exit: Option<i32>,
}

fn pgcost_source() -> String {
    PGCOST_SOURCE.into()
}

/// How long the tool waited for Postgres to publish the counters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Settle {
    pub before_seconds: f64,
    pub after_seconds: f64,
    pub timed_out: bool,
}

/// Per-request figures: window totals divided by `load.requests`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct PerRequest {
    /// Commits plus rollbacks.
    pub transactions: f64,
    /// Top-level statements (round trips), BEGIN and COMMIT included. Null without
    /// pg_stat_statements.
    pub statements: Option<f64>,
    /// Top-level statements other than utility statements (BEGIN, COMMIT, SET, ...).
    pub statements_excluding_utility: Option<f64>,
    /// `pg_stat_database.tup_returned`: rows read by sequential scans plus index entries.
    pub rows_read: f64,
    /// `pg_stat_database.tup_fetched`: rows fetched by index scans.
    pub rows_fetched: f64,
    /// Rows sent back to the app (`pg_stat_statements.rows`, top level).
    pub rows_returned: Option<f64>,
    /// Rows inserted, updated and deleted.
    pub rows_written: f64,
    pub blocks_hit: f64,
    pub blocks_read: f64,
    /// Execution time of the top-level statements, in ms.
    pub db_time_ms: Option<f64>,
    /// New connections per request (PG 14+).
    pub new_sessions: Option<f64>,
    /// What the top-level statements wrote: WAL, buffers, temp files. Null without
    /// pg_stat_statements, and in reports written before it existed.
    #[serde(default)]
    pub writes: Option<Writes>,
    /// The set-up of the new connections (SETs, SHOWs, start-up transaction, catalog
    /// reads), when the app opens connections per request; absent otherwise. Its figures
    /// are part of the ones above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<setup::Setup>,
}

/// Window totals, undivided.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Totals {
    /// `pg_stat_database`'s counters, each under its own name.
    #[serde(flatten)]
    pub database: DatabaseCounters,
    pub statement_calls: Option<i64>,
    pub statement_rows: Option<i64>,
    /// What the top-level statements wrote, under pg_stat_statements' column names.
    #[serde(default)]
    pub statement_writes: Option<WriteCounters>,
}

/// One `pg_stat_statements` entry's growth.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct StatementRow {
    /// Normalized text, as pg_stat_statements shows it.
    pub query: String,
    /// As text, since it is a 64-bit integer.
    pub queryid: String,
    /// False for statements nested in functions (track=all).
    pub toplevel: bool,
    /// BEGIN, COMMIT, SET and the like.
    pub utility: bool,
    pub calls: i64,
    pub rows: i64,
    pub calls_per_request: f64,
    pub rows_per_call: f64,
    pub rows_per_request: f64,
    pub mean_exec_ms: f64,
    /// Plan time per call (`total_plan_time / calls`), in ms: absent before PG 13 and when
    /// pg_stat_statements.track_planning is off. `mean_exec_ms` leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_plan_ms: Option<f64>,
    /// Shared buffers touched (hit plus read) per request.
    pub blocks_per_request: f64,
    /// What this statement wrote, per request.
    #[serde(default)]
    pub writes_per_request: Writes,
    /// This statement's part of the request's returned rows, from 0 to 1.
    pub share_of_rows_returned: f64,
    /// The plan Postgres would use, as `EXPLAIN` prints it; null when not fetched (only
    /// the findings' statements and the top three by buffers touched get one).
    #[serde(default)]
    pub plan: Option<String>,
    /// The plan's fingerprint, one line per node in plan order: node type, index and
    /// relation (`Index Scan using orders_idx on public.orders`); absent without a plan.
    /// `check` compares it with the baseline's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_shape: Option<Vec<String>>,
    /// The database the statement ran in, when the request touches several (`--db`
    /// repeated); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Where in the app it comes from, as the tags in its SQL comments say (route,
    /// controller, file:line), with the share of samples each set was seen in; absent
    /// when it carried none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<tags::StatementTags>,
}

/// One table's counter growth per request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TableRow {
    /// `schema.table`.
    pub table: String,
    pub seq_scans: f64,
    pub seq_rows_read: f64,
    pub idx_scans: f64,
    pub idx_rows_fetched: f64,
    /// Index entries read by index scans, index-only scans included (which fetch no heap
    /// row, so `idx_rows_fetched` misses them). 0 in reports of pgcost before it was read.
    #[serde(default)]
    pub idx_entries_read: f64,
    pub rows_inserted: f64,
    pub rows_updated: f64,
    pub rows_deleted: f64,
    /// The table's size in 8 kB pages, to judge whether a sequential scan matters.
    pub pages: i64,
    pub live_rows: i64,
    /// The database of the table, when the request touches several (`--db` repeated);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// First keywords of statements that do no data access of their own.
const UTILITY_KEYWORDS: &[&str] = &[
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "START",
    "END",
    "ABORT",
    "SET",
    "RESET",
    "SAVEPOINT",
    "RELEASE",
    "SHOW",
    "DISCARD",
    "DEALLOCATE",
    "LISTEN",
    "UNLISTEN",
    "NOTIFY",
    "PREPARE",
];

/// True for BEGIN, COMMIT, SET and the like, judged by the first keyword.
pub fn is_utility(query: &str) -> bool {
    let mut text = query.trim_start();
    // Skip leading comments.
    loop {
        if let Some(rest) = text.strip_prefix("/*") {
            text = rest
                .split_once("*/")
                .map(|(_, r)| r)
                .unwrap_or("")
                .trim_start();
        } else if let Some(rest) = text.strip_prefix("--") {
            text = rest
                .split_once('\n')
                .map(|(_, r)| r)
                .unwrap_or("")
                .trim_start();
        } else {
            break;
        }
    }
    let first: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    UTILITY_KEYWORDS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(&first))
}

/// Most expensive first: blocks, then rows per request, then calls.
pub(crate) fn sort_statements(rows: &mut [StatementRow]) {
    rows.sort_by(|a, b| {
        b.blocks_per_request
            .total_cmp(&a.blocks_per_request)
            .then(b.rows_per_request.total_cmp(&a.rows_per_request))
            .then(b.calls.cmp(&a.calls))
            .then(a.query.cmp(&b.query))
            .then(a.database.cmp(&b.database))
    });
}

/// Most rows read first.
pub(crate) fn sort_tables(rows: &mut [TableRow]) {
    rows.sort_by(|a, b| {
        (b.seq_rows_read + b.idx_rows_fetched)
            .total_cmp(&(a.seq_rows_read + a.idx_rows_fetched))
            .then(a.table.cmp(&b.table))
            .then(a.database.cmp(&b.database))
    });
}

/// An index that would let Postgres read only the rows a statement needs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IndexProposal {
    /// Ready to run: `CREATE INDEX CONCURRENTLY ON public.t (col)`.
    pub statement: String,
    /// `schema.table`.
    pub table: String,
    /// The indexed columns, in order, `DESC` where the sort needs it.
    pub columns: Vec<String>,
    /// What the index replaces, in the plan's words.
    pub replaces: String,
    /// True when `hypopg` showed the planner would use it, false when it would not; null
    /// when unverified (no `hypopg` in the target database).
    pub verified: Option<bool>,
    /// The rows the plan that scans reads per call, by EXPLAIN's estimates (no ANALYZE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_rows_read_before: Option<f64>,
    /// The rows it would read per call with the index, by EXPLAIN's estimates under the
    /// hypothetical index (only when `verified`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_rows_read_after: Option<f64>,
    /// The plan with the hypothetical index, in EXPLAIN's text format (only when
    /// `verified`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_with_index: Option<String>,
}

/// `load.source` of pgcost's own burst.
pub const PGCOST_SOURCE: &str = "pgcost";

/// One point of the latency curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyPoint {
    /// 0 to 100.
    pub percentile: f64,
    pub ms: f64,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// How much warm-up was done before the window: the `--warmup` floor, then slices until
/// two in a row agreed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warmed {
    /// Warm-up requests sent, the floor included (the last warm-up before the reported
    /// window, when windows were measured again).
    pub requests: u64,
    /// Slices sent after the floor.
    pub slices: u32,
    /// True when the last two slices agreed; false when the cap stopped the warm-up first.
    pub steady: bool,
    /// Wall time of the warm-up, floor included.
    pub seconds: f64,
    /// App connections to the target at the end of the warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// Their backend pids: a connection the window runs on that is not among them opened
    /// after the warm-up, and is not warm.
    #[serde(skip)]
    pub pids: std::collections::BTreeSet<i32>,
}

/// How many windows were measured and thrown away before the one reported, and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Windows {
    /// Windows measured and discarded because app connections opened or closed in them.
    pub discarded: u32,
    /// One reason per discarded window, in order.
    pub reasons: Vec<String>,
}

/// PgBouncer's figures over a window, per request of the app.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PgBouncerFigures {
    /// The PgBouncer database (the pool) read.
    pub database: String,
    /// `total_xact_count` growth per request: transactions as PgBouncer saw them.
    pub transactions_per_request: f64,
    /// `total_query_count` growth per request.
    pub queries_per_request: f64,
    /// `total_wait_time` growth per request, in ms: time clients queued for a server.
    pub wait_ms_per_request: f64,
    /// Most clients waiting for a server connection at once (`cl_waiting`), sampled.
    pub max_cl_waiting: i64,
    /// Calls of PgBouncer's own statements in the window, left out of the per-request
    /// figures.
    pub own_statements: i64,
}
