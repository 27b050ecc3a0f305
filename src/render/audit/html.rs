//! The audit's HTML page: the verdict, the per-request headline, the databases and
//! replicas, other traffic and PgBouncer when the run had them, what each statement takes
//! of the request's cost, the latency curve, the tables read, and the findings with their
//! savings, who sent their statement and where to look in the source.

use maud::{Markup, html};

use crate::render::html::chart::{BarChart, Series, latency_curve};
use crate::render::html::{grid_table, page, provenance, strip, verdict};
use crate::render::text::{Exporter, figure, status_line};
use crate::render::{background, pgbouncer, sections};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::model::figures::Figures;
use pgcost_core::report::model::invalid;
use pgcost_core::report::model::notes::messages;
use pgcost_core::report::{Report, StatementRow};
use pgcost_core::text::{one_line, shown_sql};

/// Statements in the share chart; the table below it has them all.
const STATEMENTS_CHARTED: usize = 12;

pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn render(&self, r: &Report) -> String {
        let title = format!("pgcost: {} {}", r.target.method, r.target.url);
        page(&title, audit_body(r))
    }
}

/// The whole audit, as the body of a page (the demo shows three of these).
fn audit_body(r: &Report) -> Markup {
    let label = format!("{} {}", r.target.method, r.target.url);
    html! {
        header {
            h1 { "What one request costs Postgres: " code { (r.target.method) " " (r.target.url) } }
            p.meta { (load_sentence(r)) }
        }
        (verdict(r.valid, &label, &invalid::messages(&r.invalid_reasons), &messages(&r.notes)))
        (strip(&headline(r)))
        (fleet(r))
        (statements(r))
        (latency(r))
        (tables(r))
        (findings(r))
        (baseline(r))
        (footer(r))
    }
}

/// The same tables as the terminal view: per database or replica, the background,
/// PgBouncer's figures and the statements that wrote; each only when the run had it.
fn fleet(r: &Report) -> Markup {
    let titled = |title: &str, grid| (title.to_string(), grid);
    let grids = [
        sections::nodes(r).map(|grid| titled("Per database (per request)", grid)),
        background::section(r),
        pgbouncer::grid(r).map(|grid| titled("PgBouncer", grid)),
        (sections::statement_writes(r, 120))
            .map(|grid| titled("Statements that wrote (per request)", grid)),
    ];
    html! {
        @if let Some((title, detail, grid)) = sections::setup(r, 120) {
            section { h2 { (title) } p { (detail) } (grid_table(&grid)) }
        }
        @for (title, grid) in grids.into_iter().flatten() {
            section { h2 { (title) } (grid_table(&grid)) }
        }
    }
}

fn load_sentence(r: &Report) -> String {
    let l = &r.load;
    format!(
        "{} requests at concurrency {} after {} warm-up, {:.1} s; responses {}; database {} \
         on PostgreSQL {}, statistics read over the {} database.",
        l.requests,
        l.concurrency,
        l.warmup,
        l.wall_seconds,
        status_line(r),
        r.target.database,
        r.target.server_version,
        r.target.stats_source
    )
}

/// The headline figures, per request unless the label says otherwise.
fn headline(r: &Report) -> Vec<(String, String)> {
    let p = &r.per_request;
    let l = &r.load;
    let ms = |v: f64| format!("{v:.2} ms");
    let figures = Figures::of(r);
    let columns = (Figure::COLUMNS.into_iter()).filter(|f| f.spec().per_database);
    let mut headline: Vec<_> = columns
        .map(|f| (format!("{} / request", f.label()), figure(f.of(&figures))))
        .collect();
    let rest = [
        ("rows written / request", format!("{:.2}", p.rows_written)),
        (
            "shared buffers / request",
            format!("{:.2}", p.blocks_hit + p.blocks_read),
        ),
        (
            "db time / request",
            p.db_time_ms.map(ms).unwrap_or("n/a".into()),
        ),
        ("latency p50", ms(l.latency_ms.p50)),
        ("latency p95", ms(l.latency_ms.p95)),
        ("latency p99", ms(l.latency_ms.p99)),
        ("requests / second", format!("{:.1}", l.rps)),
    ];
    headline.extend(rest.map(|(label, value)| (label.to_string(), value)));
    headline
}

/// `#2 SELECT id, name FROM projects WHERE …`: a statement's number in the table and the
/// start of its text.
pub fn statement_label(number: usize, query: &str) -> String {
    format!("#{number} {}", one_line(query, 44))
}

/// Each top-level statement's share of the request's rows returned, shared buffers and
/// database time, in percent of the top-level statements' total.
fn share_chart(r: &Report) -> BarChart {
    let top: Vec<(usize, &StatementRow)> = (r.statements.iter().enumerate())
        .filter(|(_, s)| s.toplevel)
        .take(STATEMENTS_CHARTED)
        .collect();
    let all_top = r.statements.iter().filter(|s| s.toplevel);
    let total_blocks: f64 = all_top.clone().map(|s| s.blocks_per_request).sum();
    let total_time: f64 = all_top.map(db_time_per_request).sum();
    let percent = |part: f64, total: f64| (total > 0.0).then(|| 100.0 * part / total);
    let series = |name: &str, of: &dyn Fn(&StatementRow) -> Option<f64>| {
        Series::of(name, &top, |(_, s)| of(s))
    };
    let rows_known = r.per_request.rows_returned.is_some_and(|v| v > 0.0);
    BarChart {
        title: "Each statement's share of the request's cost".into(),
        axis: "share of the request's top-level statements (%)".into(),
        categories: (top.iter())
            .map(|(i, s)| statement_label(i + 1, &s.query))
            .collect(),
        series: vec![
            series("rows returned", &|s| {
                rows_known.then_some(100.0 * s.share_of_rows_returned)
            }),
            series("shared buffers", &|s| {
                percent(s.blocks_per_request, total_blocks)
            }),
            series("db time", &|s| percent(db_time_per_request(s), total_time)),
        ],
        limits: None,
        note: Some(format!(
            "Shares of what the request's top-level statements returned, touched in shared \
             buffers, and spent executing; the {} most expensive statements, numbered as in \
             the table below.",
            STATEMENTS_CHARTED
        )),
        decimals: 1,
    }
}

fn db_time_per_request(s: &StatementRow) -> f64 {
    s.mean_exec_ms * s.calls_per_request
}

fn statements(r: &Report) -> Markup {
    html! {
        section {
            h2 { "Statements" }
            @if r.statements.is_empty() {
                p.note { "No statement was recorded (pg_stat_statements unavailable, or the request ran none)." }
            } @else {
                (share_chart(r).render())
                div.scroll {
                    table.sortable {
                        thead { tr {
                            th.num { "#" } th { "statement" } th.num { "calls/req" } th.num { "rows/call" }
                            th.num { "rows/req" } th.num { "mean ms" } th.num { "buffers/req" }
                            th.num { "share of rows returned" }
                        } }
                        tbody { @for (i, s) in r.statements.iter().enumerate() { (statement_row(i + 1, s)) } }
                    }
                }
            }
        }
    }
}

fn statement_row(number: usize, s: &StatementRow) -> Markup {
    let nested = if s.toplevel { "" } else { " (nested)" };
    let database = s.database.as_ref().map(|name| format!("{name}: "));
    html! {
        tr {
            td.num { (number) }
            td { (database.unwrap_or_default()) code { (one_line(&s.query, 400)) } (nested) }
            td.num { (format!("{:.2}", s.calls_per_request)) }
            td.num { (format!("{:.1}", s.rows_per_call)) }
            td.num { (format!("{:.2}", s.rows_per_request)) }
            td.num { (format!("{:.3}", s.mean_exec_ms)) }
            td.num { (format!("{:.2}", s.blocks_per_request)) }
            td.num { (format!("{:.1}%", 100.0 * s.share_of_rows_returned)) }
        }
    }
}

fn latency(r: &Report) -> Markup {
    let points: Vec<(f64, f64)> = (r.load.latency_percentiles_ms.iter())
        .map(|p| (p.percentile, p.ms))
        .collect();
    let l = &r.load.latency_ms;
    // A report written before the curve existed has only its summary percentiles.
    let (points, note) = if points.is_empty() {
        (
            vec![(50.0, l.p50), (95.0, l.p95), (99.0, l.p99), (100.0, l.max)],
            "This report holds only p50, p95, p99 and max: they are the points drawn.",
        )
    } else {
        (
            points,
            "Each point is the latency below which that share of the measured requests \
             finished, from the burst's HDR histogram (3 significant digits).",
        )
    };
    html! {
        section {
            h2 { "Latency" }
            (latency_curve(
                &format!("Latency distribution of the {} measured requests", r.load.requests),
                &points,
                r.load.requests,
                note,
            ))
        }
    }
}

fn tables(r: &Report) -> Markup {
    let Some(grid) = sections::tables(r) else {
        return html! {};
    };
    let of = |name: &str, value: fn(&pgcost_core::report::TableRow) -> f64| {
        Series::of(name, &r.tables, |t| Some(value(t)))
    };
    let chart = BarChart {
        title: "Rows each table gave the request".into(),
        axis: "rows per request".into(),
        categories: (r.tables.iter())
            .map(|t| one_line(&sections::in_database(&t.database, &t.table), 40))
            .collect(),
        series: vec![
            of("rows read by sequential scans", |t| t.seq_rows_read),
            of("rows fetched by index scans", |t| t.idx_rows_fetched),
            of("rows written", |t| {
                t.rows_inserted + t.rows_updated + t.rows_deleted
            }),
        ],
        limits: None,
        note: Some("From pg_stat_user_tables, divided by the request count.".into()),
        decimals: 2,
    };
    html! {
        section {
            h2 { "Tables" }
            (chart.render())
            (grid_table(&grid))
        }
    }
}

/// The findings: their savings as bars, then each with its evidence and suggestion.
pub fn findings(r: &Report) -> Markup {
    let chart = BarChart {
        title: "What fixing each finding would save".into(),
        axis: "avoidable rows per request".into(),
        categories: (r.findings.iter().enumerate())
            .map(|(i, f)| format!("#{} {} ({})", i + 1, f.kind, f.severity))
            .collect(),
        series: vec![Series::of("avoidable rows per request", &r.findings, |f| {
            Some(f.avoidable_rows_per_request)
        })],
        limits: None,
        note: Some("Rows Postgres reads or sends that the suggested change would save.".into()),
        decimals: 2,
    };
    html! {
        section {
            h2 { "Findings" }
            @if r.findings.is_empty() {
                p.note { "No finding: nothing named as waste (or the analysis was skipped with --no-findings)." }
            } @else {
                (chart.render())
                @for (i, f) in r.findings.iter().enumerate() { (finding(i + 1, f)) }
            }
        }
    }
}

fn finding(number: usize, f: &pgcost_core::findings::Finding) -> Markup {
    let query = f.query.as_deref().map(|q| shown_sql(q, usize::MAX));
    let subject = query.as_deref().or(f.table.as_deref()).unwrap_or("");
    let subject = sections::in_database(&f.database, subject);
    let subject = subject.as_str();
    html! {
        article class=(format!("finding {}", f.severity)) {
            h3 {
                "#" (number) " " (f.kind) " "
                span.badge { (f.severity) }
                @if f.unparsed { " (statement text unparsed)" }
            }
            @if !subject.is_empty() { p { code { (subject) } } }
            p {
                "Saves " strong { (format!("{:.2}", f.avoidable_rows_per_request)) } " rows and "
                strong { (format!("{:.2}", f.round_trips_per_request)) } " round trips per request."
            }
            table {
                tbody { @for (name, value) in &f.evidence { tr { td { (name) } td.num { (format!("{value:.2}")) } } } }
            }
            (provenance(f))
            pre { (f.suggestion) }
        }
    }
}

fn baseline(r: &Report) -> Markup {
    let Some(b) = sections::baseline(r) else {
        return html! {};
    };
    html! {
        section {
            h2 { "Without credentials" }
            p { "The same burst sent without credentials answered " (b.status) "; the last column is what everything after authentication costs." }
            (grid_table(&b.grid))
        }
    }
}

fn footer(r: &Report) -> Markup {
    html! {
        section {
            h2 { "All per-request figures" }
            (grid_table(&sections::per_request(r)))
        }
        footer {
            "pgcost, report schema " (r.schema_version) ". Settling waited "
            (format!("{:.1}", r.settle.before_seconds)) " s before and "
            (format!("{:.1}", r.settle.after_seconds)) " s after the burst. "
            @if !r.target.credentials.is_empty() {
                "Credentials (by name only): " (r.target.credentials.join(", ")) "."
            }
        }
    }
}
