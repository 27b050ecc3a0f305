//! Measuring endpoints: the entry points of every command. Each logs in if asked, builds
//! the plan of its windows (`plan`) and hands it to the one runner (`runner`), which owns
//! the meters, progress, Ctrl-C, the settle waits and the retries: `measure` and `run`
//! (`pgcost audit`, with the run without credentials first when asked), `run_sequence`
//! (endpoints in one sequence of shared settle waits: check, scale, demo, the survey's exact
//! windows), `command` (the user's load command), `ramp`, and `Screen` (the survey's
//! screening, pg_stat_statements read with no settle wait).
//!
//! After the last window has closed, the plans of the statements the reports name are
//! fetched (`postgres::plans`), and each report is built again, from the same inputs,
//! with them: outside every window, so that the EXPLAINs never land in a measured delta.

mod background;
mod command;
mod control;
pub mod credentials;
pub mod external;
mod meter;
mod nodes;
pub mod pgbouncer;
pub mod plan;
pub mod ramp;
pub mod retry;
pub mod runner;
pub mod screen;
mod steady;
mod tags;

pub use meter::{Boundary, Burst, Ends, Meter, NodeWindow, Notes, Window};
pub use nodes::{Boundaries, Meters};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::auth::{self, login};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::connection::Driver;
use crate::measure::plan::Plan;
use crate::measure::runner::Runner;
use crate::postgres::conninfo::DbTarget;
use crate::postgres::plans;
use crate::progress::Progress;
use pgcost_core::plan::Plans;
use pgcost_core::ramp::RampReport;
use pgcost_core::report::Report;
use pgcost_core::unauthenticated;

/// The load driver of one endpoint's warm-up and burst.
pub fn driver(config: &AuditConfig) -> Result<Arc<Driver>> {
    let tls = if config.request.url.scheme() == "https" {
        Some(Arc::new(crate::tls::https_config(
            config.insecure,
            config.cacert.as_deref(),
        )?))
    } else {
        None
    };
    Driver::rotating(&config.request, tls, &config.targets)
        .map(Arc::new)
        .map_err(|e| Error::usage(format!("cannot prepare the request: {e}")))
}

/// Logs in if asked, and refuses a token that would expire within `run_length`: the
/// request as every burst of the run will send it.
pub async fn authenticate(
    config: &AuditConfig,
    progress: &Progress,
    run_length: Duration,
) -> Result<AuditConfig> {
    let mut config = config.clone();
    if let Some(spec) = config.auth.login.take() {
        let client = login::client(config.insecure, config.cacert.as_deref()).map_err(|e| {
            Error::target(format!(
                "cannot build the HTTP client: {}",
                login::describe_reqwest(e)
            ))
        })?;
        let spinner = progress.spinner(format!("logging in at {}", auth::redact::url(&spec.url)));
        let session = login::login(&client, &spec, &config.auth.redactor).await;
        spinner.finish_and_clear();
        auth::apply_session(
            session?,
            &spec,
            &mut config.request.headers,
            &mut config.auth.described,
        )?;
    }
    let expiry_warnings = auth::check_expiry(
        &config.request.headers,
        std::time::SystemTime::now(),
        run_length,
    )?;
    config.auth.warnings.extend(expiry_warnings);
    Ok(config)
}

/// How long one run of `config` may take, generously (`runs` is 2 with the
/// unauthenticated baseline).
fn run_length(config: &AuditConfig, runs: u32) -> Duration {
    auth::estimated_run_length(
        config.warmup,
        config.requests,
        config.concurrency,
        config.settle_timeout,
        runs,
    )
}

/// The whole `pgcost audit` command: logs in if asked, refuses a token that would expire
/// mid-run, then measures, after the unauthenticated baseline when asked. Returns a report
/// even when its numbers are not valid; errors mean nothing could be measured.
pub async fn measure(
    config: &AuditConfig,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    let runs = if config.auth.compare_unauthenticated {
        2
    } else {
        1
    };
    let config = authenticate(config, progress, run_length(config, runs)).await?;
    if !config.auth.compare_unauthenticated {
        return run(&config, progress, stop).await;
    }
    // Plans only after the authenticated run, the last window.
    let anonymous = AuditConfig {
        plans: false,
        ..config.without_credentials()
    };
    let anonymous = run(&anonymous, progress, stop.clone()).await?;
    if stop.load(Ordering::Relaxed) {
        return Ok(unauthenticated::interrupted(anonymous));
    }
    run_beside(&config, Some(anonymous), progress, stop).await
}

/// Authenticates every endpoint (a token must outlive the whole sequence), then measures
/// them in one sequence of shared settle waits (see [`run_sequence`]).
pub async fn measure_sequence(
    configs: &[AuditConfig],
    progress: &Progress,
    stop: Arc<AtomicBool>,
    before_burst: impl FnMut(usize) + Send + Sync,
) -> Result<Vec<Report>> {
    let ready = authenticate_all(configs, progress).await?;
    run_sequence(&ready, progress, stop, before_burst).await
}

/// Every endpoint authenticated (see [`authenticate`]): a token must outlive the runs of
/// them all.
pub async fn authenticate_all(
    configs: &[AuditConfig],
    progress: &Progress,
) -> Result<Vec<AuditConfig>> {
    let total: Duration = configs.iter().map(|c| run_length(c, 1)).sum();
    let mut ready = Vec::with_capacity(configs.len());
    for config in configs {
        ready.push(authenticate(config, progress, total).await?);
    }
    Ok(ready)
}

/// Builds the reports of the measured windows; when `config` asks for plans and the run
/// was not interrupted, fetches the plans the reports need (the last window is closed, so
/// nothing lands in a measured delta) and builds the reports again with them.
pub(crate) async fn reports_with_plans(
    config: &AuditConfig,
    windows: &[Window],
    progress: &Progress,
    stop: &AtomicBool,
) -> Vec<Report> {
    let reports: Vec<Report> = windows
        .iter()
        .map(|w| w.report(&Plans::default()))
        .collect();
    let wanted = pgcost_core::plan::wanted(&reports);
    let Some(first) = windows.first() else {
        return reports;
    };
    // Plans are fetched over the first database only: with several, a statement's plan
    // would have to be asked of its own database. A replica holds the primary's schema,
    // statistics and (replayed) rows, so its statements' plans are the primary's.
    let several = !config.more_dbs.is_empty();
    if !config.plans || several || stop.load(Ordering::Relaxed) || wanted.is_empty() {
        return reports;
    }
    let pages = pgcost_core::plan::table_pages(&reports);
    let rows = pgcost_core::plan::table_rows(&reports);
    let settings = plans::Settings {
        server_version_num: first.context.target.server_version_num,
        pages: &pages,
        rows: &rows,
        min_pages: (config.findings.as_ref())
            .map(|t| t.seq_scan_min_pages)
            .unwrap_or_else(|| pgcost_core::findings::Thresholds::default().seq_scan_min_pages),
    };
    let spinner = progress.spinner(format!("fetching {} plan(s)", wanted.len()));
    let plans = plans::fetch(&config.db, &wanted, &settings).await;
    spinner.finish_and_clear();
    windows.iter().map(|w| w.report(&plans)).collect()
}

/// The first endpoint, once every other shares its database, admin database and settle
/// timeout, as the endpoints of one sequence of settle waits must; `None` without any.
pub(super) fn one_database(configs: &[AuditConfig]) -> Result<Option<&AuditConfig>> {
    let same = |a: &[DbTarget], b: &[DbTarget]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.redacted() == y.redacted())
    };
    let Some(first) = configs.first() else {
        return Ok(None);
    };
    match configs.iter().find(|c| {
        c.db.redacted() != first.db.redacted()
            || !same(&c.more_dbs, &first.more_dbs)
            || !same(&c.replicas, &first.replicas)
            || c.admin_db != first.admin_db
            || c.settle_timeout != first.settle_timeout
    }) {
        Some(other) => Err(Error::usage(format!(
            "endpoints measured in one sequence must share the database, the admin database \
             and the settle timeout: {} differs from {}",
            other.request.url, first.request.url
        ))),
        None => Ok(Some(first)),
    }
}

/// Measures one endpoint with the request exactly as configured. Returns a report even
/// when its numbers are not valid; errors mean nothing could be measured.
pub async fn run(
    config: &AuditConfig,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    run_beside(config, None, progress, stop).await
}

/// Measures one endpoint, and sets the `unauthenticated` run's report beside it.
async fn run_beside(
    config: &AuditConfig,
    unauthenticated: Option<Report>,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    let configs = std::slice::from_ref(config);
    let mut runner = Runner::open(configs, progress, stop)
        .await?
        .expect("one endpoint");
    if let Some(unauthenticated) = unauthenticated {
        runner = runner.beside(0, unauthenticated);
    }
    let mut reports = runner.run(&Plan::sequence(1)).await?;
    Ok(reports.pop().expect("one report per endpoint"))
}

/// Measures several endpoints of one database in turn, with N + 1 settle waits instead of
/// 2N (`Plan::sequence`): every endpoint is warmed up first, then each boundary closes one
/// window and opens the next. `before_burst(i)` is called before endpoint i's burst. Stops
/// after an interrupted burst, whose report says so; the reports of the endpoints measured
/// so far are returned.
pub async fn run_sequence(
    configs: &[AuditConfig],
    progress: &Progress,
    stop: Arc<AtomicBool>,
    before_burst: impl FnMut(usize) + Send + Sync,
) -> Result<Vec<Report>> {
    let Some(runner) = Runner::open(configs, progress, stop).await? else {
        return Ok(Vec::new());
    };
    let mut runner = runner.on_begin(before_burst);
    runner.run(&Plan::sequence(configs.len())).await
}

/// The ramp's configuration once logged in (a token must outlive the ramp), refused when
/// it names several databases or replicas.
async fn ramp_authenticated(
    config: &AuditConfig,
    plan: &ramp::RampPlan,
    progress: &Progress,
) -> Result<AuditConfig> {
    let config = authenticate(config, progress, ramp::run_length(config, plan)).await?;
    // The runner's meter settles and reads the whole ramp's boundaries; the session reads
    // the steps.
    if !config.more_dbs.is_empty() || !config.replicas.is_empty() {
        return Err(Error::usage(
            "pgcost ramp measures one database: give --db once, and no --replica",
        ));
    }
    Ok(config)
}

/// Measures what the requests of `load`'s command cost, sampling tags while it runs as
/// during pgcost's own bursts (`Plan::command`): `pgcost measure`, and a `command` endpoint
/// of `pgcost check`. Returns a report even when its numbers are not valid; errors mean
/// nothing could be measured.
pub async fn command(
    config: &AuditConfig,
    load: external::Load<'_>,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    let mut runner = Runner::of_command(config, load, progress, stop).await?;
    let mut reports = runner.run(&Plan::command()).await?;
    Ok(reports.pop().expect("one report for one window"))
}

/// The whole `pgcost ramp` (`Plan::ramp`): logs in if asked, warms up, settles, runs the
/// steps, settles, and reads them. Errors mean nothing could be measured.
pub async fn ramp(
    config: &AuditConfig,
    plan: &ramp::RampPlan,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<RampReport> {
    let config = ramp_authenticated(config, plan, progress).await?;
    let meter = Meter::open(&config, &config.db, progress).await?;
    let stepper = ramp::stepper(&config, plan).await?;
    let mut runner = Runner::of_ramp(meter, &config, stepper, progress, stop)?;
    runner.run(&Plan::ramp()).await?;
    let (stepper, whole, settles) = runner.into_ramp();
    Ok(ramp::read(&config, stepper, whole, settles))
}

/// The runner every route's screening runs on, its meters opened once.
pub struct Screen<'a> {
    runner: Runner<'a>,
}

impl<'a> Screen<'a> {
    /// Connects as the first of `configs` (the routes) says; `None` when pg_stat_statements
    /// cannot be read, or the request touches several databases or replicas (a screening
    /// reads one database). `on_begin(k)` is told when route `k`'s screening begins.
    pub async fn open(
        configs: &[AuditConfig],
        progress: &'a Progress,
        stop: Arc<AtomicBool>,
        on_begin: impl FnMut(usize) + Send + Sync + 'a,
    ) -> Result<Option<Screen<'a>>> {
        let Some(first) = configs.first() else {
            return Ok(None);
        };
        if !first.more_dbs.is_empty() || !first.replicas.is_empty() {
            return Ok(None);
        }
        let meters = Meters::open(first, progress).await?;
        if !meters.first().reads_statements() {
            return Ok(None);
        }
        let runner = Runner::over(meters, configs, progress, stop)?.on_begin(on_begin);
        Ok(Some(Screen { runner }))
    }

    /// Warms route `k` up, then sends its burst between two reads of pg_stat_statements.
    /// The report has every statement figure of the burst and no database or table figure
    /// (they are 0): only the statement figures and findings are to be read from it.
    pub async fn route(&mut self, k: usize) -> Result<Report> {
        let mut reports = self.runner.run(&Plan::screening(k)).await?;
        Ok(reports.pop().expect("one report per screening"))
    }
}
