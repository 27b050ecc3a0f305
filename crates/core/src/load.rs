//! What a burst observed, as plain data: requests, statuses, transport errors, and latency
//! in an HDR histogram, with the one function that turns it into percentiles.

use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::report::model::{LatencyPoint, LatencySummary, PGCOST_SOURCE};
use hdrhistogram::Histogram;

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
    /// 2xx responses that were errors all the same (an error in the body or a header), by
    /// what was seen (`body "errors"`, `header mediawiki-api-error`); also in `status`.
    pub error_answers: BTreeMap<String, u64>,
    /// The first of them, with the value seen.
    pub first_error_answer: Option<String>,
    /// The items of the first 2xx response, when it was JSON with an array
    /// (`http::items`); `None` otherwise, and for another tool's load.
    pub response_items: Option<u64>,
    /// Set when the burst was stopped before all requests were sent.
    pub interrupted: bool,
    /// What made the load and counted it: `pgcost` (its own burst), `given` (`--requests`
    /// of `pgcost measure`), or the load tool whose result file gave the count.
    pub source: &'static str,
    /// The exit code of the command that made the load (`pgcost measure`); `None` for
    /// pgcost's own burst.
    pub command_exit: Option<i32>,
}

impl LoadResult {
    /// `sent` requests at `concurrency` over `wall`, by pgcost's own burst, with nothing
    /// recorded yet: the one place every field gets its empty value. Set what differs with
    /// struct update syntax (`LoadResult { status, ..LoadResult::new(200, 8, wall) }`).
    pub fn new(sent: u64, concurrency: u32, wall: Duration) -> LoadResult {
        LoadResult {
            sent,
            concurrency,
            wall,
            latency_us: new_histogram(),
            status: BTreeMap::new(),
            errors: BTreeMap::new(),
            first_error: None,
            error_answers: BTreeMap::new(),
            first_error_answer: None,
            response_items: None,
            interrupted: false,
            source: PGCOST_SOURCE,
            command_exit: None,
        }
    }

    pub fn responses(&self) -> u64 {
        self.status.values().sum()
    }
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// When every response was a rejection (401, 403 or a 5xx) that `allowed` does not
    /// accept, the statuses seen, e.g. "401 x20": measuring on would only measure the
    /// rejection path. `None` when any response was accepted, or none came back.
    pub fn all_rejected(&self, allowed: &[u16]) -> Option<String> {
        let rejected = |code: u16| {
            (matches!(code, 401 | 403) || (500..=599).contains(&code)) && !allowed.contains(&code)
        };
        if self.status.is_empty() || !self.status.keys().all(|&code| rejected(code)) {
            return None;
        }
        let seen: Vec<String> = self
            .status
            .iter()
            .map(|(code, count)| format!("{code} x{count}"))
            .collect();
        Some(seen.join(", "))
    }

    /// When every response was a 2xx error answer, the first one (what was seen and its
    /// value): measuring on would only measure the error path. `None` otherwise.
    pub fn all_error_answers(&self) -> Option<&str> {
        let answers: u64 = self.error_answers.values().sum();
        (answers > 0 && answers == self.responses())
            .then(|| self.first_error_answer.as_deref().unwrap_or_default())
    }
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds")
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

/// The percentiles of the latency curve (`load.latency_percentiles_ms`): dense toward the
/// tail, as an HDR percentile plot draws them; 0 is the fastest request, 100 the slowest.
pub const CURVE_PERCENTILES: [f64; 12] = [
    0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 99.999, 100.0,
];

/// The latency at each of [`CURVE_PERCENTILES`], in milliseconds, from the same histogram
/// as [`latency_ms`]; empty when nothing was recorded. A percentile finer than the sample
/// count can resolve (99.99 of 200 requests) is the slowest request, as in the histogram.
pub fn latency_curve_ms(histogram: &Histogram<u64>) -> Vec<LatencyPoint> {
    if histogram.is_empty() {
        return Vec::new();
    }
    CURVE_PERCENTILES
        .iter()
        .map(|&percentile| LatencyPoint {
            percentile,
            ms: histogram.value_at_percentile(percentile) as f64 / 1000.0,
        })
        .collect()
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
        let curve = latency_curve_ms(&h);
        let at = |p: f64| curve.iter().find(|c| c.percentile == p).unwrap().ms;
        assert_eq!(curve.len(), CURVE_PERCENTILES.len());
        assert!((at(0.0) - 1.0).abs() < 0.01, "{curve:?}");
        assert!((at(50.0) - s.p50).abs() < 1e-9, "{curve:?}");
        assert!((at(99.0) - s.p99).abs() < 1e-9, "{curve:?}");
        assert!((at(100.0) - s.max).abs() < 1.0, "{curve:?}");
        assert!(curve.windows(2).all(|w| w[0].ms <= w[1].ms), "{curve:?}");
        assert!(latency_curve_ms(&new_histogram()).is_empty());
    }

    fn with_statuses(statuses: &[(u16, u64)]) -> LoadResult {
        LoadResult {
            sent: statuses.iter().map(|(_, n)| n).sum(),
            concurrency: 1,
            wall: Duration::from_secs(1),
            latency_us: new_histogram(),
            status: statuses.iter().copied().collect(),
            errors: BTreeMap::new(),
            first_error: None,
            error_answers: Default::default(),
            first_error_answer: None,
            response_items: None,
            interrupted: false,
            source: PGCOST_SOURCE,
            command_exit: None,
        }
    }

    #[test]
    fn a_load_is_all_rejected_only_when_no_response_was_accepted() {
        let all = with_statuses(&[(401, 18), (503, 2)]);
        assert_eq!(all.all_rejected(&[]).as_deref(), Some("401 x18, 503 x2"));
        assert_eq!(all.all_rejected(&[503]), None, "503 is allowed");
        assert_eq!(
            with_statuses(&[(401, 19), (200, 1)]).all_rejected(&[]),
            None
        );
        assert_eq!(with_statuses(&[(404, 20)]).all_rejected(&[]), None);
        assert_eq!(with_statuses(&[]).all_rejected(&[]), None);
        let mut errors = with_statuses(&[(200, 20)]);
        errors.error_answers.insert("body \"error\"".into(), 19);
        errors.first_error_answer = Some("body \"error\": \"denied\"".into());
        assert_eq!(errors.all_error_answers(), None, "one real answer");
        errors.error_answers.insert("header x-error".into(), 1);
        assert_eq!(
            errors.all_error_answers(),
            Some("body \"error\": \"denied\"")
        );
    }

    #[test]
    fn empty_histogram_gives_zeros() {
        assert_eq!(latency_ms(&new_histogram()), LatencySummary::default());
    }
}
