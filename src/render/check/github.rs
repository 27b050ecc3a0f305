//! Check's GitHub Actions output (`--format github`): a workflow command per budget
//! failure and per finding that has a place in the code (`::error file=…,line=…::`),
//! ranked, at most [`MAX_ANNOTATIONS`] (what GitHub shows of a step); the rest as
//! Markdown for the step summary.

use std::fmt::Write as _;

use super::{breach_text, plain};
use pgcost_core::check::CheckReport;
use pgcost_core::findings::Severity;
use pgcost_core::source::CodeLocation;
use pgcost_core::text::shown_sql;

/// GitHub shows at most ten annotations of each kind per step.
pub const MAX_ANNOTATIONS: usize = 10;

/// One annotation, before it is written.
struct Annotation {
    error: bool,
    at: CodeLocation,
    title: String,
    message: String,
}

/// Budget failures first (each an error), then the findings by severity and saving
/// (high ones errors, the others warnings); only those with a location.
fn annotations(report: &CheckReport) -> Vec<Annotation> {
    let mut failures = Vec::new();
    let mut found = Vec::new();
    for e in &report.endpoints {
        for b in &e.breaches {
            if let Some(at) = super::sarif::breach_location(e, b) {
                let message = format!("{}: over budget: {}", e.name, breach_text(b, plain));
                let title = format!("pgcost: {} over budget", e.name);
                failures.push(Annotation {
                    error: true,
                    at,
                    title,
                    message,
                });
            }
        }
        for f in &e.report.findings {
            // GitHub annotates files of the repository: an absolute tag path is skipped.
            let Some(at) = f.locations.iter().find(|l| l.is_relative()).cloned() else {
                continue;
            };
            let subject = (f.query.as_deref().or(f.table.as_deref()))
                .map(|subject| shown_sql(subject, usize::MAX))
                .unwrap_or_default();
            let message = format!(
                "{} ({}) at {}: {subject}. Fixing it {}. This line is {}.",
                f.kind,
                f.severity,
                e.name,
                f.saves_per_request.describe(),
                at.describe()
            );
            let title = format!("pgcost: {}", f.kind);
            let saving = f.saves_per_request;
            let annotation = Annotation {
                error: f.severity == Severity::High,
                at,
                title,
                message,
            };
            found.push((f.severity, saving.statements, saving.rows(), annotation));
        }
    }
    found.sort_by(|a, b| {
        (a.0.cmp(&b.0))
            .then(b.1.total_cmp(&a.1))
            .then(b.2.total_cmp(&a.2))
    });
    failures.extend(found.into_iter().map(|(_, _, _, a)| a));
    failures
}

/// The workflow commands of the first [`MAX_ANNOTATIONS`], one a line.
pub(super) fn render(report: &CheckReport) -> String {
    let mut out = String::new();
    for a in annotations(report).iter().take(MAX_ANNOTATIONS) {
        let command = if a.error { "error" } else { "warning" };
        let _ = writeln!(
            out,
            "::{command} file={},line={},title={}::{}",
            property(&a.at.uri),
            a.at.line,
            property(&a.title),
            data(&a.message)
        );
    }
    out
}

/// The annotations past the first [`MAX_ANNOTATIONS`], as a Markdown list for the step
/// summary; `None` when there are none.
pub fn overflow_markdown(report: &CheckReport) -> Option<String> {
    let rest: Vec<Annotation> = annotations(report)
        .into_iter()
        .skip(MAX_ANNOTATIONS)
        .collect();
    if rest.is_empty() {
        return None;
    }
    let mut out = format!(
        "### pgcost: {} more annotation(s)\n\nGitHub shows {MAX_ANNOTATIONS} per step; the rest:\n\n",
        rest.len()
    );
    for a in &rest {
        let level = if a.error { "error" } else { "warning" };
        let _ = writeln!(out, "- **{level}** `{}`: {}", a.at.at(), a.message);
    }
    Some(out)
}

/// How many annotations did not fit.
pub fn overflow_count(report: &CheckReport) -> usize {
    annotations(report).len().saturating_sub(MAX_ANNOTATIONS)
}

/// A message, escaped as workflow commands want it.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value (`file=`, `title=`), escaped.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sarif_tests::check;
    use pgcost_core::source::{ConfigLines, Origin};

    #[test]
    fn failures_and_located_findings_become_ranked_annotations() {
        let mut report = check();
        let e = &mut report.endpoints[0];
        let text = "[[endpoint]]\nname = \"projects\"\npath = \"/p\"\n\n[endpoint.budget]\nstatements = 3\nforbid = [\"collection_to_boolean\"]\n";
        e.budget.lines = Some(ConfigLines::of(
            "ci/pgcost.toml",
            text,
            text.find("name").unwrap(),
        ));
        let model = |line| CodeLocation {
            uri: "app/models/group.rb".into(),
            line,
            origin: Origin::Model {
                table: "groups".into(),
                model: "Group".into(),
            },
        };
        for (i, f) in e.report.findings.iter_mut().enumerate() {
            f.locations = vec![model(u32::try_from(i).unwrap() + 1)];
        }
        let out = render(&report);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "::error file=ci/pgcost.toml,line=6,title=pgcost%3A projects over budget::projects: over budget: statements 4.00 per request, budget 3"
        );
        assert!(
            lines[1].starts_with("::error file=ci/pgcost.toml,line=7,"),
            "{out}"
        );
        // The breach of a database's budget that the file does not spell falls back to
        // the [endpoint.budget] header.
        assert!(
            lines[2].starts_with("::error file=ci/pgcost.toml,line=5,"),
            "{out}"
        );
        let e = &report.endpoints[0];
        let total = e.breaches.len() + e.report.findings.len();
        assert_eq!(lines.len(), total.min(MAX_ANNOTATIONS), "{out}");
        assert!(out.contains("file=app/models/group.rb,line=1,"), "{out}");
        assert!(
            out.contains("This line is the model of `groups` (Group)."),
            "{out}"
        );
        assert_eq!(
            overflow_count(&report),
            total.saturating_sub(MAX_ANNOTATIONS)
        );
        assert_eq!(
            overflow_markdown(&report).is_some(),
            total > MAX_ANNOTATIONS
        );
    }

    #[test]
    fn a_tagged_line_is_annotated_unless_its_path_is_absolute() {
        let mut report = check();
        let tag = |uri: &str| crate::render::sarif_tests::tagged_line(uri, "/p");
        let model = CodeLocation {
            uri: "app/models/group.rb".into(),
            line: 3,
            origin: Origin::Model {
                table: "groups".into(),
                model: "Group".into(),
            },
        };
        let findings = &mut report.endpoints[0].report.findings;
        findings.truncate(1);
        findings.push(findings[0].clone());
        findings[0].locations = vec![tag("app/api.rb"), model.clone()];
        findings[1].locations = vec![tag("/srv/app/api.rb"), model];
        findings[0].query = Some("SELECT 1 FROM groups /*route='%2Fp',action='index'*/".into());
        let out = render(&report);
        // The tag comment is in the tags: the annotation shows the statement without it.
        assert!(out.contains(": SELECT 1 FROM groups. Fixing it"), "{out}");
        assert!(!out.contains("action="), "{out}");
        assert!(
            out.contains("file=app/api.rb,line=12,")
                && out.contains(
                    "This line is the call site the app tagged (route /p, 100%25 of samples)."
                ),
            "{out}"
        );
        assert!(out.contains("file=app/models/group.rb,line=3,"), "{out}");
        assert!(!out.contains("/srv/app"), "{out}");
    }
}
