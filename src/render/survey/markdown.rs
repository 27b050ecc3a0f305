//! The survey in Markdown, for a pull-request comment: the ranking table, what was not
//! ranked (static, skipped, unparsed), the routes that are not valid, and each route's
//! findings with their savings.

use std::fmt::Write;

use super::sections::{
    SCREENED_NOTE, any_screened, counts, finding_line, not_replayed, not_valid, ranking,
    with_findings,
};
use crate::render::audit::markdown::{code, markdown_table};
use pgcost_core::report::model::invalid;
use pgcost_core::survey::SurveyReport;
use pgcost_core::text::one_line;

pub(super) fn render(report: &SurveyReport) -> String {
    let mark = if report.valid { "✅" } else { "❌" };
    let mut out = format!("### {mark} pgcost survey of {}\n\n", code(&report.base_url));
    let facts: Vec<String> = (counts(report).into_iter())
        .map(|(k, v)| format!("{k}: **{v}**"))
        .collect();
    let _ = writeln!(out, "{}.\n", facts.join(", "));
    let _ = writeln!(out, "{}", markdown_table(&ranking(report)));
    if any_screened(report) {
        let _ = writeln!(out, "_{SCREENED_NOTE}._");
    }
    let bad: Vec<_> = not_valid(report).collect();
    if !bad.is_empty() {
        out.push_str("\n#### Not valid\n\n");
        for r in bad {
            let _ = writeln!(
                out,
                "- {}: {}",
                code(&format!("{} {}", r.method, r.route)),
                invalid::joined(&r.invalid_reasons, "; ")
            );
        }
    }
    for (title, grid) in not_replayed(report) {
        let _ = write!(out, "\n#### {title}\n\n{}\n", markdown_table(&grid));
    }
    if !report.first_unparsed.is_empty() {
        let _ = writeln!(out, "\n#### Unparsed lines ({})\n", report.unparsed_lines);
        for u in &report.first_unparsed {
            let _ = writeln!(out, "- {}:{}: {}", u.file, u.line, code(&u.text));
        }
    }
    findings(report, &mut out);
    for w in &report.warnings {
        let _ = writeln!(out, "\n> ⚠ {w}");
    }
    out
}

/// Each route's findings under its name, with what each would save per request.
fn findings(report: &SurveyReport, out: &mut String) {
    for r in with_findings(report) {
        let _ = writeln!(
            out,
            "\n#### Findings of {}\n",
            code(&format!("{} {}", r.method, r.route))
        );
        for f in &r.findings {
            let (head, subject) = finding_line(f);
            let subject = subject.map(|s| format!(": {}", code(&one_line(&s, 200))));
            let _ = writeln!(out, "- **{head}**{}", subject.unwrap_or_default());
        }
    }
}
