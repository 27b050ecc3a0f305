//! The demo's JSON view: the pipelines' reports as they serialize, and the ramps beside
//! them with `--ramp` (keys in docs/json.md).

use serde::Serialize;

use crate::render::text::json;
use pgcost_core::demo::{Demo, Pipelines, Ramps};

/// `pgcost demo --ramp --format json`: the audits' pipelines, and the ramps.
#[derive(Serialize, schemars::JsonSchema)]
struct WithRamps<'a> {
    pipelines: &'a Pipelines,
    ramps: &'a Ramps,
}

pub fn render(demo: &Demo<'_>) -> String {
    match demo.ramps {
        Some(ramps) => json(&WithRamps {
            pipelines: &demo.report.pipelines,
            ramps,
        }),
        None => json(demo.report),
    }
}
