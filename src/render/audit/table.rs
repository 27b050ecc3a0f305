//! The terminal view: aligned tables that fit in 100 columns.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use crate::render::sections::{self, Grid};
use crate::render::text::{Exporter, command_load_line, status_line, verdict_line};
use crate::render::{background, pgbouncer, tags};
use pgcost_core::report::Report;
use pgcost_core::report::model::invalid::Invalid;
use pgcost_core::report::model::notes::Note;
use pgcost_core::text::one_line;

/// The statements shown; JSON has them all.
const STATEMENTS_SHOWN: usize = 20;

pub struct TableExporter;

impl Exporter for TableExporter {
    fn render(&self, r: &Report) -> String {
        [
            Some(summary(r)),
            Some(titled("Per request", &sections::per_request(r))),
            sections::nodes(r).map(|grid| titled("Per database (per request)", &grid)),
            background::section(r).map(|(title, grid)| titled(&title, &grid)),
            pgbouncer::grid(r).map(|grid| titled("PgBouncer", &grid)),
            baseline(r),
            sections::setup(r, 48)
                .map(|(title, detail, grid)| titled(&format!("{title}\n{detail}"), &grid)),
            statements(r),
            tags::section(r, (34, 58)).map(|(title, grid)| match grid {
                Some(grid) => titled(&title, &grid),
                None => format!("\n{title}\n"),
            }),
            (sections::statement_writes(r, 40))
                .map(|grid| titled("Statements that wrote (per request)", &grid)),
            sections::tables(r).map(|grid| titled("Tables (per request)", &grid)),
            findings(r),
            Some(list("Why the numbers are not valid", reasons(r))),
            Some(list("Warnings", later_warnings(r))),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// A grid drawn with box lines, figures aligned right.
pub fn terminal_table(grid: &Grid) -> String {
    let mut builder = Builder::default();
    builder.push_record(grid.header.clone());
    for row in &grid.rows {
        builder.push_record(row.clone());
    }
    let mut table = builder.build();
    table.with(Style::sharp());
    table.with(Modify::new(Columns::new(grid.figures.clone())).with(Alignment::right()));
    table.to_string()
}

/// A blank line, the title, then the grid.
fn titled(title: &str, grid: &Grid) -> String {
    format!("\n{title}\n{}\n", terminal_table(grid))
}

/// A blank line, the title, then one item a line; nothing without items.
pub(crate) fn list(title: &str, items: impl IntoIterator<Item = impl std::fmt::Display>) -> String {
    let items: String = items
        .into_iter()
        .map(|item| format!("- {item}\n"))
        .collect();
    if items.is_empty() {
        return String::new();
    }
    format!("\n{title}\n{items}")
}

/// The verdict, then what was measured and how, one labelled line each.
fn summary(r: &Report) -> String {
    let (t, l) = (&r.target, &r.load);
    let v = t.server_version_num;
    let mut lines = vec![
        verdict_line(r),
        format!("endpoint   {} {}", t.method, one_line(&t.url, 85)),
        format!("database   {}", one_line(&t.database, 85)),
        format!(
            "server     PostgreSQL {}.{}, statistics read via the {} connection",
            v / 10000,
            v % 10000,
            t.stats_source
        ),
    ];
    if let Some(line) = command_load_line(r) {
        lines.push(format!("load       {line}"));
    } else {
        lines.push(format!(
            "load       {} requests, concurrency {}, {:.2} s, {:.1} req/s, warm-up {}",
            l.requests, l.concurrency, l.wall_seconds, l.rps, l.warmup
        ));
        lines.push(format!("status     {}", status_line(r)));
    }
    if !t.credentials.is_empty() {
        lines.push(format!(
            "auth       {}",
            one_line(&t.credentials.join("; "), 88)
        ));
    }
    let p = &l.latency_ms;
    if l.command_exit.is_none() {
        lines.push(format!(
            "latency    p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            p.p50, p.p95, p.p99, p.max
        ));
    }
    let s = &r.settle;
    let timed_out = if s.timed_out { " (timed out)" } else { "" };
    lines.push(format!(
        "settle     {:.1} s before, {:.1} s after the burst{timed_out}",
        s.before_seconds, s.after_seconds
    ));
    for warning in r.notes.iter().filter(|w| w.in_header()) {
        lines.push(format!(
            "warning    {}",
            textwrap::fill(&warning.message(), header_wrap())
        ));
    }
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// A header line's continuation, indented under its value.
fn header_wrap() -> textwrap::Options<'static> {
    textwrap::Options::new(87).subsequent_indent("           ")
}

/// The warnings shown after the findings: all but the ones the header shows.
fn later_warnings(r: &Report) -> impl Iterator<Item = String> {
    (r.notes.iter())
        .filter(|w| !w.in_header())
        .map(Note::message)
}

fn baseline(r: &Report) -> Option<String> {
    let b = sections::baseline(r)?;
    Some(format!(
        "\nUnauthenticated baseline: the same burst without credentials ({})\n{}\nafter \
         authentication: with minus without, the cost past the credential check\n",
        b.status,
        terminal_table(&b.grid)
    ))
}

fn statements(r: &Report) -> Option<String> {
    let columns = ["mean ms", "rows%", "query"];
    let grid = sections::statements(r, STATEMENTS_SHOWN, &columns, |s| {
        vec![
            format!("{:.3}", s.mean_exec_ms),
            format!("{:.0}%", s.share_of_rows_returned * 100.0),
            one_line(&sections::in_database(&s.database, &s.query), 40),
        ]
    })?;
    let mut out = titled("Statements (per request, most buffers first)", &grid);
    if r.statements.len() > STATEMENTS_SHOWN {
        let more = r.statements.len() - STATEMENTS_SHOWN;
        out.push_str(&format!("({more} more statements in --format json)\n"));
    }
    Some(out)
}

fn findings(r: &Report) -> Option<String> {
    (!r.findings.is_empty()).then(|| {
        format!(
            "\nFindings (most severe first, then by round trips, db time and rows saved)\n{}",
            sections::findings_brief(r, 98)
        )
    })
}

/// Every reason, when there is more than the verdict line names.
fn reasons(r: &Report) -> &[Invalid] {
    if r.invalid_reasons.len() > 1 {
        &r.invalid_reasons
    } else {
        &[]
    }
}
