//! The demo's HTML page: the three permission pipelines side by side, as charts of what
//! one request costs in each, then the naive run's findings.

use maud::html;

use super::table::comparison;
use crate::render::audit::html::findings;
use crate::render::html::chart::{BarChart, Series};
use crate::render::html::{grid_table, page, verdict};
use pgcost_core::demo::{DemoReport, Ramps};
use pgcost_core::report::Report;

/// A charted figure: its title with the unit, and how to read it off a report.
type Figure = (&'static str, fn(&Report) -> Option<f64>);

const FIGURES: [Figure; 6] = [
    ("statements per request", |r| r.per_request.statements),
    ("rows read per request", |r| Some(r.per_request.rows_read)),
    ("rows returned per request", |r| r.per_request.rows_returned),
    ("transactions per request", |r| {
        Some(r.per_request.transactions)
    }),
    ("db time per request (ms)", |r| r.per_request.db_time_ms),
    ("p50 latency (ms)", |r| Some(r.load.latency_ms.p50)),
];

/// The page, with the ramps of `pgcost demo --ramp` after the findings.
pub fn render_with_ramps(demo: &DemoReport, ramps: Option<&Ramps>) -> String {
    let pipelines = demo.all();
    let reasons: Vec<String> = (pipelines.iter())
        .flat_map(|(p, r)| (r.invalid_reasons.iter()).map(move |x| format!("{}: {x}", p.name())))
        .collect();
    let warnings: Vec<String> = (pipelines.iter())
        .flat_map(|(p, r)| r.notes.iter().map(move |x| format!("{}: {x}", p.name())))
        .collect();
    let categories: Vec<String> = pipelines.iter().map(|(p, _)| p.name().into()).collect();
    let charts = FIGURES.iter().map(|(title, of)| BarChart {
        title: title.to_string(),
        axis: title.to_string(),
        categories: categories.clone(),
        series: vec![Series::of(title, &pipelines, |(_, r)| of(r))],
        limits: None,
        note: None,
        decimals: 2,
    });
    let title = "pgcost demo: what one request costs Postgres, per permission pipeline";
    let body = html! {
        header {
            h1 { (title) }
            p.meta { "GET /api/v1/projects?limit=20 on the bundled demo API, one audit per pipeline: naive (the whole permission set in several queries), exists (one round trip of EXISTS probes), cached (exists plus a per-request memo and a short-lived per-process cache)." }
        }
        (verdict(demo.valid(), "all three pipelines were measured validly", &reasons, &warnings))
        section {
            h2 { "The three pipelines side by side" }
            @for chart in charts { (chart.render()) }
            (grid_table(&comparison(demo)))
        }
        h2 { "The naive pipeline" }
        (findings(&demo.pipelines.naive))
        @if let Some(ramps) = ramps {
            @for (name, ramp) in [("naive", &ramps.naive), ("cached", &ramps.cached)] {
                section {
                    h2 { "Ramp of the " (name) " pipeline" }
                    p.meta { "The demo API runs inside pgcost: its CPU counts as pgcost's own." }
                    (crate::render::ramp::html::body(ramp))
                }
            }
        }
    };
    page(title, body)
}
