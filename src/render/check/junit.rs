//! The check's JUnit XML, for CI test reporters: one testcase per endpoint, a failure per
//! breach and regression, an error when its figures cannot be trusted, its figures as the
//! testcase's output.

use std::fmt::Write;

use super::{breach_text, limit, percent, plain, reasons, regression_text};
use crate::render::text::figure;
use pgcost_core::check::budget::Figures;
use pgcost_core::check::{CheckReport, EndpointResult};
use pgcost_core::report::model::figure::Figure;

pub(super) fn render(report: &CheckReport) -> String {
    let tests = report.endpoints.len();
    let failures = report.endpoints.iter().filter(|e| failed(e)).count();
    let errors = report.endpoints.iter().filter(|e| erred(e)).count();
    let time: f64 = (report.endpoints.iter())
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
            r.metric.key(),
            r.baseline,
            r.actual,
            r.limit_percent
        );
        let message = format!("regressed: {}", regression_text(r));
        out.push_str(&junit_element("failure", "regression", &message, &details));
    }
    if erred(e) {
        let all: Vec<&str> = reasons(e).collect();
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

/// The figures of an endpoint, one per line, then its changed plans, for a testcase's
/// output.
fn figures_text(e: &EndpointResult) -> String {
    let figures = Figures::of(&e.report);
    let mut lines = vec![format!(
        "{} {}: {} requests at concurrency {}",
        e.report.target.method,
        e.report.target.url,
        e.report.load.requests,
        e.report.load.concurrency
    )];
    for metric in Figure::COLUMNS {
        let value = figure(metric.of(&figures));
        let budget = (e.budget.limit(metric))
            .map(|b| format!(" (budget {})", limit(b)))
            .unwrap_or_default();
        let delta = (e.deltas.iter())
            .find(|d| d.metric == metric)
            .map(|d| {
                format!(
                    " (baseline {:.2}, {})",
                    d.baseline,
                    percent(d.change_percent)
                )
            })
            .unwrap_or_default();
        lines.push(format!("{}: {value}{budget}{delta}", metric.key()));
    }
    lines.extend(super::diff::plan_changes(e));
    lines.join("\n")
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
