//! The pool-size advice of a ramp: the most backends connected at once, the server's
//! connection limits, how many app processes of that pool it takes, and whether a bigger
//! pool can help at the wall found.

use serde::{Deserialize, Serialize};

use crate::ramp::step::Step;
use crate::ramp::verdict::Wall;

/// The pool-size experiment, as advice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
