//! The Universal Scalability Law fitted to (concurrency, rps):
//! X(N) = λN / (1 + σ(N − 1) + κN(N − 1)). λ is the throughput of one client, taken
//! from the lowest step; σ (contention) and κ (coherency) come from a least-squares fit
//! of the linearised form N/C(N) − 1 = σ(N − 1) + κN(N − 1), with C(N) = X(N)/λ.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Below this r² (of the fitted throughput against the measured one) the fit is poor.
pub const POOR_FIT: f64 = 0.9;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usl {
    pub sigma: f64,
    pub kappa: f64,
    /// λ: requests per second of one client, without contention.
    pub lambda: f64,
    /// Concurrency of the highest throughput; `None` when κ is 0 (no retrograde region).
    pub peak_concurrency: Option<f64>,
    pub peak_rps: Option<f64>,
    pub r_squared: f64,
    pub poor_fit: bool,
}

/// The law's throughput at concurrency `n`.
pub fn throughput(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the law; `None` with fewer than three distinct concurrencies or no throughput.
pub fn fit(points: &[(f64, f64)]) -> Option<Usl> {
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let &(n0, x0) = points.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
    if distinct.len() < 3 || x0 <= 0.0 || n0 <= 0.0 {
        return None;
    }
    let lambda = x0 / n0;
    let (sigma, kappa) = least_squares(points, lambda)?;
    let (peak_concurrency, peak_rps) = if kappa > 0.0 {
        let n = ((1.0 - sigma) / kappa).sqrt().max(1.0);
        (Some(n), Some(throughput(lambda, sigma, kappa, n)))
    } else {
        (None, None)
    };
    let r_squared = r_squared(points, |n| throughput(lambda, sigma, kappa, n));
    Some(Usl {
        sigma,
        kappa,
        lambda,
        peak_concurrency,
        peak_rps,
        r_squared,
        poor_fit: r_squared < POOR_FIT,
    })
}

/// σ and κ of the linearised law, both kept at 0 or above (negative values have no
/// meaning: the line is then fitted again with that coefficient fixed at 0).
fn least_squares(points: &[(f64, f64)], lambda: f64) -> Option<(f64, f64)> {
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|(_, x)| *x > 0.0)
        .map(|&(n, x)| (n - 1.0, n * (n - 1.0), n / (x / lambda) - 1.0))
        .collect();
    let (mut saa, mut sab, mut sbb, mut say, mut sby) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(a, b, y) in &rows {
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        say += a * y;
        sby += b * y;
    }
    let det = saa * sbb - sab * sab;
    if det.abs() < 1e-12 {
        return None;
    }
    let sigma = (say * sbb - sby * sab) / det;
    let kappa = (saa * sby - sab * say) / det;
    Some(match (sigma >= 0.0, kappa >= 0.0) {
        (true, true) => (sigma, kappa),
        (false, _) if sbb > 0.0 => (0.0, (sby / sbb).max(0.0)),
        _ if saa > 0.0 => ((say / saa).max(0.0), 0.0),
        _ => (0.0, 0.0),
    })
}

fn r_squared(points: &[(f64, f64)], model: impl Fn(f64) -> f64) -> f64 {
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let residual: f64 = points.iter().map(|p| (p.1 - model(p.0)).powi(2)).sum();
    if total <= 0.0 {
        return if residual <= 1e-9 { 1.0 } else { 0.0 };
    }
    1.0 - residual / total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_curve_gives_back_its_coefficients() {
        let (lambda, sigma, kappa) = (1000.0, 0.05, 0.002);
        let points: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .iter()
            .map(|&n| (n, throughput(lambda, sigma, kappa, n)))
            .collect();
        let usl = fit(&points).unwrap();
        assert!((usl.sigma - sigma).abs() < 1e-9, "{usl:?}");
        assert!((usl.kappa - kappa).abs() < 1e-9, "{usl:?}");
        assert!((usl.lambda - lambda).abs() < 1e-9);
        // N* = sqrt((1 − σ)/κ) = sqrt(475) = 21.79...
        let peak = usl.peak_concurrency.unwrap();
        assert!((peak - 475f64.sqrt()).abs() < 1e-6, "{usl:?}");
        let best = throughput(lambda, sigma, kappa, peak);
        assert!((usl.peak_rps.unwrap() - best).abs() < 1e-6);
        assert!(usl.r_squared > 0.999_999 && !usl.poor_fit, "{usl:?}");
    }

    #[test]
    fn a_flat_curve_is_all_contention_and_has_no_peak() {
        // σ = 1: X(N) = λ for every N, a single server.
        let points = [(1.0, 300.0), (2.0, 300.0), (4.0, 300.0), (8.0, 300.0)];
        let usl = fit(&points).unwrap();
        assert!((usl.sigma - 1.0).abs() < 1e-9, "{usl:?}");
        assert!(usl.kappa.abs() < 1e-9, "{usl:?}");
        assert_eq!(usl.peak_concurrency, None);
        assert!(!usl.poor_fit);
    }

    #[test]
    fn a_curve_the_law_cannot_draw_is_a_poor_fit() {
        let points = [(1.0, 100.0), (2.0, 30.0), (4.0, 400.0), (8.0, 20.0)];
        assert!(fit(&points).unwrap().poor_fit);
        assert_eq!(fit(&[(1.0, 100.0), (2.0, 190.0)]), None, "two points");
    }
}
