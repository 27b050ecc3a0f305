//! The HTTP load driver: a closed loop of exactly N requests with C in flight (the
//! connections are in `http1`), latency in an HDR histogram, statuses per code and
//! transport errors per kind.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::ProgressBar;

use crate::cost::load::{LoadResult, new_histogram};
use crate::http::connection::{Driver, Failure};

struct WorkerTally {
    latency_us: Histogram<u64>,
    status: BTreeMap<u16, u64>,
    errors: BTreeMap<String, u64>,
    first_error: Option<String>,
}

/// One worker's loop: claims request numbers until `total` are claimed, on one keep-alive
/// connection (a new one after an error, or when the server closes it).
async fn work(
    driver: &Driver,
    next: &AtomicU64,
    total: u64,
    bar: &ProgressBar,
    tally: &Mutex<WorkerTally>,
) {
    // Connect before the first request's clock starts, so that the handshake is not in its
    // latency. A failure here is not counted: the first request tries again, and counts.
    let mut link = tokio::time::timeout(driver.timeout, driver.connect())
        .await
        .ok()
        .and_then(Result::ok);
    while next.fetch_add(1, Ordering::Relaxed) < total {
        let t0 = Instant::now();
        let outcome = tokio::time::timeout(driver.timeout, driver.exchange(&mut link)).await;
        // Uncontended: only a stop's reader takes this lock from another task.
        let mut tally = tally
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let failure = match outcome {
            Ok(Ok(code)) => {
                let us = t0.elapsed().as_micros().max(1) as u64;
                tally.latency_us.saturating_record(us);
                *tally.status.entry(code).or_default() += 1;
                None
            }
            Ok(Err(failure)) => Some(failure),
            Err(_) => Some(Failure {
                kind: "timeout",
                text: format!("no complete response within {:?}", driver.timeout),
            }),
        };
        if let Some(failure) = failure {
            // The connection's state is unknown after a failure: the next request opens
            // a new one.
            link = None;
            *tally.errors.entry(failure.kind.to_string()).or_default() += 1;
            if tally.first_error.is_none() {
                tally.first_error = Some(failure.text);
            }
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
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers = concurrency.max(1).min(total.max(1) as u32);
    let mut tasks = tokio::task::JoinSet::new();
    let mut tallies = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let driver = driver.clone();
        let next = next.clone();
        let bar = bar.clone();
        let tally = Arc::new(Mutex::new(WorkerTally {
            latency_us: new_histogram(),
            status: BTreeMap::new(),
            errors: BTreeMap::new(),
            first_error: None,
        }));
        tallies.push(tally.clone());
        handles.push(tasks.spawn(async move { work(&driver, &next, total, &bar, &tally).await }));
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
    let mut result = LoadResult {
        sent: 0,
        concurrency: workers,
        wall: Duration::ZERO,
        latency_us: new_histogram(),
        status: BTreeMap::new(),
        errors: BTreeMap::new(),
        first_error: None,
        interrupted: false,
        source: crate::cost::load::PGCOST_SOURCE,
        command_exit: None,
    };
    for tally in tallies {
        let tally = tally
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        result
            .latency_us
            .add(&tally.latency_us)
            .expect("same histogram bounds");
        for (code, n) in &tally.status {
            *result.status.entry(*code).or_default() += n;
        }
        for (kind, n) in &tally.errors {
            *result.errors.entry(kind.clone()).or_default() += n;
        }
        if result.first_error.is_none() {
            result.first_error = tally.first_error.clone();
        }
    }
    result.wall = started.elapsed();
    result.sent = result.responses() + result.error_count();
    result.interrupted = result.sent < total;
    result
}
