//! Where a command's output goes: standard output that tolerates a closed pipe, files
//! written atomically, Ctrl-C as a stop flag, and secrets scrubbed from errors. Every
//! command uses these, and nothing else writes its result.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::auth::Redactor;
use crate::error::{Error, Result};

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

/// Writes the output where the user asked: the file of `-o`, or standard output.
pub fn emit(output: Option<&Path>, text: &str) -> Result<()> {
    match output {
        Some(path) => write_atomically(path, text),
        None => print_stdout(text),
    }
}

/// Raises the returned flag on the first Ctrl-C.
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

/// The error with every known secret scrubbed from its message and hint.
pub fn scrubbed(err: Error, redactor: &Redactor) -> Error {
    Error {
        message: redactor.scrub(&err.message),
        hint: err.hint.map(|hint| redactor.scrub(&hint)),
        ..err
    }
}
