//! The demo's Markdown view: the three pipelines side by side, the naive run's findings
//! folded away, then the ramps of `--ramp`.

use std::fmt::Write;

use super::table::comparison;
use crate::render::audit::markdown::markdown_table;
use crate::render::ramp;
use crate::render::sections;
use pgcost_core::demo::{DemoReport, Ramps};

/// The comparison as Markdown, for a pull-request comment or a page of notes.
pub fn render(demo: &DemoReport, ramps: Option<&Ramps>) -> String {
    let mark = if demo.valid() { "✅" } else { "❌" };
    let mut out = format!(
        "### {mark} pgcost demo: what one request costs Postgres, per permission pipeline\n\n{}\n\n",
        markdown_table(&comparison(demo))
    );
    let mut notes = String::new();
    for (pipeline, report) in demo.all() {
        for reason in &report.invalid_reasons {
            let _ = writeln!(notes, "- ❌ NOT VALID ({}): {reason}", pipeline.name());
        }
        for warning in &report.notes {
            let _ = writeln!(notes, "- ⚠️ {}: {warning}", pipeline.name());
        }
    }
    if !notes.is_empty() {
        out.push_str(&notes);
        out.push('\n');
    }
    out.push_str(&naive_findings(demo));
    if let Some(ramps) = ramps {
        for (name, report) in [("naive", &ramps.naive), ("cached", &ramps.cached)] {
            let view = ramp::markdown(report);
            let _ = write!(
                out,
                "\n#### Ramp of the {name} pipeline\n\nThe demo API runs inside pgcost: its \
                 CPU counts as pgcost's own.\n\n{view}"
            );
        }
    }
    out
}

/// The naive run's findings, folded away, and the first in full with its rewrite.
fn naive_findings(demo: &DemoReport) -> String {
    let naive = &demo.pipelines.naive;
    let Some(first) = naive.findings.first() else {
        return "The naive pipeline produced no findings.\n".into();
    };
    format!(
        "<details><summary>{} finding(s) of the naive run (most severe first)</summary>\n\n\
         ```text\n{}```\n\nThe first finding in full, with its rewrite and its plan:\n\n\
         ```text\n{}```\n</details>\n",
        naive.findings.len(),
        sections::findings_brief(naive, 98),
        sections::finding_text(1, first, 98)
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::render::View;
    use crate::render::format::{DEMO_FORMATS, Format};
    use pgcost_core::demo::{Demo, Pipelines};

    pub(crate) fn demo() -> DemoReport {
        let naive = crate::render::tests::sample();
        let mut exists = naive.clone();
        exists.findings.clear();
        exists.per_request.rows_read = 3.0;
        DemoReport {
            pipelines: Pipelines {
                naive,
                exists: exists.clone(),
                cached: exists,
            },
        }
    }

    #[test]
    fn the_demo_has_a_markdown_view() {
        assert!(DEMO_FORMATS.contains(&Format::Markdown));
        let report = demo();
        let document = Demo {
            report: &report,
            ramps: None,
        };
        let text = document.render(Format::Markdown).unwrap();
        assert!(text.starts_with("### ✅ pgcost demo:"), "{text}");
        assert!(
            text.contains("| GET /api/v1/projects?limit=20 | naive  | exists | cached |"),
            "{text}"
        );
        assert!(text.contains("| rows read / request"), "{text}");
        assert!(text.contains("finding(s) of the naive run"), "{text}");
        insta::assert_snapshot!("demo_markdown", text);
    }
}
