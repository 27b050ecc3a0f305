//! Views of a `CheckReport`: a terminal table, Markdown for a pull-request comment or step
//! summary, JSON, and JUnit XML for CI test reporters.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use super::budget::{Breach, Delta, Figures, Metric, Regression};
use super::{CheckReport, EndpointResult, Status};
use crate::cli::CheckFormat;
use crate::cost::findings::{FindingKind, Severity};
use crate::render::markdown_table;
use crate::render::one_line;

pub fn render(report: &CheckReport, format: CheckFormat) -> String {
    match format {
        CheckFormat::Table => table(report),
        CheckFormat::Markdown => markdown(report),
        CheckFormat::Json => {
            let mut text =
                serde_json::to_string_pretty(report).expect("a check report always serializes");
            text.push('\n');
            text
        }
        CheckFormat::Junit => junit(report),
    }
}

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
    match &b.detail {
        None => format!(
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
        Some(detail) => format!(
            "forbidden finding {} ({} found): {}",
            b.metric,
            b.actual,
            code(&one_line(detail, 40))
        ),
    }
}

fn plain(text: &str) -> String {
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

fn markdown(report: &CheckReport) -> String {
    let mut out = String::new();
    let mark = if !report.passed {
        "❌"
    } else if !report.valid {
        "❗"
    } else {
        "✅"
    };
    let _ = writeln!(out, "### {mark} {}\n", headline(report));
    let mut problems = Vec::new();
    for e in worst_first(report) {
        for b in &e.breaches {
            let text = breach_text(b, |sql| format!("`{}`", sql.replace('`', "'")));
            problems.push(format!("- ❌ **{}** over budget: {text}", e.name));
        }
        for r in &e.regressions {
            problems.push(format!(
                "- 📈 **{}** regressed: {}",
                e.name,
                regression_text(r)
            ));
        }
        for reason in e.report.invalid_reasons.iter().chain(&e.unchecked) {
            problems.push(format!("- ❗ **{}** not valid: {reason}", e.name));
        }
    }
    if !problems.is_empty() {
        let _ = writeln!(out, "{}\n", problems.join("\n"));
    }
    let mut header = vec!["", "endpoint"];
    header.extend(Metric::ALL.map(Metric::label));
    let rows = worst_first(report)
        .into_iter()
        .map(|e| {
            let mark = match e.status() {
                Status::OverBudget => "❌",
                Status::Regressed => "📈",
                Status::NotValid => "❗",
                Status::Passed => "✅",
            };
            let mut row = vec![mark.to_string(), e.name.clone()];
            row.extend(Metric::ALL.map(|m| cell(e, m, true, |t| format!("**{t}**"))));
            row
        })
        .collect();
    let _ = writeln!(out, "{}\n", markdown_table(&header, rows));
    let mut note = "Per request: measured / budget; **bold** is over budget.".to_string();
    if let Some(baseline) = &report.baseline {
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
    }
    let _ = writeln!(out, "<sub>{note}</sub>\n");
    let findings: Vec<String> = report
        .endpoints
        .iter()
        .filter_map(|e| findings_summary(e).map(|s| format!("- **{}**: {s}", e.name)))
        .collect();
    if !findings.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>Findings</summary>\n\n{}\n\nRun <code>pgcost audit</code> on an \
             endpoint for the statements and suggested fixes.\n</details>\n",
            findings.join("\n")
        );
    }
    out
}

fn table(report: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(report));
    let mut builder = Builder::default();
    let mut header = vec!["result".to_string(), "endpoint".to_string()];
    header.extend(Metric::ALL.map(|m| m.label().to_string()));
    builder.push_record(header);
    for e in &report.endpoints {
        let result = match e.status() {
            Status::OverBudget => "OVER",
            Status::Regressed => "REGRESSED",
            Status::NotValid => "NOT VALID",
            Status::Passed => "ok",
        };
        let mut row = vec![result.to_string(), one_line(&e.name, 20)];
        row.extend(Metric::ALL.map(|m| cell(e, m, false, |t| format!("{t}!"))));
        builder.push_record(row);
    }
    let mut grid = builder.build();
    grid.with(Style::sharp());
    grid.with(Modify::new(Columns::new(2..)).with(Alignment::right()));
    let _ = writeln!(
        out,
        "{grid}\nper request: measured / budget; ! marks a breach"
    );
    let mut section = |title: &str, lines: Vec<String>| {
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{title}");
            for line in lines {
                let _ = writeln!(out, "- {line}");
            }
        }
    };
    section(
        "Over budget",
        report
            .endpoints
            .iter()
            .flat_map(|e| {
                e.breaches
                    .iter()
                    .map(move |b| format!("{}: {}", e.name, breach_text(b, plain)))
            })
            .collect(),
    );
    section(
        "Regressions",
        report
            .endpoints
            .iter()
            .flat_map(|e| {
                e.regressions
                    .iter()
                    .map(move |r| format!("{}: {}", e.name, regression_text(r)))
            })
            .collect(),
    );
    section(
        "Not valid",
        report
            .endpoints
            .iter()
            .flat_map(|e| {
                e.report
                    .invalid_reasons
                    .iter()
                    .chain(&e.unchecked)
                    .map(move |r| format!("{}: {r}", e.name))
            })
            .collect(),
    );
    section(
        "Findings",
        report
            .endpoints
            .iter()
            .filter_map(|e| findings_summary(e).map(|s| format!("{}: {s}", e.name)))
            .collect(),
    );
    if let Some(baseline) = &report.baseline {
        section(
            &format!("Against the baseline {baseline}"),
            report
                .endpoints
                .iter()
                .map(|e| {
                    let what = match (&e.baseline_note, changes(e)) {
                        (Some(note), _) => note.clone(),
                        (None, Some(moved)) => moved,
                        (None, None) => "unchanged".into(),
                    };
                    format!("{}: {what}", e.name)
                })
                .collect(),
        );
    }
    out
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

fn junit(report: &CheckReport) -> String {
    let tests = report.endpoints.len();
    let failures: usize = report
        .endpoints
        .iter()
        .filter(|e| !e.breaches.is_empty() || !e.regressions.is_empty())
        .count();
    let errors = report
        .endpoints
        .iter()
        .filter(|e| e.breaches.is_empty() && e.regressions.is_empty() && !e.trusted())
        .count();
    let time: f64 = report
        .endpoints
        .iter()
        .map(|e| e.report.load.wall_seconds)
        .sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts =
        format!(r#"tests="{tests}" failures="{failures}" errors="{errors}" time="{time:.3}""#);
    let _ = writeln!(out, r#"<testsuites name="pgcost check" {counts}>"#);
    let _ = writeln!(
        out,
        r#"  <testsuite name="pgcost check" {counts} skipped="0">"#
    );
    for e in &report.endpoints {
        let _ = writeln!(
            out,
            r#"    <testcase name="{}" classname="pgcost.check" time="{:.3}">"#,
            xml(&e.name),
            e.report.load.wall_seconds
        );
        for b in &e.breaches {
            let _ = writeln!(
                out,
                r#"      <failure type="budget" message="{}">{}</failure>"#,
                xml(&format!("over budget: {}", breach_text(b, plain))),
                xml(&match &b.detail {
                    Some(detail) =>
                        format!("{} {} found, none allowed\n{detail}", b.actual, b.metric),
                    None => format!(
                        "{}: {:.4} per request, budget {}",
                        b.metric, b.actual, b.budget
                    ),
                })
            );
        }
        for r in &e.regressions {
            let _ = writeln!(
                out,
                r#"      <failure type="regression" message="{}">{}</failure>"#,
                xml(&format!("regressed: {}", regression_text(r))),
                xml(&format!(
                    "{}: baseline {:.4}, now {:.4} per request; limit +{}%",
                    r.metric, r.baseline, r.actual, r.limit_percent
                ))
            );
        }
        if e.breaches.is_empty() && e.regressions.is_empty() && !e.trusted() {
            let reasons: Vec<&String> = e
                .report
                .invalid_reasons
                .iter()
                .chain(&e.unchecked)
                .collect();
            let first = reasons.first().map(|r| r.as_str()).unwrap_or("not valid");
            let all: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
            let _ = writeln!(
                out,
                r#"      <error type="invalid" message="{}">{}</error>"#,
                xml(&format!("not valid: {first}")),
                xml(&all.join("\n"))
            );
        }
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            xml(&figures_text(e))
        );
        let _ = writeln!(out, "    </testcase>");
    }
    let _ = writeln!(out, "  </testsuite>\n</testsuites>");
    out
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
