//! `pgcost demo --ramp`: the naive and the cached pipelines ramped after the audits, to
//! show where each one's wall is.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::api::Pipeline;
use super::{Environment, audit_config};
use crate::error::Result;
use crate::measure::ramp::RampPlan;
use crate::measure::ramp::step::Length;
use crate::progress::Progress;
pub use pgcost_core::demo::Ramps;

/// Ramps the naive and the cached pipelines, concurrency 1 to 8, 5 s a step (as `pgcost
/// ramp`): the shortest step whose one-second samples measure its noise.
pub async fn ramp_pipelines(env: &Environment, progress: &Progress) -> Result<Ramps> {
    let plan = RampPlan {
        steps: Some(vec![1, 2, 4, 8]),
        rates: None,
        length: Length::Time(Duration::from_secs(5)),
        max_errors: 0.01,
        max_p99: None,
        sample_interval: Duration::from_millis(20),
        pids: Vec::new(),
    };
    let mut reports = Vec::new();
    for pipeline in [Pipeline::Naive, Pipeline::Cached] {
        progress.status(&format!("ramping the {} pipeline", pipeline.name()));
        let config = audit_config(env, pipeline, 200, 8)?;
        let stop = Arc::new(AtomicBool::new(false));
        reports.push(crate::measure::ramp(&config, &plan, progress, stop).await?);
    }
    let cached = reports.pop().expect("two ramps");
    let naive = reports.pop().expect("two ramps");
    Ok(Ramps { naive, cached })
}
