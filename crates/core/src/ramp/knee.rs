//! The knee: the first step after which throughput grows by less than its share of the
//! concurrency's growth (10% per doubling, scaled to each pair of steps); as a point
//! estimate (`knee`, which the default steps stop on), and judged against the noise of
//! each step's one-second samples (`judge_closed`, `judge_open`).

use crate::spread::{self, Figure, Judged, Outcome};

/// Throughput must grow by at least this much per doubling of the concurrency for the
/// next step to count as growth.
pub const GROWTH: f64 = 0.10;

/// The growth that the step from `c0` to `c1` must show: [`GROWTH`] per doubling, compounded
/// over log2(c1 / c0) doublings. Uneven steps (2, 3, 4, 5, 6) are judged too: a rule that
/// judged only doubling steps never found the wall of two workers on such a ramp.
pub fn required_growth(c0: f64, c1: f64) -> f64 {
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

/// With the default steps, whether the ramp has gone far enough: two steps past the knee.
pub fn passed_by_two(points: &[(f64, f64)]) -> bool {
    knee(points).is_some_and(|k| points.len() >= k + 3)
}

/// Where the knee is, judged against the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knee {
    /// Throughput grew beyond the noise at every step (every rate was met).
    None,
    /// The knee is at step `at`; `past` is the first step beyond it, where the wall is
    /// read. With `between`, a change within the noise left it at one of those two
    /// steps, and `at` is the point estimate: the step after them was flat beyond the
    /// noise, so the knee is no later.
    At {
        at: usize,
        past: usize,
        between: Option<(usize, usize)>,
    },
    /// A change within the noise leaves the knee unplaced.
    Undecided,
}

/// One comparison read while placing the knee: the step, the one before it (closed
/// loop), and the judgement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeReading {
    pub step: usize,
    pub against: Option<usize>,
    pub judged: Judged,
}

/// The knee of closed-loop `(concurrency, rps)` steps, each pair whose concurrency rises
/// judged: the later step's throughput against the growth required of the earlier one's.
/// The first pair that did not grow beyond the noise places it: flat beyond the noise,
/// the knee; undecided, the knee is that pair's first step or its second if the next
/// pair, or the step after the pair against its first, is flat beyond the noise, and
/// cannot be placed otherwise.
pub fn judge_closed(steps: &[(f64, Figure)]) -> (Knee, Vec<KneeReading>) {
    let pairs: Vec<(usize, usize)> = (0..steps.len().saturating_sub(1))
        .map(|i| (i, i + 1))
        .filter(|&(i, j)| steps[i].0 > 0.0 && steps[j].0 > steps[i].0)
        .collect();
    let read = |(i, j): (usize, usize)| {
        let growth = required_growth(steps[i].0, steps[j].0);
        let judged = spread::judge(&[(1.0, steps[j].1), (-growth, steps[i].1)], 0.0);
        KneeReading {
            step: j,
            against: Some(i),
            judged,
        }
    };
    let mut readings = Vec::new();
    for (n, &(i, j)) in pairs.iter().enumerate() {
        let reading = read((i, j));
        readings.push(reading);
        match reading.judged.outcome {
            Outcome::Above => continue,
            Outcome::Below => {
                let between = None;
                return (
                    Knee::At {
                        at: i,
                        past: j,
                        between,
                    },
                    readings,
                );
            }
            Outcome::Undecided => {}
        }
        let Some(&(_, k)) = pairs.get(n + 1).filter(|next| next.0 == j) else {
            return (Knee::Undecided, readings);
        };
        let next = read((j, k));
        readings.push(next);
        if next.judged.outcome != Outcome::Below {
            // One noisy step (its six seconds estimate its spread on five degrees of
            // freedom, t 5.9) leaves both pairs around it open, though the steps on each
            // side decide: growth from i to k, asked of two pairs at once, is judged too,
            // and read only when it decides.
            let span = read((i, k));
            if span.judged.outcome != Outcome::Below {
                return (Knee::Undecided, readings);
            }
            readings.push(span);
        }
        let at = if reading.judged.margin < 0.0 { i } else { j };
        let between = Some((i, j));
        return (
            Knee::At {
                at,
                past: k,
                between,
            },
            readings,
        );
    }
    (Knee::None, readings)
}

/// The knee of open-model `(rate, rps)` steps: each step's throughput judged against
/// [`RATE_MET`] of its rate; the knee is the last step met before the first that was not
/// (beyond the noise). A step undecided leaves it at that step or the one before when the
/// next step was not met beyond the noise, and unplaced otherwise.
pub fn judge_open(steps: &[(f64, Figure)]) -> (Knee, Vec<KneeReading>) {
    let read = |i: usize| KneeReading {
        step: i,
        against: None,
        judged: spread::judge(&[(1.0, steps[i].1)], RATE_MET * steps[i].0),
    };
    let last = steps.len().saturating_sub(1);
    let mut readings = Vec::new();
    for i in 0..steps.len() {
        let reading = read(i);
        readings.push(reading);
        match reading.judged.outcome {
            Outcome::Above => continue,
            Outcome::Below => {
                let at = i.saturating_sub(1);
                let past = (at + 1).min(last);
                return (
                    Knee::At {
                        at,
                        past,
                        between: None,
                    },
                    readings,
                );
            }
            Outcome::Undecided if i == last => return (Knee::Undecided, readings),
            Outcome::Undecided => {}
        }
        let next = read(i + 1);
        readings.push(next);
        if next.judged.outcome != Outcome::Below {
            return (Knee::Undecided, readings);
        }
        let at = if reading.judged.margin >= 0.0 {
            i
        } else {
            i.saturating_sub(1)
        };
        let between = (i > 0).then_some((i - 1, i));
        return (
            Knee::At {
                at,
                past: i + 1,
                between,
            },
            readings,
        );
    }
    (Knee::None, readings)
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

    fn steady(value: f64, sd: f64) -> Figure {
        Figure {
            value,
            spread: Some(spread::Spread {
                samples: 10,
                sd,
                se: sd / 10f64.sqrt(),
            }),
        }
    }

    /// Five one-second samples per step around each mean, spread as `spread`.
    fn noisy(rps: &[f64], spread: f64) -> Vec<(f64, Figure)> {
        (rps.iter().enumerate())
            .map(|(i, &mean)| {
                let seconds: Vec<f64> = [-1.0, 1.0, -0.5, 0.5, 0.0]
                    .iter()
                    .map(|d| mean + d * spread)
                    .collect();
                let figure = Figure {
                    value: mean,
                    spread: spread::of(&seconds),
                };
                ((1u32 << i) as f64, figure)
            })
            .collect()
    }

    #[test]
    fn the_busy_box_s_19_14_23_36_is_undecided() {
        // c = 1, 2, 4, 8 on a busy box: each second anywhere within ±15 rps of the mean.
        let steps = noisy(&[19.0, 14.0, 23.0, 36.0], 15.0);
        let (placed, readings) = judge_closed(&steps);
        assert_eq!(placed, Knee::Undecided, "{readings:?}");
        // 1 → 2 is undecided (14 against 20.9 needed) and 2 → 4 does not settle it.
        assert_eq!(readings[0].judged.outcome, Outcome::Undecided);
        assert!(readings[0].judged.samples_needed.unwrap() > 5);
        // The point estimate, blind to the noise, puts the knee at 1.
        let points: Vec<(f64, f64)> = steps.iter().map(|(c, f)| (*c, f.value)).collect();
        assert_eq!(knee(&points), Some(0));
    }

    #[test]
    fn a_clean_doubling_then_flat_names_the_knee() {
        let steps = noisy(&[100.0, 200.0, 400.0, 405.0, 398.0], 2.0);
        let (placed, readings) = judge_closed(&steps);
        let between = None;
        assert_eq!(
            placed,
            Knee::At {
                at: 2,
                past: 3,
                between
            },
            "{readings:?}"
        );
        assert_eq!(readings.len(), 3);
        let growing = noisy(&[100.0, 200.0, 400.0], 2.0);
        assert_eq!(judge_closed(&growing).0, Knee::None);
    }

    #[test]
    fn growth_near_ten_percent_then_flat_leaves_the_knee_between_two_steps() {
        // 2 → 4 grew 8% ± noise (undecided against 10%), 4 → 8 was flat beyond it.
        let steps = [
            (1.0, steady(180.0, 3.0)),
            (2.0, steady(357.0, 6.0)),
            (4.0, steady(385.0, 6.0)),
            (8.0, steady(384.0, 6.0)),
        ];
        let (placed, readings) = judge_closed(&steps);
        let between = Some((1, 2));
        assert_eq!(
            placed,
            Knee::At {
                at: 1,
                past: 3,
                between
            },
            "{readings:?}"
        );
        assert_eq!(readings[1].judged.outcome, Outcome::Undecided);
        // Undecided and then still growing: unplaced.
        let steps = [steps[0], steps[1], steps[2], (8.0, steady(700.0, 6.0))];
        assert_eq!(judge_closed(&steps).0, Knee::Undecided);
        // A step of under five seconds has no spread: nothing about it is decided.
        let short = Figure {
            value: 200.0,
            spread: None,
        };
        let steps = [(1.0, steady(100.0, 1.0)), (2.0, short)];
        assert_eq!(judge_closed(&steps).0, Knee::Undecided);
    }

    /// A step of six seconds whose throughput has this standard error.
    fn six_seconds(value: f64, se: f64) -> Figure {
        let sd = se * 6f64.sqrt();
        let spread = Some(spread::Spread { samples: 6, sd, se });
        Figure { value, spread }
    }

    #[test]
    fn one_noisy_step_between_two_quiet_ones_does_not_leave_the_knee_open() {
        // The hot row of tests/ramp.rs in CI: c=4's seconds had a standard error of 7.5 rps,
        // the others' 1.4. Its variance, estimated from six seconds, is nearly all of each
        // pair's: Welch's degrees of freedom fall to 5.4, t to 5.6, and the noise of
        // 2 → 4 to ±43 rps (5.6 × √(7.5² + 1.1² × 1.4²)), of 4 → 8 to ±47.
        let steps = [
            (1.0, six_seconds(180.0, 1.4)),
            (2.0, six_seconds(210.0, 1.4)),
            (4.0, six_seconds(215.0, 7.5)),
            (8.0, six_seconds(213.0, 1.4)),
        ];
        let (placed, readings) = judge_closed(&steps);
        let outcomes: Vec<Outcome> = readings.iter().map(|r| r.judged.outcome).collect();
        use Outcome::{Above, Below, Undecided};
        assert_eq!(
            outcomes,
            [Above, Undecided, Undecided, Below],
            "{readings:?}"
        );
        let noise = readings[1].judged.noise.unwrap();
        assert!((noise - 42.7).abs() < 0.1, "{readings:?}");
        // c=2 → c=8 asks for 21% growth of two quiet steps: 41 rps short, noise ±9.
        assert_eq!((readings[3].step, readings[3].against), (3, Some(1)));
        assert!(readings[3].judged.noise.unwrap() < 10.0, "{readings:?}");
        let between = Some((1, 2));
        let at = Knee::At {
            at: 1,
            past: 3,
            between,
        };
        assert_eq!(placed, at, "{readings:?}");
        // The noisy step last instead: nothing decides it.
        let steps = [steps[0], steps[1], steps[2], (8.0, six_seconds(213.0, 7.5))];
        assert_eq!(judge_closed(&steps).0, Knee::Undecided);
    }

    #[test]
    fn an_open_model_knee_is_judged_against_the_noise_too() {
        let met = |rate: f64, rps: f64| (rate, steady(rps, 2.0));
        let pool = [met(100.0, 99.0), met(200.0, 198.0), met(400.0, 330.0)];
        let between = None;
        assert_eq!(
            judge_open(&pool).0,
            Knee::At {
                at: 1,
                past: 2,
                between
            }
        );
        // 200/s at 181 ± a wide noise against the 180 needed: met or not, the next step
        // was not met, so the knee is at 100/s or 200/s.
        let wide = (200.0, steady(181.0, 40.0));
        let placed = judge_open(&[met(100.0, 99.0), wide, met(400.0, 300.0)]).0;
        let between = Some((0, 1));
        assert_eq!(
            placed,
            Knee::At {
                at: 1,
                past: 2,
                between
            }
        );
        assert_eq!(judge_open(&[met(100.0, 99.0), wide]).0, Knee::Undecided);
        assert_eq!(judge_open(&pool[..2]).0, Knee::None);
    }
}
