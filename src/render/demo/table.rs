//! The demo's table view: the three pipelines side by side, then the naive run's findings,
//! then the ramps; and the comparison rows the Markdown and HTML views share.

use std::fmt::Write;

use crate::render::audit::table;
use crate::render::ramp;
use crate::render::sections::Grid;
use crate::render::{sections, text};
use pgcost_core::demo::{DemoReport, Ramps};
use pgcost_core::ramp::RampReport;
use pgcost_core::report::Report;

/// A row of the comparison table: its label and how to read it off a report.
type Metric = (&'static str, fn(&Report) -> String);

const METRICS: [Metric; 7] = [
    ("transactions / request", |r| {
        format!("{:.2}", r.per_request.transactions)
    }),
    ("statements / request", |r| {
        text::figure(r.per_request.statements)
    }),
    ("rows read / request", |r| {
        format!("{:.2}", r.per_request.rows_read)
    }),
    ("rows returned / request", |r| {
        text::figure(r.per_request.rows_returned)
    }),
    ("p50 latency ms", |r| {
        format!("{:.2}", r.load.latency_ms.p50)
    }),
    ("requests / second", |r| format!("{:.0}", r.load.rps)),
    ("valid", |r| if r.valid { "yes" } else { "NO" }.into()),
];

/// The before/after table, then the naive run's findings.
pub fn render_comparison(demo: &DemoReport) -> String {
    let mut out = format!(
        "What one request costs Postgres, per permission pipeline\n{}\n\n",
        table::terminal_table(&comparison(demo))
    );
    for (pipeline, report) in demo.all() {
        for reason in &report.invalid_reasons {
            let _ = writeln!(out, "NOT VALID ({}): {reason}", pipeline.name());
        }
    }
    let naive = &demo.pipelines.naive;
    if naive.findings.is_empty() {
        out.push_str("The naive pipeline produced no findings.\n");
    } else {
        out.push_str("Findings of the naive run (most severe first)\n\n");
        out.push_str(&sections::findings_brief(naive, 98));
        // The demo shows what the brief leaves to `pgcost explain`: the first finding's
        // rewrite and the plan Postgres would use for it.
        out.push_str("\nThe first finding in full, with its rewrite and its plan:\n\n");
        out.push_str(&sections::finding_text(1, &naive.findings[0], 98));
    }
    // Where each statement comes from: the demo tags its SQL with its route and line.
    if let Some((title, Some(grid))) = crate::render::tags::section(naive, (34, 58)) {
        let _ = write!(
            out,
            "\nThe naive run's {title}\n{}",
            table::terminal_table(&grid)
        );
    }
    out
}

/// One row per metric, one column per pipeline.
pub(super) fn comparison(demo: &DemoReport) -> Grid {
    let header = ["GET /api/v1/projects?limit=20", "naive", "exists", "cached"];
    let rows = (METRICS.iter())
        .map(|(label, value)| {
            let mut row = vec![label.to_string()];
            row.extend(demo.all().iter().map(|(_, r)| value(r)));
            row
        })
        .collect();
    Grid::new(&header, rows, 1..4)
}

/// The ramps as tables, after the comparison; nothing without them.
pub(super) fn ramp_tables(ramps: Option<&Ramps>) -> String {
    let Some(ramps) = ramps else {
        return String::new();
    };
    let table = |name: &str, report: &RampReport| {
        format!(
            "\nRamp of the {name} pipeline (the API runs inside pgcost: its CPU counts as \
             pgcost's own)\n{}",
            ramp::table(report)
        )
    };
    table("naive", &ramps.naive) + &table("cached", &ramps.cached)
}
