//! The knee: the first step after which throughput grows by less than its share of the
//! concurrency's growth (10% per doubling, scaled to each pair of steps).

/// Throughput must grow by at least this much per doubling of the concurrency for the
/// next step to count as growth.
pub const GROWTH: f64 = 0.10;

/// The growth that the step from `c0` to `c1` must show: [`GROWTH`] per doubling, compounded
/// over log2(c1 / c0) doublings. Uneven steps (2, 3, 4, 5, 6) are judged too: a rule that
/// judged only doubling steps never found the wall of two workers on such a ramp.
fn required_growth(c0: f64, c1: f64) -> f64 {
    (1.0 + GROWTH).powf((c1 / c0).log2())
}

/// The index of the knee step among `(concurrency, rps)` points in the order they ran, or
/// `None` when throughput kept growing. A pair whose concurrency does not rise is never
/// judged: it says nothing about scaling.
pub fn knee(points: &[(f64, f64)]) -> Option<usize> {
    points.windows(2).position(|pair| {
        let (c0, rps0) = pair[0];
        let (c1, rps1) = pair[1];
        c0 > 0.0 && c1 > c0 && rps1 < rps0 * required_growth(c0, c1)
    })
}

/// Open model: a rate counts as met when throughput reaches this share of it.
pub const RATE_MET: f64 = 0.9;

/// The knee of open-model `(rate, rps)` steps: the last step whose arrival rate was met
/// before the first that was not (the first step when even it was not); `None` when every
/// rate was met.
pub fn unmet(points: &[(f64, f64)]) -> Option<usize> {
    let first = points
        .iter()
        .position(|&(rate, rps)| rps < RATE_MET * rate)?;
    Some(first.saturating_sub(1))
}

/// With the default steps, whether the ramp has gone far enough: two steps past the knee.
pub fn passed_by_two(points: &[(f64, f64)]) -> bool {
    knee(points).is_some_and(|k| points.len() >= k + 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_last_step_that_grew() {
        let pool = [(1.0, 180.0), (2.0, 355.0), (4.0, 362.0), (8.0, 360.0)];
        assert_eq!(knee(&pool), Some(1));
        assert!(passed_by_two(&pool));
        assert!(!passed_by_two(&pool[..3]));
        let pinned = [(1.0, 300.0), (2.0, 320.0), (4.0, 321.0)];
        assert_eq!(knee(&pinned), Some(0), "6.7% growth is not growth");
    }

    #[test]
    fn growth_of_ten_percent_or_more_is_no_knee() {
        assert_eq!(knee(&[(1.0, 100.0), (2.0, 111.0), (4.0, 123.0)]), None);
        assert_eq!(knee(&[(1.0, 100.0)]), None);
        assert_eq!(knee(&[]), None);
    }

    #[test]
    fn an_open_model_knee_is_the_last_rate_met() {
        let pool = [
            (100.0, 99.0),
            (200.0, 198.0),
            (400.0, 330.0),
            (800.0, 331.0),
        ];
        assert_eq!(unmet(&pool), Some(1));
        assert_eq!(unmet(&[(100.0, 60.0), (200.0, 61.0)]), Some(0));
        assert_eq!(
            unmet(&[(100.0, 95.0), (200.0, 181.0)]),
            None,
            "90.5% is met"
        );
    }

    #[test]
    fn uneven_steps_are_judged_by_their_concurrency_ratio() {
        // Two workers: flat from c = 2 on.
        let two_workers = [
            (2.0, 400.0),
            (3.0, 402.0),
            (4.0, 399.0),
            (5.0, 401.0),
            (6.0, 400.0),
        ];
        assert_eq!(knee(&two_workers), Some(0));
        // Linear scaling on uneven steps is growth at every pair, even 5 → 6 (20%).
        let linear = [
            (2.0, 200.0),
            (3.0, 300.0),
            (4.0, 400.0),
            (5.0, 500.0),
            (6.0, 600.0),
        ];
        assert_eq!(knee(&linear), None);
        // 5 → 6 needs 1.1^log2(1.2) ≈ 2.6% growth: 2% is the knee, 3% is not.
        assert_eq!(knee(&[(5.0, 100.0), (6.0, 102.0)]), Some(0));
        assert_eq!(knee(&[(5.0, 100.0), (6.0, 103.0)]), None);
        // 4 → 16 is two doublings: 21% growth is needed, 20% is the knee.
        assert_eq!(knee(&[(4.0, 100.0), (16.0, 120.0)]), Some(0));
        assert_eq!(knee(&[(4.0, 100.0), (16.0, 122.0)]), None);
    }

    #[test]
    fn a_pair_whose_concurrency_does_not_rise_is_not_judged() {
        assert_eq!(knee(&[(4.0, 100.0), (4.0, 100.0), (8.0, 150.0)]), None);
        assert_eq!(knee(&[(8.0, 100.0), (4.0, 50.0)]), None);
    }
}
