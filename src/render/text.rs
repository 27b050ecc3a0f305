//! The lines and cells every view shares: a figure, a status or verdict line, the one JSON
//! writer, and the `Exporter` each audit format implements. A leaf: it imports only the model.

use pgcost_core::report::Report;

/// Renders one report.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

/// A JSON document as every command prints it: pretty, with a final newline.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("reports always serialize");
    text.push('\n');
    text
}

/// A per-request figure, or `n/a` when the view behind it could not be read.
pub fn figure(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| "n/a".into())
}

/// `200×198 401×2`.
pub fn status_line(report: &Report) -> String {
    let load = &report.load;
    let statuses = load.status.iter().map(|(k, v)| format!("{k}×{v}"));
    let errors = load.errors.iter().map(|(k, v)| format!("{k} error×{v}"));
    counts(statuses.chain(errors))
}

/// For a load made by the user's command (`pgcost measure`), what made and counted it, e.g.
/// `300 requests counted by autocannon, command exit 0, 4.21 s, 71.3 req/s`; `None` for
/// pgcost's own burst. Such a report has no statuses or latency of its own.
pub fn command_load_line(report: &Report) -> Option<String> {
    let load = &report.load;
    let exit = load.command_exit?;
    let counted = match load.source.as_str() {
        "given" => "given with --requests".to_string(),
        tool => format!("counted by {tool}"),
    };
    Some(format!(
        "{} requests {counted}, command exit {exit}, {:.2} s, {:.1} req/s",
        load.requests, load.wall_seconds, load.rps
    ))
}

/// Counts side by side, or `none`.
pub(crate) fn counts(parts: impl Iterator<Item = String>) -> String {
    let parts: Vec<String> = parts.collect();
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
