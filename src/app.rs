//! The edge: turns parsed flags into a config, runs the command, writes the report, and
//! returns the exit code.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::audit;
use crate::cli::{Cli, Command};
use crate::config::AuditConfig;
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

pub async fn run(cli: Cli) -> Result<i32> {
    let env = |name: &str| std::env::var(name).ok();
    match cli.command {
        Command::Audit(args) => {
            let config = AuditConfig::from_args(&args, &env)?;
            let progress = Progress::new(config.quiet);
            let stop = stop_on_ctrl_c();
            let report = audit::run(&config, &progress, stop.clone()).await?;
            let text = render::exporter(config.format).render(&report);
            match &config.output {
                Some(path) => {
                    write_atomically(path, &text)?;
                    eprintln!("{}", render::verdict_line(&report));
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
    }
}
