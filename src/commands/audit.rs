//! `pgcost audit`: one endpoint measured, rendered in the format asked for.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::AuditConfig;
use crate::error::{Result, exit};
use crate::flags::AuditArgs;
use crate::measure;
use crate::output;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::Progress;
use crate::render::view::View;

/// The command: validate the flags, measure, render, and the exit code.
pub async fn execute(args: &AuditArgs, env: EnvLookup<'_>) -> Result<i32> {
    let config = AuditConfig::from_args(args, env)?;
    let redactor = config.auth.redactor.clone();
    run(&config)
        .await
        .map_err(|err| output::scrubbed(err, &redactor))
}

async fn run(config: &AuditConfig) -> Result<i32> {
    let progress = Progress::new(config.quiet);
    let stop = output::stop_on_ctrl_c();
    let report = measure::measure(config, &progress, stop.clone()).await?;
    emit(config, &report, report.valid, &progress, &stop)
}

/// Writes `report` where `config` asks for (the main format, then every export), and
/// returns the exit code of a report that is `valid` or not, interrupted by `stop` or not.
pub fn emit(
    config: &AuditConfig,
    report: &dyn View,
    valid: bool,
    progress: &Progress,
    stop: &AtomicBool,
) -> Result<i32> {
    // Secrets never reach the report by design; scrubbing is the second line, for text
    // that comes from outside (an app that SETs its token in a logged statement).
    let scrub = |text: &str| config.auth.redactor.scrub(text);
    output::write(report, &config.outputs, &scrub, progress)?;
    Ok(exit_code_of(valid, stop.load(Ordering::Relaxed)))
}

/// The exit code of a report that is `valid` or not (any command's report): 130 when
/// interrupted, 0 for a valid report, 3 otherwise.
pub fn exit_code_of(valid: bool, interrupted: bool) -> i32 {
    if interrupted {
        exit::INTERRUPTED
    } else if valid {
        exit::OK
    } else {
        exit::INVALID
    }
}
