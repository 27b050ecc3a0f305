//! The noise of a figure sampled once a second, and whether a difference is beyond it: the
//! standard error of a mean, Student's t at the Welch–Satterthwaite degrees of freedom, and
//! how many samples (seconds) would decide a difference that is not. `pgcost ramp` judges
//! its knee and its wall with it (docs/ramp.md, "How sure the verdict is").

use serde::{Deserialize, Serialize};

/// A spread needs at least this many samples. Below it, the standard deviation itself is
/// too unsure (with three, it comes out at half its true value one time in five) and
/// Student's t too wide (22 at two degrees of freedom) to decide anything.
pub const MIN_SAMPLES: usize = 5;

/// The most samples (seconds) the advice ever proposes: a difference that would need more
/// is too close to its threshold for any step length to settle it.
pub const MAX_SAMPLES: u32 = 3600;

/// Student's t, one-sided 99.9% (a difference is claimed when the chance that noise alone
/// made it is under one in a thousand), by degrees of freedom.
const T_999: [(f64, f64); 34] = [
    (1.0, 318.309),
    (2.0, 22.327),
    (3.0, 10.215),
    (4.0, 7.173),
    (5.0, 5.893),
    (6.0, 5.208),
    (7.0, 4.785),
    (8.0, 4.501),
    (9.0, 4.297),
    (10.0, 4.144),
    (11.0, 4.025),
    (12.0, 3.930),
    (13.0, 3.852),
    (14.0, 3.787),
    (15.0, 3.733),
    (16.0, 3.686),
    (17.0, 3.646),
    (18.0, 3.610),
    (19.0, 3.579),
    (20.0, 3.552),
    (21.0, 3.527),
    (22.0, 3.505),
    (23.0, 3.485),
    (24.0, 3.467),
    (25.0, 3.450),
    (26.0, 3.435),
    (27.0, 3.421),
    (28.0, 3.408),
    (29.0, 3.396),
    (30.0, 3.385),
    (40.0, 3.307),
    (60.0, 3.232),
    (120.0, 3.160),
    (f64::INFINITY, 3.090),
];

/// The spread of one figure's one-second samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    /// How many one-second samples.
    pub samples: u32,
    /// Their standard deviation (divided by samples − 1).
    pub sd: f64,
    /// The standard error of their mean: sd / √samples.
    pub se: f64,
}

/// The sample standard deviation (divided by n − 1); `None` below two values.
pub fn standard_deviation(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((squares / (n - 1) as f64).sqrt())
}

/// The spread of `values`; `None` below [`MIN_SAMPLES`].
pub fn of(values: &[f64]) -> Option<Spread> {
    if values.len() < MIN_SAMPLES {
        return None;
    }
    let sd = standard_deviation(values)?;
    Some(Spread {
        samples: values.len() as u32,
        sd,
        se: sd / (values.len() as f64).sqrt(),
    })
}

/// Student's t (one-sided 99.9%) at `dof` degrees of freedom, which may be fractional
/// (Welch): interpolated linearly in 1/dof between the table's entries.
pub fn student_t(dof: f64) -> f64 {
    if dof.is_nan() || dof <= T_999[0].0 {
        return T_999[0].1;
    }
    if let Some(&(_, t)) = T_999.iter().find(|(d, _)| *d == dof) {
        return t;
    }
    let inverse = |d: f64| if d.is_infinite() { 0.0 } else { 1.0 / d };
    let pair = T_999
        .windows(2)
        .find(|w| dof <= w[1].0)
        .unwrap_or(&T_999[32..]);
    let ((d0, t0), (d1, t1)) = (pair[0], pair[1]);
    let share = (inverse(d0) - inverse(dof)) / (inverse(d0) - inverse(d1));
    t0 + (t1 - t0) * share
}

/// Where a figure stands against its threshold, beyond the noise or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Above,
    Below,
    Undecided,
}

/// One step's figure and the spread of its one-second samples (`None`: unknown, fewer
/// than [`MIN_SAMPLES`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub spread: Option<Spread>,
}

/// A comparison judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The combination minus its threshold.
    pub margin: f64,
    /// t × its standard error; `None` when a figure's spread is unknown.
    pub noise: Option<f64>,
    pub outcome: Outcome,
    /// When undecided: the one-second samples of every figure at which the noise would
    /// fall below the margin (the same noise per second assumed); [`MIN_SAMPLES`] when a
    /// spread is unknown; `None` when not even [`MAX_SAMPLES`] would do.
    pub samples_needed: Option<u32>,
}

/// Judges `Σ weight × value − threshold`: above or below zero when it is beyond Student's t
/// times its standard error (Welch: each figure's own variance and samples), else
/// undecided, as it always is when a figure's spread is unknown.
pub fn judge(terms: &[(f64, Figure)], threshold: f64) -> Judged {
    let margin = terms.iter().map(|(w, f)| w * f.value).sum::<f64>() - threshold;
    // Each term's variance per sample (w² sd²) and its samples.
    let parts: Option<Vec<(f64, f64)>> = terms
        .iter()
        .map(|(w, f)| f.spread.map(|s| (w * w * s.sd * s.sd, s.samples as f64)))
        .collect();
    let Some(parts) = parts else {
        return Judged {
            margin,
            noise: None,
            outcome: Outcome::Undecided,
            samples_needed: Some(MIN_SAMPLES as u32),
        };
    };
    let noise = t_times_error(parts.iter().copied());
    let outcome = if margin > noise {
        Outcome::Above
    } else if margin < -noise {
        Outcome::Below
    } else {
        Outcome::Undecided
    };
    let samples_needed = (outcome == Outcome::Undecided)
        .then(|| {
            (MIN_SAMPLES as u32..=MAX_SAMPLES).find(|&n| {
                let at_n = parts.iter().map(|&(variance, _)| (variance, n as f64));
                t_times_error(at_n) < margin.abs()
            })
        })
        .flatten();
    Judged {
        margin,
        noise: Some(noise),
        outcome,
        samples_needed,
    }
}

/// Student's t × the standard error of a sum of means, each given as (variance per
/// sample, samples), at the Welch–Satterthwaite degrees of freedom.
fn t_times_error(parts: impl Iterator<Item = (f64, f64)> + Clone) -> f64 {
    let of_mean = parts.clone().map(|(variance, n)| (variance / n, n));
    let total: f64 = of_mean.clone().map(|(v, _)| v).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let spread: f64 = of_mean.map(|(v, n)| v * v / (n - 1.0)).sum();
    student_t(total * total / spread) * total.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(samples: &[f64]) -> Figure {
        Figure {
            value: samples.iter().sum::<f64>() / samples.len() as f64,
            spread: of(samples),
        }
    }

    #[test]
    fn the_standard_error_is_the_sd_over_the_root_of_the_samples() {
        let s = of(&[93.0, 95.0, 94.0, 96.0, 95.0]).unwrap();
        // Deviations from 94.6 squared: 5.2 in all, over 4: 1.3.
        assert_eq!(s.samples, 5);
        assert!((s.sd - 1.3f64.sqrt()).abs() < 1e-12, "{s:?}");
        assert!((s.se - (1.3f64 / 5.0).sqrt()).abs() < 1e-12, "{s:?}");
        assert_eq!(
            of(&[1.0, 2.0, 3.0, 4.0]),
            None,
            "four samples are not a spread"
        );
        assert_eq!(standard_deviation(&[1.0, 3.0]), Some(2f64.sqrt()));
        assert_eq!(standard_deviation(&[1.0]), None);
        assert_eq!(of(&[7.0; 5]).unwrap().se, 0.0);
    }

    #[test]
    fn student_t_follows_the_table_and_interpolates_between() {
        assert_eq!(student_t(10.0), 4.144);
        assert_eq!(student_t(1.0), 318.309);
        assert_eq!(student_t(0.3), 318.309);
        assert_eq!(student_t(f64::INFINITY), 3.090);
        assert!((student_t(1e12) - 3.090).abs() < 1e-6);
        let between = student_t(10.5);
        assert!(between < 4.144 && between > 4.025, "{between}");
        // 1/dof halfway between 1/40 and 1/60 is dof 48.
        assert!((student_t(48.0) - (3.307 + 3.232) / 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_clean_doubling_is_beyond_the_noise() {
        let (c1, c2) = (
            figure(&[100.0, 101.0, 99.0, 100.0, 100.0]),
            figure(&[199.0, 201.0, 200.0, 202.0, 198.0]),
        );
        // Grew by more than 10%: rps₂ − 1.1 × rps₁ is about 90 rps above 0.
        let judged = judge(&[(1.0, c2), (-1.1, c1)], 0.0);
        assert_eq!(judged.outcome, Outcome::Above, "{judged:?}");
        assert!((judged.margin - 90.0).abs() < 1e-9);
        assert_eq!(judged.samples_needed, None);
        let flat = judge(&[(1.0, c1), (-1.1, c1)], 0.0);
        assert_eq!(flat.outcome, Outcome::Below, "{flat:?}");
    }

    #[test]
    fn a_change_within_the_noise_is_undecided_and_says_how_long_would_decide() {
        // 19 then 14 rps, each second anywhere from 5 to 35.
        let before = figure(&[30.0, 8.0, 25.0, 12.0, 20.0]);
        let after = figure(&[5.0, 22.0, 10.0, 28.0, 5.0]);
        let judged = judge(&[(1.0, after), (-1.1, before)], 0.0);
        assert_eq!(judged.outcome, Outcome::Undecided, "{judged:?}");
        let noise = judged.noise.unwrap();
        assert!(noise > judged.margin.abs(), "{judged:?}");
        let needed = judged.samples_needed.unwrap();
        assert!(needed > 5 && needed < 3600, "{judged:?}");
        // At that many samples, with the same spread per second, the noise is below the
        // margin; one fewer, it is not.
        let at = |n: u32| {
            let scale = |f: Figure| Figure {
                spread: f.spread.map(|s| Spread {
                    samples: n,
                    se: s.sd / (n as f64).sqrt(),
                    ..s
                }),
                ..f
            };
            judge(&[(1.0, scale(after)), (-1.1, scale(before))], 0.0).outcome
        };
        assert_eq!(at(needed), Outcome::Below);
        assert_eq!(at(needed - 1), Outcome::Undecided);
    }

    #[test]
    fn an_unknown_spread_decides_nothing() {
        let short = Figure {
            value: 300.0,
            spread: None,
        };
        let judged = judge(&[(1.0, short)], 100.0);
        assert_eq!(judged.outcome, Outcome::Undecided);
        assert_eq!(judged.noise, None);
        assert_eq!(judged.samples_needed, Some(5));
        // A margin of exactly zero with no noise at all is no difference.
        let exact = figure(&[5.0; 5]);
        let judged = judge(&[(1.0, exact)], 5.0);
        assert_eq!(judged.outcome, Outcome::Undecided);
        assert_eq!(judged.samples_needed, None);
    }
}
