//! The burst's parts as plain data: its latency, the warm-up it needed, the windows thrown
//! away before it, and PgBouncer's figures over it. `cost::load`, `cost::steady`,
//! `cost::churn` and `cost::pgbouncer` measure them.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `load.source` of pgcost's own burst.
pub const PGCOST_SOURCE: &str = "pgcost";

/// One point of the latency curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyPoint {
    /// 0 to 100.
    pub percentile: f64,
    pub ms: f64,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencySummary {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// How much warm-up was done before the window: the `--warmup` floor, then slices until
/// two in a row agreed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Warmed {
    /// Warm-up requests sent, the floor included (the last warm-up before the reported
    /// window, when windows were measured again).
    pub requests: u64,
    /// Slices sent after the floor.
    pub slices: u32,
    /// True when the last two slices agreed; false when the cap stopped the warm-up first.
    pub steady: bool,
    /// Wall time of the warm-up, floor included.
    pub seconds: f64,
    /// App connections to the target at the end of the warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// Their backend pids: a connection the window runs on that is not among them opened
    /// after the warm-up, and is not warm.
    #[serde(skip)]
    pub pids: BTreeSet<i32>,
}

/// How many windows were measured and thrown away before the one reported, and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Windows {
    /// Windows measured and discarded because app connections opened or closed in them.
    pub discarded: u32,
    /// One reason per discarded window, in order.
    pub reasons: Vec<String>,
}

/// PgBouncer's figures over a window, per request of the app.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PgBouncerFigures {
    /// The PgBouncer database (the pool) read.
    pub database: String,
    /// `total_xact_count` growth per request: transactions as PgBouncer saw them.
    pub transactions_per_request: f64,
    /// `total_query_count` growth per request.
    pub queries_per_request: f64,
    /// `total_wait_time` growth per request, in ms: time clients queued for a server.
    pub wait_ms_per_request: f64,
    /// Most clients waiting for a server connection at once (`cl_waiting`), sampled.
    pub max_cl_waiting: i64,
    /// Calls of PgBouncer's own statements in the window, left out of the per-request
    /// figures.
    pub own_statements: i64,
}
