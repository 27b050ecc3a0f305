//! The verdict judged against the noise, on hand-built steps: a busy machine's ramp is
//! inconclusive, a quiet one is not, the database and the pools are never named on a
//! difference within the noise, the app's pinned workers decide what throughput leaves
//! open, and a machine saturated by other work is said to be.

use super::cpu::AppCpu;
use super::host::Host;
use super::judge::judge;
use super::step::{LoadGeneratorCpu, Step};
use super::tests::{spread_of, step};
use super::verdict::{Rule, Saturated, Wall};
use crate::spread::Outcome;

/// The busy box: c = 1, 2, 4, 8 at 19, 14, 23 and 36 rps, each second's
/// throughput about 8 rps off its step's (sd), and db time per request doubling from the
/// first step, each second's about 3 ms off.
fn busy_box() -> Vec<Step> {
    [
        (1, 19.0, 3.0),
        (2, 14.0, 6.5),
        (4, 23.0, 7.0),
        (8, 36.0, 6.0),
    ]
    .iter()
    .map(|&(c, rps, db_ms)| {
        let mut s = step(c, rps, db_ms, 2, 0.4);
        s.spread.rps = spread_of(8.0);
        s.spread.db_time_ms = spread_of(3.0);
        s
    })
    .collect()
}

#[test]
fn the_busy_box_s_19_14_23_36_is_inconclusive_not_the_database() {
    let v = judge(&busy_box(), 2.0);
    assert_eq!(
        (v.wall, v.knee_concurrency),
        (Wall::Inconclusive, None),
        "{v:?}"
    );
    let first = &v.readings[0];
    assert_eq!(
        (first.rule, first.outcome),
        (Rule::Growth, Outcome::Undecided)
    );
    assert_eq!(first.step, "c=2");
    assert_eq!(first.against.as_deref(), Some("c=1"));
    // 14 rps against the 20.9 that 10% growth asks of 19: 6.9 short, within the noise.
    assert!((first.margin + 6.9).abs() < 1e-9, "{first:?}");
    assert!(first.noise.unwrap() > 6.9, "{first:?}");
    let needed = v.step_seconds_needed.unwrap();
    assert!(needed > 5 && needed < 3600, "{v:?}");
    assert!(v.evidence[0].contains("within the noise"), "{v:?}");
    let advice = format!("--step-duration {needed}s");
    assert!(v.evidence.last().unwrap().contains(&advice), "{v:?}");
}

#[test]
fn a_difference_right_at_its_threshold_does_not_hide_the_step_length_others_need() {
    // c=1 → 2 grew 9.9%, against 10% (no step length decides that), and c=2 → 4 stayed
    // flat within its noise: steps long enough for the second would place the knee.
    let mut steps: Vec<Step> = [(1, 84.3), (2, 92.6), (4, 92.9)]
        .iter()
        .map(|&(c, rps)| step(c, rps, 0.0, 0, 0.0))
        .collect();
    steps[0].spread.rps = spread_of(15.4);
    steps[1].spread.rps = spread_of(4.5);
    steps[2].spread.rps = spread_of(4.0);
    let v = judge(&steps, 2.0);
    assert_eq!(v.wall, Wall::Inconclusive, "{v:?}");
    assert_eq!(v.readings[0].step_seconds_needed, None, "{v:?}");
    let second = v.readings[1].step_seconds_needed.unwrap();
    assert!(second > 5, "{v:?}");
    assert_eq!(v.step_seconds_needed, Some(second), "{v:?}");
}

#[test]
fn a_quiet_doubling_then_flat_names_the_knee_and_the_wall() {
    // The same two workers on a quiet machine: c = 1 to 2 doubles, then flat.
    let steps: Vec<Step> = [(1, 20.0), (2, 40.0), (4, 40.5), (8, 39.8)]
        .iter()
        .map(|&(c, rps)| step(c, rps, 3.0, 2, 0.3))
        .collect();
    let v = judge(&steps, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::App, Some(2)), "{v:?}");
    assert_eq!(v.step_seconds_needed, None);
    assert!(
        (v.readings.iter()).all(|r| r.outcome != Outcome::Undecided),
        "{v:?}"
    );
    assert!(
        v.evidence[0].starts_with("the knee: from c=2 to c=4"),
        "{v:?}"
    );
    assert!(v.evidence[0].contains("beyond the noise"), "{v:?}");
}

#[test]
fn growth_near_the_threshold_then_flat_places_the_knee_within_two_steps() {
    // 2 → 4 grew 7.8% (357 to 385 rps ± 1%): whether under 10% is within the noise; 4 → 8
    // is flat beyond it. The wall is read at c=8, past both candidates.
    let rps = [(1, 180.0), (2, 357.0), (4, 385.0), (8, 384.0)];
    let steps: Vec<Step> = (rps.iter())
        .map(|&(c, rps)| step(c, rps, 5.1, 2, 1.95))
        .collect();
    let v = judge(&steps, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::Pool, Some(2)), "{v:?}");
    assert!(
        v.evidence[0].starts_with("the knee is at c=2 or c=4"),
        "{v:?}"
    );
    assert!(v.evidence[1].starts_with("at c=8:"), "{v:?}");
    assert_eq!(v.readings[1].outcome, Outcome::Undecided);
}

#[test]
fn db_time_rising_within_its_noise_names_neither_the_database_nor_the_pool() {
    let mut steps: Vec<Step> = [(1, 100.0), (2, 200.0), (4, 204.0)]
        .iter()
        .map(|&(c, rps)| step(c, rps, 4.0, 4, 3.9))
        .collect();
    // Past the knee db time per request doubled, but each second's was about 6 ms off.
    steps[2].per_request.db_time_ms = 8.0;
    steps[2].spread.db_time_ms = spread_of(6.0);
    let v = judge(&steps, 2.0);
    let (wall, knee) = (v.wall, v.knee_concurrency);
    assert_eq!((wall, knee), (Wall::Inconclusive, Some(2)), "{v:?}");
    let rise = (v.readings.iter()).find(|r| r.rule == Rule::DbTimeRise);
    assert_eq!(rise.unwrap().outcome, Outcome::Undecided, "{v:?}");
    assert!(v.step_seconds_needed.unwrap() > 5, "{v:?}");
    // The same rise beyond its noise is the database.
    steps[2].spread.db_time_ms = spread_of(0.2);
    assert_eq!(judge(&steps, 2.0).wall, Wall::Database);
}

#[test]
fn a_pool_that_may_or_may_not_be_busy_is_not_named() {
    let mut steps = vec![
        step(1, 180.0, 5.1, 2, 1.0),
        step(2, 355.0, 5.1, 2, 1.1),
        step(4, 360.0, 5.1, 2, 1.1),
    ];
    // Past the knee, 1.1 active of 2 on average, each second's about 0.7 off.
    steps[2].spread.active_backends = spread_of(0.7);
    let v = judge(&steps, 2.0);
    assert_eq!(v.wall, Wall::Inconclusive, "{v:?}");
    let open = "whether half of them or more were busy is within the noise";
    assert!(v.evidence.iter().any(|e| e.contains(open)), "{v:?}");
    steps[2].spread.active_backends = spread_of(0.02);
    assert_eq!(judge(&steps, 2.0).wall, Wall::Pool);
}

#[test]
fn a_machine_saturated_by_other_work_is_the_wall_never_the_database() {
    let mut steps = vec![step(1, 200.0, 4.0, 2, 1.0), step(2, 205.0, 8.1, 2, 2.0)];
    // Without the machine, the db time's rise names the database.
    assert_eq!(judge(&steps, 2.0).wall, Wall::Database);
    steps[1].host = Some(Host {
        cpus: 2,
        busy_cores: 1.98,
        others_cores: 1.1,
        load_average: Some(6.4),
        saturated: true,
    });
    let v = judge(&steps, 2.0);
    let (wall, saturated) = (v.wall, v.saturated);
    assert_eq!((wall, saturated), (Wall::Host, Some(Saturated::Host)));
    let said = &v.evidence[0];
    assert!(
        said.contains("names neither the database nor the pool"),
        "{said}"
    );
    assert!(
        said.contains("99% busy at c=2 (1.98 of 2 cores), 1.10 cores"),
        "{said}"
    );
    assert!(said.contains("load average 6.4 on 2 CPUs"), "{said}");
    assert!(said.contains("pass --pid"), "without --pid: {said}");
    // pgcost's own CPU is said as before.
    steps[1].host = None;
    steps[1].load_generator_cpu.share_of_usable = 0.9;
    let v = judge(&steps, 2.0);
    assert_eq!(
        (v.wall, v.saturated),
        (Wall::LoadGenerator, Some(Saturated::Pgcost))
    );
}

/// Issue 51's Django admin page behind gunicorn with 2 sync workers, on a quiet 2-core
/// machine, at 5 s steps: 38, 72, 78 and 82 rps at c = 1, 2, 4, 8, each second a few rps
/// off its step's; from c=2 on both workers at 85% to 87% of a core, the app 1.71 cores.
fn django() -> Vec<Step> {
    let cpu = |busy_threads, least, busiest, cores| AppCpu {
        busiest_thread_share: busiest,
        cores,
        threads: 3,
        busy_threads,
        least_busy_thread_share: least,
    };
    [
        (1, 38.0, cpu(1, 0.86, 0.86, 0.87)),
        (2, 72.0, cpu(2, 0.85, 0.87, 1.71)),
        (4, 78.0, cpu(2, 0.86, 0.87, 1.72)),
        (8, 82.0, cpu(2, 0.86, 0.87, 1.73)),
    ]
    .iter()
    .map(|&(c, rps, cpu)| {
        let mut s = step(c, rps, 2.0, 2, 0.1);
        s.spread.rps = spread_of(4.0);
        s.app_cpu = Some(cpu);
        s.host = Some(Host {
            cpus: 2,
            busy_cores: cpu.cores + 0.2,
            others_cores: 0.08,
            load_average: Some(2.1),
            saturated: false,
        });
        s
    })
    .collect()
}

#[test]
fn a_django_app_with_its_two_workers_pinned_is_the_app_at_knee_2() {
    let v = judge(&django(), 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::App, Some(2)), "{v:?}");
    // Throughput alone leaves it open: 72 to 78 rps is 1.2 short of 10% within the noise.
    let growth = &v.readings[1];
    assert_eq!(
        (growth.step.as_str(), growth.outcome),
        ("c=4", Outcome::Undecided)
    );
    let said = v.evidence.last().unwrap();
    assert!(said.contains("of the host's 2 cores"), "{said}");
    let c2 = "at c=2, its 2 busy threads used 85% to 87% of one core each, the app 1.71 cores";
    assert!(said.contains(c2), "{said}");
    assert!(!said.contains("at c=1"), "{said}");
    // Without --pid, or with the workers near a core while the app leaves half of the host
    // free (they wait on something else), nothing decides it.
    let mut blind = django();
    blind.iter_mut().for_each(|s| s.app_cpu = None);
    assert_eq!(judge(&blind, 2.0).wall, Wall::Inconclusive);
    assert_eq!(judge(&django(), 4.0).wall, Wall::Inconclusive);
    // Pinned, but still growing by 10% per doubling: not the app's wall yet.
    let mut growing = django();
    growing[3].rps = 90.0;
    assert_eq!(judge(&growing, 2.0).wall, Wall::Inconclusive);
}

#[test]
fn other_work_saturating_the_host_is_the_host_never_the_load_generator() {
    // Other apps took 0.59 cores at c=4, pgcost 0.03: the machine, not pgcost, is the wall.
    let mut steps = django();
    steps[2].app_cpu = Some(AppCpu {
        busiest_thread_share: 0.66,
        cores: 1.3,
        threads: 3,
        busy_threads: 2,
        least_busy_thread_share: 0.64,
    });
    steps[2].load_generator_cpu = LoadGeneratorCpu {
        cores: 0.03,
        share_of_usable: 0.015,
    };
    steps[2].host = Some(Host {
        cpus: 2,
        busy_cores: 1.96,
        others_cores: 0.59,
        load_average: Some(3.2),
        saturated: true,
    });
    let v = judge(&steps, 2.0);
    assert_eq!(
        (v.wall, v.saturated),
        (Wall::Host, Some(Saturated::Host)),
        "{v:?}"
    );
    let said = &v.evidence[0];
    assert!(
        said.contains("at c=4 (1.96 of 2 cores), 0.59 cores"),
        "{said}"
    );
    assert!(said.contains("pgcost (0.03 cores)"), "{said}");
    assert!(!said.contains("pass --pid"), "{said}");
}

#[test]
fn steps_too_short_for_a_spread_are_inconclusive_and_ask_for_five_seconds() {
    let mut steps = vec![step(1, 100.0, 1.0, 1, 0.5), step(2, 200.0, 1.0, 2, 1.0)];
    steps[1].spread = Default::default();
    let v = judge(&steps, 2.0);
    let (wall, needed) = (v.wall, v.step_seconds_needed);
    assert_eq!((wall, needed), (Wall::Inconclusive, Some(5)), "{v:?}");
    assert!(v.evidence.last().unwrap().contains("at least 5 s"), "{v:?}");
}
