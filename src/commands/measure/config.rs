//! The validated configuration of `pgcost measure`: the command to run, where its request
//! count comes from, and the audit settings the meter and the report share with `audit`.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;

use crate::auth::AuthConfig;
use crate::cli::MeasureArgs;
use crate::config::AuditConfig;
use crate::cost::external_load::{self, CountSource};
use crate::error::{Error, Result};
use crate::http::request::RequestSpec;
use crate::postgres::conninfo::{self, EnvLookup};
use crate::render::format::Outputs;
use crate::values::{findings_from_flags, parse_duration};

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
        let db = conninfo::resolve(args.db.as_deref(), env)?;
        let replicas = (args.replica.iter())
            .map(|text| conninfo::resolve(Some(text), env))
            .collect::<Result<Vec<_>>>()?;
        let auth = AuthConfig::default();
        for target in std::iter::once(&db).chain(&replicas) {
            if let Some(password) = target.config.get_password() {
                auth.redactor.add_bytes(password);
            }
        }
        conninfo::check_distinct(&db, &replicas)?;
        let audit = AuditConfig {
            db,
            more_dbs: Vec::new(),
            replicas,
            admin_db: args.admin_db.clone(),
            request: placeholder_request(),
            requests: match count {
                CountSource::Given(n) => n,
                CountSource::Tool(..) => 1,
            },
            concurrency: 1,
            warmup: 0,
            settle_timeout: parse_duration("--settle-timeout", &args.settle_timeout)?,
            outputs: Outputs {
                format: args.format,
                output: args.output.clone(),
                exports: Vec::new(),
            },
            insecure: false,
            cacert: None,
            quiet: args.quiet,
            findings: findings_from_flags(args.no_findings, &args.thresholds)?,
            plans: !args.no_plans,
            auth,
            retries: 0,
            background: crate::config::background_from_args(&args.background)?,
            pgbouncer: crate::postgres::pgbouncer::admin_target(args.pgbouncer.as_deref(), env)?,
        };
        Ok(MeasureConfig {
            command: args.command.clone(),
            count,
            audit,
        })
    }
}

fn count_source(args: &MeasureArgs) -> Result<CountSource> {
    match (args.requests, &args.count_from) {
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

/// The request of the audit settings: never sent, since the command makes the load.
fn placeholder_request() -> RequestSpec {
    RequestSpec {
        url: url::Url::parse("http://command.invalid/").expect("a static URL"),
        method: Method::GET,
        headers: Default::default(),
        body: None,
        timeout: Duration::from_secs(30),
    }
}
