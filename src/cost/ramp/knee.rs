//! The knee: the first step after which throughput grows by less than 10% while the
//! concurrency at least doubles.

/// Throughput must grow by at least this much for the next step to count as growth.
pub const GROWTH: f64 = 0.10;

/// The index of the knee step among `(concurrency, rps)` points in the order they ran, or
/// `None` when throughput kept growing. A step whose successor is less than twice its
/// concurrency is never the knee (too small a step to judge).
pub fn knee(points: &[(f64, f64)]) -> Option<usize> {
    points.windows(2).position(|pair| {
        let (c0, rps0) = pair[0];
        let (c1, rps1) = pair[1];
        c1 >= 2.0 * c0 && rps1 < rps0 * (1.0 + GROWTH)
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
    fn a_step_that_does_not_double_is_not_judged() {
        assert_eq!(knee(&[(4.0, 100.0), (6.0, 100.0), (12.0, 150.0)]), None);
        assert_eq!(knee(&[(4.0, 100.0), (6.0, 100.0), (12.0, 100.0)]), Some(1));
    }
}
