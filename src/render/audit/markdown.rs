//! The Markdown view, for pull-request comments and step summaries.

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::cost::report::Report;
use crate::cost::text::one_line;
use crate::render::sections::{self, Grid, STATEMENT_FIGURES, statement_figures};
use crate::render::text::{Exporter, command_load_line, status_line, verdict_line};

/// The statements shown; a comment stays short, and JSON has them all.
const STATEMENTS_SHOWN: usize = 10;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, r: &Report) -> String {
        [
            heading(r),
            per_request(r),
            nodes(r),
            background(r),
            crate::render::pgbouncer::grid(r)
                .map(|grid| format!("{}\n\n", markdown_table(&grid)))
                .unwrap_or_default(),
            credentials(r),
            baseline(r),
            sections::setup(r, 80)
                .map(|(title, detail, grid)| {
                    format!("**{title}**\n\n{detail}\n\n{}\n\n", markdown_table(&grid))
                })
                .unwrap_or_default(),
            statements(r),
            crate::render::tags::section(r, (80, 160))
                .map(|(title, grid)| match grid {
                    Some(grid) => format!("**{title}**\n\n{}\n\n", markdown_table(&grid)),
                    None => format!("{title}\n\n"),
                })
                .unwrap_or_default(),
            sections::statement_writes(r, 60)
                .map(|grid| {
                    format!(
                        "**Statements that wrote (per request)**\n\n{}\n\n",
                        markdown_table(&grid)
                    )
                })
                .unwrap_or_default(),
            findings(r),
            notes(r),
        ]
        .concat()
    }
}

/// A grid as a Markdown table; a `|` in a cell is escaped so it cannot split the cell.
pub fn markdown_table(grid: &Grid) -> String {
    let mut builder = Builder::default();
    builder.push_record(grid.header.clone());
    for row in &grid.rows {
        builder.push_record(row.iter().map(|cell| cell.replace('|', "\\|")));
    }
    let mut table = builder.build();
    table.with(Style::markdown());
    table.to_string()
}

/// The endpoint, the verdict, and the load in one sentence.
fn heading(r: &Report) -> String {
    let mark = if r.valid { "✅" } else { "❌" };
    let l = &r.load;
    if let Some(line) = command_load_line(r) {
        return format!(
            "### {mark} pgcost: `{} {}`\n\n**{}**\n\n{line}; PostgreSQL {}.\n\n",
            r.target.method,
            r.target.url,
            verdict_line(r),
            r.target.server_version
        );
    }
    format!(
        "### {mark} pgcost: `{} {}`\n\n**{}**\n\n{} requests at concurrency {}, {:.1} req/s, \
         p50 {:.2} ms, p95 {:.2} ms; status {}; PostgreSQL {}.\n\n",
        r.target.method,
        r.target.url,
        verdict_line(r),
        l.requests,
        l.concurrency,
        l.rps,
        l.latency_ms.p50,
        l.latency_ms.p95,
        status_line(r),
        r.target.server_version
    )
}

fn per_request(r: &Report) -> String {
    let mut grid = sections::per_request(r);
    // No heading above this table: its corner names it.
    grid.header[0] = "per request".into();
    format!("{}\n\n", markdown_table(&grid))
}

fn nodes(r: &Report) -> String {
    match sections::nodes(r) {
        Some(grid) => format!("{}\n\n", markdown_table(&grid)),
        None => String::new(),
    }
}

fn background(r: &Report) -> String {
    match crate::render::background::section(r) {
        Some((title, grid)) => format!("**{title}**\n\n{}\n\n", markdown_table(&grid)),
        None => String::new(),
    }
}

fn credentials(r: &Report) -> String {
    if r.target.credentials.is_empty() {
        return String::new();
    }
    format!("Credentials: {}.\n\n", r.target.credentials.join("; "))
}

fn baseline(r: &Report) -> String {
    let Some(b) = sections::baseline(r) else {
        return String::new();
    };
    format!(
        "**Unauthenticated baseline**: the same burst without credentials (status {}). \
         *After authentication* is with minus without: what everything past the credential \
         check costs.\n\n{}\n\n",
        b.status,
        markdown_table(&b.grid)
    )
}

fn statements(r: &Report) -> String {
    if r.statements.is_empty() {
        return String::new();
    }
    let mut header = STATEMENT_FIGURES.to_vec();
    header.push("statement");
    let rows = r
        .statements
        .iter()
        .take(STATEMENTS_SHOWN)
        .map(|s| {
            let mut row = statement_figures(s);
            let query = format!("`{}`", one_line(&s.query, 80));
            row.push(sections::in_database(&s.database, &query));
            row
        })
        .collect();
    format!("{}\n\n", markdown_table(&Grid::new(&header, rows, 0..3)))
}

/// The findings folded away, as preformatted text.
fn findings(r: &Report) -> String {
    if r.findings.is_empty() {
        return String::new();
    }
    format!(
        "<details><summary>{} finding(s)</summary>\n\n```text\n{}```\n</details>\n\n",
        r.findings.len(),
        sections::findings_text(r, 98)
    )
}

/// The reasons past the one the verdict names, then the warnings.
fn notes(r: &Report) -> String {
    let reasons = r
        .invalid_reasons
        .iter()
        .skip(1)
        .map(|r| format!("- ❌ {r}\n"));
    let warnings = r.notes.iter().map(|w| format!("- ⚠️ {w}\n"));
    reasons.chain(warnings).collect()
}
