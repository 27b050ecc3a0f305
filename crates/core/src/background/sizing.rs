//! How many requests a burst needs beside a background in bursts, pure: the burst is raised
//! until every figure the control window corrects (transactions, rows read, statements) is
//! within [`UNCERTAINTY_TARGET`] of the requests' own, as the report will judge it, or until
//! `--max-duration` allows no more. The edges of a periodic background do not shrink with a
//! longer control window, only beside a larger signal. The rules are in docs/background.md.

use super::{Control, Input, UNCERTAINTY_TARGET, figures, rate};
use crate::report::model::figure::{Figure, PerFigure};

/// The burst is sized for this share of the target: the window's settle waits are only
/// estimated before it, and the first control window is short. The report judges it
/// with the control window after the burst too, where a job whose period drifts against
/// the one-second reads shows split runs (larger edges, a wider spread of the rate) that
/// the first window did not: on a loaded machine, 80% of the target gave ±15.5% to ±25%.
pub const MARGIN: f64 = 0.5;

/// What the warm-up and the time left say about the burst to come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burst {
    /// The requests' own figures per request (the warm-up's, the background's expected
    /// share taken out); a figure at 0 or below is left out of the sizing.
    pub own: PerFigure<f64>,
    /// Requests per second, as the warm-up sent them.
    pub requests_per_second: f64,
    /// The measured window's length besides the requests: its closing settle wait.
    pub overhead_seconds: f64,
    /// How long an active backend may hold counters ([`Input::flush_interval_seconds`]).
    pub flush_interval_seconds: f64,
    /// `-n`.
    pub requested: u64,
    /// The most requests the time left allows.
    pub most: u64,
}

impl Burst {
    /// True when `n` requests would leave every figure within the target (its margin
    /// taken), as [`super::assess`] would judge the window.
    fn enough(&self, control: &Control, n: u64) -> bool {
        let window = self.overhead_seconds + n as f64 / self.requests_per_second;
        // What the window would count of each figure the burst is sized for.
        let measured = PerFigure::from_fn(|figure| {
            let (own, background) = (self.own.get(figure)?, control.counts.get(figure)?);
            Some((own * n as f64 + rate(background, control.seconds) * window).round() as i64)
        });
        let input = Input {
            control: Some(control.clone()),
            window_seconds: window,
            flush_interval_seconds: self.flush_interval_seconds,
            ..Input::default()
        };
        (figures(&input, control, measured).iter())
            .map(|f| (f, self.own.get(f.figure).unwrap_or(0.0)))
            .filter(|(_, own)| *own > 0.0)
            .all(|(f, own)| f.uncertainty <= MARGIN * UNCERTAINTY_TARGET * own * n as f64)
    }

    fn sized(&self) -> bool {
        let any = Figure::ALL
            .iter()
            .any(|f| self.own.get(*f).is_some_and(|v| v > 0.0));
        any && self.requests_per_second > 0.0
    }
}

/// The requests the burst should send instead of `-n`: `None` when `-n` is enough, or the
/// control window or the warm-up cannot say (no figure, no rate); the fewest that are
/// enough, or the most the time allows when none are.
pub fn requests_for(control: &Control, burst: &Burst) -> Option<u64> {
    if !burst.sized()
        || control.seconds <= 0.0
        || burst.most <= burst.requested
        || burst.enough(control, burst.requested)
    {
        return None;
    }
    let mut low = burst.requested;
    let mut high = burst.requested.max(1);
    while !burst.enough(control, high) {
        if high >= burst.most {
            return Some(burst.most);
        }
        low = high;
        high = high.saturating_mul(2).min(burst.most);
    }
    // The fewest enough, between the last too few and the first enough.
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if burst.enough(control, mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

/// About how many requests would bring an uncertainty of `fixed` (edges that do not shrink
/// with longer control windows) within the target, where `requests` gave `signal`.
pub fn requests_needed(fixed: f64, signal: f64, requests: u64) -> Option<u64> {
    let per_request = signal / requests.max(1) as f64;
    (per_request > 0.0).then(|| (fixed / (UNCERTAINTY_TARGET * per_request)).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::Counts;

    /// 30 statements every 2 s, read each second for 10 s.
    fn job() -> Control {
        let statements = |n| Counts {
            statements: Some(n),
            ..Counts::default()
        };
        Control {
            seconds: 10.0,
            counts: Counts {
                transactions: Some(5),
                rows_read: Some(150),
                ..statements(150)
            },
            subs: (0..10)
                .map(|i| statements(if i % 2 == 0 { 30 } else { 0 }))
                .collect(),
            ..Control::default()
        }
    }

    fn burst(requested: u64, most: u64) -> Burst {
        Burst {
            own: PerFigure {
                statements: Some(1.0),
                ..PerFigure::default()
            },
            requests_per_second: 100.0,
            overhead_seconds: 2.0,
            flush_interval_seconds: 1.0,
            requested,
            most,
        }
    }

    #[test]
    fn a_burst_too_small_beside_the_jobs_edges_is_raised_to_the_fewest_enough() {
        // The rate is exact (every period counts 30) and Poisson over a 4 s window says
        // 3 * 150 / sqrt(150) * 0.4 = 14.7, so the edges decide: one burst of 30 against a
        // mean of 15 a second is 15 statements, within 15% of 100 requests' own, and 7.5%
        // (the margin) of 200 requests'.
        let control = job();
        let n = requests_for(&control, &burst(50, 10_000));
        assert_eq!(n, Some(200));
        assert!(!burst(50, 10_000).enough(&control, 199));
        // Enough already: left alone.
        assert_eq!(requests_for(&control, &burst(500, 10_000)), None);
    }

    #[test]
    fn the_time_left_caps_the_burst_and_nothing_is_sized_without_figures() {
        let control = job();
        assert_eq!(requests_for(&control, &burst(50, 60)), Some(60));
        assert_eq!(requests_for(&control, &burst(50, 199)), Some(199));
        assert_eq!(requests_for(&control, &burst(50, 40)), None, "no more time");
        let silent = Burst {
            own: PerFigure::default(),
            ..burst(50, 10_000)
        };
        assert_eq!(requests_for(&control, &silent), None);
        let no_time = Control {
            seconds: 0.0,
            ..job()
        };
        assert_eq!(requests_for(&no_time, &burst(50, 10_000)), None);
    }

    #[test]
    fn the_requests_needed_scale_the_signal_to_the_edges() {
        // 200 at the edges against 100 from 100 requests: 200 / 0.15 = 1334 requests.
        assert_eq!(requests_needed(200.0, 100.0, 100), Some(1334));
        assert_eq!(requests_needed(200.0, 0.0, 100), None);
    }
}
