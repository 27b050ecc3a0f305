//! A report's sections as neutral content, grids of cells and wrapped text, that the table
//! and Markdown views share and each draw their own way.

use std::fmt::Write;
use std::ops::Range;

use super::text::{counts, figure};
use pgcost_core::findings::{self, Finding, FindingKind};
pub use pgcost_core::nodes::in_database;
use pgcost_core::replica::REPLICA;
use pgcost_core::report::model::figure::{Figure, Source};
use pgcost_core::report::model::figures::Figures;
use pgcost_core::report::{PerRequest, Report, StatementRow, Writes};
use pgcost_core::source::Origin;
use pgcost_core::text::{one_line, shown_sql};

/// Cells under a header, before a view draws them.
#[derive(Debug, Clone)]
pub struct Grid {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The columns that hold figures, which a terminal aligns right.
    pub figures: Range<usize>,
}

impl Grid {
    pub fn new(header: &[&str], rows: Vec<Vec<String>>, figures: Range<usize>) -> Self {
        Grid {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
            figures,
        }
    }
}

/// The per-request figures: name, value, meaning.
pub fn per_request(report: &Report) -> Grid {
    let p = &report.per_request;
    let fixed = |v: f64| format!("{v:.2}");
    let figures = Figures::per_request(p);
    let row = |f: Figure| (f.label(), figure(f.of(&figures)), f.spec().meaning);
    let mut rows = vec![
        row(Figure::Transactions),
        row(Figure::Statements),
        (
            "statements (no utility)",
            figure(p.statements_excluding_utility),
            "without BEGIN, COMMIT, SET, ...",
        ),
        row(Figure::RowsRead),
        row(Figure::RowsFetched),
        row(Figure::RowsReturned),
        (
            "rows written",
            fixed(p.rows_written),
            "inserted + updated + deleted",
        ),
        ("blocks hit", fixed(p.blocks_hit), "shared buffer hits"),
        (
            "blocks read",
            fixed(p.blocks_read),
            "blocks read from disk or OS cache",
        ),
        (
            "db time ms",
            figure(p.db_time_ms),
            "execution time of top-level statements",
        ),
    ];
    if p.new_sessions.is_some() {
        rows.push(("new sessions", figure(p.new_sessions), "connections opened"));
    }
    if let Some(w) = p.writes.as_ref().filter(|w| !w.is_empty()) {
        rows.extend(write_rows(w));
    }
    let rows = rows
        .into_iter()
        .map(|(name, value, meaning)| vec![name.into(), value, meaning.into()])
        .collect();
    Grid::new(&["figure", "value", "meaning"], rows, 1..2)
}

/// The write side of the per-request figures, shown when something was written: the
/// figure table's written figures, and the full-page images among the WAL records.
fn write_rows(w: &Writes) -> Vec<(&'static str, String, &'static str)> {
    let mut rows = Vec::new();
    for f in (Figure::ALL.into_iter()).filter(|f| matches!(f.spec().source, Source::Writes(_))) {
        let value = figure(f.written(w));
        rows.push((f.label(), value, f.spec().meaning));
        if f == Figure::WalBytes {
            let images = figure(w.wal_full_page_images);
            rows.push((
                "WAL full-page images",
                images,
                "whole 8 kB pages logged after a checkpoint",
            ));
        }
    }
    rows
}

/// The statements that wrote something, per request, most WAL first; `None` when none did.
pub fn statement_writes(report: &Report, width: usize) -> Option<Grid> {
    let mut writers: Vec<&StatementRow> = (report.statements.iter())
        .filter(|s| !s.writes_per_request.is_empty())
        .collect();
    if writers.is_empty() {
        return None;
    }
    let weight = |s: &StatementRow| {
        let w = &s.writes_per_request;
        (w.wal_bytes.unwrap_or(0.0), w.temp_blocks_written)
    };
    writers.sort_by(|a, b| {
        weight(b)
            .partial_cmp(&weight(a))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let rows = writers
        .into_iter()
        .map(|s| {
            let w = &s.writes_per_request;
            vec![
                one_line(&s.query, width),
                figure(w.wal_bytes),
                figure(w.wal_full_page_images),
                format!("{:.2}", w.blocks_dirtied),
                format!("{:.2}", w.temp_blocks_written),
            ]
        })
        .collect();
    let header = [
        "statement",
        "WAL bytes/req",
        "full-page images/req",
        "blocks dirtied/req",
        "temp blocks/req",
    ];
    Some(Grid::new(&header, rows, 1..5))
}

/// The unauthenticated comparison: the statuses of the burst without credentials, and its
/// figures beside the authenticated run's.
pub struct Baseline {
    /// `401×40`.
    pub status: String,
    pub grid: Grid,
}

/// The unauthenticated baseline beside the authenticated run, one row per figure; the last
/// column is the difference, what everything after authentication costs. `None` without
/// a baseline.
pub fn baseline(report: &Report) -> Option<Baseline> {
    let b = report.baseline.as_ref()?;
    let signed = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:+.2}"));
    let row = |name: String, of: &dyn Fn(&Figures) -> Option<f64>| {
        let sides = [&b.unauthenticated, &b.authenticated];
        let mut row = vec![name];
        row.extend(sides.map(|side| figure(of(side))));
        row.push(signed(of(&b.after_authentication)));
        row
    };
    // The burst's speed, then the figures the table marks as the baseline's.
    let mut rows = vec![
        row("requests/s".into(), &|f| Some(f.rps)),
        row("p50 ms".into(), &|f| Some(f.latency_p50_ms)),
    ];
    let compared = (Figure::ALL.into_iter()).filter(|f| f.spec().baseline);
    rows.extend(compared.map(|f| row(format!("{}/req", f.label()), &|x| f.of(x))));
    let header = [
        "figure",
        "without credentials",
        "with credentials",
        "after authentication",
    ];
    Some(Baseline {
        status: counts((b.unauthenticated_status.iter()).map(|(k, v)| format!("{k}×{v}"))),
        grid: Grid::new(&header, rows, 1..4),
    })
}

/// Each database's figures when the request touches several (`--db` repeated), then
/// their sum; `None` with one database.
pub fn nodes(report: &Report) -> Option<Grid> {
    if report.nodes.is_empty() {
        return None;
    }
    // The figures each database has of its own, as the table declares them.
    let columns = || (Figure::COLUMNS.into_iter()).filter(|f| f.spec().per_database);
    let row = |name: String, p: &PerRequest| {
        let mut row = vec![name];
        row.extend(columns().map(|f| figure(f.of(&Figures::per_request(p)))));
        row.extend([format!("{:.2}", p.rows_written), figure(p.db_time_ms)]);
        row
    };
    let mut rows: Vec<Vec<String>> = (report.nodes.iter())
        .map(|n| {
            let replica = if n.role == REPLICA { " (replica)" } else { "" };
            let name = format!("{}{replica}", one_line(&n.name, 30));
            row(name, &n.per_request)
        })
        .collect();
    rows.push(row("sum".into(), &report.per_request));
    let mut header = vec!["database"];
    header.extend(columns().map(Figure::label));
    header.extend(["rows written", "db time ms"]);
    Some(Grid::new(&header, rows, 1..header.len()))
}

/// The columns every view shows for a statement, first.
const STATEMENT_FIGURES: [&str; 3] = ["calls/req", "rows/call", "rows/req"];

/// The first `shown` statements: `STATEMENT_FIGURES`, then the view's own `columns` and
/// their `cells`, the last of them the statement; every column before it is a figure.
/// `None` without statements.
pub fn statements(
    report: &Report,
    shown: usize,
    columns: &[&str],
    cells: impl Fn(&StatementRow) -> Vec<String>,
) -> Option<Grid> {
    if report.statements.is_empty() {
        return None;
    }
    let header = [STATEMENT_FIGURES.as_slice(), columns].concat();
    let rows = (report.statements.iter().take(shown))
        .map(|s| {
            let mut row = vec![
                format!("{:.2}", s.calls_per_request),
                format!("{:.1}", s.rows_per_call),
                format!("{:.2}", s.rows_per_request),
            ];
            row.extend(cells(s));
            row
        })
        .collect();
    Some(Grid::new(&header, rows, 0..header.len() - 1))
}

/// The tables the request touched, per request; `None` when it touched none.
pub fn tables(report: &Report) -> Option<Grid> {
    if report.tables.is_empty() {
        return None;
    }
    let rows = (report.tables.iter())
        .map(|t| {
            vec![
                one_line(&in_database(&t.database, &t.table), 30),
                format!("{:.2}", t.seq_scans),
                format!("{:.2}", t.seq_rows_read),
                format!("{:.2}", t.idx_scans),
                format!("{:.2}", t.idx_rows_fetched),
                format!("{:.2}", t.rows_inserted + t.rows_updated + t.rows_deleted),
                t.pages.to_string(),
            ]
        })
        .collect();
    let header = [
        "table",
        "seq scans",
        "seq rows",
        "idx scans",
        "idx rows",
        "writes",
        "pages",
    ];
    Some(Grid::new(&header, rows, 1..7))
}

/// What a finding is about: `table: statement`, or the one of them it names.
pub fn subject(f: &Finding) -> Option<String> {
    match (&f.table, &f.query) {
        (Some(t), Some(q)) => Some(format!("{t}: {}", shown_sql(q, usize::MAX))),
        (None, Some(q)) => Some(shown_sql(q, usize::MAX)),
        (Some(t), None) => Some(t.clone()),
        (None, None) => None,
    }
}

/// The findings in brief, for a terminal: a few lines each (kind, severity and saving;
/// the statement on one line; the evidence on one line; the first place in the source,
/// a tagged line or with `--source`; who sent it when no line was tagged), then the
/// short advice of
/// each kind present, once. The full advice is in Markdown, JSON and `pgcost explain`.
pub fn findings_brief(report: &Report, width: usize) -> String {
    let mut out = String::new();
    let mut kinds: Vec<FindingKind> = Vec::new();
    for (i, f) in report.findings.iter().enumerate() {
        let unparsed = if f.unparsed { " (unparsed)" } else { "" };
        let headline = format!(
            "{}. [{}] {}{unparsed}: {}",
            i + 1,
            f.severity,
            f.kind,
            f.saves_per_request.describe()
        );
        let _ = writeln!(out, "{}", one_line(&headline, width));
        let subject = subject(f).map(|subject| in_database(&f.database, &subject));
        if let Some(subject) = subject {
            let _ = writeln!(out, "   {}", one_line(&subject, width.saturating_sub(3)));
        }
        let evidence: Vec<String> = (f.evidence.iter())
            .map(|(k, v)| format!("{k} {}", evidence_figure(*v)))
            .collect();
        let _ = writeln!(
            out,
            "   {}",
            one_line(&evidence.join(", "), width.saturating_sub(3))
        );
        out.push_str(&locations_text(
            &f.locations[..f.locations.len().min(1)],
            width,
        ));
        // A tagged line says who sent it; without one, the tags still do.
        if !(f.locations.iter()).any(|l| matches!(l.origin, Origin::Tag { .. })) {
            out.push_str(&sent_by_text(f, width));
        }
        if !kinds.contains(&f.kind) {
            kinds.push(f.kind);
        }
    }
    out.push('\n');
    let options = textwrap::Options::new(width).subsequent_indent("  ");
    for kind in kinds {
        let advice = format!("{kind}: {}", findings::summary(kind));
        let _ = writeln!(out, "{}", textwrap::fill(&advice, &options));
    }
    let _ = writeln!(
        out,
        "Full advice and rewrites: pgcost explain KIND, or --format markdown."
    );
    out
}

/// An evidence figure: whole numbers without decimals, others to two.
fn evidence_figure(value: f64) -> String {
    if value == value.trunc() && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// The findings as plain text blocks, wrapped to `width`.
pub fn findings_text(report: &Report, width: usize) -> String {
    let mut out = String::new();
    for (i, f) in report.findings.iter().enumerate() {
        out.push_str(&finding_text(i + 1, f, width));
    }
    out
}

/// One finding: its headline, evidence and suggestion, then a blank line.
pub fn finding_text(number: usize, f: &Finding, width: usize) -> String {
    let mut out = String::new();
    let subject = match (&f.query, &f.table) {
        (Some(q), _) => shown_sql(q, width.saturating_sub(36)),
        (None, Some(t)) => t.clone(),
        (None, None) => String::new(),
    };
    let subject = in_database(&f.database, &subject);
    let unparsed = if f.unparsed { " (unparsed)" } else { "" };
    let _ = writeln!(
        out,
        "{number}. [{}] {}{unparsed}: {subject}",
        f.severity, f.kind
    );
    let _ = writeln!(out, "   {}", f.saves_per_request.describe());
    let evidence: Vec<String> = (f.evidence.iter())
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect();
    let options = textwrap::Options::new(width)
        .initial_indent("   ")
        .subsequent_indent("   ");
    let _ = writeln!(
        out,
        "{}",
        textwrap::fill(&format!("evidence: {}", evidence.join(", ")), &options)
    );
    out.push_str(&sent_by_text(f, width));
    out.push_str(&locations_text(&f.locations, width));
    for paragraph in f.suggestion.lines() {
        let _ = writeln!(out, "{}", suggestion_paragraph(paragraph, width));
    }
    out.push_str(&plan_text(f, width));
    out.push('\n');
    out
}

/// `sent by route /x (controller y), 100% of samples`, when the statement was tagged.
fn sent_by_text(f: &Finding, width: usize) -> String {
    let Some(sent_by) = f.tags.as_ref().and_then(findings::sent_from::sent_by) else {
        return String::new();
    };
    let options = textwrap::Options::new(width)
        .initial_indent("   ")
        .subsequent_indent("     ");
    format!("{}\n", textwrap::fill(&sent_by, &options))
}

/// A line per place in the app's source: `at path:line, what it is`.
fn locations_text(locations: &[pgcost_core::source::CodeLocation], width: usize) -> String {
    let lines = locations.iter().map(|l| {
        let line = format!("at {}", l.line_text());
        format!("   {}\n", one_line(&line, width.saturating_sub(3)))
    });
    lines.collect()
}

/// The index the plan calls for, and the plan itself, under a finding; nothing when the
/// plan was not fetched.
fn plan_text(f: &Finding, width: usize) -> String {
    let mut out = String::new();
    if let Some(index) = &f.index {
        let mut check = match index.verified {
            Some(true) => "hypopg: the planner would use it",
            Some(false) => "hypopg: the planner would not use it",
            None => "unverified: install hypopg in the target database to check",
        }
        .to_string();
        if let (Some(before), Some(after)) = (
            index.estimated_rows_read_before,
            index.estimated_rows_read_after,
        ) {
            check.push_str(&format!(
                "; rows read per call, by EXPLAIN's estimates: {before:.0} before, {after:.0} with it"
            ));
        }
        let _ = writeln!(
            out,
            "{}",
            suggestion_paragraph(
                &format!("Index ({check}), instead of {}:", index.replaces),
                width
            )
        );
        let _ = writeln!(
            out,
            "{}",
            suggestion_paragraph(&format!("    {}", index.statement), width)
        );
    }
    if let Some(plan) = &f.plan {
        let _ = writeln!(out, "   plan:");
        for line in plan.lines() {
            let _ = writeln!(out, "     {line}");
        }
    }
    if let Some(plan) = f.index.as_ref().and_then(|i| i.plan_with_index.as_ref()) {
        let _ = writeln!(out, "   plan with the index (hypopg):");
        for line in plan.lines() {
            let _ = writeln!(out, "     {line}");
        }
    }
    out
}

/// A line of a suggestion, wrapped and indented under its finding.
fn suggestion_paragraph(paragraph: &str, width: usize) -> String {
    if paragraph.starts_with("    ") {
        // SQL: keep its indentation, continue long lines further in.
        let indent = " ".repeat(3 + paragraph.len() - paragraph.trim_start().len());
        let more = format!("{indent}    ");
        let sql = textwrap::Options::new(width)
            .initial_indent(&indent)
            .subsequent_indent(&more);
        textwrap::fill(paragraph.trim_start(), &sql)
    } else if let Some(item) = paragraph.trim_start().strip_prefix("- ") {
        let bullet = textwrap::Options::new(width)
            .initial_indent("   - ")
            .subsequent_indent("     ");
        textwrap::fill(item, &bullet)
    } else if paragraph.trim().is_empty() {
        String::new()
    } else {
        let options = textwrap::Options::new(width)
            .initial_indent("   ")
            .subsequent_indent("   ");
        textwrap::fill(paragraph, &options)
    }
}

/// The set-up of a connection-per-request app, apart: its title with the figures per new
/// connection, a line with them per request, and its statements; `None` when there is none.
pub fn setup(report: &Report, width: usize) -> Option<(String, String, Grid)> {
    let s = report.per_request.setup.as_ref()?;
    let short = |v: f64| {
        if (v - v.round()).abs() < 0.005 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let title = format!(
        "Set-up per new connection: {} statements, {} rows read",
        short(s.statements_per_connection),
        short(s.rows_read_per_connection),
    );
    let detail = format!(
        "Per request: {} new connections, {} set-up statements ({:.0}% of the statements), \
         {} rows read ({:.0}%)",
        short(s.new_connections_per_request),
        short(s.statements_per_request),
        s.share_of_statements * 100.0,
        short(s.rows_read_per_request),
        s.share_of_rows_read * 100.0,
    );
    let rows = (s.statements.iter())
        .map(|st| {
            vec![
                short(st.calls_per_connection),
                short(st.calls_per_request),
                st.kind.as_str().to_string(),
                one_line(&st.query, width),
            ]
        })
        .collect();
    let grid = Grid::new(
        &["per connection", "per request", "kind", "statement"],
        rows,
        0..2,
    );
    Some((title, detail, grid))
}
