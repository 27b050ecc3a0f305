//! The terminal view of a scale report: the headline, the points, the request's lines,
//! each statement with its slope, the tables, and the findings.

use std::fmt::Write;

use super::{headline, sections};
use crate::render::audit::table::terminal_table;
use crate::render::sections::finding_text;
use pgcost_core::scale::ScaleReport;

const WIDTH: usize = 100;

pub(super) fn render(report: &ScaleReport) -> String {
    let mut out = format!("pgcost scale {}\n", headline(report));
    for (title, grid) in sections(report, 60) {
        let _ = write!(out, "\n{title}\n{}\n", terminal_table(&grid));
    }
    if !report.findings.is_empty() {
        out.push_str("\nFindings\n");
        for (i, f) in report.findings.iter().enumerate() {
            out.push_str(&finding_text(i + 1, f, WIDTH));
        }
    }
    for reason in &report.invalid_reasons {
        let _ = writeln!(out, "not valid: {reason}");
    }
    out
}
