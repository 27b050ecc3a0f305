//! The statement diff and the acknowledgements in the check views: a short list in the
//! table, a `diff` block and a list for the Markdown of a pull-request comment. JSON
//! carries the full lists as they are.

use pgcost_core::check::budget::finding_text;
use pgcost_core::check::statement_diff::{StatementChange, StatementDiff};
use pgcost_core::check::{CheckReport, EndpointResult};
use pgcost_core::text::one_line;

/// Lines of one endpoint's diff the table shows before "and N more".
const TABLE_LINES: usize = 8;

fn calls(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.2}"))
}

/// `; from src/api.rs:12, route /x` when the statement was tagged, cut to `width`.
fn sent_from(c: &StatementChange, width: usize) -> String {
    let tags = c.tags.as_ref().map(|t| t.describe());
    (tags.filter(|t| !t.is_empty()))
        .map(|t| format!("; from {}", one_line(&t, width)))
        .unwrap_or_default()
}

/// One endpoint's diff as `(sign, text)` lines: `+` new, `-` gone, `~` calls or plan
/// changed (a new or changed statement with the place and route it was tagged with),
/// then the findings; `width` cuts the statement text.
fn lines(diff: &StatementDiff, width: usize) -> Vec<(char, String)> {
    let sql = |c: &StatementChange| one_line(&c.query, width);
    let mut out = Vec::new();
    for c in &diff.added {
        let now = calls(c.calls_per_request);
        let text = format!("{} ({now} per request{})", sql(c), sent_from(c, 40));
        out.push(('+', text));
    }
    for c in &diff.removed {
        let was = calls(c.baseline_calls_per_request);
        out.push(('-', format!("{} (gone; was {was} per request)", sql(c))));
    }
    for c in &diff.calls_changed {
        let text = format!(
            "{} ({} → {} per request{})",
            sql(c),
            calls(c.baseline_calls_per_request),
            calls(c.calls_per_request),
            sent_from(c, 40)
        );
        out.push(('~', text));
    }
    for c in &diff.plan_changed {
        let text = format!("plan of {}: {}", one_line(&c.query, width), c.summary());
        out.push(('~', text));
    }
    for f in &diff.new_findings {
        let text = one_line(&finding_text(f), width);
        out.push(('+', format!("new finding {} {text}", f.fingerprint)));
    }
    for f in &diff.resolved_findings {
        let text = one_line(&finding_text(f), width);
        out.push(('-', format!("resolved finding {} {text}", f.fingerprint)));
    }
    out
}

/// The table's section: each compared endpoint's diff, or that nothing changed.
pub fn table(report: &CheckReport) -> Vec<String> {
    let mut out = Vec::new();
    for e in &report.endpoints {
        let Some(diff) = &e.statement_diff else {
            continue;
        };
        if diff.is_empty() {
            out.push(format!("{}: no statement change", e.name));
            continue;
        }
        let all = lines(diff, 56);
        for (sign, text) in all.iter().take(TABLE_LINES) {
            out.push(format!("{}: {sign} {text}", e.name));
        }
        if all.len() > TABLE_LINES {
            let more = all.len() - TABLE_LINES;
            out.push(format!("{}: … and {more} more (--format json)", e.name));
        }
    }
    out
}

/// The Markdown section: one `diff` block, a hunk per compared endpoint. A statement
/// whose calls or plan changed is its line before (`-`) and its line now (`+`).
pub fn markdown(report: &CheckReport) -> String {
    let mut block = String::new();
    for e in &report.endpoints {
        let Some(diff) = &e.statement_diff else {
            continue;
        };
        if diff.is_empty() {
            block.push_str(&format!("@@ {}: no statement change @@\n", e.name));
            continue;
        }
        block.push_str(&format!("@@ {} @@\n", e.name));
        for line in markdown_lines(diff) {
            block.push_str(&line.replace("```", "'''"));
            block.push('\n');
        }
    }
    if block.is_empty() {
        return String::new();
    }
    format!("#### Statements against the baseline\n\n```diff\n{block}```\n\n")
}

fn markdown_lines(diff: &StatementDiff) -> Vec<String> {
    let sql = |c: &StatementChange| one_line(&c.query, 200);
    let mut out = Vec::new();
    for c in &diff.added {
        out.push(format!(
            "+ {} ({} per request{})",
            sql(c),
            calls(c.calls_per_request),
            sent_from(c, 200)
        ));
    }
    for c in &diff.removed {
        let was = calls(c.baseline_calls_per_request);
        out.push(format!("- {} (gone; was {was} per request)", sql(c)));
    }
    for c in &diff.calls_changed {
        let before = calls(c.baseline_calls_per_request);
        out.push(format!("- {} ({before} per request)", sql(c)));
        out.push(format!(
            "+ {} ({} per request{})",
            sql(c),
            calls(c.calls_per_request),
            sent_from(c, 200)
        ));
    }
    for c in &diff.plan_changed {
        let sql = one_line(&c.query, 200);
        out.push(format!("- plan of {sql}: {}", c.before.join(", ")));
        out.push(format!("+ plan of {sql}: {}", c.after.join(", ")));
    }
    for f in &diff.new_findings {
        out.push(format!(
            "+ finding {} [{}]",
            one_line(&finding_text(f), 200),
            f.fingerprint
        ));
    }
    for f in &diff.resolved_findings {
        out.push(format!("- finding {}", one_line(&finding_text(f), 200)));
    }
    out
}

/// One line per changed plan of the endpoint: `plan changed: SQL: old → new`, for the
/// views that show no statement diff (JUnit, HTML).
pub fn plan_changes(e: &EndpointResult) -> Vec<String> {
    let Some(diff) = &e.statement_diff else {
        return Vec::new();
    };
    (diff.plan_changed.iter())
        .map(|c| format!("plan changed: {}: {}", one_line(&c.query, 80), c.summary()))
        .collect()
}

/// Acknowledged findings, and acknowledgements that match nothing, one line each.
pub fn acknowledgements(e: &EndpointResult, code: impl Fn(&str) -> String) -> Vec<String> {
    let mut out = Vec::new();
    for f in e.findings.iter().filter(|f| f.acknowledged.is_some()) {
        let subject = f.finding.subject().map(|s| one_line(s, 48));
        out.push(format!(
            "{} acknowledged: {}{} ({}): {}",
            e.name,
            f.finding.kind,
            subject
                .map(|s| format!(" {}", code(&s)))
                .unwrap_or_default(),
            f.finding.fingerprint,
            f.acknowledged.as_deref().unwrap_or_default()
        ));
    }
    for a in e.acks.iter().filter(|a| a.matched.is_empty()) {
        let statement = (a.statement.as_deref()).map(|s| format!(" {}", code(&one_line(s, 40))));
        out.push(format!(
            "{} ack {}{} at {} matches no finding: delete it",
            e.name,
            a.kind,
            statement.unwrap_or_default(),
            a.at
        ));
    }
    out
}
