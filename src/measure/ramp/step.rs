//! One step of the ramp: an unmeasured warm-up, then the measured load with
//! `pg_stat_activity` sampled over the admin connection (and the statements' execution
//! time read once a second), responses counted per second, and CPU read before and after.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use tokio_postgres::Client;

use crate::error::Result;
use crate::http::connection::Driver;
use crate::http::{load, open_loop};
use crate::measure::ramp::procfs;
use crate::postgres::ramp as views;
use crate::postgres::stats_connection::StatsConnection;
use crate::postgres::views as postgres_views;
use pgcost_core::delta;
use pgcost_core::load::LoadResult;
use pgcost_core::ramp::host::CpuTimes;
use pgcost_core::ramp::seconds::SampledSecond;
use pgcost_core::ramp::step::{StatementsGrown, TicksPair};
use pgcost_core::report::model::invalid::Invalid;

/// How long a step's measured load lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Time(Duration),
    Requests(u64),
}

impl Length {
    /// The unmeasured warm-up before the measured load: a tenth of the step, at most
    /// 500 ms, or twice the concurrency in requests (at least 10).
    pub fn warm_up(self, concurrency: u32) -> Length {
        match self {
            Length::Time(d) => Length::Time((d / 10).min(Duration::from_millis(500))),
            Length::Requests(_) => Length::Requests((2 * concurrency as u64).max(10)),
        }
    }
}

/// The load of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Closed loop: this many requests in flight.
    Closed(u32),
    /// Open model: this many requests per second, on a schedule.
    Open(f64),
}

impl Load {
    /// Open model: workers (connections) enough for a quarter of a second of arrivals.
    fn workers(rate: f64) -> u32 {
        ((rate * 0.25).ceil() as u32).clamp(16, 1024)
    }

    /// Sends this load for `length`.
    pub async fn send(self, driver: &Arc<Driver>, length: Length, stop: &Arc<AtomicBool>) -> Sent {
        match self {
            Load::Closed(c) => {
                let (load, per_second) = load_for(driver, c, length, stop).await;
                Sent {
                    load,
                    late: None,
                    per_second,
                }
            }
            Load::Open(rate) => {
                let total = match length {
                    Length::Requests(n) => n,
                    Length::Time(d) => (rate * d.as_secs_f64()).ceil() as u64,
                };
                let paced =
                    open_loop::paced(driver, rate, total, Self::workers(rate), stop.clone()).await;
                Sent {
                    load: paced.load,
                    late: Some(paced.late),
                    per_second: paced.per_second,
                }
            }
        }
    }

    fn warm_up(self, length: Length) -> Length {
        match self {
            Load::Closed(c) => length.warm_up(c),
            Load::Open(rate) => length.warm_up(((rate / 100.0).ceil() as u32).max(1)),
        }
    }
}

/// What a step's load did: the load, its late requests (open model), and its responses in
/// each second from its start.
pub struct Sent {
    pub load: LoadResult,
    pub late: Option<u64>,
    pub per_second: Vec<u64>,
}

/// Sends load for `length` with `concurrency` in flight; also its responses per second. A
/// timed load ends gently: once its time is up no request starts, and the ones in flight
/// finish and are counted, so that the step's statements belong to its requests.
pub async fn load_for(
    driver: &Arc<Driver>,
    concurrency: u32,
    length: Length,
    stop: &Arc<AtomicBool>,
) -> (LoadResult, Vec<u64>) {
    let bar = ProgressBar::hidden();
    let (limit, duration) = match length {
        Length::Requests(n) => (n, None),
        Length::Time(duration) => (u64::MAX, Some(duration)),
    };
    let limit = Arc::new(AtomicU64::new(limit));
    let ends = limit.clone();
    let timer = duration.map(|duration| {
        tokio::spawn(async move {
            tokio::time::sleep(duration).await;
            ends.store(0, Ordering::Relaxed);
        })
    });
    let counted = load::burst_counted(driver, limit, concurrency, &bar, stop.clone()).await;
    timer.inspect(tokio::task::JoinHandle::abort);
    counted
}

/// What a step measured, before its figures are computed.
pub struct Measured {
    pub load: LoadResult,
    pub statements: StatementsGrown,
    /// The load's responses in each second from its start.
    pub per_second: Vec<u64>,
    /// What the sampler saw each second.
    pub seconds: Vec<SampledSecond>,
    pub database_ticks: Option<TicksPair>,
    pub app_ticks: Option<TicksPair>,
    pub own_cpu_seconds: f64,
    pub invalid_reasons: Vec<Invalid>,
    /// Requests of the step's warm-up.
    pub warm_up_sent: u64,
    /// Open model: requests that started late.
    pub late: Option<u64>,
    /// Distinct backend pids seen on the target over the step.
    pub backends_seen: u32,
    /// This machine's CPU times before and after the step, and its load average after.
    pub host: Option<(CpuTimes, CpuTimes)>,
    pub load_average: Option<f64>,
}

/// Samples the target's backends every `interval` until `done`, and reads its statements'
/// execution time at the first sample of each second; returns what each second saw and
/// every pid seen.
async fn sample_until(
    client: &Client,
    (oid, own_pid): (u32, i32),
    interval: Duration,
    done: &AtomicBool,
) -> Result<(Vec<SampledSecond>, BTreeSet<i32>)> {
    let started = Instant::now();
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut seconds, mut pids) = (Vec::<SampledSecond>::new(), BTreeSet::new());
    // The execution time read at the start of each second (None: that second's was missed).
    let mut exec_at = vec![Some(views::exec_time_ms(client, oid).await?)];
    while !done.load(Ordering::Relaxed) {
        ticker.tick().await;
        if done.load(Ordering::Relaxed) {
            break;
        }
        let second = started.elapsed().as_secs() as usize;
        if second >= exec_at.len() {
            exec_at.resize(second, None);
            exec_at.push(Some(views::exec_time_ms(client, oid).await?));
        }
        let (sample, seen) = views::sample(client, oid, own_pid).await?;
        seconds.resize_with(seconds.len().max(second + 1), SampledSecond::default);
        seconds[second].samples.push(sample);
        pids.extend(seen);
    }
    for (i, second) in seconds.iter_mut().enumerate() {
        let at = |k: usize| exec_at.get(k).copied().flatten();
        second.exec_time_ms = at(i + 1).zip(at(i)).map(|(end, start)| end - start);
    }
    Ok((seconds, pids))
}

/// The connections and settings one step needs.
pub struct Probe<'a> {
    pub source: &'a mut StatsConnection,
    pub sampler: &'a Client,
    pub interval: Duration,
    /// The `--pid` processes.
    pub pids: &'a [i32],
    /// pgcost's own backend on the target, left out of the samples (0 when none).
    pub own_pid: i32,
}

/// Measures one step of `load` for `length` (after its warm-up).
pub async fn measure(
    probe: Probe<'_>,
    driver: &Arc<Driver>,
    load: Load,
    length: Length,
    stop: &Arc<AtomicBool>,
) -> Result<Measured> {
    let warm_up = load.send(driver, load.warm_up(length), stop).await.load;
    let before = probe.source.snapshot().await?;
    let (_, backend_pids) = views::sample(probe.sampler, probe.source.oid, probe.own_pid).await?;
    // The sampler's own backend leads to the postmaster even when the app holds no
    // connection between requests (a new backend per request).
    let postmaster = postgres_views::backend_pid(probe.sampler)
        .await
        .ok()
        .and_then(procfs::postmaster_of);
    let database_before = procfs::postgres_ticks(&backend_pids, postmaster);
    let app_before = (!probe.pids.is_empty())
        .then(|| procfs::thread_ticks(&procfs::with_descendants(probe.pids)));
    let own_before = procfs::own_cpu_seconds();
    let host_before = procfs::host_cpu_times();
    let done = AtomicBool::new(false);
    let burst = async {
        let result = load.send(driver, length, stop).await;
        done.store(true, Ordering::Relaxed);
        result
    };
    let ids = (probe.source.oid, probe.own_pid);
    let sampling = sample_until(probe.sampler, ids, probe.interval, &done);
    let (sent, sampled) = tokio::join!(burst, sampling);
    let own_cpu_seconds = procfs::own_cpu_seconds() - own_before;
    let host = host_before.zip(procfs::host_cpu_times());
    let app_ticks = app_before.map(|before| TicksPair {
        before,
        after: procfs::thread_ticks(&procfs::with_descendants(probe.pids)),
    });
    let (seconds, seen) = sampled?;
    let all: BTreeSet<i32> = backend_pids.union(&seen).copied().collect();
    let database_ticks = database_before.map(|before| TicksPair {
        before,
        after: procfs::postgres_ticks(&all, postmaster).unwrap_or_default(),
    });
    let after = probe.source.snapshot().await?;
    let window = delta::delta(&before, &after);
    let statements = window
        .statements
        .iter()
        .fold(StatementsGrown::default(), |acc, s| StatementsGrown {
            calls: acc.calls + s.calls,
            rows: acc.rows + s.rows,
            exec_time_ms: acc.exec_time_ms + s.exec_time_ms,
        });
    Ok(Measured {
        load: sent.load,
        late: sent.late,
        statements,
        per_second: sent.per_second,
        seconds,
        database_ticks,
        app_ticks,
        own_cpu_seconds,
        invalid_reasons: window.invalid_reasons,
        warm_up_sent: warm_up.sent,
        backends_seen: all.len() as u32,
        host,
        load_average: procfs::load_average(),
    })
}
