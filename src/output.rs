//! Where a command's output goes: one document rendered once per format to standard
//! output (that tolerates a closed pipe) or `-o`, and to each `--export` file (written
//! atomically); Ctrl-C as a stop flag, and secrets scrubbed from errors. Every command
//! uses these, and nothing else writes its result.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::auth::Redactor;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::render::View;
use crate::render::format::Outputs;

/// Writes one document where `outputs` say: the main format to `-o` or standard output,
/// then each `--export` atomically to its file, every one rendered from the same `view`
/// and passed through `scrub`. Every rendering is made before anything is written, so a
/// format the document lacks writes nothing. When the main rendering went to a file,
/// `view`'s headline goes to stderr as a status line (silent under `-q`).
pub fn write(
    view: &dyn View,
    outputs: &Outputs,
    scrub: &dyn Fn(&str) -> String,
    progress: &Progress,
) -> Result<()> {
    let main = scrub(&view.render(outputs.format)?);
    let exports = (outputs.exports.iter())
        .map(|export| Ok((&export.path, scrub(&view.render(export.format)?))))
        .collect::<Result<Vec<_>>>()?;
    emit(outputs.output.as_deref(), &main)?;
    for (path, text) in exports {
        write_atomically(path, &text)?;
    }
    if outputs.output.is_some()
        && let Some(headline) = view.headline()
    {
        progress.status(&scrub(&headline));
    }
    Ok(())
}

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
    let source = (err.causes().into_iter())
        .map(|cause| redactor.scrub(&cause))
        .reduce(|outer, inner| format!("{outer}: {inner}"))
        .map(|text| Box::new(crate::error::CauseText(text)) as crate::error::Cause);
    Error {
        message: redactor.scrub(&err.message),
        hint: err.hint.map(|hint| redactor.scrub(&hint)),
        source,
        ..err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::format::{Export, Format};

    #[test]
    fn one_report_is_written_to_the_output_and_to_every_export() {
        let report = crate::render::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let outputs = Outputs {
            format: Format::Table,
            output: Some(path("report.txt")),
            exports: vec![
                Export {
                    format: Format::Json,
                    path: path("report.json"),
                },
                Export {
                    format: Format::Markdown,
                    path: path("report.md"),
                },
            ],
        };
        let scrub = |text: &str| text.replace("group_grants", "[scrubbed]");
        write(&report, &outputs, &scrub, &Progress::hidden()).unwrap();
        for (name, format) in [
            ("report.txt", Format::Table),
            ("report.json", Format::Json),
            ("report.md", Format::Markdown),
        ] {
            let written = std::fs::read_to_string(path(name)).unwrap();
            assert_eq!(written, scrub(&report.render(format).unwrap()), "{name}");
            assert!(!written.contains("group_grants"), "{name} is scrubbed");
        }
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["report.json", "report.md", "report.txt"],
            "no temp file left"
        );
    }

    #[test]
    fn a_format_the_document_lacks_is_an_error_and_writes_nothing() {
        let report = crate::render::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs {
            format: Format::Json,
            output: Some(dir.path().join("report.json")),
            exports: vec![Export {
                format: Format::Junit,
                path: dir.path().join("report.xml"),
            }],
        };
        let err = write(&report, &outputs, &|t| t.to_string(), &Progress::hidden()).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        assert!(err.message.contains("no junit view"), "{}", err.message);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
