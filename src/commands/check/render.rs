//! Views of a `CheckReport`: a terminal table, Markdown for a pull-request comment or step
//! summary, JSON, and JUnit XML for CI test reporters.

use std::fmt::Write;

use super::budget::{Breach, Delta, Figures, Metric, Regression};
use super::diff_view;
use super::{CheckReport, EndpointResult, Status};
use crate::cost::findings::{FindingKind, Severity};
use crate::cost::notes::Note;
use crate::cost::text::one_line;
use crate::render::{Grid, markdown_table, terminal_table};

/// One line that says how the run came out.
pub fn headline(report: &CheckReport) -> String {
    let total = report.endpoints.len();
    let mut parts = Vec::new();
    for (status, what) in [
        (Status::OverBudget, "over budget"),
        (Status::Regressed, "regressed"),
        (Status::NotValid, "not valid"),
    ] {
        let n = report.count(status);
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if parts.is_empty() {
        parts.push("all within budget".into());
    }
    format!("pgcost check, {total} endpoint(s): {}", parts.join(", "))
}

/// A budget limit as written in pgcost.toml: `6`, `25.5`.
fn limit(value: f64) -> String {
    format!("{value}")
}

fn percent(change_percent: Option<f64>) -> String {
    match change_percent {
        Some(p) => format!("{p:+.1}%"),
        None => "from 0".into(),
    }
}

/// A breach in words; `code` marks up the statement of a forbidden finding.
fn breach_text(b: &Breach, code: impl Fn(&str) -> String) -> String {
    let detail = b.detail.as_deref().unwrap_or_default();
    match (b.metric.as_str(), &b.detail) {
        ("new_statements", _) => format!(
            "{} new statement(s), budget {}: {}",
            b.actual,
            limit(b.budget),
            code(&one_line(detail, 60))
        ),
        ("fail_on_findings", _) => format!(
            "{} new finding(s) at fail_on_findings severity or above: {}",
            b.actual,
            code(&one_line(detail, 60))
        ),
        ("ack_expired", _) => format!("acknowledgement expired: {}", one_line(detail, 200)),
        (_, None) => format!(
            "{} {:.2} {}, budget {}",
            b.metric,
            b.actual,
            if b.metric == Metric::P95Ms.name() {
                "ms"
            } else {
                "per request"
            },
            limit(b.budget)
        ),
        (_, Some(detail)) => format!(
            "forbidden finding {} ({} found): {}",
            b.metric,
            b.actual,
            code(&one_line(detail, 40))
        ),
    }
}

pub(super) fn plain(text: &str) -> String {
    text.to_string()
}

fn regression_text(r: &Regression) -> String {
    format!(
        "{} {:.2} → {:.2} per request ({}, limit +{}%)",
        r.metric,
        r.baseline,
        r.actual,
        percent(r.change_percent),
        limit(r.limit_percent)
    )
}

/// The figure of `metric` in one endpoint's row: `actual / budget`, with the change
/// against the baseline when `with_change`; `over` marks a breach.
fn cell(
    e: &EndpointResult,
    metric: Metric,
    with_change: bool,
    over: impl Fn(&str) -> String,
) -> String {
    let figures = Figures::of(&e.report);
    let Some(actual) = metric.of(&figures) else {
        return "n/a".into();
    };
    let mut text = format!("{actual:.2}");
    if e.breaches.iter().any(|b| b.metric == metric.name()) {
        text = over(&text);
    }
    if let Some(budget) = metric.limit(&e.budget) {
        text = format!("{text} / {}", limit(budget));
    }
    if with_change
        && let Some(delta) = e.deltas.iter().find(|d| d.metric == metric.name())
        && delta.change != 0.0
    {
        text = format!("{text} ({})", percent(delta.change_percent));
    }
    text
}

/// The figures that moved against the baseline: `rows_read 40.00 → 30.00 (-25.0%)`.
fn changes(e: &EndpointResult) -> Option<String> {
    let moved: Vec<String> = e
        .deltas
        .iter()
        .filter(|d| d.change != 0.0)
        .map(|d| {
            format!(
                "{} {:.2} → {:.2} ({})",
                d.metric,
                d.baseline,
                d.actual,
                percent(d.change_percent)
            )
        })
        .collect();
    (!moved.is_empty()).then(|| moved.join(", "))
}

/// Endpoints worst first, in file order within each status.
fn worst_first(report: &CheckReport) -> Vec<&EndpointResult> {
    let mut rows: Vec<&EndpointResult> = report.endpoints.iter().collect();
    rows.sort_by_key(|e| e.status());
    rows
}

/// High first.
fn rank(severity: Severity) -> usize {
    Severity::ALL
        .iter()
        .position(|s| *s == severity)
        .unwrap_or(Severity::ALL.len())
}

/// The kinds of finding an endpoint has, most severe first: `round_trips (high),
/// cache_candidate ×3 (medium)`.
fn findings_summary(e: &EndpointResult) -> Option<String> {
    let mut kinds: Vec<(FindingKind, Severity, usize)> = Vec::new();
    for f in &e.report.findings {
        match kinds.iter_mut().find(|(kind, _, _)| *kind == f.kind) {
            Some((_, severity, count)) => {
                *count += 1;
                if rank(f.severity) < rank(*severity) {
                    *severity = f.severity;
                }
            }
            None => kinds.push((f.kind, f.severity, 1)),
        }
    }
    if kinds.is_empty() {
        return None;
    }
    kinds.sort_by_key(|(kind, severity, _)| (rank(*severity), *kind));
    let parts: Vec<String> = kinds
        .iter()
        .map(|(kind, severity, count)| match count {
            1 => format!("{kind} ({severity})"),
            n => format!("{kind} ×{n} ({severity})"),
        })
        .collect();
    Some(parts.join(", "))
}

/// Why an endpoint did not pass, in words.
pub(super) struct Problem<'a> {
    pub endpoint: &'a str,
    pub status: Status,
    pub text: String,
}

/// Every breach, regression and reason not to trust the figures, endpoint by endpoint;
/// `code` marks up the statement of a forbidden finding.
pub(super) fn problems<'a>(
    endpoints: impl IntoIterator<Item = &'a EndpointResult>,
    code: impl Fn(&str) -> String,
) -> Vec<Problem<'a>> {
    let mut out = Vec::new();
    for e in endpoints {
        let problem = |status, text| Problem {
            endpoint: &e.name,
            status,
            text,
        };
        for b in &e.breaches {
            out.push(problem(Status::OverBudget, breach_text(b, &code)));
        }
        for r in &e.regressions {
            out.push(problem(Status::Regressed, regression_text(r)));
        }
        for reason in reasons(e) {
            out.push(problem(Status::NotValid, reason.clone()));
        }
    }
    out
}

/// (endpoint, line) for each endpoint whose burst moved no counter of a measured node:
/// valid, but its budgets held over nothing, so the views say it beside the problems.
fn measured_nothing(report: &CheckReport) -> Vec<(&str, &Note)> {
    (report.endpoints.iter())
        .flat_map(|e| (e.report.notes.iter()).map(move |w| (e.name.as_str(), w)))
        .filter(|(_, w)| matches!(w, Note::MovedNothing { .. }))
        .collect()
}

/// Why the figures of an endpoint cannot be trusted.
fn reasons(e: &EndpointResult) -> impl Iterator<Item = &String> {
    e.report.invalid_reasons.iter().chain(&e.unchecked)
}

/// (endpoint, the kinds of finding it has) for each endpoint with findings.
fn findings(report: &CheckReport) -> Vec<(&str, String)> {
    report
        .endpoints
        .iter()
        .filter_map(|e| findings_summary(e).map(|s| (e.name.as_str(), s)))
        .collect()
}

/// The endpoints, one row each: `corner` heads the column of results, the figures follow
/// the name.
fn endpoints_grid(corner: &str, rows: Vec<Vec<String>>) -> Grid {
    let mut header = vec![corner, "endpoint"];
    header.extend(Metric::ALL.map(Metric::label));
    Grid::new(&header, rows, 2..2 + Metric::ALL.len())
}

pub(super) fn markdown(report: &CheckReport) -> String {
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
        diff_view::markdown(report),
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
    let code = |sql: &str| format!("`{}`", sql.replace('`', "'"));
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
            row.extend(Metric::ALL.map(|m| cell(e, m, true, |t| format!("**{t}**"))));
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
    let code = |sql: &str| format!("`{}`", sql.replace('`', "'"));
    let lines: Vec<String> = (report.endpoints.iter())
        .flat_map(|e| diff_view::acknowledgements(e, code))
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

pub(super) fn table(report: &CheckReport) -> String {
    let mut out = format!(
        "{}\n{}\nper request: measured / budget; ! marks a breach\n",
        headline(report),
        terminal_table(&table_endpoints(report))
    );
    let problems = problems(&report.endpoints, plain);
    for (status, title) in [
        (Status::OverBudget, "Over budget"),
        (Status::Regressed, "Regressions"),
        (Status::NotValid, "Not valid"),
    ] {
        let lines = problems
            .iter()
            .filter(|p| p.status == status)
            .map(|p| format!("{}: {}", p.endpoint, p.text));
        out.push_str(&table_list(title, lines));
    }
    let nothing = measured_nothing(report).into_iter();
    let nothing = nothing.map(|(name, line)| format!("{name}: {line}"));
    out.push_str(&table_list("Measured nothing", nothing));
    let findings = findings(report)
        .into_iter()
        .map(|(name, summary)| format!("{name}: {summary}"));
    out.push_str(&table_list("Findings", findings));
    if let Some(baseline) = &report.baseline {
        let title = format!("Against the baseline {baseline}");
        out.push_str(&table_list(&title, report.endpoints.iter().map(against)));
        let title = format!("Statements against the baseline {baseline}");
        out.push_str(&table_list(&title, diff_view::table(report).into_iter()));
    }
    let acks = (report.endpoints.iter()).flat_map(|e| diff_view::acknowledgements(e, plain));
    out.push_str(&table_list("Acknowledgements", acks));
    out
}

/// The endpoints in file order; `!` marks a breach.
fn table_endpoints(report: &CheckReport) -> Grid {
    let rows = report
        .endpoints
        .iter()
        .map(|e| {
            let result = match e.status() {
                Status::OverBudget => "OVER",
                Status::Regressed => "REGRESSED",
                Status::NotValid => "NOT VALID",
                Status::Passed => "ok",
            };
            let mut row = vec![result.to_string(), one_line(&e.name, 20)];
            row.extend(Metric::ALL.map(|m| cell(e, m, false, |t| format!("{t}!"))));
            row
        })
        .collect();
    endpoints_grid("result", rows)
}

/// A blank line, the title, then one line an item; nothing without items.
fn table_list(title: &str, lines: impl Iterator<Item = String>) -> String {
    let items: String = lines.map(|line| format!("- {line}\n")).collect();
    if items.is_empty() {
        String::new()
    } else {
        format!("\n{title}\n{items}")
    }
}

/// What changed for an endpoint against the baseline.
fn against(e: &EndpointResult) -> String {
    let what = match (&e.baseline_note, changes(e)) {
        (Some(note), _) => note.clone(),
        (None, Some(moved)) => moved,
        (None, None) => "unchanged".into(),
    };
    format!("{}: {what}", e.name)
}

/// Escapes text for XML 1.0 content and attributes; characters XML cannot carry become
/// U+FFFD.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The figures of an endpoint, one per line, for a testcase's output.
fn figures_text(e: &EndpointResult) -> String {
    let figures = Figures::of(&e.report);
    let mut lines = vec![format!(
        "{} {}: {} requests at concurrency {}",
        e.report.target.method,
        e.report.target.url,
        e.report.load.requests,
        e.report.load.concurrency
    )];
    for metric in Metric::ALL {
        let value = metric
            .of(&figures)
            .map(|v| format!("{v:.2}"))
            .unwrap_or_else(|| "n/a".into());
        let budget = metric
            .limit(&e.budget)
            .map(|b| format!(" (budget {})", limit(b)))
            .unwrap_or_default();
        let delta = e
            .deltas
            .iter()
            .find(|d: &&Delta| d.metric == metric.name())
            .map(|d| {
                format!(
                    " (baseline {:.2}, {})",
                    d.baseline,
                    percent(d.change_percent)
                )
            })
            .unwrap_or_default();
        lines.push(format!("{}: {value}{budget}{delta}", metric.name()));
    }
    lines.join("\n")
}

pub(super) fn junit(report: &CheckReport) -> String {
    let tests = report.endpoints.len();
    let failures = report.endpoints.iter().filter(|e| failed(e)).count();
    let errors = report.endpoints.iter().filter(|e| erred(e)).count();
    let time: f64 = report
        .endpoints
        .iter()
        .map(|e| e.report.load.wall_seconds)
        .sum();
    let counts =
        format!(r#"tests="{tests}" failures="{failures}" errors="{errors}" time="{time:.3}""#);
    let cases: String = report.endpoints.iter().map(testcase).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"pgcost check\" {counts}>\n  \
         <testsuite name=\"pgcost check\" {counts} skipped=\"0\">\n\
         {cases}  </testsuite>\n</testsuites>\n"
    )
}

/// A budget or the baseline failed the endpoint.
fn failed(e: &EndpointResult) -> bool {
    !e.breaches.is_empty() || !e.regressions.is_empty()
}

/// Nothing failed, but the figures cannot be trusted: an error, not a pass.
fn erred(e: &EndpointResult) -> bool {
    !failed(e) && !e.trusted()
}

/// One endpoint: a failure per breach and regression, or the error of untrusted figures,
/// then the figures.
fn testcase(e: &EndpointResult) -> String {
    let mut out = format!(
        "    <testcase name=\"{}\" classname=\"pgcost.check\" time=\"{:.3}\">\n",
        xml(&e.name),
        e.report.load.wall_seconds
    );
    for b in &e.breaches {
        let details = match &b.detail {
            Some(detail) => format!("{} {} found, none allowed\n{detail}", b.actual, b.metric),
            None => format!(
                "{}: {:.4} per request, budget {}",
                b.metric, b.actual, b.budget
            ),
        };
        let message = format!("over budget: {}", breach_text(b, plain));
        out.push_str(&junit_element("failure", "budget", &message, &details));
    }
    for r in &e.regressions {
        let details = format!(
            "{}: baseline {:.4}, now {:.4} per request; limit +{}%",
            r.metric, r.baseline, r.actual, r.limit_percent
        );
        let message = format!("regressed: {}", regression_text(r));
        out.push_str(&junit_element("failure", "regression", &message, &details));
    }
    if erred(e) {
        let all: Vec<&str> = reasons(e).map(String::as_str).collect();
        let first = all.first().copied().unwrap_or("not valid");
        let message = format!("not valid: {first}");
        out.push_str(&junit_element(
            "error",
            "invalid",
            &message,
            &all.join("\n"),
        ));
    }
    let _ = writeln!(
        out,
        "      <system-out>{}</system-out>",
        xml(&figures_text(e))
    );
    out.push_str("    </testcase>\n");
    out
}

/// `<failure type="budget" message="...">details</failure>`, on its own line.
fn junit_element(element: &str, kind: &str, message: &str, details: &str) -> String {
    format!(
        "      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n",
        xml(message),
        xml(details)
    )
}

#[cfg(test)]
mod tests {
    use super::xml;

    #[test]
    fn xml_escapes_markup_and_drops_what_xml_cannot_carry() {
        assert_eq!(
            xml(r#"a < b && "c" > 'd'"#),
            "a &lt; b &amp;&amp; &quot;c&quot; &gt; &apos;d&apos;"
        );
        assert_eq!(xml("tab\there\u{1}"), "tab\there\u{FFFD}");
    }
}
