//! The HTTP load driver: a closed loop of exactly N requests with C in flight (the
//! connections are in `http1`), latency in an HDR histogram, statuses per code and
//! transport errors per kind.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::ProgressBar;

use crate::cost::load::{LoadResult, PGCOST_SOURCE, new_histogram};
use crate::http::connection::{Driver, Failure};

/// What one worker saw, merged into the burst's [`LoadResult`] at the end.
pub(crate) struct WorkerTally {
    latency_us: Histogram<u64>,
    status: BTreeMap<u16, u64>,
    errors: BTreeMap<String, u64>,
    first_error: Option<String>,
}

/// One exchange as the worker awaited it: a status code, a failure, or the timeout.
pub(crate) type Outcome = Result<Result<u16, Failure>, tokio::time::error::Elapsed>;

impl WorkerTally {
    pub(crate) fn new() -> WorkerTally {
        WorkerTally {
            latency_us: new_histogram(),
            status: BTreeMap::new(),
            errors: BTreeMap::new(),
            first_error: None,
        }
    }

    /// Counts one exchange: a response's status and its latency since `since`, or the
    /// failure by kind. Returns true when the connection's state is unknown after a
    /// failure, so that the next request must open a new one.
    pub(crate) fn record(&mut self, outcome: Outcome, since: Instant, timeout: Duration) -> bool {
        let failure = match outcome {
            Ok(Ok(code)) => {
                let us = since.elapsed().as_micros().max(1) as u64;
                self.latency_us.saturating_record(us);
                *self.status.entry(code).or_default() += 1;
                return false;
            }
            Ok(Err(failure)) => failure,
            Err(_) => Failure {
                kind: "timeout",
                text: format!("no complete response within {timeout:?}"),
            },
        };
        *self.errors.entry(failure.kind.to_string()).or_default() += 1;
        self.first_error.get_or_insert(failure.text);
        true
    }

    /// Adds this worker's counts to `result`.
    pub(crate) fn merge_into(&self, result: &mut LoadResult) {
        result
            .latency_us
            .add(&self.latency_us)
            .expect("same histogram bounds");
        for (code, n) in &self.status {
            *result.status.entry(*code).or_default() += n;
        }
        for (kind, n) in &self.errors {
            *result.errors.entry(kind.clone()).or_default() += n;
        }
        if result.first_error.is_none() {
            result.first_error = self.first_error.clone();
        }
    }
}

/// A load with nothing counted yet, from `workers` workers.
pub(crate) fn empty_result(workers: u32) -> LoadResult {
    LoadResult {
        sent: 0,
        concurrency: workers,
        wall: Duration::ZERO,
        latency_us: new_histogram(),
        status: BTreeMap::new(),
        errors: BTreeMap::new(),
        first_error: None,
        interrupted: false,
        source: PGCOST_SOURCE,
        command_exit: None,
    }
}

/// One worker's loop: claims request numbers while they are below `limit`, on one
/// keep-alive connection (a new one after an error, or when the server closes it).
async fn work(
    driver: &Driver,
    next: &AtomicU64,
    limit: &AtomicU64,
    bar: &ProgressBar,
    tally: &Mutex<WorkerTally>,
) {
    // Connect before the first request's clock starts, so that the handshake is not in its
    // latency. A failure here is not counted: the first request tries again, and counts.
    let mut link = tokio::time::timeout(driver.timeout, driver.connect())
        .await
        .ok()
        .and_then(Result::ok);
    while next.fetch_add(1, Ordering::Relaxed) < limit.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        let outcome = tokio::time::timeout(driver.timeout, driver.exchange(&mut link)).await;
        // Uncontended: only a stop's reader takes this lock from another task.
        let mut tally = tally
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if tally.record(outcome, t0, driver.timeout) {
            link = None;
        }
        bar.inc(1);
    }
}

/// Sends exactly `total` requests with `concurrency` in flight, unless `stop` is raised.
pub async fn burst(
    driver: &Arc<Driver>,
    total: u64,
    concurrency: u32,
    bar: &ProgressBar,
    stop: Arc<AtomicBool>,
) -> LoadResult {
    let limit = Arc::new(AtomicU64::new(total));
    burst_within(driver, limit, concurrency, bar, stop).await
}

/// Sends requests with `concurrency` in flight until `limit` of them have been claimed.
/// Lowering `limit` (to 0) ends the burst gently: no request starts after that, and the
/// ones in flight finish and are counted. A raised `stop` aborts them instead.
pub async fn burst_within(
    driver: &Arc<Driver>,
    limit: Arc<AtomicU64>,
    concurrency: u32,
    bar: &ProgressBar,
    stop: Arc<AtomicBool>,
) -> LoadResult {
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let total = limit.load(Ordering::Relaxed);
    let workers = concurrency.max(1).min(total.max(1) as u32);
    let mut tasks = tokio::task::JoinSet::new();
    let mut tallies = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let driver = driver.clone();
        let next = next.clone();
        let bar = bar.clone();
        let (limit, tally) = (limit.clone(), Arc::new(Mutex::new(WorkerTally::new())));
        tallies.push(tally.clone());
        handles.push(tasks.spawn(async move { work(&driver, &next, &limit, &bar, &tally).await }));
    }
    // A stop aborts the workers: the request in flight is abandoned, counted neither as a
    // response nor as an error, and the burst is reported as interrupted. (A stop future in
    // every worker would take the stop signal's lock, shared by all workers, on every wake;
    // the tally's lock is one worker's own, uncontended until the burst is over.)
    let watcher = tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        handles.iter().for_each(tokio::task::AbortHandle::abort);
    });
    while tasks.join_next().await.is_some() {}
    watcher.abort();
    let mut result = empty_result(workers);
    for tally in tallies {
        let tally = tally
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        tally.merge_into(&mut result);
    }
    result.wall = started.elapsed();
    result.sent = result.responses() + result.error_count();
    result.interrupted = result.sent < limit.load(Ordering::Relaxed).min(total);
    result
}
