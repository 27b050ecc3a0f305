//! The terminal view: aligned tables that fit in 100 columns.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use super::{
    BASELINE_HEADER, Exporter, baseline_rows, baseline_status_line, findings_text, one_line,
    per_request_rows, status_line, verdict_line,
};
use crate::cost::report::Report;

pub struct TableExporter;

fn table(header: &[&str], rows: Vec<Vec<String>>, right: std::ops::Range<usize>) -> String {
    let mut builder = Builder::default();
    builder.push_record(header.iter().map(|h| h.to_string()));
    for row in rows {
        builder.push_record(row);
    }
    let mut table = builder.build();
    table.with(Style::sharp());
    for col in right {
        table.with(Modify::new(Columns::one(col)).with(Alignment::right()));
    }
    table.to_string()
}

impl Exporter for TableExporter {
    fn render(&self, r: &Report) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", verdict_line(r));
        let _ = writeln!(
            out,
            "endpoint   {} {}",
            r.target.method,
            one_line(&r.target.url, 85)
        );
        let _ = writeln!(out, "database   {}", one_line(&r.target.database, 85));
        let v = r.target.server_version_num;
        let _ = writeln!(
            out,
            "server     PostgreSQL {}.{}, statistics read via the {} connection",
            v / 10000,
            v % 10000,
            r.target.stats_source
        );
        let l = &r.load;
        let _ = writeln!(
            out,
            "load       {} requests, concurrency {}, {:.2} s, {:.1} req/s, warm-up {}",
            l.requests, l.concurrency, l.wall_seconds, l.rps, l.warmup
        );
        let _ = writeln!(out, "status     {}", status_line(r));
        if !r.target.credentials.is_empty() {
            let _ = writeln!(
                out,
                "auth       {}",
                one_line(&r.target.credentials.join("; "), 88)
            );
        }
        let _ = writeln!(
            out,
            "latency    p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            l.latency_ms.p50, l.latency_ms.p95, l.latency_ms.p99, l.latency_ms.max
        );
        let _ = writeln!(
            out,
            "settle     {:.1} s before, {:.1} s after the burst{}",
            r.settle.before_seconds,
            r.settle.after_seconds,
            if r.settle.timed_out {
                " (timed out)"
            } else {
                ""
            }
        );

        let _ = writeln!(out, "\nPer request");
        let rows = per_request_rows(r)
            .into_iter()
            .map(|row| row.to_vec())
            .collect();
        let _ = writeln!(
            out,
            "{}",
            table(&["figure", "value", "meaning"], rows, 1..2)
        );

        if let (Some(rows), Some(status)) = (baseline_rows(r), baseline_status_line(r)) {
            let _ = writeln!(
                out,
                "\nUnauthenticated baseline: the same burst without credentials ({status})"
            );
            let _ = writeln!(out, "{}", table(&BASELINE_HEADER, rows, 1..4));
            let _ = writeln!(
                out,
                "after authentication: with minus without, the cost past the credential check"
            );
        }

        if !r.statements.is_empty() {
            let _ = writeln!(out, "\nStatements (per request, most buffers first)");
            let rows = r
                .statements
                .iter()
                .take(20)
                .map(|s| {
                    vec![
                        format!("{:.2}", s.calls_per_request),
                        format!("{:.1}", s.rows_per_call),
                        format!("{:.2}", s.rows_per_request),
                        format!("{:.3}", s.mean_exec_ms),
                        format!("{:.0}%", s.share_of_rows_returned * 100.0),
                        one_line(&s.query, 40),
                    ]
                })
                .collect();
            let _ = writeln!(
                out,
                "{}",
                table(
                    &[
                        "calls/req",
                        "rows/call",
                        "rows/req",
                        "mean ms",
                        "rows%",
                        "query"
                    ],
                    rows,
                    0..5
                )
            );
            if r.statements.len() > 20 {
                let _ = writeln!(
                    out,
                    "({} more statements in --format json)",
                    r.statements.len() - 20
                );
            }
        }

        if !r.tables.is_empty() {
            let _ = writeln!(out, "\nTables (per request)");
            let rows = r
                .tables
                .iter()
                .map(|t| {
                    vec![
                        one_line(&t.table, 30),
                        format!("{:.2}", t.seq_scans),
                        format!("{:.2}", t.seq_rows_read),
                        format!("{:.2}", t.idx_scans),
                        format!("{:.2}", t.idx_rows_fetched),
                        format!("{:.2}", t.rows_inserted + t.rows_updated + t.rows_deleted),
                        t.pages.to_string(),
                    ]
                })
                .collect();
            let _ = writeln!(
                out,
                "{}",
                table(
                    &[
                        "table",
                        "seq scans",
                        "seq rows",
                        "idx scans",
                        "idx rows",
                        "writes",
                        "pages"
                    ],
                    rows,
                    1..7
                )
            );
        }

        if !r.findings.is_empty() {
            let _ = writeln!(out, "\nFindings (most avoidable rows first)");
            out.push_str(&findings_text(r, 98));
        }

        if r.invalid_reasons.len() > 1 {
            let _ = writeln!(out, "\nWhy the numbers are not valid");
            for reason in &r.invalid_reasons {
                let _ = writeln!(out, "- {reason}");
            }
        }
        if !r.warnings.is_empty() {
            let _ = writeln!(out, "\nWarnings");
            for warning in &r.warnings {
                let _ = writeln!(out, "- {warning}");
            }
        }
        out
    }
}
