//! `pgcost measure`: the load comes from the user's own command. Settle and snapshot, run
//! the command, read its request count, settle and snapshot again; with `--control`, the
//! control windows before and after, as `audit` has them; the report is built as `audit`
//! builds it, divided by that count.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use crate::auth::redact::command_line;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
pub use crate::measure::command::Stdout;
use crate::measure::command::{self, Ran};
use crate::measure::{Boundaries, Burst, Meters, Notes, pgbouncer, retry};
use crate::progress::Progress;
use pgcost_core::churn::{self, ChurnVerdict};
use pgcost_core::external_load::{self, CountSource, ToolCount};
use pgcost_core::load::LoadResult;
use pgcost_core::report::model::invalid::{Code, Invalid};

/// The method shown before the command line where an audit shows `GET` before its URL.
pub const COMMAND_METHOD: &str = "$";

/// The command and where its count comes from.
pub struct Load<'a> {
    pub command: &'a [String],
    pub count: &'a CountSource,
    /// Where the command runs; `None` for pgcost's own directory.
    pub dir: Option<&'a Path>,
    /// Where the command's own stdout goes: to pgcost's stderr when the report goes to
    /// stdout, so that the report stays one parseable document.
    pub stdout: Stdout,
}

/// Runs the command, sampling tags and the pooler as during pgcost's own bursts, and reads
/// its count. Returns how it ended, the count, and its load as the report reads a burst:
/// the count, the wall time and the exit code; no status or latency, which the tool
/// reports itself.
pub(super) async fn run_command(
    config: &AuditConfig,
    load: &Load<'_>,
    meter: &Meters,
    progress: &Progress,
    stop: &AtomicBool,
) -> Result<(Ran, ToolCount, Burst)> {
    let written_before = count_file(load.count).and_then(modified);
    if !config.quiet {
        progress.status(&format!("pgcost: running {}", command_line(load.command)));
    }
    let command = command::run(load.command, load.dir, load.stdout, stop);
    let ran = pgbouncer::sampled(meter.bouncer(), command);
    let (ran, tags) = super::tags::during(&meter.first().source, config.tags, ran).await;
    let ran = ran?;
    if !config.quiet {
        progress.status(&format!(
            "pgcost: the command exited with code {}",
            ran.exit
        ));
    }
    let counted = match read_count(load.count, written_before) {
        Ok(counted) => counted,
        Err(_) if ran.interrupted => return Err(Error::interrupted()),
        Err(err) => return Err(err),
    };
    let burst = Burst {
        load: LoadResult {
            source: load.count.name(),
            command_exit: Some(ran.exit),
            ..LoadResult::new(counted.requests, 0, ran.ended - ran.started)
        },
        ended: ran.ended,
        peak_backends: None,
        others: Default::default(),
        tail: None,
        mid: None,
        tags,
        interrupted: ran.interrupted,
    };
    Ok((ran, counted, burst))
}

/// The notes of the command's window: why it is not valid (`invalid_reasons`), and what
/// the app's connection churn added.
pub(super) fn notes(
    meter: &Meters,
    config: &AuditConfig,
    edges: (&Boundaries, &Boundaries),
    invalid_reasons: Vec<Invalid>,
) -> Notes {
    let notes = Notes {
        invalid_reasons,
        ..Notes::default()
    };
    match churn::judge(meter.churn(edges.0, edges.1), config.requests) {
        ChurnVerdict::Churned(churned) => {
            retry::with_unclean_warning(meter, config, edges, notes, churned)
        }
        _ => notes,
    }
}

/// The file the count is read from, if any.
fn count_file(count: &CountSource) -> Option<&Path> {
    match count {
        CountSource::Given(_) => None,
        CountSource::Tool(_, path) => Some(path),
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The count, given or read from the tool's file; a file the command did not write (left
/// from an earlier run) is refused.
fn read_count(count: &CountSource, written_before: Option<SystemTime>) -> Result<ToolCount> {
    let (tool, path) = match count {
        CountSource::Given(n) => {
            return Ok(ToolCount {
                requests: *n,
                failed: 0,
            });
        }
        CountSource::Tool(tool, path) => (*tool, path),
    };
    let shown = path.display();
    let hint = format!("make the command write it: {}", tool.writes_with());
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read the request count from {shown}: {e}"))
            .with_hint(hint.clone())
    })?;
    if written_before.is_some() && modified(path) == written_before {
        return Err(Error::usage(format!(
            "{shown} was not written by the command: it is left from an earlier run"
        ))
        .with_hint(hint));
    }
    let counted = external_load::parse(tool, &text).map_err(|e| {
        Error::usage(format!(
            "cannot read the request count from {shown} ({}): {e}",
            tool.name()
        ))
        .with_hint(hint)
    })?;
    if counted.requests == 0 {
        return Err(Error::untrustworthy(format!(
            "{shown} counts no request: there is nothing to divide by"
        )));
    }
    Ok(counted)
}

/// Why the command's run makes the numbers untrustworthy.
pub(super) fn invalid_reasons(ran: &Ran, counted: ToolCount, count: &CountSource) -> Vec<Invalid> {
    let mut reasons = Vec::new();
    if counted.failed > 0 {
        let message = format!(
            "{} of {} requests failed, as {} reported: these numbers include failed requests",
            counted.failed,
            counted.requests,
            count.name()
        );
        reasons.push(Invalid::new(Code::RequestsFailed, message));
    }
    if ran.exit != 0 && !ran.interrupted {
        let message = format!(
            "the load command exited with code {}: its load may have failed or stopped early",
            ran.exit
        );
        reasons.push(Invalid::new(Code::LoadCommandFailed, message));
    }
    reasons
}
