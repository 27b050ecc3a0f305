//! `pgcost measure`: the load of the user's own command (a load tool, a test suite)
//! measured, rendered in the format asked for.

mod config;

pub use config::MeasureConfig;

use crate::commands::audit;
use crate::error::Result;
use crate::flags::MeasureArgs;
use crate::measure::external::Load;
use crate::measure::external::Stdout;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::Progress;

/// The command: validate the flags, measure around the command, render, and the exit code.
pub async fn execute(args: &MeasureArgs, env: EnvLookup<'_>) -> Result<i32> {
    let config = MeasureConfig::from_args(args, env)?;
    let load = Load {
        command: &config.command,
        count: &config.count,
        dir: None,
        stdout: Stdout::beside_report(config.audit.outputs.report_on_stdout()),
    };
    let measured = async |progress: &Progress, stop| {
        crate::measure::command(&config.audit, load, progress, stop).await
    };
    audit::run(&config.audit, measured, |report| report.valid).await
}
