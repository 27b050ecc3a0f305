//! Measuring `pgcost ramp`: warm up, settle, then step the load up, each step measured
//! at once (`pg_stat_statements` is immediate), and settle once more after the last, for
//! the `pg_stat_database` totals of the whole ramp.

pub mod procfs;
pub mod step;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::auth;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::measure::pgbouncer::Bouncer;
use crate::postgres::settle::Outcome;
use crate::postgres::stats_connection::{Mode, StatsConnection};
use crate::postgres::{ramp as ramp_views, views};
use crate::progress::Progress;
use pgcost_core::delta::WindowDelta;
use pgcost_core::pgbouncer::StepPgBouncer;
use pgcost_core::ramp::step::{self as figures, Step, StepInput};
use pgcost_core::ramp::verdict::label;
use pgcost_core::ramp::{self, RampReport, RampTarget, RampTotals, knee};
use pgcost_core::report::model::invalid::{Code, Invalid};
use pgcost_core::report::model::notes::messages;
use step::{Length, Load};

/// The default steps double from 1 up to this concurrency.
pub const MAX_DEFAULT_CONCURRENCY: u32 = 256;

/// What to ramp, besides the request and the database of the audit configuration.
#[derive(Debug, Clone)]
pub struct RampPlan {
    /// `None`: double from 1 until two steps past the knee, or 256.
    pub steps: Option<Vec<u32>>,
    /// Open model instead: arrival rates in requests per second (`--rate`).
    pub rates: Option<Vec<f64>>,
    pub length: Length,
    /// Stop when a step's error rate passes this share (0 to 1).
    pub max_errors: f64,
    /// Stop when a step's p99 passes this.
    pub max_p99: Option<Duration>,
    pub sample_interval: Duration,
    pub pids: Vec<i32>,
}

impl RampPlan {
    /// The load of the next step given the steps so far; `None` when the ramp is done.
    fn next(&self, done: &[Step]) -> Option<Load> {
        if let Some(rates) = &self.rates {
            return rates.get(done.len()).map(|&rate| Load::Open(rate));
        }
        match &self.steps {
            Some(steps) => steps.get(done.len()).map(|&c| Load::Closed(c)),
            None => {
                let points = pgcost_core::ramp::verdict::points(done);
                let c = 1u32 << done.len().min(31);
                let more = c <= MAX_DEFAULT_CONCURRENCY && !knee::passed_by_two(&points);
                more.then_some(Load::Closed(c))
            }
        }
    }

    /// Why the ramp stops after `step`, if it does.
    fn stop_reason(&self, step: &Step) -> Option<String> {
        if step.error_rate() > self.max_errors {
            return Some(format!(
                "stopped after {}: {:.1}% of requests failed (--max-errors {:.1}%)",
                label(step),
                step.error_rate() * 100.0,
                self.max_errors * 100.0
            ));
        }
        let limit = self.max_p99?;
        (step.latency_ms.p99 > limit.as_secs_f64() * 1000.0).then(|| {
            format!(
                "stopped after {}: p99 {:.1} ms passed --max-p99 {:?}",
                label(step),
                step.latency_ms.p99,
                limit
            )
        })
    }
}

/// Connections and what the report needs of the server.
struct Session {
    source: StatsConnection,
    sampler: tokio_postgres::Client,
    limits: Option<(i32, i32)>,
    /// PgBouncer in front of the target (`--pgbouncer`), read around every step.
    bouncer: Option<Bouncer>,
}

async fn open(config: &AuditConfig) -> Result<Session> {
    let source = StatsConnection::open(&config.db, &config.admin_db).await?;
    if source.mode != Mode::Admin {
        return Err(Error::usage(format!(
            "pgcost ramp samples pg_stat_activity every few milliseconds, and must read it \
             over the admin database to leave the target's counters alone: {}",
            messages(&source.warnings).join("; ")
        ))
        .with_hint(
            "pass --admin-db NAME: another database of the cluster, with pg_stat_statements",
        ));
    }
    let sampler = views::connect(&config.db.with_dbname(&config.admin_db)).await?;
    let limits = ramp_views::limits(&sampler).await.ok();
    let bouncer = match &config.pgbouncer {
        Some(admin) => Some(Bouncer::open(admin, &config.db.dbname).await?),
        None => None,
    };
    Ok(Session {
        source,
        sampler,
        limits,
        bouncer,
    })
}

/// The ramp's steps as one step of the runner's plan (`Step::Ramp`): what to ramp, the
/// connections that read the steps, and what they produced.
pub struct Stepper<'a> {
    plan: &'a RampPlan,
    session: Session,
    steps: Option<Steps>,
}

impl Stepper<'_> {
    /// Runs the steps: `own_pid` is the meter's own backend on the target, for the samplers
    /// to leave out. Returns when the last response came in.
    pub async fn run(
        &mut self,
        (config, driver): (&AuditConfig, &Arc<crate::http::connection::Driver>),
        own_pid: i32,
        progress: &Progress,
        stop: &Arc<AtomicBool>,
    ) -> Result<Instant> {
        let session = (&mut self.session, own_pid);
        let steps = run_steps(session, config, self.plan, driver, progress, stop).await?;
        let ended = steps.ended;
        self.steps = Some(steps);
        Ok(ended)
    }
}

/// What the steps produced.
struct Steps {
    steps: Vec<Step>,
    /// Requests sent by the steps, their warm-ups included.
    sent: u64,
    stopped_early: Option<String>,
    invalid_reasons: Vec<Invalid>,
    ended: Instant,
}

async fn run_steps(
    (session, own_pid): (&mut Session, i32),
    config: &AuditConfig,
    plan: &RampPlan,
    driver: &Arc<crate::http::connection::Driver>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<Steps> {
    let mut run = Steps {
        steps: Vec::new(),
        sent: 0,
        stopped_early: None,
        invalid_reasons: Vec::new(),
        ended: Instant::now(),
    };
    while let Some(load) = plan.next(&run.steps) {
        let spinner = progress.spinner(format!("ramp: {load:?}"));
        let probe = step::Probe {
            source: &mut session.source,
            sampler: &session.sampler,
            interval: plan.sample_interval,
            pids: &plan.pids,
            own_pid,
        };
        let step_load = step::measure(probe, driver, load, plan.length, stop);
        let (mut measured, pgbouncer) = match &session.bouncer {
            Some(bouncer) => {
                let (measured, before, after, peak) = bouncer.around(step_load).await?;
                let measured = measured?;
                let sent = measured.load.sent + measured.warm_up_sent;
                let figures = bouncer.figures((&before, &after), peak, sent);
                (measured, figures.as_ref().map(StepPgBouncer::from))
            }
            None => (step_load.await?, None),
        };
        spinner.finish_and_clear();
        run.ended = Instant::now();
        run.sent += measured.load.sent + measured.warm_up_sent;
        run.invalid_reasons
            .extend(std::mem::take(&mut measured.invalid_reasons));
        let step = step_of(load, &measured, &config.auth.allowed_statuses, plan.length);
        let step = Step { pgbouncer, ..step };
        let reason = plan.stop_reason(&step);
        run.steps.push(step);
        if stop.load(Ordering::Relaxed) {
            let interrupted =
                Invalid::new(Code::Interrupted, "interrupted: the ramp did not finish");
            run.invalid_reasons.push(interrupted);
            break;
        }
        if reason.is_some() {
            run.stopped_early = reason;
            break;
        }
    }
    Ok(run)
}

/// A step's figures from what it measured.
fn step_of(load: Load, measured: &step::Measured, allowed: &[u16], length: Length) -> Step {
    let (concurrency, rate) = match load {
        Load::Closed(c) => (Some(c), None),
        Load::Open(rate) => (None, Some(rate)),
    };
    figures::build(StepInput {
        concurrency,
        rate,
        late: measured.late,
        load: &measured.load,
        allowed_statuses: allowed,
        statements: measured.statements,
        per_second: &measured.per_second,
        // A timed closed-loop step's drain is left out of its one-second samples.
        load_seconds: match (load, length) {
            (Load::Closed(_), Length::Time(d)) => Some(d.as_secs_f64()),
            _ => None,
        },
        seconds: &measured.seconds,
        database_ticks: measured.database_ticks.clone(),
        backends_seen: measured.backends_seen,
        app_ticks: measured.app_ticks.clone(),
        ticks_per_second: procfs::ticks_per_second(),
        own_cpu_seconds: measured.own_cpu_seconds,
        usable_cores: procfs::usable_cores(),
        host: measured.host,
        load_average: measured.load_average,
    })
}

/// The steps of `plan`, with their own connections: the admin database's, and PgBouncer's.
pub async fn stepper<'a>(config: &AuditConfig, plan: &'a RampPlan) -> Result<Stepper<'a>> {
    Ok(Stepper {
        plan,
        session: open(config).await?,
        steps: None,
    })
}

/// The ramp's report: its steps, and the whole window's `pg_stat_database` totals between
/// the settle waits that opened and closed it.
pub fn read(
    config: &AuditConfig,
    stepper: Stepper<'_>,
    whole: WindowDelta,
    [settle_before, settle_after]: [Outcome; 2],
) -> RampReport {
    let (session, run) = (stepper.session, stepper.steps.expect("the ramp's steps"));
    let mut invalid_reasons = run.invalid_reasons;
    invalid_reasons.extend(whole.invalid_reasons);
    invalid_reasons.extend(settle_timeouts([&settle_before, &settle_after]));
    let mut warnings = session.source.warnings.clone();
    // A ramp names no statement's cost: plan time is nothing it could report.
    warnings.retain(|n| !matches!(n, pgcost_core::report::model::notes::Note::TrackPlanningOff));
    warnings.extend(config.auth.warnings.iter().cloned());
    let context = ramp::Context {
        target: RampTarget {
            method: config.request.method.to_string(),
            url: auth::redact::url(&config.request.url),
            database: config.db.redacted(),
            server_version: session.source.server.version.clone(),
        },
        totals: Some(RampTotals::of(
            &whole.database,
            run.sent,
            (
                settle_before.waited.as_secs_f64(),
                settle_after.waited.as_secs_f64(),
            ),
        )),
        stopped_early: run.stopped_early,
        warnings,
        invalid_reasons,
        limits: session.limits,
        host_cores: procfs::usable_cores(),
    };
    ramp::report(run.steps, context)
}

/// Why the ramp's totals may be incomplete: a settle wait that timed out.
fn settle_timeouts(waits: [&Outcome; 2]) -> impl Iterator<Item = Invalid> + '_ {
    waits.into_iter().filter(|o| o.timed_out).map(|outcome| {
        let message = format!(
            "a settle wait timed out after {:.0} s: the ramp's totals may be incomplete",
            outcome.waited.as_secs_f64()
        );
        Invalid::new(Code::SettleTimeout, message)
    })
}

/// How long the ramp may take, generously, for the expiry check of a token.
pub fn run_length(config: &AuditConfig, plan: &RampPlan) -> Duration {
    let steps = plan.steps.as_ref().map_or(9, Vec::len) as u32;
    let step = match plan.length {
        Length::Time(d) => d * 11 / 10,
        Length::Requests(n) => Duration::from_millis(n.saturating_mul(50).min(3_600_000)),
    };
    step * steps + config.settle_timeout * 2 + Duration::from_secs(30)
}
