//! Views of a `RampReport`: one row per step, then the verdict in one sentence and its
//! evidence; as a terminal table, as Markdown, or as JSON (the HTML page is in
//! `html.rs`).

use crate::render::format::{Format, RAMP_FORMATS};
use pgcost_core::ramp::RampReport;
use pgcost_core::ramp::step::Step;
use pgcost_core::ramp::verdict::{Wall, decide_text};

use crate::render::audit::markdown::markdown_table;
use crate::render::audit::table::terminal_table;
use crate::render::sections::Grid;
use crate::render::text::json;
use crate::render::view::View;

pub mod html;

impl View for RampReport {
    fn name(&self) -> &'static str {
        "a ramp report"
    }

    fn formats(&self) -> &'static [Format] {
        RAMP_FORMATS
    }

    fn view(&self, format: Format) -> Option<String> {
        Some(match format {
            Format::Json => json(self),
            Format::Markdown => markdown(self),
            Format::Html => html::render(self),
            Format::Table => table(self),
            Format::Junit | Format::Sarif | Format::Github => return None,
        })
    }

    fn headline(&self) -> Option<String> {
        Some(sentence(self))
    }
}

fn step_row(step: &Step) -> Vec<String> {
    let db = &step.database.activity;
    let load = match (step.concurrency, step.rate) {
        (Some(c), _) => c.to_string(),
        (None, Some(rate)) => format!("{rate:.0}/s"),
        _ => "-".into(),
    };
    let top_wait = db.waits.top().map_or("-".into(), |(name, share)| {
        format!("{name} {:.0}%", share * 100.0)
    });
    let app_cpu = step.app_cpu.map_or("-".into(), |cpu| {
        format!(
            "{:.0}% / {:.2}",
            cpu.busiest_thread_share * 100.0,
            cpu.cores
        )
    });
    let rps = step.spread.rps.map_or(format!("{:.0}", step.rps), |s| {
        format!("{:.0} ± {:.1}", step.rps, s.se)
    });
    vec![
        load,
        rps,
        format!("{:.1}", step.latency_ms.p50),
        format!("{:.1}", step.latency_ms.p99),
        step.error_count().to_string(),
        format!("{:.2}", step.per_request.statements),
        format!("{:.2}", step.per_request.db_time_ms),
        format!(
            "{:.1} / {}",
            db.active_backends_mean, db.connected_backends_max
        ),
        top_wait,
        app_cpu,
    ]
}

pub(crate) fn grid(report: &RampReport) -> Grid {
    let header = [
        "c",
        "rps ± s.e.",
        "p50 ms",
        "p99 ms",
        "errors",
        "stmts/req",
        "db ms/req",
        "active/conn",
        "top wait",
        "app cpu (thread / cores)",
    ];
    let mut grid = Grid::new(&header, report.steps.iter().map(step_row).collect(), 0..8);
    with_pgbouncer(&mut grid, &report.steps);
    grid
}

/// With `--pgbouncer`, a last column: PgBouncer's wait per request and its most clients
/// waiting.
fn with_pgbouncer(grid: &mut Grid, steps: &[Step]) {
    if steps.iter().all(|s| s.pgbouncer.is_none()) {
        return;
    }
    grid.header.push("pgbouncer wait ms / waiting".into());
    for (row, step) in grid.rows.iter_mut().zip(steps) {
        row.push(step.pgbouncer.map_or("-".into(), |b| {
            format!("{:.2} / {}", b.wait_ms_per_request, b.max_cl_waiting)
        }));
    }
}

/// The verdict in one sentence.
pub fn sentence(report: &RampReport) -> String {
    let v = &report.verdict;
    let knee = (v.knee_concurrency).map_or(String::new(), |c| format!(" (knee at c={c})"));
    let what = match v.wall {
        Wall::App => "the app itself is the wall",
        Wall::Pool => "the app's connection pool is the wall",
        Wall::Database => "the database is the wall",
        Wall::Host => "the machine pgcost runs on is saturated by other work: the host is the wall",
        Wall::LoadGenerator => "pgcost ran out of CPU: the load generator is the wall",
        Wall::None => "no wall was found",
        Wall::Inconclusive => {
            return format!(
                "Verdict: inconclusive{knee}: a difference the verdict needs is within the \
                 noise of its steps; {}.",
                decide_text(v.step_seconds_needed)
            );
        }
    };
    format!("Verdict: {what}{knee}.")
}

/// The machine at the step where other work took the most of it, when `/proc/stat` was
/// read.
fn host_note(report: &RampReport) -> Option<String> {
    let (step, host) = (report.steps.iter())
        .filter_map(|s| Some((s, s.host?)))
        .max_by(|a, b| a.1.others_cores.total_cmp(&b.1.others_cores))?;
    let load = (host.load_average).map_or(String::new(), |l| format!(", load average {l:.1}"));
    Some(format!(
        "This machine: at {}, {:.2} cores of its {} CPUs busy, {:.2} of them with other \
         work than pgcost, the app's --pid and Postgres{load}{}",
        pgcost_core::ramp::verdict::label(step),
        host.busy_cores,
        host.cpus,
        host.others_cores,
        if host.saturated { " (saturated)" } else { "" }
    ))
}

pub(crate) fn notes(report: &RampReport) -> Vec<String> {
    let mut notes = vec![
        "Noise: rps ± one standard error of the step's one-second samples; a knee or a wall \
         is claimed only when the difference is beyond Student's t (99.9%) times its \
         standard error (pgcost docs ramp)"
            .to_string(),
    ];
    notes.extend(host_note(report));
    if let Some(usl) = &report.usl {
        let peak = match (usl.peak_concurrency, usl.peak_rps) {
            (Some(c), Some(rps)) => format!(", peak {rps:.0} rps at c≈{c:.0}"),
            _ => ", no peak (κ = 0)".into(),
        };
        notes.push(format!(
            "USL: σ {:.3}, κ {:.5}{peak}, r² {:.2}{}",
            usl.sigma,
            usl.kappa,
            usl.r_squared,
            if usl.poor_fit { " (poor fit)" } else { "" }
        ));
    }
    notes.push(format!("Pool: {}", report.pool.advice));
    if let Some(t) = &report.totals {
        notes.push(format!(
            "Whole ramp (pg_stat_database): {} transactions, {} rows read, {} rows \
             fetched, {} requests sent",
            t.transactions, t.rows_returned, t.rows_fetched, t.requests_sent
        ));
    }
    notes.extend(report.stopped_early.iter().cloned());
    notes.extend(report.notes.iter().map(|w| format!("warning: {w}")));
    notes.extend((report.invalid_reasons.iter()).map(|w| format!("not valid: {w}")));
    notes
}

/// Each line of `lines`, prefixed by `bullet`.
fn bullets(lines: &[String], bullet: &str) -> String {
    lines
        .iter()
        .map(|line| format!("{bullet}{line}\n"))
        .collect()
}

/// The ramp as a terminal table; the demo draws its ramps with it too.
pub(crate) fn table(report: &RampReport) -> String {
    let (method, url) = (&report.target.method, &report.target.url);
    format!(
        "pgcost ramp {method} {url}\n{}\n{}\n{}\n{}",
        terminal_table(&grid(report)),
        sentence(report),
        bullets(&report.verdict.evidence, "  - "),
        bullets(&notes(report), "")
    )
}

/// The ramp as Markdown; the demo draws its ramps with it too.
pub(crate) fn markdown(report: &RampReport) -> String {
    let (method, url) = (&report.target.method, &report.target.url);
    format!(
        "### pgcost ramp `{method} {url}`\n\n{}\n\n**{}**\n\n{}\n{}",
        markdown_table(&grid(report)),
        sentence(report),
        bullets(&report.verdict.evidence, "- "),
        bullets(&notes(report), "- ")
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pgcost_core::ramp::pool::PoolAdvice;
    use pgcost_core::ramp::verdict::Verdict;
    use pgcost_core::ramp::{RampTarget, SCHEMA_VERSION};

    pub(crate) fn report() -> RampReport {
        RampReport {
            schema_version: SCHEMA_VERSION,
            target: RampTarget {
                method: "GET".into(),
                url: "http://127.0.0.1:3000/x".into(),
                database: "postgres://app@127.0.0.1/app".into(),
                server_version: "15".into(),
            },
            steps: Vec::new(),
            verdict: Verdict {
                knee_concurrency: Some(2),
                evidence: vec!["every pooled connection was busy".into()],
                ..Verdict::of(Wall::Pool, Vec::new())
            },
            usl: None,
            pool: PoolAdvice {
                connected_backends_max: 2,
                max_connections: Some(100),
                reserved_connections: Some(3),
                app_processes_possible: Some(48),
                bigger_pool_helps: Some(true),
                advice: "a bigger pool can help".into(),
            },
            totals: None,
            stopped_early: Some("stopped after c=4: p99 600.0 ms passed --max-p99 500ms".into()),
            valid: true,
            notes: Vec::new(),
            invalid_reasons: Vec::new(),
        }
    }

    #[test]
    fn every_view_says_the_verdict_its_evidence_and_why_it_stopped() {
        let r = report();
        let sentence = "Verdict: the app's connection pool is the wall (knee at c=2).";
        assert_eq!(super::sentence(&r), sentence);
        for format in [Format::Table, Format::Markdown] {
            let text = r.render(format).unwrap();
            assert!(text.contains(sentence), "{text}");
            assert!(text.contains("every pooled connection was busy"), "{text}");
            assert!(text.contains("passed --max-p99"), "{text}");
            assert!(text.contains("Pool: a bigger pool can help"), "{text}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&r.render(Format::Json).unwrap()).unwrap();
        assert_eq!(json["verdict"]["wall"], "pool");
        assert_eq!(json["pool"]["app_processes_possible"], 48);
    }

    #[test]
    fn a_ramps_notes_show_as_warnings_and_carry_their_code_in_json() {
        let mut r = report();
        r.notes = vec![pgcost_core::report::model::notes::Note::UslPoorFit { r_squared: 0.5 }];
        let line = "the Universal Scalability Law fits the curve poorly (r² 0.50): its peak is \
                    not a prediction";
        let table = r.render(Format::Table).unwrap();
        assert!(table.contains(&format!("warning: {line}")), "{table}");
        let json: serde_json::Value =
            serde_json::from_str(&r.render(Format::Json).unwrap()).unwrap();
        assert_eq!(json["warnings"], serde_json::json!([line]));
        assert_eq!(
            json["notes"],
            serde_json::json!([{"code": "usl_poor_fit", "r_squared": 0.5, "message": line}])
        );
    }

    #[test]
    fn an_inconclusive_verdict_says_so_with_the_spread_and_the_step_length_needed() {
        let mut r = report();
        r.steps = vec![pgcost_core::ramp::tests::step(2, 355.0, 5.1, 2, 1.9)];
        r.verdict = Verdict {
            step_seconds_needed: Some(25),
            evidence: vec!["from c=1 to c=2 throughput went ... within the noise".into()],
            ..Verdict::of(Wall::Inconclusive, Vec::new())
        };
        let sentence = super::sentence(&r);
        assert!(
            sentence.starts_with("Verdict: inconclusive: "),
            "{sentence}"
        );
        assert!(sentence.contains("(--step-duration 25s)."), "{sentence}");
        for format in [Format::Table, Format::Markdown, Format::Html] {
            let text = r.render(format).unwrap();
            assert!(text.contains(&sentence), "{format:?}: {text}");
            // 1% of 355 rps per second over five seconds: a standard error of 1.6.
            assert!(text.contains("355 ± 1.6"), "{format:?}: {text}");
            assert!(text.contains("rps ± s.e."), "{format:?}: {text}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&r.render(Format::Json).unwrap()).unwrap();
        assert_eq!(json["verdict"]["wall"], "inconclusive");
        assert_eq!(json["verdict"]["step_seconds_needed"], 25);
        assert_eq!(json["steps"][0]["spread"]["rps"]["samples"], 5);
    }
}
