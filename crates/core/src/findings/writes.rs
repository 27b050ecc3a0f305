//! The rules that read the write side of a request: a GET or HEAD that writes on every
//! request (`writes_on_read`), and a statement whose sort or hash spills to temp files
//! (`spills_to_disk`).

use super::*;
use crate::report::model::Writes;

/// Temp blocks per request from which a spill is high: 1 MB of temp files (128 blocks of
/// 8 kB) written and read back on every request.
const HIGH_SPILL_TEMP_BLOCKS: f64 = 128.0;

/// The statement's writes per request, its rows of every user and query id added.
fn writes_of(inputs: &Inputs, query: &str) -> Writes {
    (inputs.statements.iter())
        .filter(|s| s.toplevel && !s.utility && s.query == query)
        .fold(Writes::default(), |sum, s| sum.plus(&s.writes_per_request))
}

/// A statement that changes data on every request of a GET or HEAD. Every request must
/// change something: its WAL records (or, before PG 13, its rows affected) reach one per
/// request. A write guarded to run rarely ("only when last_seen is 5 minutes old") runs
/// on every request but changes nothing, and does not fire.
pub(super) fn writes_on_read(inputs: &Inputs, s: &Statement, t: &Thresholds) -> Option<Finding> {
    let method = inputs.method.to_ascii_uppercase();
    if !matches!(method.as_str(), "GET" | "HEAD")
        || s.shape.access != Access::Write
        || s.calls_per_request < t.writes_min_per_request
    {
        return None;
    }
    let w = writes_of(inputs, s.query);
    let changes = w.wal_records.unwrap_or(s.rows_per_request);
    if changes < t.writes_min_per_request {
        return None;
    }
    let mut figures = vec![
        ("calls_per_request", s.calls_per_request),
        ("rows_written_per_request", s.rows_per_request),
        ("blocks_dirtied_per_request", w.blocks_dirtied),
    ];
    let mut cost = format!("{} per request", counted(s.rows_per_request, "row", "rows"));
    if let Some(bytes) = w.wal_bytes {
        figures.push(("wal_bytes_per_request", bytes));
        figures.extend(
            w.wal_full_page_images
                .map(|f| ("wal_full_page_images_per_request", f)),
        );
        cost.push_str(&format!(", {} bytes of WAL", amount(bytes)));
    }
    let suggestion = format!(
        "This {method} writes on every request ({cost}):\n\n    {}\n\nA write on a read \
         costs WAL, dirty pages to flush, replication traffic and later vacuum work, and it \
         takes row locks that concurrent requests for the same row wait on. If it records \
         activity (a session touch, a last-seen time, a counter), write only when the \
         stored value is stale, e.g. add AND last_seen < now() - interval '5 minutes' to \
         its WHERE, or keep it in memory or a cache and flush in batches.",
        quoted(s.query)
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        evidence: evidence(&figures),
        round_trips_per_request: s.calls_per_request,
        saves_per_request: Saving {
            statements: s.calls_per_request,
            db_time_ms: s.db_time_ms,
            wal_bytes: w.wal_bytes.unwrap_or(0.0),
            ..Saving::default()
        },
        ..Finding::new(FindingKind::WritesOnRead, suggestion)
    })
}

/// A statement whose sorts, hashes or materializations outgrow `work_mem` and write temp
/// files, on every request.
pub(super) fn spills_to_disk(inputs: &Inputs, s: &Statement, t: &Thresholds) -> Option<Finding> {
    let w = writes_of(inputs, s.query);
    if w.temp_blocks_written < t.spill_min_temp_blocks_per_request {
        return None;
    }
    let temp = w.temp_blocks_written;
    let suggestion = format!(
        "This statement writes {} of temp files per request ({} blocks of 8 kB): a sort, \
         hash or materialization outgrew work_mem (a limit per operation, 4 MB by default) \
         and went to disk:\n\n    {}\n\nEXPLAIN (ANALYZE, BUFFERS) names the node (\"Sort \
         Method: external merge\", or a hash with several batches). Avoid the work first: \
         an index that returns the rows in order, a LIMIT, fewer columns. Otherwise raise \
         work_mem for this statement only, with SET LOCAL work_mem inside its transaction \
         or ALTER ROLE ... SET work_mem for the role that runs it.",
        megabytes(temp),
        amount(temp),
        quoted(s.query)
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("temp_blocks_written_per_request", temp),
            ("db_time_ms_per_request", s.db_time_ms),
        ]),
        saves_per_request: Saving {
            temp_blocks_written: temp,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::SpillsToDisk, suggestion)
    })
}

/// Severity of a spill: high from 1 MB of temp files per request, medium below.
pub(super) fn spill_severity(finding: &Finding) -> Severity {
    if finding.saves_per_request.temp_blocks_written >= HIGH_SPILL_TEMP_BLOCKS {
        Severity::High
    } else {
        Severity::Medium
    }
}

/// 8 kB blocks as megabytes or kilobytes, for prose.
fn megabytes(blocks: f64) -> String {
    let kb = blocks * 8.0;
    if kb >= 1024.0 {
        format!("{:.1} MB", kb / 1024.0)
    } else {
        format!("{kb:.0} kB")
    }
}
