//! The verdict of a ramp as data: the wall, the knee, the readings it rests on (each
//! comparison judged against the noise of its one-second samples), what saturated when the
//! load generator or the host is the wall; and how a step is named. `judge` reaches it.

use serde::{Deserialize, Serialize};

use crate::ramp::step::Step;
use crate::spread::{Judged, MIN_SAMPLES, Outcome};

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Wall {
    App,
    Pool,
    Database,
    LoadGenerator,
    /// The machine pgcost runs on, saturated by other work.
    Host,
    None,
    /// A change the verdict needs is within the noise of its steps.
    Inconclusive,
}

impl Wall {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What saturated when the load generator or the host is the wall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Saturated {
    /// pgcost itself used most of the cores it may use.
    Pgcost,
    /// The machine pgcost runs on: its CPUs busy, much of it with other work.
    Host,
}

/// What a reading compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Throughput against the growth the concurrency's rise asks for (above: it grew).
    Growth,
    /// Open model: throughput against 90% of the arrival rate (above: met).
    RateMet,
    /// db time per request against 1.5 times the first step's (above: it rose).
    DbTimeRise,
    /// Lock, LWLock and IO waits against 30% of active samples (above: more).
    DatabaseWaits,
    /// Mean active backends against half of the connected ones (above: the pool is busy,
    /// below: it is idle).
    ActiveBackends,
}

/// One comparison the verdict rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reading {
    pub rule: Rule,
    /// The step read (`c=4`), and the one it is compared with, if any (`c=2`).
    pub step: String,
    pub against: Option<String>,
    /// The figure minus its threshold, in the figure's unit (rps, ms, a share, backends).
    pub margin: f64,
    /// Student's t × the margin's standard error; null when a step has fewer than five
    /// one-second samples of the figure.
    pub noise: Option<f64>,
    pub outcome: Outcome,
    /// When undecided: steps of this many seconds would decide it (the same noise per
    /// second assumed); null when no step under an hour would.
    pub step_seconds_needed: Option<u32>,
}

impl Reading {
    pub fn new(rule: Rule, step: &Step, against: Option<&Step>, judged: &Judged) -> Reading {
        Reading {
            rule,
            step: label(step),
            against: against.map(label),
            margin: judged.margin,
            noise: judged.noise,
            outcome: judged.outcome,
            step_seconds_needed: judged.samples_needed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub wall: Wall,
    pub knee_concurrency: Option<u32>,
    pub knee_rate: Option<f64>,
    pub evidence: Vec<String>,
    /// With `load_generator`: pgcost itself; with `host`: the machine it runs on.
    #[serde(default)]
    pub saturated: Option<Saturated>,
    /// Every comparison the verdict read, in order, with its noise.
    #[serde(default)]
    pub readings: Vec<Reading>,
    /// With `inconclusive`: steps of this many seconds would decide the readings that left
    /// it open; null when no step under an hour would.
    #[serde(default)]
    pub step_seconds_needed: Option<u32>,
}

impl Verdict {
    /// A verdict of `wall` with no knee yet, on `readings`.
    pub fn of(wall: Wall, readings: Vec<Reading>) -> Verdict {
        Verdict {
            wall,
            knee_concurrency: None,
            knee_rate: None,
            evidence: Vec::new(),
            saturated: None,
            readings,
            step_seconds_needed: None,
        }
    }

    /// Inconclusive because of the undecided readings among `blocking`: steps long enough
    /// for every one of them that a step under an hour decides (a difference right at its
    /// threshold is decided by none, but the next pair of steps may still place the knee);
    /// none when no step under an hour decides any.
    pub fn inconclusive(mut self, blocking: &[Reading]) -> Verdict {
        let undecided = blocking.iter().filter(|r| r.outcome == Outcome::Undecided);
        self.wall = Wall::Inconclusive;
        self.step_seconds_needed = undecided.filter_map(|r| r.step_seconds_needed).max();
        self
    }
}

/// The (concurrency, rps) points of closed-loop steps.
pub fn points(steps: &[Step]) -> Vec<(f64, f64)> {
    steps
        .iter()
        .filter_map(|s| s.concurrency.map(|c| (c as f64, s.rps)))
        .collect()
}

/// `c=8` or `rate=400/s`.
pub fn label(step: &Step) -> String {
    match (step.concurrency, step.rate) {
        (Some(c), _) => format!("c={c}"),
        (None, Some(rate)) => format!("rate={rate:.0}/s"),
        _ => "the step".into(),
    }
}

/// `357 ± 1.2 rps` (± one standard error), or `357 rps (spread unknown)` for a step of
/// fewer than five whole seconds.
pub fn rps_text(step: &Step) -> String {
    match step.spread.rps {
        Some(s) => format!("{:.1} ± {:.1} rps", step.rps, s.se),
        None => format!("{:.1} rps (spread unknown)", step.rps),
    }
}

/// How a judged reading's noise reads: `±6.1`, or `unknown` (too few seconds).
pub fn noise_text(judged: &Judged, decimals: usize) -> String {
    judged
        .noise
        .map_or(UNKNOWN_NOISE.into(), |n| format!("±{n:.decimals$}"))
}

/// The noise of a step too short to measure it.
pub const UNKNOWN_NOISE: &str = "unknown: fewer than 5 whole seconds";

/// What would decide an inconclusive verdict, in words.
pub fn decide_text(seconds: Option<u32>) -> String {
    match seconds {
        Some(s) if s as usize <= MIN_SAMPLES => format!(
            "steps of at least {MIN_SAMPLES} s are needed to measure the noise \
             (--step-duration {MIN_SAMPLES}s or longer)"
        ),
        Some(s) => format!(
            "steps of {s} s would decide it, if each second is as noisy as these were \
             (--step-duration {s}s)"
        ),
        None => "no step under an hour would decide it: the differences are too close to \
                 their thresholds"
            .into(),
    }
}
