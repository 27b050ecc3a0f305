//! Views of a `Report`: each exporter turns it into bytes.

mod markdown;
mod table;

pub use markdown::MarkdownExporter;
pub use table::TableExporter;

use crate::report::Report;

/// Output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal, readable at 100 columns.
    Table,
    /// One JSON document (see docs/json.md).
    Json,
    /// GitHub-flavoured Markdown, for a pull-request comment.
    Markdown,
}

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
