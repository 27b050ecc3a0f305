//! One step of the ramp as the report shows it, built from what the step measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::load::{LoadResult, latency_ms};
use crate::ramp::activity::{ActivitySummary, summarise};
use crate::ramp::cpu::{self, AppCpu, Ticks};
use crate::ramp::host::{self, CpuTimes, Host};
use crate::ramp::seconds::{self, SampledSecond, StepSpread};
use crate::spread::Figure;

/// Latency percentiles of a step, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Per request, from the `pg_stat_statements` delta of the step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PerRequest")]
pub struct StepPerRequest {
    pub statements: f64,
    pub rows_returned: f64,
    pub db_time_ms: f64,
}

/// The database side of a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepDatabase {
    #[serde(flatten)]
    pub activity: ActivitySummary,
    /// CPU of the target's backends in cores, those that exited during the step included
    /// (through the postmaster's reaped children); `None` when Postgres is not on this
    /// host, with the reason in `cpu_unavailable`.
    pub cpu_cores: Option<f64>,
    pub cpu_ms_per_request: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_unavailable: Option<CpuUnavailable>,
    /// Distinct backend pids seen on the target over the step (samples, and the read
    /// before it). Far more than `connected_backends_max` means a connection per request.
    #[serde(default)]
    pub backends_seen: u32,
}

/// Why the database's CPU of a step is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CpuUnavailable {
    /// Neither the target's backends nor the postmaster are postgres processes readable
    /// under this host's `/proc`: the server runs elsewhere (or in another pid namespace).
    NotOnThisHost,
}

impl CpuUnavailable {
    pub fn text(self) -> &'static str {
        match self {
            CpuUnavailable::NotOnThisHost => {
                "Postgres is not on this host (its processes are not under /proc here)"
            }
        }
    }
}

/// pgcost's own CPU over the step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadGeneratorCpu {
    pub cores: f64,
    /// Of the cores pgcost may use (0 to 1).
    pub share_of_usable: f64,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Step {
    pub concurrency: Option<u32>,
    pub rate: Option<f64>,
    /// Responses and transport errors.
    pub requests: u64,
    pub wall_seconds: f64,
    pub rps: f64,
    pub latency_ms: LatencyMs,
    /// Errors by kind: transport errors, and `status_NNN` for rejected statuses.
    pub errors: BTreeMap<String, u64>,
    pub per_request: StepPerRequest,
    pub database: StepDatabase,
    /// `None` without `--pid`.
    pub app_cpu: Option<AppCpu>,
    pub load_generator_cpu: LoadGeneratorCpu,
    /// Open model: requests that started more than 1 ms after their scheduled time.
    pub late: Option<u64>,
    /// With `--pgbouncer`: PgBouncer's wait over the step (its warm-up included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbouncer: Option<crate::pgbouncer::StepPgBouncer>,
    /// The spread of the figures the verdict judges, from the step's one-second samples.
    #[serde(default)]
    pub spread: StepSpread,
    /// This machine's CPU over the step; `None` where `/proc/stat` cannot be read.
    #[serde(default)]
    pub host: Option<Host>,
}

impl Step {
    /// Throughput, with the spread of its responses per second.
    pub fn rps_figure(&self) -> Figure {
        Figure {
            value: self.rps,
            spread: self.spread.rps,
        }
    }

    /// db time per request, with the spread of each second's.
    pub fn db_time_figure(&self) -> Figure {
        Figure {
            value: self.per_request.db_time_ms,
            spread: self.spread.db_time_ms,
        }
    }

    /// Mean active backends, with the spread of each second's mean.
    pub fn active_backends_figure(&self) -> Figure {
        Figure {
            value: self.database.activity.active_backends_mean,
            spread: self.spread.active_backends,
        }
    }

    /// The share of Lock, LWLock and IO waits, with the spread of each second's.
    pub fn database_waits_figure(&self) -> Figure {
        Figure {
            value: self.database.activity.waits.database_waits(),
            spread: self.spread.database_waits,
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    pub fn error_rate(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.error_count() as f64 / self.requests as f64
        }
    }
}

/// Statement counters grown over a step: calls, rows and execution time (ms).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatementsGrown {
    pub calls: i64,
    pub rows: i64,
    pub exec_time_ms: f64,
}

/// CPU ticks read before and after a step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TicksPair {
    pub before: Ticks,
    pub after: Ticks,
}

/// Everything one step measured.
pub struct StepInput<'a> {
    pub concurrency: Option<u32>,
    pub rate: Option<f64>,
    pub late: Option<u64>,
    pub load: &'a LoadResult,
    pub allowed_statuses: &'a [u16],
    pub statements: StatementsGrown,
    /// The load's responses in each second from its start.
    pub per_second: &'a [u64],
    /// How long the load itself lasted before its drain, when that is known: a timed
    /// closed-loop step's duration (its drain may take seconds at a slow endpoint).
    pub load_seconds: Option<f64>,
    /// What the sampler saw each second: `pg_stat_activity` and the execution time.
    pub seconds: &'a [SampledSecond],
    /// The database backends' ticks, and the postmaster's reaped children's; `None` when
    /// Postgres is not on this host.
    pub database_ticks: Option<TicksPair>,
    /// Distinct backend pids seen over the step.
    pub backends_seen: u32,
    /// The `--pid` processes' threads; `None` without `--pid`.
    pub app_ticks: Option<TicksPair>,
    pub ticks_per_second: u64,
    /// pgcost's own CPU seconds over the step, and the cores it may use.
    pub own_cpu_seconds: f64,
    pub usable_cores: f64,
    /// This machine's CPU times before and after the step, and its load average after.
    pub host: Option<(CpuTimes, CpuTimes)>,
    pub load_average: Option<f64>,
}

/// Errors by kind: the transport's, and every status outside 2xx and 3xx not allowed.
pub fn errors(load: &LoadResult, allowed: &[u16]) -> BTreeMap<String, u64> {
    let mut errors = load.errors.clone();
    for (&code, &n) in &load.status {
        if code >= 400 && !allowed.contains(&code) {
            *errors.entry(format!("status_{code}")).or_default() += n;
        }
    }
    errors
}

/// The database side of a step: its activity samples, and its backends' CPU when they run
/// on this host.
fn database(input: &StepInput<'_>, wall: f64, requests: u64) -> StepDatabase {
    let tps = input.ticks_per_second;
    let ticks = input.database_ticks.as_ref().map(|t| {
        let total = cpu::database_grown(&t.before, &t.after);
        (
            cpu::cores(total, tps, wall),
            cpu::ms_per_request(total, tps, requests),
        )
    });
    let samples: Vec<_> = (input.seconds.iter())
        .flat_map(|second| second.samples.iter().copied())
        .collect();
    StepDatabase {
        activity: summarise(&samples),
        cpu_cores: ticks.map(|t| t.0),
        cpu_ms_per_request: ticks.map(|t| t.1),
        cpu_unavailable: ticks.is_none().then_some(CpuUnavailable::NotOnThisHost),
        backends_seen: input.backends_seen,
    }
}

/// Builds the step's figures.
pub fn build(input: StepInput<'_>) -> Step {
    let load = input.load;
    let wall = load.wall.as_secs_f64();
    let requests = load.responses() + load.error_count();
    let divide = |x: f64| {
        if requests == 0 {
            0.0
        } else {
            x / requests as f64
        }
    };
    let per_second = |x: f64| if wall > 0.0 { x / wall } else { 0.0 };
    let latency = latency_ms(&load.latency_us);
    let tps = input.ticks_per_second;
    let database = database(&input, wall, requests);
    let app_cpu = (input.app_ticks.as_ref()).map(|t| cpu::app_cpu(&t.before, &t.after, tps, wall));
    let own_cores = per_second(input.own_cpu_seconds);
    // The ramp's own processes on this host: pgcost, the app's --pid, the target's backends.
    let ours = own_cores + app_cpu.map_or(0.0, |c| c.cores) + database.cpu_cores.unwrap_or(0.0);
    let host = (input.host.as_ref())
        .and_then(|(before, after)| host::over_step(before, after, ours, input.load_average));
    Step {
        concurrency: input.concurrency,
        rate: input.rate,
        requests,
        wall_seconds: wall,
        rps: per_second(load.responses() as f64),
        latency_ms: LatencyMs {
            p50: latency.p50,
            p95: latency.p95,
            p99: latency.p99,
            max: latency.max,
        },
        errors: errors(load, input.allowed_statuses),
        per_request: StepPerRequest {
            statements: divide(input.statements.calls as f64),
            rows_returned: divide(input.statements.rows as f64),
            db_time_ms: divide(input.statements.exec_time_ms),
        },
        database,
        app_cpu,
        load_generator_cpu: LoadGeneratorCpu {
            cores: own_cores,
            share_of_usable: own_cores / input.usable_cores.max(1.0),
        },
        late: input.late,
        pgbouncer: None,
        spread: seconds::of(
            input.per_second,
            input.load_seconds.map_or(wall, |s| s.min(wall)),
            input.seconds,
        ),
        host,
    }
}
