//! The pure reading of `pgcost ramp`: each step's figures (`step`), the database side
//! sampled from `pg_stat_activity` (`activity`), CPU from clock ticks (`cpu`), this
//! machine's CPU (`host`), the spread of each step's one-second samples (`seconds`), the
//! knee (`knee`), the Universal Scalability Law (`usl`), the verdict (`verdict` its data,
//! `judge` and `walls` its rules, each judged against the noise), the pool advice
//! (`pool`), and the report they make. No I/O.

pub mod activity;
pub mod cpu;
pub mod host;
pub mod judge;
pub mod knee;
pub mod pool;
pub mod seconds;
pub mod step;
pub mod usl;
pub mod verdict;
pub mod walls;

use serde::{Deserialize, Serialize};

use crate::report::model::counters::DatabaseCounters;
use crate::report::model::invalid::Invalid;
use crate::report::model::notes::Note;
use pool::PoolAdvice;
use step::Step;
use usl::Usl;
use verdict::Verdict;

pub const SCHEMA_VERSION: u32 = 1;

/// What was ramped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RampTarget {
    pub method: String,
    pub url: String,
    pub database: String,
    pub server_version: String,
}

/// `pg_stat_database` over the whole ramp, step warm-ups included (the warm-up before the
/// first settle wait is not), read after a settle wait before the first step and after
/// the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Totals")]
pub struct RampTotals {
    pub transactions: i64,
    /// `tup_returned`: rows read, as `pgcost audit` names it. The key keeps its first name
    /// so that JSON readers do not break; labels say "rows read".
    pub rows_returned: i64,
    pub rows_fetched: i64,
    /// Requests sent by the steps, their warm-ups included.
    pub requests_sent: u64,
    pub settle_before_seconds: f64,
    pub settle_after_seconds: f64,
}

impl RampTotals {
    pub fn of(delta: &DatabaseCounters, requests_sent: u64, settles: (f64, f64)) -> RampTotals {
        RampTotals {
            transactions: delta.xact_commit + delta.xact_rollback,
            rows_returned: delta.tup_returned,
            rows_fetched: delta.tup_fetched,
            requests_sent,
            settle_before_seconds: settles.0,
            settle_after_seconds: settles.1,
        }
    }
}

/// The report of `pgcost ramp`: built once, then only rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RampReport {
    pub schema_version: u32,
    pub target: RampTarget,
    pub steps: Vec<Step>,
    pub verdict: Verdict,
    /// `None` with fewer than three closed-loop steps.
    pub usl: Option<Usl>,
    pub pool: PoolAdvice,
    pub totals: Option<RampTotals>,
    /// Why the ramp stopped before its last step, if it did.
    pub stopped_early: Option<String>,
    pub valid: bool,
    /// Caveats: the `warnings` (messages) and `notes` keys.
    #[serde(flatten, with = "crate::report::model::notes::keys")]
    #[schemars(with = "crate::report::model::notes::keys::Schema")]
    pub notes: Vec<Note>,
    pub invalid_reasons: Vec<Invalid>,
}

/// What the ramp learnt besides its steps.
pub struct Context {
    pub target: RampTarget,
    pub totals: Option<RampTotals>,
    pub stopped_early: Option<String>,
    pub warnings: Vec<Note>,
    pub invalid_reasons: Vec<Invalid>,
    /// (max_connections, reserved slots) of the server.
    pub limits: Option<(i32, i32)>,
    pub host_cores: f64,
}

/// Reads the steps: the verdict, the fit, the pool advice.
pub fn report(steps: Vec<Step>, context: Context) -> RampReport {
    let verdict = judge::judge(&steps, context.host_cores);
    let usl = usl::fit(&verdict::points(&steps));
    let mut warnings = context.warnings;
    if let Some(fit) = usl.filter(|u| u.poor_fit) {
        warnings.push(Note::UslPoorFit {
            r_squared: fit.r_squared,
        });
    }
    let pool = pool::pool_advice(&steps, verdict.wall, context.limits);
    RampReport {
        schema_version: SCHEMA_VERSION,
        target: context.target,
        steps,
        verdict,
        usl,
        pool,
        totals: context.totals,
        stopped_early: context.stopped_early,
        valid: context.invalid_reasons.is_empty(),
        notes: warnings,
        invalid_reasons: context.invalid_reasons,
    }
}

#[cfg(test)]
mod noise_tests;
/// Its tests, and the hand-built values they share with the binary's tests (the feature
/// `fixtures`, which only the binary's dev-dependency turns on).
#[cfg(any(test, feature = "fixtures"))]
pub mod tests;
