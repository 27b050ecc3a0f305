//! One audit, start to finish: log in, warm up, settle, snapshot, burst, settle, snapshot,
//! report; and, when asked, the same run without credentials first, as a baseline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::auth::{self, login};
use crate::baseline;
use crate::config::AuditConfig;
use crate::delta;
use crate::error::{Error, Kind, Result};
use crate::findings::{self, PoolContext};
use crate::load::{self, LoadResult};
use crate::progress::Progress;
use crate::report::{Context, Pool, Report, Settle, Target};
use crate::settle::{self, Outcome, Rules};
use crate::source::{Mode, StatsSource};

fn settle_reason(when: &str, outcome: &Outcome, timeout_s: f64) -> String {
    format!(
        "settling {when} timed out after {timeout_s:.0} s ({}): counters may be incomplete; \
         raise --settle-timeout or stop other traffic to the database",
        outcome
            .pending
            .as_deref()
            .unwrap_or("counters still moving")
    )
}

/// Runs the warm-up; a target that refuses connections is a setup error.
async fn warm_up(
    config: &AuditConfig,
    client: &reqwest::Client,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    if config.warmup == 0 {
        return Ok(());
    }
    let concurrency = config.concurrency.min(config.warmup as u32);
    let bar = progress.counter("warm-up", config.warmup);
    let warm = load::burst(
        client,
        &config.request,
        config.warmup,
        concurrency,
        &bar,
        stop.clone(),
    )
    .await;
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
    Ok(())
}

/// The whole command: logs in if asked, refuses a token that would expire mid-run, then
/// measures, after the unauthenticated baseline when asked. Returns a report even when its
/// numbers are not valid; errors mean nothing could be measured.
pub async fn measure(
    config: &AuditConfig,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    let mut config = config.clone();
    if let Some(spec) = config.auth.login.take() {
        let client = load::client(1, config.insecure, config.cacert.as_deref()).map_err(|e| {
            Error::target(format!(
                "cannot build the HTTP client: {}",
                load::describe_reqwest(e)
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
    let runs = if config.auth.compare_unauthenticated {
        2
    } else {
        1
    };
    let run_length = auth::estimated_run_length(
        config.warmup,
        config.requests,
        config.concurrency,
        config.settle_timeout,
        runs,
    );
    let expiry_warnings = auth::check_expiry(
        &config.request.headers,
        std::time::SystemTime::now(),
        run_length,
    )?;
    config.auth.warnings.extend(expiry_warnings);

    if !config.auth.compare_unauthenticated {
        return run(&config, progress, stop).await;
    }
    let anonymous = run(&config.without_credentials(), progress, stop.clone()).await?;
    if stop.load(Ordering::Relaxed) {
        let mut report = anonymous;
        report.invalid_reasons.insert(
            0,
            "interrupted during the unauthenticated baseline: the authenticated burst was not sent"
                .into(),
        );
        report.valid = false;
        return Ok(report);
    }
    let mut report = run(&config, progress, stop).await?;
    baseline::attach(&mut report, &anonymous);
    Ok(report)
}

/// Measures one endpoint with the request exactly as configured. Returns a report even
/// when its numbers are not valid; errors mean nothing could be measured.
pub async fn run(
    config: &AuditConfig,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Report> {
    let spinner = progress.spinner(format!("connecting to {}", config.db.redacted()));
    let mut source = StatsSource::open(&config.db, &config.admin_db).await?;
    spinner.finish_and_clear();
    let client = load::client(
        config.concurrency,
        config.insecure,
        config.cacert.as_deref(),
    )
    .map_err(|e| {
        Error::target(format!(
            "cannot build the HTTP client: {}",
            load::describe_reqwest(e)
        ))
    })?;

    warm_up(config, &client, progress, &stop).await?;
    let warmed_up = Instant::now();

    let rules = Rules::for_server(source.server.version_num, source.mode == Mode::Admin);
    let timeout = config.settle_timeout;
    let mut invalid = Vec::new();
    let settle_before = settle::wait(
        &mut source,
        &rules,
        timeout,
        progress,
        "settling before the burst",
        &stop,
        warmed_up,
    )
    .await?;
    if settle_before.timed_out {
        invalid.push(settle_reason(
            "before the burst",
            &settle_before,
            timeout.as_secs_f64(),
        ));
    }
    let tables_before = source.tables().await?;
    // The tables were read over a connection to the target; wait for its counters too.
    let settle_tables = settle::wait(
        &mut source,
        &rules,
        timeout,
        progress,
        "settling before the burst",
        &stop,
        warmed_up,
    )
    .await?;
    let mut before = source.calibrated_before().await?;

    let bar = progress.counter("burst", config.requests);
    let burst_done = AtomicBool::new(false);
    let burst = async {
        let result = load::burst(
            &client,
            &config.request,
            config.requests,
            config.concurrency,
            &bar,
            stop.clone(),
        )
        .await;
        burst_done.store(true, Ordering::Relaxed);
        result
    };
    let (load, peak_backends): (LoadResult, Option<i64>) =
        tokio::join!(burst, sample_peak_backends(&source, &burst_done));
    bar.finish_and_clear();

    let burst_ended = Instant::now();
    let interrupted = stop.load(Ordering::Relaxed);
    let settle_after = if interrupted {
        Outcome {
            waited: Default::default(),
            timed_out: false,
            pending: None,
        }
    } else {
        match settle::wait(
            &mut source,
            &rules,
            timeout,
            progress,
            "settling after the burst",
            &stop,
            burst_ended,
        )
        .await
        {
            Ok(outcome) => outcome,
            // A restart drops the connection: reconnect to tell a restart (the report is
            // then not valid, and says why) from a dropped connection (an error).
            Err(lost) if lost.kind == Kind::ConnectionLost => {
                match source.reconnect_after_loss(&before.server_started).await {
                    Ok(true) => Outcome {
                        waited: burst_ended.elapsed(),
                        timed_out: false,
                        pending: None,
                    },
                    _ => return Err(lost),
                }
            }
            Err(other) => return Err(other),
        }
    };
    if settle_after.timed_out {
        invalid.push(settle_reason(
            "after the burst",
            &settle_after,
            timeout.as_secs_f64(),
        ));
    }
    if interrupted {
        invalid.push(
            "interrupted: the counters were read without settling, and are incomplete".into(),
        );
    }
    let mut after = source.snapshot().await?;
    let tables_after = source.tables().await?;
    before.tables = tables_before;
    after.tables = tables_after;

    let mut window = delta::delta(&before, &after);
    if let Some(own) = source.own_footprint() {
        window.database = window.database.minus(&own);
    }

    let mut warnings = config.auth.warnings.clone();
    warnings.extend(source.warnings.iter().cloned());
    if config.insecure {
        warnings.push("--insecure: the target's TLS certificate was not verified".into());
    }
    let context = Context {
        target: Target {
            method: config.request.method.to_string(),
            url: auth::redact::url(&config.request.url),
            database: config.db.redacted(),
            server_version: source.server.version.clone(),
            server_version_num: source.server.version_num,
            stats_source: source.mode.name().into(),
            pg_stat_statements: source.layout.and(source.extension_version.clone()),
            credentials: config.auth.described.clone(),
        },
        warmup: config.warmup,
        requests: config.requests,
        settle: Settle {
            before_seconds: (settle_before.waited + settle_tables.waited).as_secs_f64(),
            after_seconds: settle_after.waited.as_secs_f64(),
            timed_out: settle_before.timed_out || settle_after.timed_out,
        },
        statements_available: source.layout.is_some(),
        warnings,
        invalid_reasons: invalid,
        allowed_statuses: config.auth.allowed_statuses.clone(),
    };
    let mut report = Report::build(&window, &load, context);
    report.pool = Pool {
        peak_backends,
        max_connections: Some(source.server.max_connections),
    };
    if let Some(thresholds) = &config.findings {
        let pool = PoolContext {
            peak_backends,
            max_connections: Some(source.server.max_connections),
        };
        report.findings = findings::analyze(&report, &pool, thresholds);
    }
    Ok(report)
}

/// Samples the target's client backends while the burst runs (admin mode only: in target
/// mode every sample would land in the measured counters).
async fn sample_peak_backends(source: &StatsSource, done: &AtomicBool) -> Option<i64> {
    if source.mode != Mode::Admin {
        return None;
    }
    let mut peak = None;
    while !done.load(Ordering::Relaxed) {
        if let Ok(count) = source.client_backends().await {
            peak = Some(peak.unwrap_or(0).max(count));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    peak
}
