//! Measuring endpoints: log in, warm up, settle, snapshot, burst, settle, snapshot, report;
//! and, when asked, the same run without credentials first, as a baseline.
//!
//! The phases are public, so that consecutive endpoints can share their settle waits: the
//! boundary that closes one endpoint's window opens the next one's (`run_sequence`).
//! `credentials` proves the credentials count before the warm-up; `retry` measures a
//! window again when app connections opened or closed in it; `background` measures the
//! control window (`--control`) before anything is sent. `screen` reads a route's burst
//! from pg_stat_statements alone, with no settle wait (`pgcost survey`).
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
pub mod ramp;
pub mod retry;
pub mod screen;
mod steady;
mod tags;

pub use meter::{Boundary, Burst, Ends, Meter, NodeWindow, Notes, Window};
pub use nodes::{Boundaries, Meters};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::auth::{self, login};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::connection::Driver;
use crate::http::load;
use crate::postgres::conninfo::DbTarget;
use crate::postgres::plans;
use crate::progress::Progress;
use pgcost_core::plan::{self, Plans};
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

/// Runs the warm-up; a target that refuses connections is a setup error.
pub async fn warm_up(
    config: &AuditConfig,
    driver: &Arc<Driver>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    if config.warmup == 0 {
        return Ok(());
    }
    let concurrency = config.concurrency.min(config.warmup as u32);
    let bar = progress.counter("warm-up", config.warmup);
    let warm = load::burst(driver, config.warmup, concurrency, &bar, stop.clone()).await;
    bar.finish_and_clear();
    if stop.load(Ordering::Relaxed) {
        return Err(Error::interrupted());
    }
    if warm.errors.contains_key("connect") {
        return Err(Error::target(format!(
            "{} refused connections during the warm-up: {}",
            config.request.url.origin().ascii_serialization(),
            warm.first_error.as_deref().unwrap_or("connection refused")
        ))
        .with_hint("check that the app is running and listening at --url"));
    }
    if let Some(statuses) = warm.all_rejected(&config.auth.allowed_statuses) {
        // Measuring on would cost two settle waits only to report the rejection path.
        return Err(Error::untrustworthy(format!(
            "every warm-up response to {} {} was rejected ({statuses}): the burst would \
             measure the rejection path, not the endpoint",
            config.request.method,
            auth::redact::url(&config.request.url)
        ))
        .with_hint(
            "check the credentials (-H 'Authorization: ...', --bearer, --cookie, --login-url) \
             and --url; --allow-status CODE accepts a status on purpose",
        ));
    }
    if let Some(seen) = warm.all_error_answers() {
        return Err(Error::untrustworthy(format!(
            "every warm-up response to {} {} was an error answered with a 2xx status ({seen}): \
             the burst would measure the error path, not the endpoint",
            config.request.method,
            auth::redact::url(&config.request.url)
        ))
        .with_hint(
            "check the credentials (-H 'Authorization: ...', --bearer, --cookie, --login-url); \
             an API that answers errors with 200 is read by its body and --error-header",
        ));
    }
    Ok(())
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
    before_burst: impl FnMut(usize),
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
    let wanted = plan::wanted(&reports);
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
    let pages = plan::table_pages(&reports);
    let rows = plan::table_rows(&reports);
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
fn one_database(configs: &[AuditConfig]) -> Result<Option<&AuditConfig>> {
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
    let windows = sequence(configs, vec![unauthenticated], progress, &stop, |_| {}).await?;
    let mut reports = reports_with_plans(config, &windows, progress, &stop).await;
    Ok(reports.pop().expect("one report per endpoint"))
}

/// Measures several endpoints of one database in turn, with N + 1 settle waits instead of
/// 2N: every endpoint is warmed up first, then each boundary closes one window and opens
/// the next. `before_burst(i)` is called before endpoint i's burst. Stops after an
/// interrupted burst, whose report says so; the reports of the endpoints measured so far
/// are returned.
pub async fn run_sequence(
    configs: &[AuditConfig],
    progress: &Progress,
    stop: Arc<AtomicBool>,
    before_burst: impl FnMut(usize),
) -> Result<Vec<Report>> {
    let unauthenticated = vec![None; configs.len()];
    let windows = sequence(configs, unauthenticated, progress, &stop, before_burst).await?;
    match configs.first() {
        Some(first) => Ok(reports_with_plans(first, &windows, progress, &stop).await),
        None => Ok(Vec::new()),
    }
}

/// With `--control`, each endpoint's burst raised past `-n` where the background would
/// leave its figures too uncertain, within the time `--max-duration` leaves
/// (docs/background.md); the note goes to the endpoint's report. The endpoints' own
/// figures are read over all their warm-ups, up to the window `opened` opens.
fn sized_bursts(
    meter: &Meters,
    configs: &[AuditConfig],
    notes: &mut [Notes],
    opened: &Boundaries,
) -> Vec<AuditConfig> {
    let warmed = notes.iter().filter_map(|n| n.warmed.as_ref());
    let warm = warmed.fold((0, 0.0), |(r, s), w| (r + w.requests, s + w.seconds));
    let opened = opened.first().and_then(|b| b.start.as_ref());
    let mut spent = Duration::ZERO;
    let mut sized = Vec::with_capacity(configs.len());
    for (config, notes) in configs.iter().zip(notes) {
        let mut config = config.clone();
        if let Some((requests, note)) = meter.first().sized_burst(&config, warm, opened, spent) {
            config.requests = requests;
            notes.warnings.push(note);
        }
        if warm.1 > 0.0 {
            spent += Duration::from_secs_f64(config.requests as f64 * warm.1 / warm.0 as f64);
        }
        sized.push(config);
    }
    sized
}

/// A warm-up's outcome, and the tags sampled during it.
type SampledWarmUp = (
    Option<pgcost_core::steady::Warmed>,
    Option<pgcost_core::tags::Observed>,
);

/// Warms an endpoint up (see `steady`), sampling its tags meanwhile.
pub(crate) async fn warm_up_sampled(
    meter: &Meters,
    (config, driver): (&AuditConfig, &Arc<Driver>),
    progress: &Progress,
    stop: &Arc<AtomicBool>,
    min_slices: u32,
) -> Result<SampledWarmUp> {
    let warm_up = steady::warm_up(meter, config, driver, progress, stop, min_slices);
    let (warmed, sampled) = tags::during(&meter.first().source, config.tags, warm_up).await;
    Ok((warmed?, sampled))
}

/// Warms an endpoint up again, right before its window, because `cold` app connections
/// opened since its warm-up, which have not run its statements; then opens the window.
async fn warm_again(
    meter: &mut Meters,
    (config, driver): (&AuditConfig, &Arc<Driver>),
    cold: usize,
    notes: &mut Notes,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<Boundaries> {
    if !config.quiet {
        progress.status(&format!(
            "{cold} app connection(s) opened since the warm-up of {}: warming it up again",
            auth::redact::url(&config.request.url)
        ));
    }
    let (warmed, sampled) = warm_up_sampled(meter, (config, driver), progress, stop, 1).await?;
    notes.warmed = warmed;
    notes.tags = tags::merged(notes.tags.take(), sampled.as_ref());
    meter.open_window(progress, stop, Instant::now()).await
}

/// How many app connections the window `opened` opens on that were not there when the
/// endpoint's warm-up ended, when there are any: a backend born after the warm-up is not
/// warm (its plans, its caches of the catalog).
fn cold_connections(opened: &Boundaries, notes: &Notes) -> Option<usize> {
    let warmed = &notes.warmed.as_ref()?.pids;
    let now = opened.first()?.start_pids.as_ref()?;
    let cold = now.difference(warmed).count();
    (!warmed.is_empty() && cold > 0).then_some(cold)
}

/// [`run_sequence`] up to the reports: what each endpoint's report is built from, with the
/// report of its unauthenticated run, if any, to set beside its own.
async fn sequence(
    configs: &[AuditConfig],
    unauthenticated: Vec<Option<Report>>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
    mut before_burst: impl FnMut(usize),
) -> Result<Vec<Window>> {
    let Some(first) = one_database(configs)? else {
        return Ok(Vec::new());
    };
    let mut meter = Meters::open(first, progress).await?;
    let drivers = configs.iter().map(driver).collect::<Result<Vec<_>>>()?;
    // Before anything is sent: the control window must see no request from pgcost.
    let control = meter.control(progress, stop).await?;
    // Before every warm-up, so outside every window.
    let mut notes = Vec::with_capacity(configs.len());
    for config in configs {
        let note = credentials::probe(config).await?;
        notes.push(Notes {
            invalid_reasons: (control.iter().cloned())
                .chain(note.invalid_reason)
                .collect(),
            warnings: note.warning.into_iter().collect(),
            ..Notes::default()
        });
    }
    for (endpoint, notes) in configs.iter().zip(&drivers).zip(&mut notes) {
        (notes.warmed, notes.tags) = warm_up_sampled(&meter, endpoint, progress, stop, 1).await?;
    }

    let mut windows = Vec::with_capacity(configs.len());
    let mut opened = meter.open_window(progress, stop, Instant::now()).await?;
    let configs = &sized_bursts(&meter, configs, &mut notes, &opened);
    let endpoints = configs.iter().zip(&drivers).zip(unauthenticated).zip(notes);
    for (i, (((config, driver), unauthenticated), mut notes)) in endpoints.enumerate() {
        before_burst(i);
        if let Some(cold) = cold_connections(&opened, &notes) {
            let endpoint = (config, driver);
            opened = warm_again(&mut meter, endpoint, cold, &mut notes, progress, stop).await?;
        }
        let endpoint = retry::Endpoint {
            config,
            driver,
            unauthenticated,
            notes,
        };
        let mut measured = retry::measure(&mut meter, endpoint, opened, progress, stop).await?;
        windows.push(measured.window);
        // Also when Ctrl-C ended the settle wait: that report says so.
        if stop.load(Ordering::Relaxed) || i + 1 == configs.len() {
            break;
        }
        meter
            .open_after(&mut measured.closed, progress, stop, measured.quiet_since)
            .await?;
        opened = measured.closed;
    }
    // After the last closing settle wait: the second control window, sized to the figures.
    if !stop.load(Ordering::Relaxed) {
        meter.control_after(&mut windows, progress, stop).await?;
    }
    Ok(windows)
}
