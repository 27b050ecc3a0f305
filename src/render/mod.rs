//! Views of a `Report`: each exporter turns it into bytes.

mod markdown;
mod table;

pub use markdown::MarkdownExporter;
pub(crate) use markdown::markdown_table;
pub use table::TableExporter;

use crate::cli::Format;
use crate::cost::report::Report;

/// Renders one report.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> String {
        let mut text = serde_json::to_string_pretty(report).expect("a report always serializes");
        text.push('\n');
        text
    }
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(TableExporter),
        Format::Json => Box::new(JsonExporter),
        Format::Markdown => Box::new(MarkdownExporter),
    }
}

/// Collapses whitespace and cuts to `max` characters, marking the cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A per-request figure, or `n/a` when the view behind it could not be read.
pub fn figure(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "n/a".into())
}

/// `200×198 401×2`.
pub fn status_line(report: &Report) -> String {
    let mut parts: Vec<String> = report
        .load
        .status
        .iter()
        .map(|(k, v)| format!("{k}×{v}"))
        .collect();
    parts.extend(
        report
            .load
            .errors
            .iter()
            .map(|(k, v)| format!("{k} error×{v}")),
    );
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" ")
    }
}

/// The report's first line: valid, or the first reason it is not.
pub fn verdict_line(report: &Report) -> String {
    match report.invalid_reasons.first() {
        None => format!("VALID: {} {}", report.target.method, report.target.url),
        Some(first) => {
            let more = report.invalid_reasons.len() - 1;
            if more > 0 {
                format!("NOT VALID: {first} (and {more} more reason(s) below)")
            } else {
                format!("NOT VALID: {first}")
            }
        }
    }
}

/// The findings as plain text blocks, wrapped to `width`, shared by table and Markdown.
pub fn findings_text(report: &Report, width: usize) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (i, f) in report.findings.iter().enumerate() {
        let subject = match (&f.query, &f.table) {
            (Some(q), _) => one_line(q, width.saturating_sub(36)),
            (None, Some(t)) => t.clone(),
            (None, None) => String::new(),
        };
        let unparsed = if f.unparsed { " (unparsed)" } else { "" };
        let _ = writeln!(
            out,
            "{}. [{}] {}{unparsed}: {subject}",
            i + 1,
            f.severity,
            f.kind
        );
        let evidence: Vec<String> = f
            .evidence
            .iter()
            .map(|(k, v)| format!("{k} {v:.2}"))
            .collect();
        let options = textwrap::Options::new(width)
            .initial_indent("   ")
            .subsequent_indent("   ");
        let _ = writeln!(
            out,
            "{}",
            textwrap::fill(&format!("evidence: {}", evidence.join(", ")), &options)
        );
        for paragraph in f.suggestion.lines() {
            if paragraph.starts_with("    ") {
                // SQL: keep its indentation, continue long lines further in.
                let indent = " ".repeat(3 + paragraph.len() - paragraph.trim_start().len());
                let more = format!("{indent}    ");
                let sql = textwrap::Options::new(width)
                    .initial_indent(&indent)
                    .subsequent_indent(&more);
                let _ = writeln!(out, "{}", textwrap::fill(paragraph.trim_start(), &sql));
            } else if let Some(item) = paragraph.trim_start().strip_prefix("- ") {
                let bullet = textwrap::Options::new(width)
                    .initial_indent("   - ")
                    .subsequent_indent("     ");
                let _ = writeln!(out, "{}", textwrap::fill(item, &bullet));
            } else if paragraph.trim().is_empty() {
                let _ = writeln!(out);
            } else {
                let _ = writeln!(out, "{}", textwrap::fill(paragraph, &options));
            }
        }
        let _ = writeln!(out);
    }
    out
}

/// The header of the baseline comparison, shared by table and Markdown.
pub const BASELINE_HEADER: [&str; 4] = [
    "figure",
    "without credentials",
    "with credentials",
    "after authentication",
];

/// The unauthenticated baseline beside the authenticated run, one row per figure; the last
/// column is the difference, what everything after authentication costs. `None` without
/// a baseline.
pub fn baseline_rows(report: &Report) -> Option<Vec<Vec<String>>> {
    let b = report.baseline.as_ref()?;
    let (without, with, after) = (
        &b.unauthenticated,
        &b.authenticated,
        &b.after_authentication,
    );
    let signed = |v: Option<f64>| {
        v.map(|v| format!("{v:+.2}"))
            .unwrap_or_else(|| "n/a".into())
    };
    let row = |name: &str, a: Option<f64>, b: Option<f64>, d: Option<f64>| {
        vec![name.to_string(), figure(a), figure(b), signed(d)]
    };
    Some(vec![
        row(
            "requests/s",
            Some(without.rps),
            Some(with.rps),
            Some(after.rps),
        ),
        row(
            "p50 ms",
            Some(without.latency_p50_ms),
            Some(with.latency_p50_ms),
            Some(after.latency_p50_ms),
        ),
        row(
            "transactions/req",
            Some(without.transactions),
            Some(with.transactions),
            Some(after.transactions),
        ),
        row(
            "statements/req",
            without.statements,
            with.statements,
            after.statements,
        ),
        row(
            "rows read/req",
            Some(without.rows_read),
            Some(with.rows_read),
            Some(after.rows_read),
        ),
    ])
}

/// `401×40` for the baseline's statuses.
pub fn baseline_status_line(report: &Report) -> Option<String> {
    let b = report.baseline.as_ref()?;
    let parts: Vec<String> = b
        .unauthenticated_status
        .iter()
        .map(|(k, v)| format!("{k}×{v}"))
        .collect();
    Some(if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" ")
    })
}

/// The per-request figures as (name, value, meaning) rows, shared by table and Markdown.
pub fn per_request_rows(report: &Report) -> Vec<[String; 3]> {
    let p = &report.per_request;
    let mut rows = vec![
        [
            "transactions".into(),
            format!("{:.2}", p.transactions),
            "commits + rollbacks".into(),
        ],
        [
            "statements".into(),
            figure(p.statements),
            "round trips, BEGIN/COMMIT included".into(),
        ],
        [
            "statements (no utility)".into(),
            figure(p.statements_excluding_utility),
            "without BEGIN, COMMIT, SET, ...".into(),
        ],
        [
            "rows read".into(),
            format!("{:.2}", p.rows_read),
            "tup_returned: scanned rows + index entries".into(),
        ],
        [
            "rows fetched".into(),
            format!("{:.2}", p.rows_fetched),
            "tup_fetched: rows fetched by index scans".into(),
        ],
        [
            "rows returned".into(),
            figure(p.rows_returned),
            "rows sent back to the app".into(),
        ],
        [
            "rows written".into(),
            format!("{:.2}", p.rows_written),
            "inserted + updated + deleted".into(),
        ],
        [
            "blocks hit".into(),
            format!("{:.2}", p.blocks_hit),
            "shared buffer hits".into(),
        ],
        [
            "blocks read".into(),
            format!("{:.2}", p.blocks_read),
            "blocks read from disk or OS cache".into(),
        ],
        [
            "db time ms".into(),
            figure(p.db_time_ms),
            "execution time of top-level statements".into(),
        ],
    ];
    if p.new_sessions.is_some() {
        rows.push([
            "new sessions".into(),
            figure(p.new_sessions),
            "connections opened".into(),
        ]);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::counters::TableCounters;
    use crate::cost::delta::{DatabaseDelta, TableDelta, WindowDelta};
    use crate::cost::findings::{Thresholds, analyze};
    use crate::cost::report::Context;
    use crate::cost::report::tests::{context, load, stmt};

    fn sample() -> Report {
        build(context(200))
    }

    fn build(context: Context) -> Report {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: 200,
                tup_returned: 72_400,
                tup_fetched: 1_200,
                sessions: Some(0),
                blks_hit: 2_000,
                ..Default::default()
            },
            statements: vec![
                stmt(1, "BEGIN", 200, 0),
                stmt(
                    2,
                    "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
                    200,
                    60_200,
                ),
                stmt(
                    3,
                    "SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2",
                    200,
                    4_000,
                ),
                stmt(4, "COMMIT", 200, 0),
            ],
            tables: vec![TableDelta {
                name: "public.a_table_with_a_really_quite_long_name_indeed".into(),
                counters: TableCounters {
                    seq_scan: 200,
                    seq_tup_read: 60_200,
                    ..Default::default()
                },
                relpages: 3,
                n_live_tup: 301,
            }],
            ..Default::default()
        };
        let mut report = Report::build(&delta, &load(200, &[(200, 200)]), context);
        report.load.wall_seconds = 2.0;
        report.findings = analyze(&report, &Thresholds::default());
        report
    }

    #[test]
    fn table_view_fits_in_100_columns() {
        let text = TableExporter.render(&sample());
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!("table_view", text);
    }

    #[test]
    fn markdown_view() {
        insta::assert_snapshot!("markdown_view", MarkdownExporter.render(&sample()));
    }

    fn with_baseline() -> Report {
        let mut anonymous = sample();
        anonymous.load.rps = 250.0;
        anonymous.load.latency_ms.p50 = 0.4;
        anonymous.load.status = [("401".to_string(), 200)].into();
        anonymous.per_request.transactions = 0.0;
        anonymous.per_request.statements = Some(0.0);
        anonymous.per_request.rows_read = 0.0;
        let mut c = context(200);
        c.target.credentials = vec!["Authorization: Bearer (minted HS256 JWT)".into()];
        c.unauthenticated = Some(anonymous);
        build(c)
    }

    #[test]
    fn baseline_in_table_and_markdown() {
        let report = with_baseline();
        let table = TableExporter.render(&report);
        for line in table.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!("table_view_with_baseline", table);
        insta::assert_snapshot!(
            "markdown_view_with_baseline",
            MarkdownExporter.render(&report)
        );
    }

    #[test]
    fn json_view_has_the_documented_keys() {
        let value: serde_json::Value =
            serde_json::from_str(&JsonExporter.render(&sample())).unwrap();
        for pointer in [
            "/schema_version",
            "/valid",
            "/warnings",
            "/load/requests",
            "/load/rps",
            "/load/status/200",
            "/load/latency_ms/p50",
            "/load/latency_ms/p95",
            "/load/latency_ms/p99",
            "/load/latency_ms/max",
            "/per_request/transactions",
            "/per_request/statements",
            "/per_request/rows_read",
            "/per_request/rows_fetched",
            "/per_request/rows_returned",
            "/statements/0/query",
            "/statements/0/calls_per_request",
            "/statements/0/rows_per_call",
            "/findings/0/kind",
            "/findings/0/severity",
            "/findings/0/evidence",
            "/findings/0/suggestion",
        ] {
            assert!(value.pointer(pointer).is_some(), "missing {pointer}");
        }
    }
}
