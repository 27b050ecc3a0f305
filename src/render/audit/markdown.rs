//! The Markdown view, for pull-request comments and step summaries.

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::render::sections::{self, Grid};
use crate::render::text::{Exporter, command_load_line, status_line, verdict_line};
use crate::render::{background, pgbouncer, tags};
use pgcost_core::report::Report;
use pgcost_core::text::one_line;

/// The statements shown; a comment stays short, and JSON has them all.
const STATEMENTS_SHOWN: usize = 10;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, r: &Report) -> String {
        [
            Some(heading(r)),
            Some(per_request(r)),
            sections::nodes(r).map(|grid| untitled(&grid)),
            background::section(r).map(|(title, grid)| titled(&title, &grid)),
            pgbouncer::grid(r).map(|grid| untitled(&grid)),
            credentials(r),
            baseline(r),
            sections::setup(r, 80).map(|(title, detail, grid)| {
                format!("**{title}**\n\n{detail}\n\n{}", untitled(&grid))
            }),
            statements(r),
            tags::section(r, (80, 160)).map(|(title, grid)| match grid {
                Some(grid) => titled(&title, &grid),
                None => format!("{title}\n\n"),
            }),
            (sections::statement_writes(r, 60))
                .map(|grid| titled("Statements that wrote (per request)", &grid)),
            findings(r),
            Some(notes(r)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The title in bold, then the grid.
fn titled(title: &str, grid: &Grid) -> String {
    format!("**{title}**\n\n{}", untitled(grid))
}

/// The grid alone, its corner or the text before it naming it.
fn untitled(grid: &Grid) -> String {
    format!("{}\n\n", markdown_table(grid))
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

/// Text inside backticks, which it cannot hold.
pub(crate) fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
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
    untitled(&grid)
}

fn credentials(r: &Report) -> Option<String> {
    let credentials = &r.target.credentials;
    (!credentials.is_empty()).then(|| format!("Credentials: {}.\n\n", credentials.join("; ")))
}

fn baseline(r: &Report) -> Option<String> {
    let b = sections::baseline(r)?;
    Some(format!(
        "**Unauthenticated baseline**: the same burst without credentials (status {}). \
         *After authentication* is with minus without: what everything past the credential \
         check costs.\n\n{}",
        b.status,
        untitled(&b.grid)
    ))
}

fn statements(r: &Report) -> Option<String> {
    let grid = sections::statements(r, STATEMENTS_SHOWN, &["statement"], |s| {
        let query = format!("`{}`", one_line(&s.query, 80));
        vec![sections::in_database(&s.database, &query)]
    })?;
    Some(untitled(&grid))
}

/// The findings folded away, as preformatted text.
fn findings(r: &Report) -> Option<String> {
    if r.findings.is_empty() {
        return None;
    }
    Some(format!(
        "<details><summary>{} finding(s)</summary>\n\n```text\n{}```\n</details>\n\n",
        r.findings.len(),
        sections::findings_text(r, 98)
    ))
}

/// The reasons past the one the verdict names, then the warnings.
fn notes(r: &Report) -> String {
    let reasons = (r.invalid_reasons.iter().skip(1)).map(|r| format!("- ❌ {r}\n"));
    let warnings = r.notes.iter().map(|w| format!("- ⚠️ {w}\n"));
    reasons.chain(warnings).collect()
}
