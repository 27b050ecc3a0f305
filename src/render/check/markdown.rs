//! The check's Markdown view, for a pull-request comment or the GitHub step summary: the
//! headline, the problems worst first, the endpoints' table, the statement diff, the
//! acknowledgements and the findings folded away.

use std::fmt::Write;

use super::{cell, diff, endpoints_grid, findings, headline, limit, measured_nothing, problems};
use crate::render::audit::markdown::{code, markdown_table};
use crate::render::sections::Grid;
use pgcost_core::check::{CheckReport, EndpointResult, Status};
use pgcost_core::report::model::figure::Figure;

pub(super) fn render(report: &CheckReport) -> String {
    let mark = if !report.passed {
        "❌"
    } else if !report.valid {
        "❗"
    } else {
        "✅"
    };
    [
        format!("### {mark} {}\n\n", headline(report)),
        markdown_problems(report),
        format!("{}\n\n", markdown_table(&markdown_endpoints(report))),
        format!("<sub>{}</sub>\n\n", markdown_note(report)),
        diff::markdown(report),
        markdown_acknowledgements(report),
        markdown_findings(report),
    ]
    .concat()
}

fn markdown_mark(status: Status) -> &'static str {
    match status {
        Status::OverBudget => "❌",
        Status::Regressed => "📈",
        Status::NotValid => "❗",
        Status::Passed => "✅",
    }
}

/// The problems, worst endpoint first.
fn markdown_problems(report: &CheckReport) -> String {
    let lines: Vec<String> = problems(worst_first(report), code)
        .into_iter()
        .map(|p| {
            let what = match p.status {
                Status::OverBudget => "over budget",
                Status::Regressed => "regressed",
                Status::NotValid | Status::Passed => "not valid",
            };
            let mark = markdown_mark(p.status);
            format!("- {mark} **{}** {what}: {}", p.endpoint, p.text)
        })
        .chain(
            (measured_nothing(report).into_iter())
                .map(|(name, line)| format!("- ⚠️ **{name}** measured nothing: {line}")),
        )
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", lines.join("\n"))
    }
}

/// The endpoints worst first; a breach in bold, the change against the baseline beside.
fn markdown_endpoints(report: &CheckReport) -> Grid {
    let rows = worst_first(report)
        .into_iter()
        .map(|e| {
            let mut row = vec![markdown_mark(e.status()).to_string(), e.name.clone()];
            row.extend(Figure::COLUMNS.map(|m| cell(e, m, true, |t| format!("**{t}**"))));
            row
        })
        .collect();
    endpoints_grid("", rows)
}

/// How to read the table, and what the baseline was.
fn markdown_note(report: &CheckReport) -> String {
    let mut note = "Per request: measured / budget; **bold** is over budget.".to_string();
    let Some(baseline) = &report.baseline else {
        return note;
    };
    let _ = write!(note, " In parentheses: the change against `{baseline}`");
    match report.max_regression_percent {
        Some(p) => {
            let _ = write!(
                note,
                "; statements and rows may grow by at most {}%.",
                limit(p)
            );
        }
        None => note.push('.'),
    }
    for e in &report.endpoints {
        if let Some(why) = &e.baseline_note {
            let _ = write!(note, " {}: {why}.", e.name);
        }
    }
    note
}

/// Acknowledged findings and acknowledgements that match nothing.
fn markdown_acknowledgements(report: &CheckReport) -> String {
    let lines: Vec<String> = (report.endpoints.iter())
        .flat_map(|e| diff::acknowledgements(e, code))
        .map(|line| format!("- {line}"))
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("#### Acknowledgements\n\n{}\n\n", lines.join("\n"))
    }
}

fn markdown_findings(report: &CheckReport) -> String {
    let lines: Vec<String> = findings(report)
        .into_iter()
        .map(|(name, summary)| format!("- **{name}**: {summary}"))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "<details><summary>Findings</summary>\n\n{}\n\nRun <code>pgcost audit</code> on an \
         endpoint for the statements and suggested fixes.\n</details>\n\n",
        lines.join("\n")
    )
}

/// Endpoints worst first, in file order within each status.
fn worst_first(report: &CheckReport) -> Vec<&EndpointResult> {
    let mut rows: Vec<&EndpointResult> = report.endpoints.iter().collect();
    rows.sort_by_key(|e| e.status());
    rows
}
