//! Assembles the `Report` from what was measured (the window delta, the burst and the
//! audit's `Context`), calling the analyses (background, unauthenticated, findings, plans)
//! on the model's parts. Nothing changes the report afterwards.

use crate::background;
use crate::delta::{StatementDelta, TableDelta, WindowDelta, per_request, share};
use crate::findings::{self, Thresholds};
use crate::load::{LoadResult, latency_curve_ms, latency_ms};
use crate::plan::{self, Plans};
use crate::report::model::counters::{Counter, DatabaseCounters, WriteCounters};
use crate::report::model::figure::{Figure, PerFigure};
use crate::report::model::figures::Figures;
use crate::report::model::invalid::{Code, Invalid};
use crate::report::model::notes::{Note, WrittenTable};
use crate::setup;
use crate::unauthenticated;

use super::model::{
    Load, PerRequest, Pool, Report, SCHEMA_VERSION, Settle, StatementRow, TableRow, Target, Totals,
    Writes, is_utility, sort_statements, sort_tables,
};

/// What the audit knows besides the window delta.
#[derive(Debug, Clone)]
pub struct Context {
    pub target: Target,
    pub warmup: u64,
    pub requests: u64,
    pub settle: Settle,
    /// Whether pg_stat_statements was read; statement figures are null otherwise.
    pub statements_available: bool,
    pub warnings: Vec<Note>,
    pub invalid_reasons: Vec<Invalid>,
    /// Statuses outside 2xx and 3xx accepted on purpose (`--allow-status`).
    pub allowed_statuses: Vec<u16>,
    /// Connections seen on the target during the burst.
    pub pool: Pool,
    /// The thresholds of the findings; `None` with `--no-findings`.
    pub findings: Option<Thresholds>,
    /// With `--compare-unauthenticated`: the report of the same burst sent without
    /// credentials, to set beside this one.
    pub unauthenticated: Option<Report>,
    /// The plans fetched after the last window, if any (see `crate::plan`).
    pub plans: Plans,
    /// Windows discarded before this one (connection churn).
    pub windows: crate::churn::Windows,
    /// Other traffic on the database, as the measurement saw it; `None` where not looked
    /// at (target mode without flags, older reports).
    pub background: Option<crate::background::Input>,
    /// The warm-up actually sent before the window, when it went on to a steady state.
    pub warmed: Option<crate::steady::Warmed>,
    /// The tags sampled from `pg_stat_activity` during the warm-up and the burst; `None`
    /// where not sampled (target mode, `--no-tags`).
    pub tags: Option<crate::tags::Observed>,
    /// `--allow-writes`: the report names what the requests wrote.
    pub writes_allowed: bool,
    /// The app's source (`--source`), where the findings' locations are looked up.
    pub source: Option<std::sync::Arc<crate::source::SourceMap>>,
}

/// Why the HTTP side makes the numbers untrustworthy, one reason per status or error kind.
/// Codes in `allowed` do not count. Rejections (401, 403) come first: they mean the wrong
/// code path was measured, which matters more than anything else.
pub fn load_invalid_reasons(load: &LoadResult, requested: u64, allowed: &[u16]) -> Vec<Invalid> {
    let mut reasons = Vec::new();
    if !load.error_answers.is_empty() {
        let count: u64 = load.error_answers.values().sum();
        let first = load.first_error_answer.as_deref().unwrap_or_default();
        let reason = format!(
            "{count} of {requested} responses were 2xx with an error in them ({first}): \
             these numbers measure the error path, not the endpoint; check the credentials, \
             or name the app's error marker with --error-header or --error-body-pointer"
        );
        reasons.push(Invalid::new(Code::ErrorAnswers, reason));
    }
    let mut statuses: Vec<_> = (load.status.iter())
        .filter(|(code, _)| !(200..400).contains(*code) && !allowed.contains(code))
        .collect();
    statuses.sort_by_key(|(code, _)| !matches!(code, 401 | 403)); // stable: the rest in order
    for (&code, &count) in statuses {
        let (kind, consequence) = match code {
            401 | 403 => (
                Code::Rejected,
                "these numbers measure the rejection path, not the endpoint",
            ),
            404 => (
                Code::NotFound,
                "these numbers measure the not-found path; check --url",
            ),
            429 => (
                Code::RateLimited,
                "the app rate-limited the burst; these numbers measure the limiter",
            ),
            500..=599 => (Code::ServerErrors, "these numbers include failed requests"),
            _ => (
                Code::UnexpectedStatus,
                "these numbers do not measure successful requests",
            ),
        };
        let reason = format!("{count} of {requested} responses were {code}: {consequence}");
        reasons.push(Invalid::new(kind, reason));
    }
    if load.error_count() > 0 {
        let kinds: Vec<_> = (load.errors.iter())
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
        reasons.push(Invalid::new(Code::RequestsFailed, reason));
    }
    if load.interrupted {
        let reason = format!(
            "the burst was stopped after {} of {requested} requests",
            load.sent
        );
        reasons.push(Invalid::new(Code::Interrupted, reason));
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
        let load_view = Load::of(load, &context);
        let mut invalid_reasons = invalid_reasons(delta, load, &context);
        let statements = statement_rows(&delta.statements, n, top.rows_returned);
        let mut warnings = warnings(delta, load, &context, &statements);
        let background = (context.background.as_ref()).map(|input| {
            let assessed = background::assess(input, window_counts(delta, available), n);
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
        let mut report = Report {
            schema_version: SCHEMA_VERSION,
            valid: invalid_reasons.is_empty(),
            invalid_reasons,
            notes: warnings,
            target: context.target,
            load: load_view,
            settle: context.settle,
            per_request,
            totals: Totals::of(&delta.database, &top, available),
            statements,
            tables: table_rows(&delta.tables, n),
            findings: Vec::new(),
            pool: context.pool,
            unauthenticated: baseline.clone(),
            baseline,
            windows: context.windows,
            nodes: Vec::new(),
            background: background.flatten(),
            pgbouncer: None,
            tags: None,
        };
        report.per_request.setup = setup::recognise(&setup::Inputs {
            new_sessions_per_request: report.per_request.new_sessions,
            statements_per_request: report.per_request.statements,
            rows_read_per_request: report.per_request.rows_read,
            statements: &report.statements,
            tables: &report.tables,
        });
        // Tags first: a finding names the route and line its statement was sent from.
        if available {
            super::tagged::attach(&mut report, context.tags.as_ref());
        }
        report.findings = found(
            &report,
            context.findings.as_ref(),
            context.source.as_deref(),
            &context.plans,
        );
        plan::attach(&mut report, &context.plans);
        if context.writes_allowed {
            report.notes.push(Note::WritesAllowed {
                tables: written(&report.tables),
            });
        }
        report
    }
}

/// The tables the requests wrote, with what each got per request.
fn written(tables: &[TableRow]) -> Vec<WrittenTable> {
    (tables.iter())
        .filter(|t| t.rows_inserted + t.rows_updated + t.rows_deleted > 0.0)
        .map(|t| WrittenTable {
            table: t.table.clone(),
            inserted: t.rows_inserted,
            updated: t.rows_updated,
            deleted: t.rows_deleted,
        })
        .collect()
}

/// The findings of `report` (none with `--no-findings`), judged by the plans where they
/// were fetched, each with its tags and the places to open in the source.
fn found(
    report: &Report,
    thresholds: Option<&Thresholds>,
    source: Option<&crate::source::SourceMap>,
    plans: &Plans,
) -> Vec<findings::Finding> {
    let Some(thresholds) = thresholds else {
        return Vec::new();
    };
    let ran = plans.ran();
    let inputs = findings::Inputs::of(report).with_plans(ran.as_ref());
    let mut found = findings::analyze(&inputs, thresholds);
    // An absolute root, so that a tag's absolute path under it can be made relative.
    let root = source.map(|s| std::path::absolute(&s.root).unwrap_or(s.root.clone()));
    findings::locate(&mut found, &report.statements, source.zip(root.as_deref()));
    found
}

/// The HTTP side first, so that a rejected burst says so on the report's first line even
/// when settling also timed out; then the audit's reasons, then the window's.
fn invalid_reasons(delta: &WindowDelta, load: &LoadResult, context: &Context) -> Vec<Invalid> {
    let mut reasons = load_invalid_reasons(load, context.requests, &context.allowed_statuses);
    reasons.extend(context.invalid_reasons.iter().cloned());
    reasons.extend(delta.invalid_reasons.iter().cloned());
    reasons
}

/// The report's notes; the plan-time one only where plan time may matter.
fn warnings(
    delta: &WindowDelta,
    load: &LoadResult,
    context: &Context,
    statements: &[StatementRow],
) -> Vec<Note> {
    let n = context.requests;
    let mut warnings = context.warnings.clone();
    for (&code, &count) in &load.status {
        if !(200..400).contains(&code) && context.allowed_statuses.contains(&code) {
            warnings.push(Note::AllowedStatusResponses {
                status: code,
                count,
                requests: n,
            });
        }
    }
    warnings.extend(delta.warnings.iter().cloned());
    if let Some(sessions) = delta.database.sessions.filter(|s| *s > 0) {
        warnings.push(Note::NewConnections {
            sessions,
            per_request: per_request(sessions, n),
        });
    }
    // Without a join of many tables run per request, plan time is not worth a note.
    if !findings::planning::planning_may_matter(statements) {
        warnings.retain(|n| !matches!(n, Note::TrackPlanningOff));
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
    writes: WriteCounters,
}

impl TopLevel {
    fn of(statements: &[StatementDelta]) -> TopLevel {
        let top: Vec<_> = statements
            .iter()
            .filter(|s| s.key.toplevel != Some(false))
            .collect();
        TopLevel {
            calls: top.iter().map(|s| s.calls).sum(),
            non_utility: (top.iter().filter(|s| !is_utility(&s.query)))
                .map(|s| s.calls)
                .sum(),
            rows_returned: top.iter().map(|s| s.rows).sum(),
            exec_ms: top.iter().map(|s| s.exec_time_ms).sum(),
            // Summed from the first entry on: an entry's WAL counters are null on servers
            // without them, and a default (null) start would stay null.
            writes: (top.iter().map(|s| s.writes.clone()))
                .reduce(|sum, w| sum.plus(&w))
                .unwrap_or_default(),
        }
    }
}

impl Totals {
    /// The window's counters as they are; the statement sums unless pg_stat_statements was
    /// not `available`.
    fn of(d: &DatabaseCounters, top: &TopLevel, available: bool) -> Totals {
        Totals {
            database: d.clone(),
            statement_calls: available.then_some(top.calls),
            statement_rows: available.then_some(top.rows_returned),
            statement_writes: available.then(|| top.writes.clone()),
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
            writes: available.then(|| Writes::divided(&top.writes, |v| per_request(v, n))),
            setup: None,
        }
    }
}

/// The window's totals of the figures the background is subtracted from: its figures as
/// `PerRequest::of` counts them (top-level statements, unset unless pg_stat_statements
/// was `available`), undivided. The statements of roles outside `--app-role` are already
/// out of `delta`.
pub fn window_counts(delta: &WindowDelta, available: bool) -> background::Counts {
    let top = TopLevel::of(&delta.statements);
    let window = PerRequest::of(&delta.database, &top, 1, available);
    let count = |f: Figure| f.read(None, &window).filter(|_| f.spec().subtracted);
    PerFigure::from_fn(|f| count(f).map(|v| v as i64))
}

impl PerRequest {
    /// Takes the `corrected` figures (the background subtracted, `--control`).
    fn subtract_background(&mut self, corrected: Option<PerFigure<f64>>) {
        let Some(corrected) = corrected else {
            return;
        };
        self.transactions = corrected.transactions.unwrap_or(self.transactions);
        self.rows_read = corrected.rows_read.unwrap_or(self.rows_read);
        self.statements = corrected.statements.or(self.statements);
    }
}

impl Load {
    fn of(load: &LoadResult, context: &Context) -> Load {
        let wall = load.wall.as_secs_f64();
        Load {
            requests: context.requests,
            concurrency: load.concurrency,
            warmup: context.warmup,
            warmup_done: context.warmed.clone(),
            wall_seconds: wall,
            rps: if wall > 0.0 {
                load.sent as f64 / wall
            } else {
                0.0
            },
            status: (load.status.iter())
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            errors: load.errors.clone(),
            error_answers: load.error_answers.clone(),
            response_items: load.response_items,
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
            mean_plan_ms: (s.plan_time_ms)
                .filter(|_| s.calls > 0)
                .map(|p| p / s.calls as f64),
            blocks_per_request: per_request(s.shared_blks_hit + s.shared_blks_read, n),
            writes_per_request: Writes::divided(&s.writes, |v| per_request(v, n)),
            share_of_rows_returned: if s.key.toplevel != Some(false) {
                share(s.rows, rows_returned)
            } else {
                0.0
            },
            plan: None,
            plan_shape: None,
            database: None,
            tags: None,
        })
        .collect();
    sort_statements(&mut rows);
    rows
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
                idx_entries_read: per_request(c.idx_tup_read, n),
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
