//! The HTML view of a `RampReport`: the verdict first, then the curves by step (throughput
//! with the USL fit and the knee, latency, database time, backends, CPU), the steps'
//! table, the evidence and the notes.

use maud::{Markup, html};

use super::{grid, notes, sentence};
use crate::render::html::chart::Series;
use crate::render::html::lines::{LineChart, Model};
use crate::render::html::{grid_table, page, strip, verdict};
use pgcost_core::ramp::RampReport;
use pgcost_core::ramp::step::Step;
use pgcost_core::ramp::usl;
use pgcost_core::report::model::invalid;
use pgcost_core::report::model::notes::messages;

/// The whole page of one ramp.
pub fn render(report: &RampReport) -> String {
    let title = format!("pgcost ramp {} {}", report.target.method, report.target.url);
    page(&title, html! { h1 { (title) } (body(report)) })
}

/// The page's content under its title, also embedded by the demo's page.
pub fn body(report: &RampReport) -> Markup {
    html! {
        (verdict(report.valid, &sentence(report), &invalid::messages(&report.invalid_reasons), &messages(&report.notes)))
        (strip(&cards(report)))
        @for chart in charts(report) { (chart.render()) }
        h2 { "Steps" }
        (grid_table(&grid(report)))
        h2 { "Evidence" }
        ul { @for line in &report.verdict.evidence { li { (line) } } }
        h2 { "Notes" }
        ul { @for line in notes(report) { li { (line) } } }
    }
}

fn cards(report: &RampReport) -> Vec<(String, String)> {
    let v = &report.verdict;
    let knee = match (v.knee_concurrency, v.knee_rate) {
        (Some(c), _) => format!("c = {c}"),
        (None, Some(rate)) => format!("{rate:.0}/s"),
        _ => "none".into(),
    };
    let peak = report.steps.iter().map(|s| s.rps).fold(0.0, f64::max);
    vec![
        ("wall".into(), v.wall.name().into()),
        ("knee".into(), knee),
        ("highest requests per second".into(), format!("{peak:.0}")),
        ("steps".into(), report.steps.len().to_string()),
    ]
}

/// Where each step sits on the x axis: log2 of the concurrency (the default steps double),
/// or the arrival rate; and its label.
struct Axis {
    desc: &'static str,
    xs: Vec<f64>,
    labels: Vec<String>,
    open_model: bool,
}

impl Axis {
    fn of(steps: &[Step]) -> Axis {
        let open_model = steps.iter().any(|s| s.concurrency.is_none());
        let (xs, labels) = steps
            .iter()
            .map(|s| match (s.concurrency, s.rate) {
                (Some(c), _) if !open_model => (position(c as f64), c.to_string()),
                (_, rate) => {
                    let rate = rate.unwrap_or(0.0);
                    (rate, format!("{rate:.0}/s"))
                }
            })
            .unzip();
        let desc = if open_model {
            "arrival rate (requests per second)"
        } else {
            "concurrency (requests in flight, log scale)"
        };
        Axis {
            desc,
            xs,
            labels,
            open_model,
        }
    }

    /// A chart over the steps, with `note` under it (none when it is empty).
    fn chart(&self, title: &str, y_desc: &str, note: &str, series: Vec<Series>) -> LineChart {
        LineChart {
            title: title.into(),
            x_desc: self.desc.into(),
            y_desc: y_desc.into(),
            xs: self.xs.clone(),
            x_labels: self.labels.clone(),
            series,
            model: None,
            mark: None,
            note: (!note.is_empty()).then(|| note.into()),
            decimals: 2,
        }
    }
}

fn position(concurrency: f64) -> f64 {
    concurrency.max(1.0).log2()
}

fn charts(report: &RampReport) -> Vec<LineChart> {
    let steps = &report.steps;
    let axis = Axis::of(steps);
    let mut throughput = axis.chart(
        "Throughput by step",
        "requests per second",
        "Throughput should grow with the load; where it stops growing is the knee, and the \
         verdict names what saturated there.",
        vec![Series::of("requests per second", steps, |s| Some(s.rps))],
    );
    throughput.model = usl_curve(report, &axis);
    throughput.mark = knee_mark(report, &axis);
    let latency = axis.chart(
        "Latency by step",
        "latency (ms)",
        "",
        vec![
            Series::of("p50", steps, |s| Some(s.latency_ms.p50)),
            Series::of("p95", steps, |s| Some(s.latency_ms.p95)),
            Series::of("p99", steps, |s| Some(s.latency_ms.p99)),
        ],
    );
    let database = axis.chart(
        "Database time per request",
        "milliseconds per request",
        "Flat while throughput stalls: the wall is in front of the database. Rising: the \
         database is the wall.",
        vec![
            Series::of("db time (pg_stat_statements)", steps, |s| {
                Some(s.per_request.db_time_ms)
            }),
            Series::of("db backends' CPU", steps, |s| s.database.cpu_ms_per_request),
        ],
    );
    vec![
        throughput,
        latency,
        database,
        backends(&axis, steps),
        cpu(&axis, steps),
    ]
}

fn backends(axis: &Axis, steps: &[Step]) -> LineChart {
    axis.chart(
        "Backends of the target database (pg_stat_activity)",
        "backends",
        "Active reaching connected means every pooled connection was busy: requests queue \
         in the app for one.",
        vec![
            Series::of("connected (max)", steps, |s| {
                Some(s.database.activity.connected_backends_max as f64)
            }),
            Series::of("active (mean)", steps, |s| {
                Some(s.database.activity.active_backends_mean)
            }),
            Series::of("active (max)", steps, |s| {
                Some(s.database.activity.active_backends_max as f64)
            }),
            Series::of("idle in transaction (mean)", steps, |s| {
                Some(s.database.activity.idle_in_transaction_mean)
            }),
        ],
    )
}

fn cpu(axis: &Axis, steps: &[Step]) -> LineChart {
    let percent = |cores: f64| cores * 100.0;
    let mut chart = axis.chart(
        "CPU by step",
        "% of one core",
        "An app thread near 100% is the app's wall; the app processes need --pid, and the \
         database backends' CPU is read when Postgres runs on this host.",
        vec![
            Series::of("busiest app thread", steps, |s| {
                s.app_cpu.map(|c| percent(c.busiest_thread_share))
            }),
            Series::of("app processes", steps, |s| {
                s.app_cpu.map(|c| percent(c.cores))
            }),
            Series::of("database backends", steps, |s| {
                s.database.cpu_cores.map(percent)
            }),
            Series::of("pgcost", steps, |s| {
                Some(percent(s.load_generator_cpu.cores))
            }),
        ],
    );
    chart.decimals = 0;
    chart
}

/// The fitted law between the lowest and highest concurrency (closed loop only).
fn usl_curve(report: &RampReport, axis: &Axis) -> Option<Model> {
    let fit = report.usl.as_ref().filter(|_| !axis.open_model)?;
    let lo = report.steps.iter().filter_map(|s| s.concurrency).min()? as f64;
    let hi = report.steps.iter().filter_map(|s| s.concurrency).max()? as f64;
    let points = (0..=48)
        .map(|i| lo * (hi / lo).powf(i as f64 / 48.0))
        .map(|n| {
            (
                position(n),
                usl::throughput(fit.lambda, fit.sigma, fit.kappa, n),
            )
        })
        .collect();
    let quality = if fit.poor_fit { ", poor fit" } else { "" };
    Some(Model {
        name: format!("USL fit (r² {:.2}{quality})", fit.r_squared),
        points,
    })
}

fn knee_mark(report: &RampReport, axis: &Axis) -> Option<(String, f64)> {
    let v = &report.verdict;
    match (v.knee_concurrency, v.knee_rate) {
        (Some(c), _) if !axis.open_model => Some((format!("knee (c = {c})"), position(c as f64))),
        (_, Some(rate)) if axis.open_model => Some((format!("knee ({rate:.0}/s)"), rate)),
        _ => None,
    }
}
