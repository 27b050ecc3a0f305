//! One target database's meter: the statistics connection and settle rules shared by
//! consecutive windows, the boundaries that close one window and open the next, the
//! burst between them, and what a window's report is built from.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::auth;
use crate::config::AuditConfig;
use crate::error::{Kind, Result};
use crate::http::connection::Driver;
use crate::http::load;
use crate::measure::background::{self, Watch};
use crate::postgres::conninfo::DbTarget;
use crate::postgres::settle::{self, ClockAnchor, Outcome, Quiet, Rules, Shortcut};
use crate::postgres::stats_connection::{Mode, StatsConnection};
use crate::postgres::views::Backend;
use crate::progress::Progress;
use indicatif::ProgressBar;
use pgcost_core::background::OtherRole;
use pgcost_core::churn::{self, Churn, Windows};
use pgcost_core::delta::{self, DatabaseDelta, WindowDelta};
use pgcost_core::load::LoadResult;
use pgcost_core::nodes::{self, DatabaseTraffic, NodeName, PRIMARY};
use pgcost_core::one_off::{self, CatalogRead, OddEvents};
use pgcost_core::plan::Plans;
use pgcost_core::replica::{self, REPLICA, Recovery};
use pgcost_core::report::model::counters::Counter;
use pgcost_core::report::model::invalid::{Code, Invalid};
use pgcost_core::report::model::notes::Note;
use pgcost_core::report::{Context, Pool, Report, Settle, Target};
use pgcost_core::snapshot::{self, Snapshot, StatementKey, TableStats};

fn settle_reason(when: &str, outcome: &Outcome, timeout_s: f64) -> Invalid {
    let message = format!(
        "settling {when} timed out after {timeout_s:.0} s ({}): counters may be incomplete; \
         if that is other traffic, --app-role ROLE leaves other roles' backends out of the \
         wait and --control DURATION those seen busy while pgcost sent nothing \
         (`pgcost docs background`); else raise --settle-timeout",
        outcome
            .pending
            .as_deref()
            .unwrap_or("counters still moving")
    );
    Invalid::new(Code::SettleTimeout, message)
}

/// What is read at the edge of a measured window, once the app's counters are published.
/// The first boundary only opens a window, the last only closes one; in a sequence, every
/// other boundary closes one endpoint's window and opens the next one's.
#[derive(Debug, Clone, Default)]
pub struct Boundary {
    /// The wait before the closing snapshot (or, at the first boundary, before the tables).
    pub settle: Outcome,
    /// The counters that close the window before this boundary.
    pub end: Option<Snapshot>,
    /// The tool's own footprint inside that window (target mode only).
    pub own_footprint: Option<DatabaseDelta>,
    /// `pg_stat_user_tables`, read outside both windows: it closes the window before and
    /// opens the window after.
    pub tables: BTreeMap<String, TableStats>,
    /// The system catalogs' scans, read with the tables (admin mode, PG 15+).
    pub catalog: Option<CatalogRead>,
    /// The wait for the table read's own counters, before the opening snapshot.
    pub settle_tables: Option<Outcome>,
    /// The counters that open the window after this boundary.
    pub start: Option<Snapshot>,
    /// The app's connections to the target right after `end`.
    pub end_pids: Option<BTreeSet<i32>>,
    /// The app's connections to the target right before `start`.
    pub start_pids: Option<BTreeSet<i32>>,
    /// Every database's traffic on the server at `end` and at `start` (admin mode only),
    /// to name the databases that moved without being measured.
    pub traffic_end: Option<BTreeMap<String, DatabaseTraffic>>,
    pub traffic_start: Option<BTreeMap<String, DatabaseTraffic>>,
    /// When `end` and `start` were read: the window's length, over which the background
    /// accrues.
    pub end_at: Option<Instant>,
    pub start_at: Option<Instant>,
    /// A replica's recovery state, read after `end` (replicas only).
    pub recovery: Option<Recovery>,
}

/// What the run learnt of an endpoint outside its window, carried into its report.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    /// Reasons the run is not valid, before the window's own.
    pub invalid_reasons: Vec<Invalid>,
    pub warnings: Vec<Note>,
    /// Windows discarded before the reported one.
    pub windows: Windows,
    /// The warm-up before the reported window, when it went on to a steady state.
    pub warmed: Option<pgcost_core::steady::Warmed>,
    /// The tags sampled during the warm-up (admin mode only).
    pub tags: Option<pgcost_core::tags::Observed>,
}

/// What a boundary ends: nothing (the wait before a first window), or the window of a
/// burst that ran whole or was interrupted (no wait then: the run is stopping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    Nothing,
    Burst,
    InterruptedBurst,
}

impl Ends {
    /// The boundary after a burst, `interrupted` or not.
    pub fn burst(interrupted: bool) -> Ends {
        match interrupted {
            true => Ends::InterruptedBurst,
            false => Ends::Burst,
        }
    }
}

/// What one burst produced.
#[derive(Debug, Clone)]
pub struct Burst {
    pub load: LoadResult,
    /// When the last response came in: the app has been quiet since.
    pub ended: Instant,
    /// Most client backends on the target while it ran (admin mode only).
    pub peak_backends: Option<i64>,
    /// Busy backends of roles outside `--app-role` seen while it ran, by pid.
    pub others: BTreeMap<i32, Backend>,
    /// A snapshot read after the last response, and when (admin mode only).
    pub tail: Option<background::TailStart>,
    /// pg_stat_statements read once half the requests were done (`measure::steady`).
    pub mid: Option<BTreeMap<StatementKey, pgcost_core::snapshot::StatementStats>>,
    /// The tags sampled while it ran (admin mode only).
    pub tags: Option<pgcost_core::tags::Observed>,
    /// Whether Ctrl-C cut it short.
    pub interrupted: bool,
}

/// The statistics connection and the settle rules of one target database, shared by
/// consecutive windows.
pub struct Meter {
    pub(super) source: StatsConnection,
    /// The target database.
    target: DbTarget,
    rules: Rules,
    timeout: Duration,
    /// The server's start time when the open window began, to tell a restart from a
    /// dropped connection.
    window_started: Option<String>,
    /// Each statement's calls when the open window began, to name the ones that changed.
    window_calls: BTreeMap<StatementKey, i64>,
    /// The clocks, read before the traffic that the next settle wait is for.
    anchor: ClockAnchor,
    /// Other traffic: the app roles, the control window, the backends left out of waits.
    pub(super) watch: Watch,
    /// A hot standby the app reads from (`--replica`).
    replica: bool,
}

impl Meter {
    /// Connects to `target` (and the admin database) with the settings of `config`.
    pub async fn open(
        config: &AuditConfig,
        target: &DbTarget,
        progress: &Progress,
    ) -> Result<Meter> {
        let spinner = progress.spinner(format!("connecting to {}", target.redacted()));
        crate::postgres::pgbouncer::refuse_pooler(target).await?;
        let mut source = StatsConnection::open(target, &config.admin_db).await?;
        let anchor = source.clock_anchor().await?;
        let watch = Watch::open(&config.background, &source).await?;
        spinner.finish_and_clear();
        let rules = Rules::for_server(source.server.version_num, source.mode == Mode::Admin);
        Ok(Meter {
            source,
            target: target.clone(),
            rules,
            timeout: config.settle_timeout,
            window_started: None,
            window_calls: BTreeMap::new(),
            anchor,
            watch,
            replica: false,
        })
    }

    /// This meter, for a hot standby the app reads from (`--replica`): it reads the
    /// standby's recovery state after each window, and names its node apart from the
    /// primary's database of the same name.
    pub fn into_replica(self) -> Meter {
        Meter {
            replica: true,
            ..self
        }
    }

    /// The line of the report for a settle wait `when` that timed out.
    pub(super) fn settle_reason(&self, when: &str, outcome: &Outcome) -> Invalid {
        settle_reason(when, outcome, self.timeout.as_secs_f64())
    }

    /// Waits until the app's counters are published (`postgres::settle`); the backends
    /// seen as other traffic in the wait are known as such in every later one.
    pub(super) async fn settle(
        &mut self,
        progress: &Progress,
        (label, shortcut): (&str, Shortcut),
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<Outcome> {
        let quiet = Quiet {
            since: quiet_since,
            anchor: self.anchor,
            others: &self.watch.others,
            shortcut,
        };
        let outcome = settle::wait(
            &mut self.source,
            &self.rules,
            self.timeout,
            progress,
            label,
            stop,
            quiet,
        )
        .await?;
        (self.watch.others.seen_quiet).extend(outcome.others.keys().copied());
        Ok(outcome)
    }

    /// The first half of a boundary (see [`crate::measure::Meters::open_window`]): the wait, the
    /// closing snapshot when it `ends` a burst, and the tables. The window after it is
    /// opened by [`Meter::open_after`], once the caller knows the closed window is kept.
    pub async fn close(
        &mut self,
        ends: Ends,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<Boundary> {
        let settle = match ends {
            Ends::InterruptedBurst => Outcome::immediate(),
            Ends::Burst => self.settle_after_burst(progress, stop, quiet_since).await?,
            Ends::Nothing => {
                let label = ("settling before the burst", Shortcut::Any);
                self.settle(progress, label, stop, quiet_since).await?
            }
        };
        let closes = ends != Ends::Nothing;
        let end_at = closes.then(Instant::now);
        let (end, own_footprint, end_pids) = if closes {
            let mut end = self.source.snapshot().await?;
            self.source
                .name_changed(&self.window_calls, &mut end)
                .await?;
            let own = self.source.own_footprint();
            let pids = self.source.app_pids(&self.watch.others).await?;
            (Some(end), own, Some(pids))
        } else {
            (None, None, None)
        };
        let traffic_end = match closes {
            true => self.source.databases().await?,
            false => None,
        };
        let recovery = match closes && self.replica {
            true => Some(self.source.recovery().await?),
            false => None,
        };
        let tables = self.source.tables().await?;
        Ok(Boundary {
            settle,
            end,
            own_footprint,
            tables,
            catalog: self.source.take_catalog(),
            end_pids,
            traffic_end,
            end_at,
            recovery,
            ..Boundary::default()
        })
    }

    /// The wait that closes a window; a restart drops the connection, and reconnecting
    /// tells a restart (the report is then not valid, and says why) from a dropped
    /// connection (an error).
    async fn settle_after_burst(
        &mut self,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<Outcome> {
        // A backend that served the burst may still hold its counters: only known other
        // traffic is taken as flushed early.
        let label = ("settling after the burst", Shortcut::KnownBackground);
        match self.settle(progress, label, stop, quiet_since).await {
            Ok(outcome) => Ok(outcome),
            Err(lost) if lost.kind == Kind::ConnectionLost => {
                let started = self.window_started.clone();
                match self.source.reconnect_after_loss(&started).await {
                    Ok(true) => Ok(Outcome {
                        waited: quiet_since.elapsed(),
                        ..Outcome::immediate()
                    }),
                    _ => Err(lost),
                }
            }
            Err(other) => Err(other),
        }
    }

    /// The second half of a boundary: opens the next window after the tables of
    /// `boundary` were read.
    pub async fn open_after(
        &mut self,
        boundary: &mut Boundary,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<()> {
        // The tables were read over a connection to the target: its counters must fall
        // before the window, at once where it flushed them itself, else after a wait.
        let waited = if self.source.tables_flush_themselves() {
            Outcome::immediate()
        } else {
            // The app's counters were waited for just before: this wait is for the read's.
            let label = ("settling before the burst", Shortcut::Any);
            self.settle(progress, label, stop, quiet_since).await?
        };
        // The burst's own wait will check the server's clock against this reading.
        self.anchor = self.source.clock_anchor().await?;
        let start_pids = self.source.app_pids(&self.watch.others).await?;
        let start_at = Instant::now();
        let start = self.source.calibrated_before().await?;
        boundary.start_at = Some(start_at);
        boundary.traffic_start = self.source.databases().await?;
        self.window_started = start.server_started.clone();
        self.window_calls = snapshot::calls(&start.statements);
        boundary.settle_tables = Some(waited);
        boundary.start = Some(start);
        boundary.start_pids = Some(start_pids);
        Ok(())
    }

    /// The target database's name.
    pub fn name(&self) -> &str {
        &self.target.dbname
    }

    /// The target database's name and redacted URL; a replica's name is `dbname@host:port`,
    /// since its database has the primary's name.
    pub fn node_name(&self) -> NodeName {
        let (name, role) = match self.replica {
            true => (format!("{}@{}", self.target.dbname, self.server()), REPLICA),
            false => (self.target.dbname.clone(), PRIMARY),
        };
        NodeName {
            name,
            database: self.target.redacted(),
            role,
        }
    }

    /// The server the target is on (`host:port`).
    pub fn server(&self) -> String {
        self.target.server()
    }

    /// True when pg_stat_statements can be read for the target.
    pub fn reads_statements(&self) -> bool {
        self.source.layout.is_some()
    }

    /// The lines about the databases of this server that moved in the window between two
    /// boundaries without being `measured`; pgcost's own statistics database is left out.
    pub fn unmeasured(
        &self,
        opened: &Boundary,
        closed: &Boundary,
        measured: &[&str],
        requests: u64,
    ) -> Vec<Note> {
        let (Some(before), Some(after)) = (&opened.traffic_start, &closed.traffic_end) else {
            return Vec::new();
        };
        let mut excluded = measured.to_vec();
        excluded.extend(self.source.admin_db());
        nodes::unmeasured_warnings(before, after, &excluded, requests, |name| {
            format!("--db {}", self.target.with_dbname(name).redacted())
        })
    }

    /// The app connections that opened or closed in the window between two boundaries.
    pub fn churn(&self, opened: &Boundary, closed: &Boundary) -> Churn {
        let sessions = window_delta(opened, closed).database.sessions;
        let none = BTreeSet::new();
        Churn::of(
            opened.start_pids.as_ref().unwrap_or(&none),
            closed.end_pids.as_ref().unwrap_or(&none),
            sessions,
        )
    }

    /// The system catalog relations scanned in the window between two boundaries a number
    /// of times that is not the same on every one of `requests` (`pgcost_core::one_off`).
    pub fn odd_catalog_scans(
        &self,
        opened: &Boundary,
        closed: &Boundary,
        requests: u64,
    ) -> Vec<OddEvents> {
        match (
            &opened.catalog,
            &closed.catalog,
            self.source.catalog_names(),
        ) {
            (Some(opened), Some(closed), Some(names)) => {
                one_off::odd_catalog_scans(opened, closed, names, requests)
            }
            _ => Vec::new(),
        }
    }

    /// Transactions beyond the top-level statements of a window, as (extra, transactions,
    /// statements), when pg_stat_statements tracks BEGIN and COMMIT and there are any.
    /// Not with `--app-role`: other roles' transactions are in the database's count, their
    /// statements are not.
    pub fn uncounted(&self, window: &WindowDelta) -> Option<(i64, i64, i64)> {
        let by_role = !self.watch.others.app_roles.is_empty();
        if self.source.layout.is_none() || !self.source.server.tracks_utility || by_role {
            return None;
        }
        let transactions = window.database.xact_commit + window.database.xact_rollback;
        let statements: i64 = (window.statements.iter())
            .filter(|s| s.key.toplevel != Some(false))
            .map(|s| s.calls)
            .sum();
        churn::uncounted_transactions(transactions, statements)
            .map(|extra| (extra, transactions, statements))
    }

    /// Sends the measured burst, sampling the target's backends meanwhile.
    pub async fn burst(
        &self,
        config: &AuditConfig,
        driver: &Arc<Driver>,
        progress: &Progress,
        stop: &Arc<AtomicBool>,
    ) -> Burst {
        let bar = progress.counter("burst", config.requests);
        let burst_done = AtomicBool::new(false);
        let burst = async {
            let result = load::burst(
                driver,
                config.requests,
                config.concurrency,
                &bar,
                stop.clone(),
            )
            .await;
            burst_done.store(true, Ordering::Relaxed);
            result
        };
        let sampling = background::sample_burst(&self.source, &burst_done, &self.watch.others);
        let half = config.requests / 2;
        let mid = read_at_half(&self.source, &bar, half, &burst_done);
        let tags = crate::measure::tags::sample(&self.source, config.tags, &burst_done);
        let (load, (peak_backends, others, tail), mid, tags) =
            tokio::join!(burst, sampling, mid, tags);
        bar.finish_and_clear();
        Burst {
            load,
            ended: Instant::now(),
            peak_backends,
            others,
            tail,
            mid,
            tags,
            interrupted: stop.load(Ordering::Relaxed),
        }
    }

    /// What the report of the window between two boundaries is built from, set beside the
    /// `unauthenticated` run's report when there is one, with what the run learnt outside
    /// the window (`notes`). Pure once the boundaries are read.
    #[allow(clippy::too_many_arguments)]
    pub fn measured(
        &self,
        config: &AuditConfig,
        opened: &Boundary,
        burst: &Burst,
        closed: &Boundary,
        unauthenticated: Option<Report>,
        notes: Notes,
    ) -> Window {
        let (window, other_roles) = self.split_window(opened, closed);
        let window_seconds = match (opened.start_at, closed.end_at) {
            (Some(start), Some(end)) => end.saturating_duration_since(start).as_secs_f64(),
            _ => 0.0,
        };
        let mut seen = closed.settle.others.clone();
        seen.extend(burst.others.clone());
        let tail = (self.watch).tail(burst.tail.as_ref(), closed.end.as_ref(), closed.end_at);
        let background = (self.watch).input(
            window_seconds,
            &seen,
            other_roles,
            self.source.server.version_num,
            tail,
        );
        let warnings = self.warnings(config, (opened, closed), &window, &notes);
        let mut invalid_reasons = notes.invalid_reasons;
        invalid_reasons.extend(self.invalid_reasons(opened, closed, burst.interrupted));
        let settle_tables =
            (opened.settle_tables.as_ref()).map_or(Default::default(), |o| o.waited);
        let context = Context {
            target: self.target(config),
            warmup: config.warmup,
            requests: config.requests,
            settle: Settle {
                before_seconds: (opened.settle.waited + settle_tables).as_secs_f64(),
                after_seconds: closed.settle.waited.as_secs_f64(),
                timed_out: opened.settle.timed_out || closed.settle.timed_out,
            },
            statements_available: self.source.layout.is_some(),
            warnings,
            invalid_reasons,
            allowed_statuses: config.auth.allowed_statuses.clone(),
            pool: Pool {
                peak_backends: burst.peak_backends,
                max_connections: Some(self.source.server.max_connections),
            },
            findings: config.findings.clone(),
            unauthenticated,
            windows: notes.windows,
            plans: Plans::default(),
            background: Some(background),
            warmed: notes.warmed,
            tags: crate::measure::tags::merged(notes.tags, burst.tags.as_ref()),
            source: config.source.clone(),
            writes_allowed: config.allow_writes,
        };
        Window {
            delta: window,
            load: burst.load.clone(),
            context,
            nodes: Vec::new(),
            pgbouncer: None,
        }
    }

    /// The backend of pgcost's own table reader on the target (0 when none), for samplers
    /// to leave out.
    pub fn own_target_pid(&self) -> i32 {
        self.source.own_target_pid()
    }

    /// The window's delta, the tool's own footprint taken out, with the app roles'
    /// statements only (`--app-role`).
    pub fn window(&self, opened: &Boundary, closed: &Boundary) -> WindowDelta {
        self.split_window(opened, closed).0
    }

    /// [`Meter::window`], and the statements of the other roles it left out.
    fn split_window(&self, opened: &Boundary, closed: &Boundary) -> (WindowDelta, Vec<OtherRole>) {
        let mut window = window_delta(opened, closed);
        if let Some(own) = &closed.own_footprint {
            window.database = window.database.minus(own);
        }
        let others = self.watch.split(&mut window);
        (window, others)
    }

    fn target(&self, config: &AuditConfig) -> Target {
        let source = &self.source;
        Target {
            method: config.request.method.to_string(),
            url: auth::redact::url(&config.request.url),
            database: self.target.redacted(),
            server_version: source.server.version.clone(),
            server_version_num: source.server.version_num,
            stats_source: source.mode.name().into(),
            pg_stat_statements: source.layout.and(source.extension_version.clone()),
            credentials: config.auth.described.clone(),
        }
    }

    /// The lines about this node itself: counters that moved while the app was idle
    /// (background), and a replica's recovery state.
    fn node_warnings(&self, opened: &Boundary, closed: &Boundary, timeout: Duration) -> Vec<Note> {
        let name = self.node_name().name;
        let mut lines = Vec::new();
        let mut waits = [&opened.settle, &closed.settle]
            .into_iter()
            .chain(opened.settle_tables.as_ref());
        if waits.any(|o| o.moved_while_quiet) {
            lines.push(Note::BackgroundWhileIdle {
                node: name.clone(),
                replica: self.replica,
            });
        }
        if let Some(recovery) = &closed.recovery {
            lines.extend(replica::recovery_warnings(&name, recovery, timeout));
        }
        lines
    }

    /// The window's warnings: the credentials' and the source's, the run's (`notes`), the
    /// clock's and the node's, and the statements no request accounts for.
    fn warnings(
        &self,
        config: &AuditConfig,
        (opened, closed): (&Boundary, &Boundary),
        window: &WindowDelta,
        notes: &Notes,
    ) -> Vec<Note> {
        let mut warnings = config.auth.warnings.clone();
        warnings.extend(self.source.warnings.iter().cloned());
        if config.insecure {
            warnings.push(Note::TlsInsecure);
        }
        warnings.extend(
            notes
                .warmed
                .as_ref()
                .and_then(pgcost_core::steady::Warmed::note),
        );
        warnings.extend(clock_warning(opened, closed));
        warnings.extend(self.node_warnings(opened, closed, config.settle_timeout));
        warnings.extend(notes.warnings.iter().cloned());
        warnings.extend(notes.windows.warning());
        if let Some((extra, transactions, statements)) = self.uncounted(window) {
            warnings.push(churn::uncounted_warning(
                extra,
                transactions,
                statements,
                config.requests,
            ));
        }
        warnings
    }

    /// Why the window's counters may be incomplete: a settle wait that timed out, or an
    /// interrupted burst.
    fn invalid_reasons(
        &self,
        opened: &Boundary,
        closed: &Boundary,
        interrupted: bool,
    ) -> Vec<Invalid> {
        let timeout = self.timeout.as_secs_f64();
        let mut invalid = Vec::new();
        if opened.settle.timed_out {
            invalid.push(settle_reason("before the burst", &opened.settle, timeout));
        }
        if closed.settle.timed_out {
            invalid.push(settle_reason("after the burst", &closed.settle, timeout));
        }
        if interrupted {
            invalid.push(Invalid::new(
                Code::Interrupted,
                "interrupted: the counters were read without settling, and are incomplete",
            ));
        }
        invalid
    }
}

/// The server's wall clock stepped ahead during a settle wait by more than this (seconds)
/// is worth a line in the report.
const CLOCK_STEP_WARNING_SECONDS: f64 = 1.0;

/// A line when the server's wall clock stepped ahead during the waits around the window.
fn clock_warning(opened: &Boundary, closed: &Boundary) -> Option<Note> {
    let ahead = [&opened.settle, &closed.settle]
        .into_iter()
        .chain(opened.settle_tables.as_ref())
        .map(|o| o.server_clock_ahead)
        .fold(0.0, f64::max);
    (ahead >= CLOCK_STEP_WARNING_SECONDS).then_some(Note::ServerClockAhead { seconds: ahead })
}

/// The delta between the opening boundary's start snapshot and the closing boundary's end
/// snapshot, each with the tables read at its boundary.
fn window_delta(opened: &Boundary, closed: &Boundary) -> WindowDelta {
    let mut before = opened
        .start
        .clone()
        .expect("the opening boundary has a start snapshot");
    let mut after = closed
        .end
        .clone()
        .expect("the closing boundary has an end snapshot");
    before.tables = opened.tables.clone();
    after.tables = closed.tables.clone();
    delta::delta(&before, &after)
}

/// Everything one endpoint's report is built from: it can be built again, with the same
/// result, once the plans are known.
#[derive(Debug, Clone)]
pub struct Window {
    /// With several databases, their sum.
    pub delta: WindowDelta,
    pub load: LoadResult,
    pub context: Context,
    /// Each database's own window when the request touches several; empty with one.
    pub nodes: Vec<NodeWindow>,
    /// PgBouncer's figures over the window (`--pgbouncer`).
    pub pgbouncer: Option<pgcost_core::pgbouncer::PgBouncerFigures>,
}

/// One database's part of a window.
#[derive(Debug, Clone)]
pub struct NodeWindow {
    pub name: NodeName,
    pub delta: WindowDelta,
    pub context: Context,
}

impl Window {
    /// The report, with `plans` attached.
    pub fn report(&self, plans: &Plans) -> Report {
        let context = Context {
            plans: plans.clone(),
            ..self.context.clone()
        };
        let pgbouncer = self.pgbouncer.clone();
        if self.nodes.is_empty() {
            let report = Report::build(&self.delta, &self.load, context);
            return Report {
                pgbouncer,
                ..report
            };
        }
        // The findings are each database's own, over its own statements.
        let total = Report::build(
            &self.delta,
            &self.load,
            Context {
                findings: None,
                ..context
            },
        );
        let nodes = (self.nodes.iter())
            .map(|node| {
                let context = Context {
                    plans: plans.clone(),
                    ..node.context.clone()
                };
                let report = Report::build(&node.delta, &self.load, context);
                (node.name.clone(), report)
            })
            .collect();
        Report {
            pgbouncer,
            ..nodes::combine(total, nodes)
        }
    }
}

/// pg_stat_statements once `bar` has counted `half` requests, read while the burst goes
/// on; `None` when the burst ended first, or in target mode, where the read would land in
/// the measured counters.
async fn read_at_half(
    source: &StatsConnection,
    bar: &ProgressBar,
    half: u64,
    done: &AtomicBool,
) -> Option<BTreeMap<StatementKey, pgcost_core::snapshot::StatementStats>> {
    if source.mode != Mode::Admin || half == 0 {
        return None;
    }
    while bar.position() < half {
        if done.load(Ordering::Relaxed) {
            return None;
        }
        // A short burst's second half can pass within a few polls: poll often.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    source.statements_now().await.ok().flatten()
}
