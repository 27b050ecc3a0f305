//! `pgcost audit`: one endpoint measured, rendered in the format asked for; and the `run`
//! that every command measuring one report shares (`measure`, `ramp`, `scale`).

use std::sync::Arc;
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
    let measured =
        async |progress: &Progress, stop| measure::measure(&config, progress, stop).await;
    run(&config, measured, |report| report.valid).await
}

/// What every command that measures a report does after its flags: `measure` it (given
/// the progress line and the flag Ctrl-C raises), write it where `config` asks for (the
/// main format, then every export), and return the exit code of a report `valid` or not,
/// interrupted or not. No error that comes out prints a secret of `config`.
pub async fn run<R: View>(
    config: &AuditConfig,
    measure: impl AsyncFnOnce(&Progress, Arc<AtomicBool>) -> Result<R>,
    valid: fn(&R) -> bool,
) -> Result<i32> {
    let progress = Progress::new(config.quiet);
    let stop = output::stop_on_ctrl_c();
    let redactor = &config.auth.redactor;
    let written = async {
        let report = measure(&progress, stop.clone()).await?;
        // Secrets never reach the report by design; scrubbing is the second line, for text
        // that comes from outside (an app that SETs its token in a logged statement).
        let scrub = |text: &str| redactor.scrub(text);
        output::write(&report, &config.outputs, &scrub, &progress)?;
        Ok(valid(&report))
    };
    let valid = written
        .await
        .map_err(|err| output::scrubbed(err, redactor))?;
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
