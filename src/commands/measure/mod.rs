//! `pgcost measure`: the load of the user's own command (a load tool, a test suite)
//! measured, rendered in the format asked for.

mod config;

pub use config::MeasureConfig;

use crate::commands::audit;
use crate::error::Result;
use crate::flags::MeasureArgs;
use crate::measure::external::Stdout;
use crate::measure::external::{self, Load};
use crate::output;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::Progress;

/// The command: validate the flags, measure around the command, render, and the exit code.
pub async fn execute(args: &MeasureArgs, env: EnvLookup<'_>) -> Result<i32> {
    let config = MeasureConfig::from_args(args, env)?;
    let redactor = config.audit.auth.redactor.clone();
    run(&config)
        .await
        .map_err(|err| output::scrubbed(err, &redactor))
}

async fn run(config: &MeasureConfig) -> Result<i32> {
    let audit = &config.audit;
    let progress = Progress::new(audit.quiet);
    let stop = output::stop_on_ctrl_c();
    let load = Load {
        command: &config.command,
        count: &config.count,
        dir: None,
        stdout: Stdout::beside_report(audit.outputs.report_on_stdout()),
    };
    let report = external::measure(audit, load, &progress, stop.clone()).await?;
    audit::emit(audit, &report, report.valid, &progress, &stop)
}
