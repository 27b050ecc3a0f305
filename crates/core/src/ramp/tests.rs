//! The wall rules and the pool advice on hand-built steps.

// Built without cfg(test) under the feature `fixtures`: its tests are then compiled out.
#![cfg_attr(not(test), allow(dead_code, unused_imports))]

use super::activity::{ActivitySummary, WaitShares};
use super::cpu::AppCpu;
use super::judge::judge;
use super::pool::pool_advice;
use super::seconds::StepSpread;
use super::step::{LoadGeneratorCpu, Step, StepDatabase, StepPerRequest};
use super::verdict::Wall;
use crate::spread::Spread;

/// The spread of five one-second samples `sd` apart.
pub fn spread_of(sd: f64) -> Option<Spread> {
    Some(Spread {
        samples: 5,
        sd,
        se: sd / 5f64.sqrt(),
    })
}

/// Five seconds whose every figure varies by 1% (active backends by 0.02, waits by a
/// point): a quiet machine.
fn quiet(rps: f64, db_ms: f64) -> StepSpread {
    StepSpread {
        seconds: 5,
        rps_per_second: Vec::new(),
        rps: spread_of(0.01 * rps),
        db_time_ms: spread_of(0.01 * db_ms),
        active_backends: spread_of(0.02),
        database_waits: spread_of(0.01),
    }
}

/// A step on a quiet machine: five seconds, each figure within 1% from one to the next.
pub fn step(c: u32, rps: f64, db_ms: f64, connected: u32, active_mean: f64) -> Step {
    Step {
        concurrency: Some(c),
        rate: None,
        requests: 1000,
        wall_seconds: 1.0,
        rps,
        latency_ms: Default::default(),
        errors: Default::default(),
        per_request: StepPerRequest {
            statements: 1.0,
            rows_returned: 1.0,
            db_time_ms: db_ms,
        },
        database: StepDatabase {
            activity: ActivitySummary {
                samples: 50,
                connected_backends_max: connected,
                active_backends_mean: active_mean,
                active_backends_max: active_mean.ceil() as u32,
                idle_in_transaction_mean: 0.0,
                waits: WaitShares {
                    on_cpu: 1.0,
                    ..Default::default()
                },
            },
            cpu_cores: None,
            cpu_ms_per_request: None,
            cpu_unavailable: None,
            backends_seen: connected,
        },
        app_cpu: None,
        load_generator_cpu: LoadGeneratorCpu::default(),
        late: None,
        pgbouncer: None,
        spread: quiet(rps, db_ms),
        host: None,
    }
}

#[test]
fn every_pooled_connection_busy_and_flat_db_time_is_the_pool() {
    let steps = [
        step(1, 180.0, 5.1, 2, 1.0),
        step(2, 355.0, 5.1, 2, 1.9),
        step(4, 360.0, 5.1, 2, 1.95),
        step(8, 358.0, 5.1, 2, 1.97),
    ];
    let v = judge(&steps, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::Pool, Some(2)), "{v:?}");
    let advice = pool_advice(&steps, v.wall, Some((100, 3)));
    assert_eq!(advice.bigger_pool_helps, Some(true));
    assert_eq!(advice.app_processes_possible, Some(48), "(100 − 3) / 2");
}

#[test]
fn rising_db_time_or_lock_waits_is_the_database() {
    let mut steps = vec![step(1, 200.0, 4.0, 2, 1.0), step(2, 205.0, 8.1, 2, 2.0)];
    let v = judge(&steps, 2.0);
    assert_eq!(
        (v.wall, v.knee_concurrency),
        (Wall::Database, Some(1)),
        "{v:?}"
    );
    assert!(v.evidence.iter().any(|e| e.contains("2.0×")), "{v:?}");
    steps[1].per_request.db_time_ms = 4.5;
    steps[1].database.activity.waits = WaitShares {
        lock: 0.5,
        other: 0.5,
        ..Default::default()
    };
    let v = judge(&steps, 2.0);
    assert_eq!(v.wall, Wall::Database, "{v:?}");
    assert!(
        v.evidence.iter().any(|e| e.contains("top wait: Lock")),
        "{v:?}"
    );
    assert_eq!(
        pool_advice(&steps, v.wall, None).bigger_pool_helps,
        Some(false)
    );
}

#[test]
fn idle_backends_and_a_pinned_thread_is_the_app() {
    let mut steps = vec![step(1, 300.0, 0.0, 0, 0.0), step(2, 310.0, 0.0, 0, 0.0)];
    steps[1].app_cpu = Some(AppCpu {
        busiest_thread_share: 0.99,
        cores: 1.01,
        threads: 3,
        busy_threads: 1,
        least_busy_thread_share: 0.99,
    });
    let v = judge(&steps, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::App, Some(1)), "{v:?}");
    assert!(
        v.evidence.iter().any(|e| e.contains("99% of one core")),
        "{v:?}"
    );
}

#[test]
fn an_open_model_knee_is_named_by_its_rate() {
    let mut steps = vec![
        step(1, 100.0, 5.0, 2, 0.5),
        step(1, 199.0, 5.0, 2, 1.1),
        step(1, 330.0, 5.1, 2, 1.9),
    ];
    for (s, rate) in steps.iter_mut().zip([100.0, 200.0, 400.0]) {
        (s.concurrency, s.rate) = (None, Some(rate));
    }
    let v = judge(&steps, 2.0);
    assert_eq!(
        (v.wall, v.knee_rate, v.knee_concurrency),
        (Wall::Pool, Some(200.0), None)
    );
}

#[test]
fn a_busy_load_generator_wins_and_no_knee_is_none() {
    let mut steps = vec![step(1, 300.0, 0.0, 0, 0.0), step(2, 310.0, 0.0, 0, 0.0)];
    steps[1].load_generator_cpu = LoadGeneratorCpu {
        cores: 1.7,
        share_of_usable: 0.85,
    };
    assert_eq!(judge(&steps, 2.0).wall, Wall::LoadGenerator);
    let growing = [step(1, 100.0, 1.0, 1, 0.5), step(2, 200.0, 1.0, 2, 1.0)];
    let v = judge(&growing, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::None, None), "{v:?}");
}

#[test]
fn a_step_divides_by_its_requests_and_its_wall_time() {
    use super::cpu::Ticks;
    use super::step::{StatementsGrown, StepInput, TicksPair, build};
    use crate::load::{LoadResult, new_histogram};
    let mut latency = new_histogram();
    (1..=190u64).for_each(|ms| latency.record(ms * 1000).unwrap());
    let load = LoadResult {
        latency_us: latency,
        status: [(200, 180), (503, 10)].into(),
        errors: [("timeout".to_string(), 10)].into(),
        ..LoadResult::new(200, 4, std::time::Duration::from_secs(2))
    };
    let ticks = |t: u64| -> Ticks { [((7, 7), t)].into() };
    let step = build(StepInput {
        concurrency: Some(4),
        rate: None,
        late: None,
        load: &load,
        allowed_statuses: &[],
        statements: StatementsGrown {
            calls: 600,
            rows: 1000,
            exec_time_ms: 500.0,
        },
        per_second: &[],
        load_seconds: None,
        seconds: &[],
        database_ticks: Some(TicksPair {
            before: ticks(100),
            after: ticks(150),
        }),
        backends_seen: 4,
        app_ticks: None,
        ticks_per_second: 100,
        own_cpu_seconds: 0.4,
        usable_cores: 2.0,
        host: None,
        load_average: None,
    });
    assert_eq!(step.requests, 200);
    assert_eq!(step.rps, 95.0, "190 responses over 2 s");
    let errors: Vec<(&str, u64)> = step.errors.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(errors, [("status_503", 10), ("timeout", 10)]);
    assert_eq!(step.error_rate(), 0.1);
    assert_eq!(step.per_request.statements, 3.0);
    assert_eq!(step.per_request.rows_returned, 5.0);
    assert_eq!(step.per_request.db_time_ms, 2.5);
    // 50 ticks at 100 Hz = 0.5 s of CPU: 0.25 cores over 2 s, 2.5 ms per request.
    assert_eq!(step.database.cpu_cores, Some(0.25));
    assert_eq!(step.database.cpu_ms_per_request, Some(2.5));
    assert_eq!(step.load_generator_cpu.cores, 0.2);
    assert_eq!(step.load_generator_cpu.share_of_usable, 0.1);
}

#[test]
fn pgbouncer_s_rising_wait_with_flat_db_time_is_the_pool() {
    use crate::pgbouncer::StepPgBouncer;
    // The app's pool looks idle on the server (PgBouncer holds few server connections),
    // which alone would read as the app.
    let mut steps = vec![step(1, 190.0, 5.0, 1, 0.2), step(2, 195.0, 5.0, 1, 0.2)];
    assert_eq!(judge(&steps, 2.0).wall, Wall::App);
    steps[0].pgbouncer = Some(StepPgBouncer {
        wait_ms_per_request: 0.0,
        max_cl_waiting: 0,
    });
    steps[1].pgbouncer = Some(StepPgBouncer {
        wait_ms_per_request: 4.8,
        max_cl_waiting: 1,
    });
    let v = judge(&steps, 2.0);
    assert_eq!((v.wall, v.knee_concurrency), (Wall::Pool, Some(1)), "{v:?}");
    assert!(
        v.evidence[1].contains("from 0.00 ms at c=1 to 4.80 ms at c=2"),
        "{v:?}"
    );
    // Queued clients without a rise in wait are not enough.
    steps[1].pgbouncer = Some(StepPgBouncer {
        wait_ms_per_request: 0.3,
        max_cl_waiting: 2,
    });
    assert_eq!(judge(&steps, 2.0).wall, Wall::App);
}

#[test]
fn uneven_steps_against_two_workers_find_the_knee_at_two() {
    // Flat within ±1% of 356 rps from c = 2 on: both workers busy at every step.
    let rps = [355.0, 357.0, 356.0, 358.0, 356.0];
    let steps: Vec<Step> = (2..=6)
        .zip(rps)
        .map(|(c, rps)| step(c, rps, 5.1, 2, 1.95))
        .collect();
    let v = judge(&steps, 2.0);
    assert_eq!(v.knee_concurrency, Some(2), "{v:?}");
    assert_ne!(v.wall, Wall::None, "{v:?}");
}

#[test]
fn a_connection_per_request_gets_no_pool_advice() {
    let mut steps = vec![step(1, 180.0, 5.1, 2, 1.0), step(2, 355.0, 5.1, 2, 1.9)];
    steps[1].database.backends_seen = 700;
    let advice = pool_advice(&steps, Wall::App, Some((100, 3)));
    assert_eq!(advice.bigger_pool_helps, None, "{advice:?}");
    assert_eq!(advice.app_processes_possible, None, "{advice:?}");
    assert!(advice.advice.contains("no pool"), "{advice:?}");
    assert!(!advice.advice.contains("process(es)"), "{advice:?}");
}
