//! The least-squares line through a figure's points: y = intercept + slope · n, and how
//! much of the figure's spread the line explains (r²).

use serde::{Deserialize, Serialize};

/// A fitted line over the points' sizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fit {
    /// Growth of the figure per unit of n.
    pub slope: f64,
    /// The figure at n = 0.
    pub intercept: f64,
    /// The share of the figure's variance the line explains, 0 to 1; 1 when the points
    /// lie on the line, a flat figure included.
    pub r2: f64,
}

impl Fit {
    /// The line at `n`.
    pub fn at(&self, n: f64) -> f64 {
        self.intercept + self.slope * n
    }
}

/// The ordinary least-squares fit of `ys` over `xs` (same length, at least two distinct
/// xs, which the command's validation guarantees); `None` otherwise.
pub fn fit(xs: &[f64], ys: &[f64]) -> Option<Fit> {
    if xs.len() != ys.len() || xs.len() < 2 {
        return None;
    }
    let count = xs.len() as f64;
    let mean_x = xs.iter().sum::<f64>() / count;
    let mean_y = ys.iter().sum::<f64>() / count;
    let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (x - mean_x) * (y - mean_y))
        .sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let total: f64 = ys.iter().map(|y| (y - mean_y).powi(2)).sum();
    let residual: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (y - (intercept + slope * x)).powi(2))
        .sum();
    // A flat figure has no variance to explain: the line through it is exact.
    let scale = ys.iter().map(|y| y * y).sum::<f64>().max(1.0);
    let r2 = if total <= 1e-12 * scale {
        1.0
    } else {
        (1.0 - residual / total).clamp(0.0, 1.0)
    };
    Some(Fit {
        slope,
        intercept,
        r2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_line_gives_its_slope_and_intercept_and_r2_of_one() {
        let f = fit(&[5.0, 10.0, 20.0], &[7.0, 12.0, 22.0]).unwrap();
        assert!((f.slope - 1.0).abs() < 1e-12, "{f:?}");
        assert!((f.intercept - 2.0).abs() < 1e-12, "{f:?}");
        assert_eq!(f.r2, 1.0);
        assert!((f.at(50.0) - 52.0).abs() < 1e-9);
    }

    #[test]
    fn a_flat_figure_has_slope_zero_and_r2_of_one() {
        let f = fit(&[5.0, 25.0, 50.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!(f.slope, 0.0);
        assert_eq!(f.intercept, 1.0);
        assert_eq!(f.r2, 1.0);
    }

    #[test]
    fn scattered_points_have_an_r2_below_one() {
        // By hand: mean x 2, mean y 2, sxy = 2, sxx = 2: slope 1, intercept 0; the
        // residuals 1, -2, 1 square to 6, the spread around the mean to 8: r² = 1 - 6/8.
        let f = fit(&[1.0, 2.0, 3.0], &[2.0, 0.0, 4.0]).unwrap();
        assert!((f.slope - 1.0).abs() < 1e-12, "{f:?}");
        assert!(f.intercept.abs() < 1e-12, "{f:?}");
        assert!((f.r2 - 0.25).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn no_line_through_one_size() {
        assert_eq!(fit(&[5.0, 5.0], &[1.0, 2.0]), None);
        assert_eq!(fit(&[5.0], &[1.0]), None);
        assert_eq!(fit(&[5.0, 6.0], &[1.0]), None);
    }
}
