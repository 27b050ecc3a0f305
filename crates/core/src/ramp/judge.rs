//! The verdict of a ramp: the knee placed against the noise (`knee`), then, in this
//! order, a saturated load generator or machine at or before the step past the knee, no
//! knee, a knee the noise leaves unplaced (unless the app's pinned workers place it), and
//! the wall's rules at the knee (`walls`).

use crate::ramp::knee::{self, GROWTH, Knee, KneeReading, RATE_MET};
use crate::ramp::step::Step;
use crate::ramp::verdict::{
    Reading, Rule, Saturated, Verdict, Wall, decide_text, label, noise_text, rps_text,
};
use crate::ramp::walls;
use crate::spread::Outcome;

/// pgcost at or above this share of its usable cores is the wall itself.
pub const LOAD_GENERATOR_SHARE: f64 = 0.8;

/// Names the wall. `host_cores` are the cores of this host, where the database backends'
/// CPU is compared when Postgres runs here.
pub fn judge(steps: &[Step], host_cores: f64) -> Verdict {
    let open_model = steps.iter().any(|s| s.rate.is_some());
    let (knee, placing) = place_knee(steps, open_model);
    let rule = if open_model {
        Rule::RateMet
    } else {
        Rule::Growth
    };
    let readings: Vec<Reading> = (placing.iter())
        .map(|r| {
            let against = r.against.map(|i| &steps[i]);
            Reading::new(rule, &steps[r.step], against, &r.judged)
        })
        .collect();
    let mut verdict = Verdict::of(Wall::None, readings);
    let reach = match knee {
        Knee::At { past, .. } => past + 1,
        _ => steps.len(),
    };
    if let Some((saturated, evidence)) = saturation(&steps[..reach.min(steps.len())]) {
        verdict.wall = match saturated {
            Saturated::Pgcost => Wall::LoadGenerator,
            Saturated::Host => Wall::Host,
        };
        verdict.saturated = Some(saturated);
        verdict.evidence.push(evidence);
        return verdict;
    }
    let says = |r: &KneeReading| describe(steps, r, open_model);
    match knee {
        Knee::None => {
            verdict.evidence.extend(steps.last().map(|last| {
                let how = if open_model {
                    "every arrival rate was met beyond the noise"
                } else {
                    "throughput grew beyond the noise at every step, by 10% or more per \
                     doubling of the concurrency"
                };
                format!("{how}, up to {} ({})", label(last), rps_text(last))
            }));
            verdict
        }
        Knee::Undecided => undecided(verdict, steps, &placing, open_model, host_cores),
        Knee::At { at, past, between } => {
            verdict.knee_concurrency = steps[at].concurrency;
            verdict.knee_rate = steps[at].rate;
            verdict.evidence.push(match between {
                None => format!("the knee: {}", says(&placing[placing.len() - 1])),
                Some((a, b)) => format!(
                    "the knee is at {} or {}: {}; and {}",
                    label(&steps[a]),
                    label(&steps[b]),
                    placing
                        .iter()
                        .find(|r| r.step == b)
                        .map_or(String::new(), says),
                    says(&placing[placing.len() - 1])
                ),
            });
            at_the_wall(verdict, steps, past, host_cores)
        }
    }
}

/// The knee left open by the noise: placed by the app's pinned workers, or the verdict is
/// inconclusive, with the readings left open and the step length that would decide them.
fn undecided(
    mut verdict: Verdict,
    steps: &[Step],
    placing: &[KneeReading],
    open_model: bool,
    host_cores: f64,
) -> Verdict {
    let open = (placing.iter()).filter(|r| r.judged.outcome == Outcome::Undecided);
    let mut evidence: Vec<String> = open.map(|r| describe(steps, r, open_model)).collect();
    if let Some(from) = walls::pinned_knee(steps, host_cores) {
        evidence.push(walls::pinned_evidence(&steps[from..], host_cores));
        verdict.knee_concurrency = steps[from].concurrency;
        return Verdict {
            wall: Wall::App,
            evidence,
            ..verdict
        };
    }
    let readings = verdict.readings.clone();
    let verdict = verdict.inconclusive(&readings);
    evidence.push(decide_text(verdict.step_seconds_needed));
    Verdict {
        evidence,
        ..verdict
    }
}

/// The wall's rules read at `past`, the step beyond the knee.
fn at_the_wall(mut verdict: Verdict, steps: &[Step], past: usize, host_cores: f64) -> Verdict {
    let named = walls::wall_at(steps, past, host_cores);
    verdict.readings.extend(named.readings.iter().cloned());
    verdict.evidence.extend(named.evidence);
    if named.wall != Wall::Inconclusive {
        verdict.wall = named.wall;
        return verdict;
    }
    if walls::workers_pinned(&steps[past], host_cores) {
        verdict.wall = Wall::App;
        (verdict.evidence).push(walls::pinned_evidence(&steps[past..=past], host_cores));
        return verdict;
    }
    let mut verdict = verdict.inconclusive(&named.readings);
    verdict
        .evidence
        .push(decide_text(verdict.step_seconds_needed));
    verdict
}

/// The knee of closed-loop steps, or of open-model ones (`--rate`).
fn place_knee(steps: &[Step], open_model: bool) -> (Knee, Vec<KneeReading>) {
    if open_model {
        let rates: Vec<_> = (steps.iter())
            .map(|s| (s.rate.unwrap_or(0.0), s.rps_figure()))
            .collect();
        knee::judge_open(&rates)
    } else {
        let points: Vec<_> = (steps.iter())
            .map(|s| (s.concurrency.unwrap_or(0) as f64, s.rps_figure()))
            .collect();
        knee::judge_closed(&points)
    }
}

/// One reading of the knee in words: the throughput, what it was held to, and whether the
/// difference is beyond the noise.
fn describe(steps: &[Step], reading: &KneeReading, open_model: bool) -> String {
    let step = &steps[reading.step];
    let judged = &reading.judged;
    let needed = step.rps - judged.margin;
    let (from, rule) = match reading.against {
        Some(i) if !open_model => (
            format!(
                "from {} to {} throughput went from {} to {}",
                label(&steps[i]),
                label(step),
                rps_text(&steps[i]),
                rps_text(step)
            ),
            format!("{:.0}% growth per doubling", GROWTH * 100.0),
        ),
        _ => (
            format!("at {} throughput was {}", label(step), rps_text(step)),
            format!("{:.0}% of the rate", RATE_MET * 100.0),
        ),
    };
    let side = if judged.margin < 0.0 {
        "short of"
    } else {
        "above"
    };
    let beyond = match judged.outcome {
        Outcome::Undecided => "within the noise",
        _ => "beyond the noise",
    };
    format!(
        "{from}: {:.1} rps {side} the {needed:.1} rps that {rule} asks for, {beyond} ({} rps)",
        judged.margin.abs(),
        noise_text(judged, 1)
    )
}

/// pgcost out of CPU, or this machine saturated by other work, at one of `steps`: what
/// saturated, and the evidence.
fn saturation(steps: &[Step]) -> Option<(Saturated, String)> {
    let own = (steps.iter()).find(|s| s.load_generator_cpu.share_of_usable >= LOAD_GENERATOR_SHARE);
    if let Some(own) = own {
        let evidence = format!(
            "pgcost used {:.0}% of the cores it may use at {}: the load generator, not the \
             app, is the limit; use pgcost measure with a distributed load tool",
            own.load_generator_cpu.share_of_usable * 100.0,
            label(own)
        );
        return Some((Saturated::Pgcost, evidence));
    }
    let (step, host) = (steps.iter()).find_map(|s| Some((s, s.host.filter(|h| h.saturated)?)))?;
    let load = host.load_average.map_or(String::new(), |load| {
        format!(", load average {load:.1} on {} CPUs", host.cpus)
    });
    let mut evidence = format!(
        "this machine's CPUs were {:.0}% busy at {} ({:.2} of {} cores), {:.2} cores of it \
         other work than pgcost ({:.2} cores), the --pid processes and Postgres's \
         backends{load}: the machine pgcost runs on is saturated by other work, so its \
         steps measure the machine, and the ramp names neither the database nor the pool; \
         run it on a quieter machine",
        host.busy_cores / host.cpus as f64 * 100.0,
        label(step),
        host.busy_cores,
        host.cpus,
        host.others_cores,
        step.load_generator_cpu.cores
    );
    if step.app_cpu.is_none() {
        evidence.push_str(
            " (without --pid, the app's own CPU counts as other work: pass --pid when the app \
             runs here)",
        );
    }
    Some((Saturated::Host, evidence))
}
