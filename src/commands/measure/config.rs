//! The validated configuration of `pgcost measure`: the command to run, where its request
//! count comes from, and the audit settings the meter and the report share with `audit`.

use std::path::Path;

use crate::auth::Redactor;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::flags::{AuditArgs, LoadArgs, MeasureArgs, Spelling, defaults};
use crate::postgres::conninfo::EnvLookup;
use pgcost_core::external_load::{self, CountSource};

/// The URL of a request that nothing sends: the command makes the load.
const NO_REQUEST: &str = "http://command.invalid/";

/// Everything `measure::run` needs, already checked.
#[derive(Debug, Clone)]
pub struct MeasureConfig {
    /// The program and its arguments, as given after `--`.
    pub command: Vec<String>,
    pub count: CountSource,
    /// The database, settle and report settings, as `audit` takes them. Its request is a
    /// placeholder that nothing sends; `requests` is set once the count is known.
    pub audit: AuditConfig,
}

impl MeasureConfig {
    pub fn from_args(args: &MeasureArgs, env: EnvLookup<'_>) -> Result<MeasureConfig> {
        let count = count_source(args)?;
        let program = args.command.first().ok_or_else(|| {
            Error::usage("no command to run")
                .with_hint("give it after --, e.g. -- locust -f scenario.py --headless")
        })?;
        check_program(program, env)?;
        // The command makes the load: pgcost sends no burst, no warm-up, no retry.
        let mut load: LoadArgs = defaults();
        load.burst.count.requests = Some(match count {
            CountSource::Given(n) => n,
            CountSource::Tool(..) => 1,
        });
        (load.burst.concurrency, load.warmup, load.retries) = (1, 0, 0);
        // The groups of audit, through the same validation: every database password
        // joins the redactor there.
        let raw = AuditArgs {
            url: NO_REQUEST.to_string(),
            target: args.target.clone(),
            load,
            findings: args.findings.clone(),
            output: args.output.clone(),
            auth: defaults(),
            background: args.background.clone(),
        };
        let audit =
            AuditConfig::from_raw(&raw, &Spelling::flags(), Redactor::default(), env, &|_| {
                None
            })?;
        Ok(MeasureConfig {
            command: args.command.clone(),
            count,
            audit,
        })
    }
}

fn count_source(args: &MeasureArgs) -> Result<CountSource> {
    match (args.count.requests, &args.count_from) {
        (Some(0), _) => Err(Error::usage(
            "--requests must be at least 1: every figure is divided by it",
        )),
        (Some(n), _) => Ok(CountSource::Given(n)),
        (None, Some(text)) => {
            let (tool, path) = external_load::parse_count_from(text).map_err(Error::usage)?;
            Ok(CountSource::Tool(tool, path))
        }
        (None, None) => Err(Error::usage(
            "pgcost measure needs the number of requests the command sends",
        )
        .with_hint(
            "give it with --requests N, or let pgcost read it from the tool's result file: \
             --count-from locust:PREFIX_stats.csv (also autocannon:, k6:, oha:)",
        )),
    }
}

/// A command that cannot be started is refused before anything is measured.
fn check_program(program: &str, env: EnvLookup<'_>) -> Result<()> {
    let found = if program.contains('/') {
        is_executable(Path::new(program))
    } else {
        let path = env("PATH").unwrap_or_default();
        std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)))
    };
    if found {
        return Ok(());
    }
    Err(Error::usage(format!(
        "cannot start the command {program:?}: no such executable"
    ))
    .with_hint(
        "give the load command after --, as a program on PATH or a path to an executable \
             file (for a script: chmod +x, or run it with sh script.sh)",
    ))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
