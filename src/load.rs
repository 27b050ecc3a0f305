//! The HTTP load driver: a closed loop of exactly N requests with C in flight (the
//! connections are in `http1`), latency in an HDR histogram, statuses per code and
//! transport errors per kind.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use indicatif::ProgressBar;
use reqwest::header::HeaderMap;
use reqwest::{Method, Url};

use crate::http1::{Driver, Failure};

/// One request, as it is sent N times.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub url: Url,
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    pub timeout: Duration,
}

/// What a burst observed. Memory does not grow with the number of requests.
#[derive(Debug, Clone)]
pub struct LoadResult {
    /// Requests that were started (equals the requested count unless stopped early).
    pub sent: u64,
    pub concurrency: u32,
    pub wall: Duration,
    /// Latency in microseconds, of requests that got a response.
    pub latency_us: Histogram<u64>,
    pub status: BTreeMap<u16, u64>,
    pub errors: BTreeMap<String, u64>,
    /// The first transport error's text, for the report.
    pub first_error: Option<String>,
    /// Set when the burst was stopped before all requests were sent.
    pub interrupted: bool,
}

impl LoadResult {
    pub fn responses(&self) -> u64 {
        self.status.values().sum()
    }
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds")
}

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

/// Percentiles in milliseconds, from one histogram: the only place that computes them.
pub fn latency_ms(histogram: &Histogram<u64>) -> LatencySummary {
    if histogram.is_empty() {
        return LatencySummary::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    LatencySummary {
        p50: ms(histogram.value_at_quantile(0.50)),
        p95: ms(histogram.value_at_quantile(0.95)),
        p99: ms(histogram.value_at_quantile(0.99)),
        max: ms(histogram.max()),
        mean: histogram.mean() / 1000.0,
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut h = new_histogram();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let s = latency_ms(&h);
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p95 - 950.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn empty_histogram_gives_zeros() {
        assert_eq!(latency_ms(&new_histogram()), LatencySummary::default());
    }
}
