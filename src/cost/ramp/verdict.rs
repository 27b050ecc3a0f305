//! The wall, named at the knee with its evidence: the app, its pool, the database, the
//! load generator itself, or none; and the pool-size advice.

use serde::{Deserialize, Serialize};

use crate::cost::ramp::knee;
use crate::cost::ramp::step::Step;

/// pgcost at or above this share of its usable cores is the wall itself.
pub const LOAD_GENERATOR_SHARE: f64 = 0.8;
/// db time per request up by this factor from the first step: the database is the wall.
pub const DB_TIME_RISE: f64 = 1.5;
/// Lock, LWLock and IO waits above this share of active samples: the database.
pub const DB_WAIT_SHARE: f64 = 0.3;
/// A thread at or above this share of one core is pinned.
pub const PINNED_THREAD: f64 = 0.9;
/// Active backends below this share of the connected ones: the pool is not saturated.
pub const POOL_IDLE: f64 = 0.5;
/// Active backends at or above this share of the connected ones (mean), with the max
/// reaching them: the pool is full. A connection the app holds between two statements
/// is idle on the server, so the mean of a full pool stays below 1.
pub const POOL_FULL: f64 = 0.5;
/// PgBouncer's wait per request up by this much (ms) from the first step, with clients
/// queued: its pool is the wall.
pub const PGBOUNCER_WAIT_RISE_MS: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wall {
    App,
    Pool,
    Database,
    LoadGenerator,
    None,
}

impl Wall {
    pub fn name(self) -> &'static str {
        match self {
            Wall::App => "app",
            Wall::Pool => "pool",
            Wall::Database => "database",
            Wall::LoadGenerator => "load_generator",
            Wall::None => "none",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub wall: Wall,
    pub knee_concurrency: Option<u32>,
    pub knee_rate: Option<f64>,
    pub evidence: Vec<String>,
}

/// The (concurrency, rps) points of closed-loop steps.
pub fn points(steps: &[Step]) -> Vec<(f64, f64)> {
    steps
        .iter()
        .filter_map(|s| s.concurrency.map(|c| (c as f64, s.rps)))
        .collect()
}

/// Names the wall. `host_cores` are the cores of this host, where the database backends'
/// CPU is compared when Postgres runs here.
pub fn judge(steps: &[Step], host_cores: f64) -> Verdict {
    let rates: Vec<(f64, f64)> = (steps.iter())
        .filter_map(|s| s.rate.map(|rate| (rate, s.rps)))
        .collect();
    let knee = if rates.is_empty() {
        knee::knee(&points(steps))
    } else {
        knee::unmet(&rates)
    };
    let mut verdict = Verdict {
        wall: Wall::None,
        knee_concurrency: knee.and_then(|k| steps[k].concurrency),
        knee_rate: knee.and_then(|k| steps[k].rate),
        evidence: Vec::new(),
    };
    let last = knee.map_or(steps.len(), |k| (k + 2).min(steps.len()));
    if let Some(own) = steps[..last]
        .iter()
        .find(|s| s.load_generator_cpu.share_of_usable >= LOAD_GENERATOR_SHARE)
    {
        verdict.wall = Wall::LoadGenerator;
        verdict.evidence.push(format!(
            "pgcost used {:.0}% of the cores it may use at {}: the load generator, not the \
             app, is the limit; use pgcost measure with a distributed load tool",
            own.load_generator_cpu.share_of_usable * 100.0,
            label(own)
        ));
        return verdict;
    }
    let Some(k) = knee else {
        if let Some(last) = steps.last() {
            let how = if rates.is_empty() {
                "throughput grew at every step, by 10% or more per doubling of the concurrency"
            } else {
                "every arrival rate was met"
            };
            verdict.evidence.push(format!(
                "{how}, up to {} ({:.0} rps)",
                label(last),
                last.rps
            ));
        }
        return verdict;
    };
    let (wall, evidence) = wall_at(steps, k, host_cores);
    verdict.wall = wall;
    verdict.evidence.push(format!(
        "the knee: {} gave {:.0} rps, {} gave {:.0} rps",
        label(&steps[k]),
        steps[k].rps,
        label(&steps[(k + 1).min(steps.len() - 1)]),
        steps[(k + 1).min(steps.len() - 1)].rps
    ));
    verdict.evidence.extend(evidence);
    verdict
}

/// `c=8` or `rate=400/s`.
pub fn label(step: &Step) -> String {
    match (step.concurrency, step.rate) {
        (Some(c), _) => format!("c={c}"),
        (None, Some(rate)) => format!("rate={rate:.0}/s"),
        _ => "the step".into(),
    }
}

/// The rules, read on the step past the knee (where the wall holds), against the first.
fn wall_at(steps: &[Step], k: usize, host_cores: f64) -> (Wall, Vec<String>) {
    let first = &steps[0];
    let past = &steps[(k + 1).min(steps.len() - 1)];
    let database = database_evidence(first, past, host_cores);
    if !database.is_empty() {
        return (Wall::Database, database);
    }
    let db = &past.database.activity;
    let connected = db.connected_backends_max as f64;
    let flat = format!(
        "db time per request stayed flat: {:.2} ms at {}, {:.2} ms at {}",
        first.per_request.db_time_ms,
        label(first),
        past.per_request.db_time_ms,
        label(past)
    );
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
    let app = app_evidence(past);
    let pinned = past
        .app_cpu
        .is_some_and(|c| c.busiest_thread_share >= PINNED_THREAD);
    if connected > 0.0
        && db.active_backends_max as f64 >= connected
        && db.active_backends_mean >= POOL_FULL * connected
    {
        let queue = "every pooled connection was busy: requests queue in the app for one";
        return (Wall::Pool, vec![backends, queue.into(), flat]);
    }
    if connected == 0.0 || db.active_backends_mean < POOL_IDLE * connected || pinned {
        let mut evidence = vec![backends, flat];
        evidence.extend(app);
        return (Wall::App, evidence);
    }
    (
        Wall::None,
        vec![backends, flat, "no rule named the wall".into()],
    )
}

/// The pool wall seen from outside the app: clients queued in PgBouncer for a server
/// connection, and its wait per request rose (the database's own rules did not fire).
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

fn database_evidence(first: &Step, past: &Step, host_cores: f64) -> Vec<String> {
    let mut evidence = Vec::new();
    let (t0, t1) = (first.per_request.db_time_ms, past.per_request.db_time_ms);
    if t0 > 0.0 && t1 >= DB_TIME_RISE * t0 {
        evidence.push(format!(
            "db time per request rose from {t0:.2} ms to {t1:.2} ms ({:.1}×)",
            t1 / t0
        ));
    }
    let waits = &past.database.activity.waits;
    if waits.database_waits() > DB_WAIT_SHARE {
        let (top, share) = waits.top().unwrap_or(("none", 0.0));
        evidence.push(format!(
            "Lock, LWLock and IO waits were {:.0}% of active samples (top wait: {top}, {:.0}%)",
            waits.database_waits() * 100.0,
            share * 100.0
        ));
    }
    if let Some(cores) = past.database.cpu_cores.filter(|c| *c >= 0.9 * host_cores) {
        evidence.push(format!(
            "the database backends used {cores:.2} of the host's {host_cores:.0} cores"
        ));
    }
    evidence
}

fn app_evidence(step: &Step) -> Vec<String> {
    let Some(cpu) = step.app_cpu else {
        return Vec::new();
    };
    let pinned = cpu.busiest_thread_share >= PINNED_THREAD;
    let reading = if pinned {
        "it is pinned"
    } else {
        "not pinned: if this host is short of CPU, the app waits for a core"
    };
    vec![format!(
        "the app's busiest thread used {:.0}% of one core ({reading}); the app, {:.2} cores",
        cpu.busiest_thread_share * 100.0,
        cpu.cores
    )]
}

/// The pool-size experiment, as advice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolAdvice {
    pub connected_backends_max: u32,
    pub max_connections: Option<i32>,
    pub reserved_connections: Option<i32>,
    /// App processes with this pool size the server can take.
    pub app_processes_possible: Option<i64>,
    /// `None` when the wall says nothing about the pool.
    pub bigger_pool_helps: Option<bool>,
    pub advice: String,
}

/// The advice of a verdict, given the server's connection limits.
pub fn pool_advice(steps: &[Step], wall: Wall, limits: Option<(i32, i32)>) -> PoolAdvice {
    let connected = (steps.iter())
        .map(|s| s.database.activity.connected_backends_max)
        .max()
        .unwrap_or(0);
    if let Some(seen) = connection_per_request(steps) {
        // PHP, CGI, a new backend per request: "N processes of M connections" has no
        // meaning when no process holds a connection.
        return PoolAdvice {
            connected_backends_max: connected,
            max_connections: limits.map(|l| l.0),
            reserved_connections: limits.map(|l| l.1),
            app_processes_possible: None,
            bigger_pool_helps: None,
            advice: format!(
                "no pool: the app opened a connection per request ({seen} backends seen in \
                 one step, at most {connected} at once), so pool advice does not apply"
            ),
        };
    }
    let processes = limits
        .filter(|_| connected > 0)
        .map(|(max, reserved)| ((max - reserved).max(0) / connected as i32) as i64);
    let (helps, advice) = match wall {
        Wall::Pool => (
            Some(true),
            "a bigger pool can help: every connection was busy and the database had headroom",
        ),
        Wall::Database => (
            Some(false),
            "a bigger pool cannot help: the database itself is the wall",
        ),
        Wall::App => (
            Some(false),
            "a bigger pool cannot help: the pool was not full; run more app processes",
        ),
        _ => (None, "the ramp says nothing about the pool size"),
    };
    let mut advice = advice.to_string();
    if let (Some(n), Some((max, reserved))) = (processes, limits) {
        advice.push_str(&format!(
            "; the server takes {n} app process(es) of {connected} connections \
             (max_connections {max}, {reserved} reserved)"
        ));
    }
    PoolAdvice {
        connected_backends_max: connected,
        max_connections: limits.map(|l| l.0),
        reserved_connections: limits.map(|l| l.1),
        app_processes_possible: processes,
        bigger_pool_helps: helps,
        advice,
    }
}

/// The most distinct backends one step saw, when that many more than were ever connected
/// at once that the app must open a connection per request (a pool reuses its backends:
/// its steps see about as many as were connected).
fn connection_per_request(steps: &[Step]) -> Option<u32> {
    steps
        .iter()
        .map(|s| {
            (
                s.database.backends_seen,
                s.database.activity.connected_backends_max,
            )
        })
        .filter(|&(seen, connected)| seen > 2 * connected.max(1) && seen >= connected + 4)
        .map(|(seen, _)| seen)
        .max()
}
