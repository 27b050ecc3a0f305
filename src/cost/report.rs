//! The one `Report` type: what a measured window cost per request. Table, JSON and
//! Markdown are views of it. JSON keys are documented in `docs/json.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cost::background;
use crate::cost::counters::DatabaseCounters;
use crate::cost::delta::{StatementDelta, TableDelta, WindowDelta, per_request, share};
use crate::cost::figures::Figures;
use crate::cost::findings::{self, Thresholds};
use crate::cost::load::{LatencyPoint, LatencySummary, LoadResult, latency_curve_ms, latency_ms};
use crate::cost::plan::{self, Plans};
use crate::cost::unauthenticated;

/// Bumped whenever a key is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// One endpoint's measured cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub schema_version: u32,
    /// False when any entry of `invalid_reasons` applies: do not use the numbers.
    pub valid: bool,
    /// Why the numbers cannot be trusted; empty when `valid`.
    pub invalid_reasons: Vec<String>,
    /// Caveats that leave the numbers usable.
    pub warnings: Vec<String>,
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
    pub findings: Vec<crate::cost::findings::Finding>,
    /// Connections seen on the target during the burst, against the server's limit.
    #[serde(default)]
    pub pool: Pool,
    /// With `--compare-unauthenticated`: the same burst without credentials, side by side
    /// with this one, and the difference. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<crate::cost::unauthenticated::Baseline>,
    /// Windows measured and discarded before this one, because app connections opened or
    /// closed in them.
    #[serde(default)]
    pub windows: crate::cost::churn::Windows,
    /// Each database the request touches, when `--db` names more than one: its own
    /// figures, statements and tables. `per_request`, `statements` and `tables` above are
    /// their sum. Absent with one database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::cost::nodes::Node>,
    /// Other traffic on the database (`--app-role`, `--control`): what was left out or
    /// subtracted, and how far off the corrected figures may be. Absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<crate::cost::background::Background>,
    /// With `--pgbouncer`: PgBouncer's own figures over the window, per request. Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbouncer: Option<crate::cost::pgbouncer::PgBouncerFigures>,
}

/// Pool headroom: how many processes like the audited one the server can take.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Pool {
    /// Most client backends connected to the target at once during the burst (null when
    /// not sampled, as in target mode).
    pub peak_backends: Option<i64>,
    /// The server's `max_connections`.
    pub max_connections: Option<i32>,
}

/// What was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Load {
    /// Requests in the measured burst (the divisor of every per-request figure).
    pub requests: u64,
    pub concurrency: u32,
    pub warmup: u64,
    pub wall_seconds: f64,
    /// Requests per second over the burst's wall time.
    pub rps: f64,
    /// Responses per HTTP status code.
    pub status: BTreeMap<String, u64>,
    /// Transport errors per kind: timeout, connect, body, redirect, request, other.
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: LatencySummary,
    /// The latency curve: the latency at each percentile of
    /// [`CURVE_PERCENTILES`](crate::cost::load::CURVE_PERCENTILES), in ms. Empty in reports
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
    crate::cost::load::PGCOST_SOURCE.into()
}

/// How long the tool waited for Postgres to publish the counters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settle {
    pub before_seconds: f64,
    pub after_seconds: f64,
    pub timed_out: bool,
}

/// Per-request figures: window totals divided by `load.requests`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
}

/// Window totals, undivided.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    /// `pg_stat_database`'s counters, each under its own name.
    #[serde(flatten)]
    pub database: DatabaseCounters,
    pub statement_calls: Option<i64>,
    pub statement_rows: Option<i64>,
}

/// One `pg_stat_statements` entry's growth.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    /// Shared buffers touched (hit plus read) per request.
    pub blocks_per_request: f64,
    /// This statement's part of the request's returned rows, from 0 to 1.
    pub share_of_rows_returned: f64,
    /// The plan Postgres would use, as `EXPLAIN` prints it; null when not fetched (only
    /// the findings' statements and the top three by buffers touched get one).
    #[serde(default)]
    pub plan: Option<String>,
    /// The database the statement ran in, when the request touches several (`--db`
    /// repeated); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One table's counter growth per request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableRow {
    /// `schema.table`.
    pub table: String,
    pub seq_scans: f64,
    pub seq_rows_read: f64,
    pub idx_scans: f64,
    pub idx_rows_fetched: f64,
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

/// What the audit knows besides the window delta.
#[derive(Debug, Clone)]
pub struct Context {
    pub target: Target,
    pub warmup: u64,
    pub requests: u64,
    pub settle: Settle,
    /// Whether pg_stat_statements was read; statement figures are null otherwise.
    pub statements_available: bool,
    pub warnings: Vec<String>,
    pub invalid_reasons: Vec<String>,
    /// Statuses outside 2xx and 3xx accepted on purpose (`--allow-status`).
    pub allowed_statuses: Vec<u16>,
    /// Connections seen on the target during the burst.
    pub pool: Pool,
    /// The thresholds of the findings; `None` with `--no-findings`.
    pub findings: Option<Thresholds>,
    /// With `--compare-unauthenticated`: the report of the same burst sent without
    /// credentials, to set beside this one.
    pub unauthenticated: Option<Report>,
    /// The plans fetched after the last window, if any (see `cost::plan`).
    pub plans: Plans,
    /// Windows discarded before this one (connection churn).
    pub windows: crate::cost::churn::Windows,
    /// Other traffic on the database, as the measurement saw it; `None` where not looked
    /// at (target mode without flags, older reports).
    pub background: Option<crate::cost::background::Input>,
}

/// Why the HTTP side makes the numbers untrustworthy, one reason per status or error kind.
/// Codes in `allowed` do not count. Rejections (401, 403) come first: they mean the wrong
/// code path was measured, which matters more than anything else.
pub fn load_invalid_reasons(load: &LoadResult, requested: u64, allowed: &[u16]) -> Vec<String> {
    let mut reasons = Vec::new();
    let rejected = |code: u16| matches!(code, 401 | 403);
    let statuses = load
        .status
        .iter()
        .filter(|(code, _)| rejected(**code))
        .chain(load.status.iter().filter(|(code, _)| !rejected(**code)));
    for (&code, &count) in statuses {
        if (200..400).contains(&code) || allowed.contains(&code) {
            continue;
        }
        let consequence = match code {
            401 | 403 => "these numbers measure the rejection path, not the endpoint".to_string(),
            404 => "these numbers measure the not-found path; check --url".to_string(),
            429 => "the app rate-limited the burst; these numbers measure the limiter".to_string(),
            500..=599 => "these numbers include failed requests".to_string(),
            _ => "these numbers do not measure successful requests".to_string(),
        };
        reasons.push(format!(
            "{count} of {requested} responses were {code}: {consequence}"
        ));
    }
    if load.error_count() > 0 {
        let kinds: Vec<String> = load
            .errors
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let mut reason = format!(
            "{} of {requested} requests failed without a response ({})",
            load.error_count(),
            kinds.join(", ")
        );
        if let Some(first) = &load.first_error {
            reason.push_str(&format!("; first error: {first}"));
        }
        reasons.push(reason);
    }
    if load.interrupted {
        reasons.push(format!(
            "the burst was stopped after {} of {requested} requests",
            load.sent
        ));
    }
    reasons
}

impl Report {
    /// Assembles the finished report from the window delta, the burst and everything else
    /// the audit knows (`context`): figures, reasons, findings and the unauthenticated
    /// baseline. Nothing changes it afterwards.
    pub fn build(delta: &WindowDelta, load: &LoadResult, context: Context) -> Report {
        let n = context.requests;
        let top = TopLevel::of(&delta.statements);
        let available = context.statements_available;
        let mut per_request = PerRequest::of(&delta.database, &top, n, available);
        let load_view = Load::of(load, n, context.warmup);
        let mut invalid_reasons = invalid_reasons(delta, load, &context);
        let mut warnings = warnings(delta, load, &context);
        let background = (context.background.as_ref()).map(|input| {
            let counts = background::Counts::of(delta, available);
            let assessed = background::assess(input, counts, n);
            per_request.subtract_background(assessed.corrected);
            invalid_reasons.extend(assessed.invalid_reasons);
            warnings.extend(assessed.warnings);
            assessed.background
        });
        let baseline = context.unauthenticated.as_ref().map(|unauthenticated| {
            let comparison =
                unauthenticated::compare(unauthenticated, Figures::read(&load_view, &per_request));
            invalid_reasons.extend(comparison.invalid_reasons);
            warnings.extend(comparison.warnings);
            comparison.baseline
        });
        let report = Report {
            schema_version: SCHEMA_VERSION,
            valid: invalid_reasons.is_empty(),
            invalid_reasons,
            warnings,
            target: context.target,
            load: load_view,
            settle: context.settle,
            per_request,
            totals: Totals {
                database: delta.database.clone(),
                statement_calls: available.then_some(top.calls),
                statement_rows: available.then_some(top.rows_returned),
            },
            statements: statement_rows(&delta.statements, n, top.rows_returned),
            tables: table_rows(&delta.tables, n),
            findings: Vec::new(),
            pool: context.pool,
            baseline,
            windows: context.windows,
            nodes: Vec::new(),
            background: background.flatten(),
            pgbouncer: None,
        };
        let mut report = match &context.findings {
            Some(thresholds) => Report {
                findings: findings::analyze(&report, thresholds),
                ..report
            },
            None => report,
        };
        plan::attach(&mut report, &context.plans);
        report
    }
}

/// The HTTP side first, so that a rejected burst says so on the report's first line even
/// when settling also timed out; then the audit's reasons, then the window's.
fn invalid_reasons(delta: &WindowDelta, load: &LoadResult, context: &Context) -> Vec<String> {
    let mut reasons = load_invalid_reasons(load, context.requests, &context.allowed_statuses);
    reasons.extend(context.invalid_reasons.iter().cloned());
    reasons.extend(delta.invalid_reasons.iter().cloned());
    reasons
}

fn warnings(delta: &WindowDelta, load: &LoadResult, context: &Context) -> Vec<String> {
    let n = context.requests;
    let mut warnings = context.warnings.clone();
    for (&code, &count) in &load.status {
        if !(200..400).contains(&code) && context.allowed_statuses.contains(&code) {
            warnings.push(format!(
                "{count} of {n} responses were {code}, accepted by --allow-status {code}"
            ));
        }
    }
    warnings.extend(delta.warnings.iter().cloned());
    if let Some(sessions) = delta.database.sessions.filter(|s| *s > 0) {
        warnings.push(format!(
            "the app opened {sessions} new connection(s) during the window ({:.2} per request): \
             their set-up (catalog reads, authentication) is billed to the endpoint",
            per_request(sessions, n)
        ));
    }
    warnings
}

/// Sums over the top-level statements (those nested in functions show in their caller).
struct TopLevel {
    calls: i64,
    /// Calls of statements other than BEGIN, COMMIT, SET and the like.
    non_utility: i64,
    rows_returned: i64,
    exec_ms: f64,
}

impl TopLevel {
    fn of(statements: &[StatementDelta]) -> TopLevel {
        let top: Vec<_> = statements
            .iter()
            .filter(|s| s.key.toplevel != Some(false))
            .collect();
        TopLevel {
            calls: top.iter().map(|s| s.calls).sum(),
            non_utility: top
                .iter()
                .filter(|s| !is_utility(&s.query))
                .map(|s| s.calls)
                .sum(),
            rows_returned: top.iter().map(|s| s.rows).sum(),
            exec_ms: top.iter().map(|s| s.exec_time_ms).sum(),
        }
    }
}

impl PerRequest {
    /// The window's counters divided by the `n` requests; the statement figures are null
    /// unless pg_stat_statements was `available`.
    fn of(d: &DatabaseCounters, top: &TopLevel, n: u64, available: bool) -> PerRequest {
        PerRequest {
            transactions: per_request(d.xact_commit + d.xact_rollback, n),
            statements: available.then(|| per_request(top.calls, n)),
            statements_excluding_utility: available.then(|| per_request(top.non_utility, n)),
            rows_read: per_request(d.tup_returned, n),
            rows_fetched: per_request(d.tup_fetched, n),
            rows_returned: available.then(|| per_request(top.rows_returned, n)),
            rows_written: per_request(d.tup_inserted + d.tup_updated + d.tup_deleted, n),
            blocks_hit: per_request(d.blks_hit, n),
            blocks_read: per_request(d.blks_read, n),
            db_time_ms: available.then(|| if n > 0 { top.exec_ms / n as f64 } else { 0.0 }),
            new_sessions: d.sessions.map(|s| per_request(s, n)),
        }
    }
}

impl PerRequest {
    /// Takes the `corrected` figures (the background subtracted, `--control`).
    fn subtract_background(&mut self, corrected: Option<background::PerFigure>) {
        let Some(corrected) = corrected else {
            return;
        };
        self.transactions = corrected.transactions;
        self.rows_read = corrected.rows_read;
        if corrected.statements.is_some() {
            self.statements = corrected.statements;
        }
    }
}

impl Load {
    fn of(load: &LoadResult, requests: u64, warmup: u64) -> Load {
        let wall = load.wall.as_secs_f64();
        Load {
            requests,
            concurrency: load.concurrency,
            warmup,
            wall_seconds: wall,
            rps: if wall > 0.0 {
                load.sent as f64 / wall
            } else {
                0.0
            },
            status: load
                .status
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            errors: load.errors.clone(),
            latency_ms: latency_ms(&load.latency_us),
            latency_percentiles_ms: latency_curve_ms(&load.latency_us),
            source: load.source.into(),
            command_exit: load.command_exit,
        }
    }
}

/// One row per statement, most expensive first. `rows_returned` is the top-level
/// statements' total, which each top-level statement takes its share of.
fn statement_rows(statements: &[StatementDelta], n: u64, rows_returned: i64) -> Vec<StatementRow> {
    let mut rows: Vec<StatementRow> = statements
        .iter()
        .map(|s| StatementRow {
            query: s.query.clone(),
            queryid: s.key.queryid.to_string(),
            toplevel: s.key.toplevel != Some(false),
            utility: is_utility(&s.query),
            calls: s.calls,
            rows: s.rows,
            calls_per_request: per_request(s.calls, n),
            rows_per_call: per_request(s.rows, s.calls as u64),
            rows_per_request: per_request(s.rows, n),
            mean_exec_ms: if s.calls > 0 {
                s.exec_time_ms / s.calls as f64
            } else {
                0.0
            },
            blocks_per_request: per_request(s.shared_blks_hit + s.shared_blks_read, n),
            share_of_rows_returned: if s.key.toplevel != Some(false) {
                share(s.rows, rows_returned)
            } else {
                0.0
            },
            plan: None,
            database: None,
        })
        .collect();
    sort_statements(&mut rows);
    rows
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

/// One row per table, most rows read first.
fn table_rows(tables: &[TableDelta], n: u64) -> Vec<TableRow> {
    let mut rows: Vec<TableRow> = tables
        .iter()
        .map(|t| {
            let c = &t.counters;
            TableRow {
                table: t.name.clone(),
                seq_scans: per_request(c.seq_scan, n),
                seq_rows_read: per_request(c.seq_tup_read, n),
                idx_scans: per_request(c.idx_scan, n),
                idx_rows_fetched: per_request(c.idx_tup_fetch, n),
                rows_inserted: per_request(c.n_tup_ins, n),
                rows_updated: per_request(c.n_tup_upd, n),
                rows_deleted: per_request(c.n_tup_del, n),
                pages: t.relpages,
                live_rows: t.n_live_tup,
                database: None,
            }
        })
        .collect();
    sort_tables(&mut rows);
    rows
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cost::counters::TableCounters;
    use crate::cost::delta::DatabaseDelta;
    use crate::cost::snapshot::StatementKey;
    use std::time::Duration;

    pub fn load(n: u64, status: &[(u16, u64)]) -> LoadResult {
        let mut h = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for i in 0..n {
            h.record(1000 + i).unwrap();
        }
        LoadResult {
            sent: n,
            concurrency: 8,
            wall: Duration::from_secs(2),
            latency_us: h,
            status: status.iter().copied().collect(),
            errors: BTreeMap::new(),
            first_error: None,
            interrupted: false,
            source: crate::cost::load::PGCOST_SOURCE,
            command_exit: None,
        }
    }

    pub fn context(n: u64) -> Context {
        Context {
            target: Target {
                method: "GET".into(),
                url: "http://127.0.0.1:1/x".into(),
                database: "postgres://u@h:5432/d".into(),
                server_version: "15.18".into(),
                server_version_num: 150018,
                stats_source: "admin".into(),
                pg_stat_statements: Some("1.10".into()),
                credentials: vec![],
            },
            warmup: 20,
            requests: n,
            settle: Settle {
                before_seconds: 10.6,
                after_seconds: 10.7,
                timed_out: false,
            },
            statements_available: true,
            warnings: vec![],
            invalid_reasons: vec![],
            allowed_statuses: vec![],
            pool: Pool::default(),
            findings: None,
            unauthenticated: None,
            plans: Plans::default(),
            windows: Default::default(),
            background: None,
        }
    }

    pub fn stmt(id: i64, query: &str, calls: i64, rows: i64) -> StatementDelta {
        StatementDelta {
            key: StatementKey {
                userid: 10,
                queryid: id,
                toplevel: Some(true),
            },
            query: query.into(),
            calls,
            rows,
            exec_time_ms: calls as f64 * 0.1,
            shared_blks_hit: calls,
            shared_blks_read: 0,
        }
    }

    #[test]
    fn per_request_figures_divide_window_totals() {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: 200,
                tup_returned: 10_000,
                sessions: Some(0),
                ..Default::default()
            },
            statements: vec![
                stmt(1, "BEGIN", 200, 0),
                stmt(2, "SELECT * FROM items WHERE owner = $1", 200, 1000),
                stmt(3, "COMMIT", 200, 0),
            ],
            tables: vec![TableDelta {
                name: "public.items".into(),
                counters: TableCounters {
                    seq_scan: 200,
                    seq_tup_read: 10_000,
                    ..Default::default()
                },
                relpages: 1,
                n_live_tup: 50,
            }],
            ..Default::default()
        };
        let r = Report::build(&delta, &load(200, &[(200, 200)]), context(200));
        assert!(r.valid, "{:?}", r.invalid_reasons);
        assert_eq!(r.per_request.transactions, 1.0);
        assert_eq!(r.per_request.statements, Some(3.0));
        assert_eq!(r.per_request.statements_excluding_utility, Some(1.0));
        assert_eq!(r.per_request.rows_read, 50.0);
        assert_eq!(r.per_request.rows_returned, Some(5.0));
        assert_eq!(r.statements[0].queryid, "2");
        assert_eq!(r.statements[0].rows_per_call, 5.0);
        assert_eq!(r.statements[0].share_of_rows_returned, 1.0);
        assert_eq!(r.tables[0].seq_rows_read, 50.0);
        assert_eq!(r.load.rps, 100.0);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["load"]["source"], "pgcost");
        assert_eq!(json["load"]["command_exit"], serde_json::Value::Null);
        // A report written before `source` existed reads as pgcost's own burst.
        let mut old = json.clone();
        let load = old["load"].as_object_mut().unwrap();
        load.remove("source");
        load.remove("command_exit");
        let old: Report = serde_json::from_value(old).unwrap();
        assert_eq!(old.load.source, "pgcost");
    }

    #[test]
    fn rejected_requests_and_new_sessions() {
        let delta = WindowDelta {
            database: DatabaseDelta {
                sessions: Some(200),
                ..Default::default()
            },
            ..Default::default()
        };
        let r = Report::build(&delta, &load(200, &[(200, 20), (401, 180)]), context(200));
        assert!(!r.valid);
        assert_eq!(
            r.invalid_reasons[0],
            "180 of 200 responses were 401: these numbers measure the rejection path, not the endpoint"
        );
        assert!(r.warnings[0].contains("200 new connection(s)"));
        assert_eq!(r.per_request.new_sessions, Some(1.0));
    }

    #[test]
    fn allowed_statuses_do_not_invalidate_but_are_reported() {
        let delta = WindowDelta::default();
        let mut ctx = context(40);
        ctx.allowed_statuses = vec![404];
        let r = Report::build(&delta, &load(40, &[(200, 30), (404, 10)]), ctx);
        assert!(r.valid, "{:?}", r.invalid_reasons);
        assert_eq!(
            r.warnings,
            vec!["10 of 40 responses were 404, accepted by --allow-status 404".to_string()]
        );
        // Any other code still invalidates, rejections first, before the audit's own reasons.
        let mut ctx = context(40);
        ctx.allowed_statuses = vec![404];
        ctx.invalid_reasons = vec!["settling after the burst timed out".into()];
        let statuses = [(200, 30), (404, 3), (403, 2), (500, 1)];
        let r = Report::build(&delta, &load(40, &statuses), ctx);
        assert_eq!(r.invalid_reasons.len(), 3);
        assert!(r.invalid_reasons[0].starts_with("2 of 40 responses were 403: these numbers"));
        assert!(r.invalid_reasons[1].starts_with("1 of 40 responses were 500"));
        assert!(r.invalid_reasons[2].starts_with("settling"));
    }

    #[test]
    fn totals_keep_their_json_keys_and_order() {
        let totals = Totals {
            database: DatabaseCounters {
                xact_commit: 1,
                xact_rollback: 2,
                tup_returned: 3,
                tup_fetched: 4,
                tup_inserted: 5,
                tup_updated: 6,
                tup_deleted: 7,
                blks_hit: 8,
                blks_read: 9,
                sessions: None,
            },
            statement_calls: Some(10),
            statement_rows: None,
        };
        let json = serde_json::to_string(&totals).unwrap();
        assert_eq!(
            json,
            r#"{"xact_commit":1,"xact_rollback":2,"tup_returned":3,"tup_fetched":4,"tup_inserted":5,"tup_updated":6,"tup_deleted":7,"blks_hit":8,"blks_read":9,"sessions":null,"statement_calls":10,"statement_rows":null}"#
        );
        assert_eq!(serde_json::from_str::<Totals>(&json).unwrap(), totals);
    }

    #[test]
    fn utility_detection() {
        assert!(is_utility("BEGIN"));
        assert!(is_utility("commit"));
        assert!(is_utility("/* app */ SET search_path = $1"));
        assert!(!is_utility("SELECT 1"));
        assert!(!is_utility("WITH x AS (SELECT 1) SELECT * FROM x"));
        assert!(!is_utility("  -- c\nUPDATE t SET a = $1"));
    }
}
