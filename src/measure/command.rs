//! The load command of `pgcost measure`, run as a child: its stderr passes through, its
//! stdout too unless the report goes to stdout (then it goes to stderr), Ctrl-C is
//! forwarded to it, and its exit code is kept.

use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::error::{Error, Result};

/// How long a command may take to stop after Ctrl-C was forwarded, before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(15);

/// Where the command's own standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// To pgcost's standard output, as it is.
    Inherit,
    /// To pgcost's standard error: the report has standard output to itself.
    ToStderr,
}

impl Stdout {
    /// To stderr when the report goes to stdout (`report_on_stdout`).
    pub fn beside_report(report_on_stdout: bool) -> Stdout {
        if report_on_stdout {
            Stdout::ToStderr
        } else {
            Stdout::Inherit
        }
    }

    fn stdio(self) -> Result<Stdio> {
        match self {
            Stdout::Inherit => Ok(Stdio::inherit()),
            Stdout::ToStderr => std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map(Stdio::from)
                .map_err(|e| Error::usage(format!("cannot pass stderr to the command: {e}"))),
        }
    }
}

/// How the command ended.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    /// Its exit code, or 128 + the signal's number when a signal ended it (as shells do).
    pub exit: i32,
    pub started: Instant,
    /// When it exited: the app has had no traffic from it since.
    pub ended: Instant,
    /// Ctrl-C was pressed while it ran (and forwarded to it).
    pub interrupted: bool,
}

/// Runs `command` to its end. It gets a process group of its own, so that Ctrl-C reaches
/// it once, forwarded as SIGINT to the whole group (a Locust master and its workers, a
/// script and its children); stdin is closed, since a load run reads no terminal. It runs
/// in `dir`, or in pgcost's own directory, and its stdout goes where `stdout` says.
pub async fn run(
    command: &[String],
    dir: Option<&Path>,
    stdout: Stdout,
    stop: &AtomicBool,
) -> Result<Ran> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Error::usage("no command to run"))?;
    let mut child = tokio::process::Command::new(program);
    if let Some(dir) = dir {
        child.current_dir(dir);
    }
    let mut child = child
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout.stdio()?)
        .process_group(0)
        .spawn()
        .map_err(|e| {
            Error::usage(format!("cannot start the command {program:?}: {e}")).with_hint(
                "give the load command after --, as a program on PATH or a path to an \
                 executable file",
            )
        })?;
    let started = Instant::now();
    let group = child.id().map(|id| Pid::from_raw(id as i32));
    let mut forwarded: Option<Instant> = None;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        match (forwarded, group) {
            (None, Some(group)) if stop.load(Ordering::Relaxed) => {
                let _ = killpg(group, Signal::SIGINT);
                forwarded = Some(Instant::now());
            }
            (Some(at), Some(group)) if at.elapsed() > STOP_GRACE => {
                let _ = killpg(group, Signal::SIGKILL);
            }
            _ => {}
        }
    }
    .map_err(|e| Error::usage(format!("cannot wait for the command {program:?}: {e}")))?;
    Ok(Ran {
        exit: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        started,
        ended: Instant::now(),
        interrupted: forwarded.is_some() || stop.load(Ordering::Relaxed),
    })
}
