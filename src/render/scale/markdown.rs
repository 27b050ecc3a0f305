//! The Markdown view of a scale report, for a pull-request comment: the same sections as
//! the table, with each finding's full suggestion.

use std::fmt::Write;

use super::{headline, sections};
use crate::render::audit::markdown::{code, markdown_table};
use pgcost_core::findings::sent_from::sent_by;
use pgcost_core::scale::ScaleReport;
use pgcost_core::text::shown_sql;

pub(super) fn render(report: &ScaleReport) -> String {
    let mut out = format!(
        "### pgcost scale `{} {}`\n\n{}\n",
        report.method,
        report.url,
        headline(report)
    );
    for (title, grid) in sections(report, 120) {
        let _ = write!(out, "\n#### {title}\n\n{}\n", markdown_table(&grid));
    }
    if !report.findings.is_empty() {
        out.push_str("\n#### Findings\n\n");
        for f in &report.findings {
            let query = f.query.as_deref().map(|q| shown_sql(q, usize::MAX));
            let subject = query.as_deref().or(f.table.as_deref()).unwrap_or("");
            let evidence: Vec<String> = (f.evidence.iter())
                .map(|(k, v)| format!("{k} {v:.2}"))
                .collect();
            let _ = writeln!(
                out,
                "- **{}** ({}): {}; {}.\n\n  {}\n",
                f.kind,
                f.severity,
                code(subject),
                evidence.join(", "),
                f.suggestion.replace('\n', "\n  ")
            );
            // Who sent the statement, and where to open it.
            if let Some(sent_by) = f.tags.as_ref().and_then(sent_by) {
                let _ = writeln!(out, "  {sent_by}\n");
            }
            for at in &f.locations {
                let _ = writeln!(out, "  at `{}`, {}\n", at.at(), at.describe());
            }
        }
    }
    for reason in &report.invalid_reasons {
        let _ = writeln!(out, "- not valid: {reason}");
    }
    out
}
