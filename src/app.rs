//! The edge: turns parsed flags into a config, runs the command, writes the report, and
//! returns the exit code.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::audit;
use crate::auth::Redactor;
use crate::cli::{Cli, Command, DemoArgs};
use crate::config::{AuditConfig, check_counts, parse_duration};
use crate::demo::{self, api::Pipeline};
use crate::error::{Error, Result, exit};
use crate::progress::Progress;
use crate::render;

/// Writes `text` to `path` through a temporary file, so a failed run never leaves half a
/// report behind.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.pgcost-tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::usage(format!("cannot write {}: {e}", path.display()))
        })
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
pub fn print_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::usage(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

/// Raises `stop` on the first Ctrl-C.
pub fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    stop
}

/// Writes the output where the user asked.
fn emit(output: Option<&Path>, text: &str) -> Result<()> {
    match output {
        Some(path) => write_atomically(path, text),
        None => print_stdout(text),
    }
}

async fn demo(args: DemoArgs) -> Result<i32> {
    let cache_ttl = parse_duration("--cache-ttl", &args.cache_ttl)?;
    check_counts(args.requests, args.concurrency)?;
    if args.format == render::Format::Markdown {
        return Err(Error::usage("pgcost demo prints table or json")
            .with_hint("use --format table or --format json"));
    }
    let progress = Progress::new(args.quiet);
    let env = demo::setup(cache_ttl, &progress).await?;
    if args.serve {
        let mut out = String::new();
        out.push_str(&format!("database  {}\n", env.db_url));
        for pipeline in Pipeline::ALL {
            out.push_str(&format!(
                "api       {:<7} {}\n",
                pipeline.name(),
                env.api.url(pipeline)
            ));
        }
        out.push_str(&format!("token     {}\n", env.token));
        out.push_str(&format!(
            "\nIn another terminal:\n  pgcost audit --db {} --url '{}' -H 'Authorization: Bearer {}'\n\nCtrl-C stops the demo and removes everything.\n",
            env.db_url,
            env.api.url(Pipeline::Naive),
            env.token
        ));
        print_stdout(&out)?;
        let _ = tokio::signal::ctrl_c().await;
        drop(env);
        return Ok(exit::OK);
    }
    let report = demo::audit_all(&env, args.requests, args.concurrency, &progress).await?;
    drop(env);
    let text = match args.format {
        render::Format::Json => {
            let mut text = serde_json::to_string_pretty(&report).expect("reports serialize");
            text.push('\n');
            text
        }
        _ => demo::render_comparison(&report),
    };
    emit(args.output.as_deref(), &text)?;
    Ok(if report.valid() {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// The error with every known secret scrubbed from its message and hint.
pub fn scrubbed(err: Error, redactor: &Redactor) -> Error {
    Error {
        message: redactor.scrub(&err.message),
        hint: err.hint.map(|hint| redactor.scrub(&hint)),
        ..err
    }
}

pub async fn run(cli: Cli) -> Result<i32> {
    let env = |name: &str| std::env::var(name).ok();
    match cli.command {
        Command::Demo(args) if args.serve => demo(args).await,
        Command::Demo(args) => {
            // Dropping the demo on Ctrl-C stops the API and the cluster and removes its files.
            tokio::select! {
                result = demo(args) => result,
                _ = tokio::signal::ctrl_c() => {
                    crate::progress::status("interrupted: the demo cluster was stopped and removed");
                    Ok(exit::INTERRUPTED)
                }
            }
        }
        Command::Check(args) => crate::check::run(&args, &env).await,
        Command::Audit(args) => {
            let config = AuditConfig::from_args(&args, &env)?;
            let redactor = config.auth.redactor.clone();
            audit_command(config)
                .await
                .map_err(|err| scrubbed(err, &redactor))
        }
    }
}

async fn audit_command(config: AuditConfig) -> Result<i32> {
    let progress = Progress::new(config.quiet);
    let stop = stop_on_ctrl_c();
    let report = audit::measure(&config, &progress, stop.clone()).await?;
    // Secrets never reach the report by design; scrubbing is the second line, for text
    // that comes from outside (an app that SETs its token in a logged statement).
    let text = config
        .auth
        .redactor
        .scrub(&render::exporter(config.format).render(&report));
    match &config.output {
        Some(path) => {
            write_atomically(path, &text)?;
            crate::progress::status(&config.auth.redactor.scrub(&render::verdict_line(&report)));
        }
        None => print_stdout(&text)?,
    }
    Ok(if stop.load(Ordering::Relaxed) {
        exit::INTERRUPTED
    } else if report.valid {
        exit::OK
    } else {
        exit::INVALID
    })
}
