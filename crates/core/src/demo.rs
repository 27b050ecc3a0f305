//! The demo's comparison as plain data: the audit report of each of the demo API's three
//! permission pipelines, and their ramps with `pgcost demo --ramp`. What every demo view
//! reads; the demo API and its measurement are `commands/demo`'s.

use serde::Serialize;

use crate::ramp::RampReport;
use crate::report::Report;

/// How the permission gate is implemented.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Pipeline {
    /// Resolves the whole permission set in several queries, then tests membership.
    Naive,
    /// One round trip of EXISTS probes, after cheap in-memory gates.
    Exists,
    /// Exists, plus a per-request memo and a short-TTL per-process cache.
    Cached,
}

impl Pipeline {
    pub const ALL: [Pipeline; 3] = [Pipeline::Naive, Pipeline::Exists, Pipeline::Cached];

    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<Pipeline> {
        Pipeline::ALL.into_iter().find(|p| p.name() == text)
    }
}

/// The demo's reports, one per pipeline.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Pipelines {
    pub naive: Report,
    pub exists: Report,
    pub cached: Report,
}

/// `pgcost demo --format json`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DemoReport {
    pub pipelines: Pipelines,
}

impl DemoReport {
    pub fn all(&self) -> [(Pipeline, &Report); 3] {
        [
            (Pipeline::Naive, &self.pipelines.naive),
            (Pipeline::Exists, &self.pipelines.exists),
            (Pipeline::Cached, &self.pipelines.cached),
        ]
    }

    pub fn valid(&self) -> bool {
        self.all().iter().all(|(_, r)| r.valid)
    }
}

/// The ramps of the demo, by pipeline.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Ramps {
    pub naive: RampReport,
    pub cached: RampReport,
}

/// The demo's document, as every view renders it: the pipelines' reports, and their
/// ramps with `--ramp`.
#[derive(Debug, Clone, Copy)]
pub struct Demo<'a> {
    pub report: &'a DemoReport,
    pub ramps: Option<&'a Ramps>,
}
