//! The demo's table view: the three pipelines side by side, then the naive run's
//! findings.

use std::fmt::Write;

use super::DemoReport;
use crate::cost::report::Report;
use crate::render;

/// A row of the comparison table: its label and how to read it off a report.
type Metric = (&'static str, Box<dyn Fn(&Report) -> String>);

/// The before/after table, then the naive run's findings.
pub fn render_comparison(demo: &DemoReport) -> String {
    let rows: Vec<Metric> = vec![
        (
            "transactions / request",
            Box::new(|r: &Report| format!("{:.2}", r.per_request.transactions)),
        ),
        (
            "statements / request",
            Box::new(|r: &Report| render::figure(r.per_request.statements)),
        ),
        (
            "rows read / request",
            Box::new(|r: &Report| format!("{:.2}", r.per_request.rows_read)),
        ),
        (
            "rows returned / request",
            Box::new(|r: &Report| render::figure(r.per_request.rows_returned)),
        ),
        (
            "p50 latency ms",
            Box::new(|r: &Report| format!("{:.2}", r.load.latency_ms.p50)),
        ),
        (
            "requests / second",
            Box::new(|r: &Report| format!("{:.0}", r.load.rps)),
        ),
        (
            "valid",
            Box::new(|r: &Report| if r.valid { "yes".into() } else { "NO".into() }),
        ),
    ];
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(
        ["GET /api/v1/projects?limit=20", "naive", "exists", "cached"].map(String::from),
    );
    for (label, value) in &rows {
        let mut record = vec![label.to_string()];
        record.extend(demo.all().iter().map(|(_, r)| value(r)));
        builder.push_record(record);
    }
    let mut table = builder.build();
    table.with(tabled::settings::Style::sharp());
    table.with(
        tabled::settings::Modify::new(tabled::settings::object::Columns::new(1..4))
            .with(tabled::settings::Alignment::right()),
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "What one request costs Postgres, per permission pipeline\n{table}\n"
    );
    for (pipeline, report) in demo.all() {
        for reason in &report.invalid_reasons {
            let _ = writeln!(out, "NOT VALID ({}): {reason}", pipeline.name());
        }
    }
    let naive = &demo.pipelines.naive;
    if naive.findings.is_empty() {
        let _ = writeln!(out, "The naive pipeline produced no findings.");
    } else {
        let _ = writeln!(
            out,
            "Findings of the naive run (most avoidable rows first)\n"
        );
        out.push_str(&render::findings_text(naive, 98));
    }
    out
}
