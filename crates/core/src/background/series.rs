//! The control window's one-second sub-windows, pure: the background's period, how far the
//! background expected over a window may be off when it comes in bursts (read from the
//! sub-windows, not from a Poisson model), and how long a control window would bring an
//! uncertainty down to a target. The rules are in docs/background.md.

use crate::spread;

/// A lag whose autocorrelation is at least this is a period.
pub const MIN_CORRELATION: f64 = 0.5;
/// A series whose variance is within this many times its mean varies no more than
/// counting noise (a Poisson count's variance is its mean): it has no period, however its
/// small ups and downs happen to alternate.
pub const MIN_DISPERSION: f64 = 2.0;

/// The period of `series` (counts per sub-window), in sub-windows: the shortest lag of 2
/// or more that is a local peak of the autocorrelation, at least [`MIN_CORRELATION`],
/// with two whole periods in the series. `None` for a flat or aperiodic background, and for
/// one that varies no more than counting noise ([`MIN_DISPERSION`]).
pub fn period(series: &[i64]) -> Option<usize> {
    let n = series.len();
    let mean = series.iter().sum::<i64>() as f64 / n.max(1) as f64;
    let centred: Vec<f64> = series.iter().map(|&x| x as f64 - mean).collect();
    let variance: f64 = centred.iter().map(|c| c * c).sum();
    if n < 4 || variance <= 0.0 || variance / n as f64 <= MIN_DISPERSION * mean {
        return None;
    }
    let correlation = |lag: usize| -> f64 {
        let sum: f64 = (0..n - lag).map(|i| centred[i] * centred[i + lag]).sum();
        sum / variance * n as f64 / (n - lag) as f64
    };
    let r: Vec<f64> = (0..=n / 2 + 1)
        .map(|lag| correlation(lag.min(n - 1)))
        .collect();
    (2..=n / 2).find(|&lag| {
        let peak = r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1];
        peak && r[lag] >= MIN_CORRELATION
    })
}

/// How far the background counted over a window of `window` sub-windows may be from
/// `rate × window`, as a count: the largest deviation of any run of consecutive
/// sub-windows, of any length up to `window`, from the mean rate. A burst that falls in or
/// out of the window at its edges is the whole error of a periodic background. The
/// `segments` are control windows apart in time (one before the burst, one after): the
/// mean is theirs together, and no run spans the gap between two of them, where the
/// background's phase may have moved.
pub fn edge_spread(segments: &[&[i64]], window: usize) -> f64 {
    let mean = mean(segments);
    let mut worst: f64 = 0.0;
    for series in segments {
        let n = series.len();
        for length in 1..=window.min(n) {
            for start in 0..=n - length {
                let sum: i64 = series[start..start + length].iter().sum();
                worst = worst.max((sum as f64 - mean * length as f64).abs());
            }
        }
    }
    worst
}

/// The mean count per sub-window over every segment.
fn mean(segments: &[&[i64]]) -> f64 {
    let n: usize = segments.iter().map(|s| s.len()).sum();
    let sum: i64 = segments.iter().flat_map(|s| s.iter()).sum();
    sum as f64 / n.max(1) as f64
}

/// How far the mean rate per sub-window may be from the truth, at `sigmas` deviations:
/// the spread of the sums of consecutive blocks of `block` sub-windows (a period, or 1)
/// over the number of blocks. Zero for a background whose every period counts the same.
/// Blocks are taken within each of the `segments`, never across the gap between two.
pub fn rate_spread(segments: &[&[i64]], block: usize, sigmas: f64) -> f64 {
    let sums: Vec<f64> = (segments.iter())
        .flat_map(|series| series.chunks_exact(block.max(1)))
        .map(|c| c.iter().sum::<i64>() as f64)
        .collect();
    let Some(sd) = spread::standard_deviation(&sums) else {
        return 0.0;
    };
    sigmas * sd / (sums.len() as f64).sqrt() / block.max(1) as f64
}

/// The uncertainty of the background expected over `window_seconds`, as a count, from
/// sub-windows of `sub_seconds` each, in `segments` apart in time: the edges
/// ([`edge_spread`]) plus the rate's spread ([`rate_spread`], over whole periods when there
/// is one) scaled to the window.
pub fn uncertainty(segments: &[&[i64]], sub_seconds: f64, window_seconds: f64, sigmas: f64) -> f64 {
    if segments.iter().all(|s| s.is_empty()) || sub_seconds <= 0.0 {
        return 0.0;
    }
    let window = (window_seconds / sub_seconds).ceil() as usize;
    let block = period(&segments.concat()).unwrap_or(1);
    edge_spread(segments, window)
        + rate_spread(segments, block, sigmas) * window_seconds / sub_seconds
}

/// How many sub-windows a control window of at least `wanted` needs to cover whole
/// periods of `series`, up to `cap`: `wanted` itself when there is no period yet.
pub fn whole_periods(series: &[i64], wanted: usize, cap: usize) -> usize {
    match period(series) {
        Some(p) => wanted.div_ceil(p).saturating_mul(p).min(cap.max(wanted)),
        None => wanted,
    }
}

/// How long a control window would bring an uncertainty of `now` (measured over
/// `control_seconds`) within `target`, when `fixed` of it does not shrink with the control
/// window (the edges of the measured window) and the rest shrinks as one over its square
/// root. `None` when `fixed` alone exceeds the target: only a larger signal (more
/// requests) helps then.
pub fn control_seconds_for(now: f64, fixed: f64, target: f64, control_seconds: f64) -> Option<f64> {
    if now <= target {
        return Some(control_seconds);
    }
    if fixed >= target {
        return None;
    }
    let ratio = (now - fixed).max(0.0) / (target - fixed);
    Some(control_seconds * ratio * ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bursts` of `size` every `every` sub-windows, starting at `phase`, over `n`.
    fn bursts(n: usize, every: usize, phase: usize, size: i64) -> Vec<i64> {
        (0..n)
            .map(|i| if i % every == phase { size } else { 0 })
            .collect()
    }

    #[test]
    fn a_job_every_two_or_five_seconds_has_that_period() {
        assert_eq!(period(&bursts(10, 2, 0, 40)), Some(2));
        assert_eq!(period(&bursts(10, 2, 1, 40)), Some(2));
        assert_eq!(period(&bursts(20, 5, 3, 7)), Some(5));
        // A burst that straddles two sub-windows now and then (sampling jitter).
        let jittered = [40, 0, 40, 0, 20, 20, 0, 40, 0, 40, 0, 40];
        assert_eq!(period(&jittered), Some(2));
    }

    #[test]
    fn a_steady_or_random_background_has_no_period() {
        assert_eq!(period(&[5; 12]), None);
        // Independent draws (a linear congruential generator), no period.
        let mut state: u64 = 12345;
        let random: Vec<i64> = (0..40)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 59) as i64
            })
            .collect();
        assert_eq!(period(&random), None, "{random:?}");
        // A steady writer read a little off the second: its counts alternate by a few.
        let steady: Vec<i64> = (0..12).map(|i| if i % 2 == 0 { 49 } else { 52 }).collect();
        assert_eq!(period(&steady), None);
        // One period only is not enough to tell.
        assert_eq!(period(&bursts(5, 5, 0, 10)), None);
        assert_eq!(period(&[]), None);
    }

    #[test]
    fn the_edges_of_a_window_can_hold_one_burst_more_or_less() {
        let series = bursts(10, 2, 0, 40); // mean 20 per sub-window
        // A window of 3 sub-windows holds 1 or 2 bursts: 40 or 80 against 60.
        assert_eq!(edge_spread(&[&series], 3), 20.0);
        // Of any length up to 4: a single sub-window with a burst is 20 off.
        assert_eq!(edge_spread(&[&series], 4), 20.0);
        assert_eq!(edge_spread(&[&[5; 10]], 4), 0.0);
    }

    #[test]
    fn two_control_windows_out_of_phase_are_not_one_run() {
        // Before the burst the job ran in odd seconds, after it in even ones: read as one
        // series, the join holds two bursts side by side, a whole burst off the mean.
        let (before, after) = (bursts(6, 2, 1, 30), bursts(8, 2, 0, 30));
        assert_eq!(
            edge_spread(&[&[before.as_slice(), &after].concat()], 4),
            30.0
        );
        // Apart, each window is half a burst off at most, as one window alone would be.
        assert_eq!(edge_spread(&[&before, &after], 4), 15.0);
        assert_eq!(edge_spread(&[&before], 4), 15.0);
        // Whole periods within each window count the same: the rate is exact.
        assert_eq!(rate_spread(&[&before, &after], 2, 3.0), 0.0);
        let u = uncertainty(&[&before, &after], 1.0, 11.0, 3.0);
        assert_eq!(u, 15.0);
    }

    #[test]
    fn the_rate_of_a_strict_period_is_exact_and_of_an_uneven_one_is_not() {
        assert_eq!(rate_spread(&[&bursts(10, 2, 0, 40)], 2, 3.0), 0.0);
        // Per-period sums 30, 50, 30, 50: sd 11.547, over √4, per 2 sub-windows, × 3.
        let uneven = [30, 0, 50, 0, 30, 0, 50, 0];
        let spread = rate_spread(&[&uneven], 2, 3.0);
        assert!(
            (spread - 3.0 * 11.547_005 / 2.0 / 2.0).abs() < 1e-4,
            "{spread}"
        );
        assert_eq!(rate_spread(&[&[1]], 1, 3.0), 0.0);
    }

    #[test]
    fn the_uncertainty_adds_the_edges_and_the_rate_scaled_to_the_window() {
        let series = bursts(10, 2, 0, 40);
        // A 13 s window: 20 at the edges, the rate exact.
        assert_eq!(uncertainty(&[&series], 1.0, 13.0, 3.0), 20.0);
        let uneven = [30, 0, 50, 0, 30, 0, 50, 0];
        let u = uncertainty(&[&uneven], 1.0, 10.0, 3.0);
        // The edges: one sub-window of 50 against a mean of 20.
        let expected = 30.0 + 3.0 * 11.547_005 / 4.0 * 10.0;
        assert!((u - expected).abs() < 1e-3, "{u} vs {expected}");
        assert_eq!(uncertainty(&[], 1.0, 10.0, 3.0), 0.0);
    }

    #[test]
    fn control_windows_cover_whole_periods() {
        let series = bursts(10, 4, 0, 10);
        assert_eq!(whole_periods(&series, 10, 30), 12);
        assert_eq!(whole_periods(&series, 10, 11), 11, "capped");
        assert_eq!(whole_periods(&[5; 10], 10, 30), 10);
    }

    #[test]
    fn the_control_window_needed_for_a_target_is_sized_from_the_part_that_shrinks() {
        assert_eq!(control_seconds_for(0.1, 0.0, 0.15, 10.0), Some(10.0));
        // 0.3 of noise over 10 s: 0.15 needs 4 times as long.
        assert_eq!(control_seconds_for(0.3, 0.0, 0.15, 10.0), Some(40.0));
        // Noise 0.2 beside a fixed 0.05: 0.1 of room, 4 times as long.
        let t = control_seconds_for(0.25, 0.05, 0.15, 10.0).unwrap();
        assert!((t - 40.0).abs() < 1e-9, "{t}");
        assert_eq!(control_seconds_for(0.3, 0.2, 0.15, 10.0), None);
    }
}
