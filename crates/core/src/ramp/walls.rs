//! The wall's rules, read at the step past the knee against the first step, each figure
//! judged against the noise of its one-second samples: the database (db time, waits,
//! CPU), PgBouncer's pool, the app's pool, the app. Neither the database nor a pool is
//! named on a difference within the noise: the verdict is then inconclusive.

use crate::ramp::cpu::AppCpu;
use crate::ramp::knee;
use crate::ramp::step::Step;
use crate::ramp::verdict::{self, Reading, Rule, UNKNOWN_NOISE, Wall, label, noise_text};
use crate::spread::{self, Judged, Outcome};

/// db time per request up by this factor from the first step: the database is the wall.
pub const DB_TIME_RISE: f64 = 1.5;
/// Lock, LWLock and IO waits above this share of active samples: the database.
pub const DB_WAIT_SHARE: f64 = 0.3;
/// The database backends at or above this share of the host's cores: the database.
pub const DATABASE_CPU: f64 = 0.9;
/// A thread at or above this share of one core is pinned.
pub const PINNED_THREAD: f64 = 0.9;
/// Busy threads at or above this share of one core are pinned too when the app holds
/// [`APP_HOLDS_HOST`] of the host's cores or more: the host has no more to give them.
pub const NEAR_PINNED: f64 = 0.8;
pub const APP_HOLDS_HOST: f64 = 0.75;
/// Active backends at or above this share of the connected ones (mean), with the max
/// reaching them: the pool is full; below it, the pool is not saturated. A connection the
/// app holds between two statements is idle on the server, so the mean of a full pool
/// stays below 1.
pub const POOL_FULL: f64 = 0.5;
/// PgBouncer's wait per request up by this much (ms) from the first step, with clients
/// queued: its pool is the wall.
pub const PGBOUNCER_WAIT_RISE_MS: f64 = 0.5;

/// The wall the rules name (`Inconclusive` when one of them is within the noise), their
/// evidence, and the readings they rest on.
pub struct Named {
    pub wall: Wall,
    pub evidence: Vec<String>,
    pub readings: Vec<Reading>,
}

/// What the database's rules found: the lines of those that hold beyond the noise, and of
/// those the noise leaves open.
#[derive(Default)]
struct Found {
    holds: Vec<String>,
    open: Vec<String>,
}

/// The rules, read on `steps[past]` (where the wall holds), against the first step.
pub fn wall_at(steps: &[Step], past: usize, host_cores: f64) -> Named {
    let (first, past) = (&steps[0], &steps[past]);
    let mut readings = Vec::new();
    let database = database(first, past, host_cores, &mut readings);
    if !database.holds.is_empty() {
        return Named {
            wall: Wall::Database,
            evidence: database.holds,
            readings,
        };
    }
    if !database.open.is_empty() {
        return Named {
            wall: Wall::Inconclusive,
            evidence: database.open,
            readings,
        };
    }
    let flat = format!(
        "db time per request stayed flat: {:.2} ms at {}, {:.2} ms at {}",
        first.per_request.db_time_ms,
        label(first),
        past.per_request.db_time_ms,
        label(past)
    );
    let pinned = workers_pinned(past, host_cores);
    let (wall, evidence) = pool_or_app((first, past, pinned), flat, &mut readings);
    Named {
        wall,
        evidence,
        readings,
    }
}

/// Past the database's rules (db time per request `flat`): PgBouncer's pool, the app's
/// pool busy or idle beyond the noise, the app's workers `pinned` at `past`.
fn pool_or_app(
    (first, past, pinned): (&Step, &Step, bool),
    flat: String,
    readings: &mut Vec<Reading>,
) -> (Wall, Vec<String>) {
    let db = &past.database.activity;
    let connected = db.connected_backends_max as f64;
    let backends = format!(
        "at {}: {:.1} active backends on average (max {}) of {} connected",
        label(past),
        db.active_backends_mean,
        db.active_backends_max,
        db.connected_backends_max
    );
    if let Some(queued) = pgbouncer_evidence(first, past) {
        return (Wall::Pool, vec![queued, backends, flat]);
    }
    let busy = (connected > 0.0).then(|| {
        let judged = spread::judge(
            &[(1.0, past.active_backends_figure())],
            POOL_FULL * connected,
        );
        readings.push(Reading::new(Rule::ActiveBackends, past, None, &judged));
        judged
    });
    match busy.map(|j| (j.outcome, j)) {
        Some((Outcome::Above, _)) if db.active_backends_max as f64 >= connected => {
            let queue = "every pooled connection was busy: requests queue in the app for one";
            (Wall::Pool, vec![backends, queue.into(), flat])
        }
        Some((Outcome::Undecided, judged)) => {
            let open = format!(
                "{backends}: whether half of them or more were busy is within the noise \
                 ({} backends)",
                noise_text(&judged, 2)
            );
            (Wall::Inconclusive, vec![open])
        }
        Some((Outcome::Above, _)) if !pinned => (
            Wall::None,
            vec![backends, flat, "no rule named the wall".into()],
        ),
        _ => (
            Wall::App,
            [vec![backends, flat], app_evidence(past, pinned)].concat(),
        ),
    }
}

/// The database's rules: db time per request up by half from the first step, Lock,
/// LWLock and IO waits over 30% of active samples (each beyond its noise), or the backends
/// using most of the host's cores.
fn database(first: &Step, past: &Step, host_cores: f64, readings: &mut Vec<Reading>) -> Found {
    let mut found = Found::default();
    let mut read = |rule, against, judged: &Judged, line: String, noise: String| {
        readings.push(Reading::new(rule, past, against, judged));
        match judged.outcome {
            Outcome::Above => found
                .holds
                .push(format!("{line}, beyond the noise ({noise})")),
            Outcome::Undecided => found
                .open
                .push(format!("{line}: within the noise ({noise})")),
            Outcome::Below => {}
        }
    };
    let (t0, t1) = (first.per_request.db_time_ms, past.per_request.db_time_ms);
    if t0 > 0.0 {
        let terms = [
            (1.0, past.db_time_figure()),
            (-DB_TIME_RISE, first.db_time_figure()),
        ];
        let judged = spread::judge(&terms, 0.0);
        let line = format!(
            "db time per request went from {t0:.2} ms at {} to {t1:.2} ms at {} ({:.1}×), \
             against a rise of 50%",
            label(first),
            label(past),
            t1 / t0
        );
        let noise = format!("{} ms", noise_text(&judged, 2));
        read(Rule::DbTimeRise, Some(first), &judged, line, noise);
    }
    let activity = &past.database.activity;
    if activity.active_backends_max > 0 {
        let judged = spread::judge(&[(1.0, past.database_waits_figure())], DB_WAIT_SHARE);
        let (top, share) = activity.waits.top().unwrap_or(("none", 0.0));
        let line = format!(
            "Lock, LWLock and IO waits were {:.0}% of active samples at {} (top wait: {top}, \
             {:.0}%), against 30%",
            activity.waits.database_waits() * 100.0,
            label(past),
            share * 100.0
        );
        let noise = (judged.noise).map_or(UNKNOWN_NOISE.into(), |n| {
            format!("±{:.0} points", n * 100.0)
        });
        read(Rule::DatabaseWaits, None, &judged, line, noise);
    }
    if let Some(cores) = (past.database.cpu_cores).filter(|c| *c >= DATABASE_CPU * host_cores) {
        found.holds.push(format!(
            "the database backends used {cores:.2} of the host's {host_cores:.0} cores"
        ));
    }
    found
}

/// The pool wall seen from outside the app: clients queued in PgBouncer for a server
/// connection, and its wait per request rose (while db time per request did not rise
/// beyond its noise: the database's rules come first).
fn pgbouncer_evidence(first: &Step, past: &Step) -> Option<String> {
    let (before, after) = (first.pgbouncer?, past.pgbouncer?);
    let rose = after.wait_ms_per_request - before.wait_ms_per_request;
    (after.max_cl_waiting > 0 && rose >= PGBOUNCER_WAIT_RISE_MS).then(|| {
        format!(
            "PgBouncer's clients queued for a server connection: its wait per request rose \
             from {:.2} ms at {} to {:.2} ms at {}, with up to {} waiting; its pool \
             (default_pool_size) is the wall",
            before.wait_ms_per_request,
            label(first),
            after.wait_ms_per_request,
            label(past),
            after.max_cl_waiting
        )
    })
}

fn app_evidence(step: &Step, pinned: bool) -> Vec<String> {
    let reading = if pinned {
        "it is pinned"
    } else {
        "not pinned: if this host is short of CPU, the app waits for a core"
    };
    (step.app_cpu.iter())
        .map(|cpu| {
            format!(
                "the app at {}: {} ({reading})",
                label(step),
                threads_text(cpu)
            )
        })
        .collect()
}

/// `its 2 busy threads used 85% to 87% of one core each, the app 1.71 cores`.
fn threads_text(cpu: &AppCpu) -> String {
    let threads = match cpu.busy_threads {
        0 | 1 => format!(
            "its busiest thread used {:.0}% of one core",
            cpu.busiest_thread_share * 100.0
        ),
        n => format!(
            "its {n} busy threads used {:.0}% to {:.0}% of one core each",
            cpu.least_busy_thread_share * 100.0,
            cpu.busiest_thread_share * 100.0
        ),
    };
    format!("{threads}, the app {:.2} cores", cpu.cores)
}

/// Whether the app's workers are pinned at `step`: a thread at a full core
/// ([`PINNED_THREAD`]), or every busy thread near one ([`NEAR_PINNED`]) while the app
/// holds most of the host.
pub fn workers_pinned(step: &Step, host_cores: f64) -> bool {
    step.app_cpu.is_some_and(|c| {
        let near = c.busy_threads > 0 && c.least_busy_thread_share >= NEAR_PINNED;
        c.busiest_thread_share >= PINNED_THREAD || (near && c.cores >= APP_HOLDS_HOST * host_cores)
    })
}

/// The closed-loop step from which the app's workers are pinned at every step while
/// throughput grows less than the rule asks at every pair (point estimates), when there is
/// a pair: the knee the app's CPU places where the noise leaves throughput's open.
pub fn pinned_knee(steps: &[Step], host_cores: f64) -> Option<usize> {
    let points = verdict::points(steps);
    let from = (0..points.len())
        .rev()
        .take_while(|&i| workers_pinned(&steps[i], host_cores))
        .last()?;
    let short = |pair: &[(f64, f64)]| knee::knee(pair) == Some(0);
    let pairs = points[from..].windows(2);
    (points.len() == steps.len() && pairs.len() > 0 && pairs.clone().all(short)).then_some(from)
}

/// The evidence of the app's workers pinned at each of `steps`, of `host_cores`.
pub fn pinned_evidence(steps: &[Step], host_cores: f64) -> String {
    let each: Vec<String> = (steps.iter())
        .filter_map(|s| Some(format!("at {}, {}", label(s), threads_text(&s.app_cpu?))))
        .collect();
    format!(
        "the app's workers were pinned (of the host's {host_cores:.0} cores): {}; the app's \
         CPU is the wall",
        each.join("; ")
    )
}
