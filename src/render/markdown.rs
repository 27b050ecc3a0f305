//! The Markdown view, for pull-request comments and step summaries.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::Style;

use super::{
    BASELINE_HEADER, Exporter, baseline_rows, baseline_status_line, findings_text, one_line,
    per_request_rows, status_line, verdict_line,
};
use crate::cost::report::Report;

pub struct MarkdownExporter;

pub(crate) fn markdown_table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut builder = Builder::default();
    builder.push_record(header.iter().map(|h| h.to_string()));
    for row in rows {
        builder.push_record(row.into_iter().map(|cell| cell.replace('|', "\\|")));
    }
    let mut table = builder.build();
    table.with(Style::markdown());
    table.to_string()
}

impl Exporter for MarkdownExporter {
    fn render(&self, r: &Report) -> String {
        let mut out = String::new();
        let mark = if r.valid { "✅" } else { "❌" };
        let _ = writeln!(
            out,
            "### {mark} pgcost: `{} {}`\n",
            r.target.method, r.target.url
        );
        let _ = writeln!(out, "**{}**\n", verdict_line(r));
        let l = &r.load;
        let _ = writeln!(
            out,
            "{} requests at concurrency {}, {:.1} req/s, p50 {:.2} ms, p95 {:.2} ms; status {}; \
             PostgreSQL {}.\n",
            l.requests,
            l.concurrency,
            l.rps,
            l.latency_ms.p50,
            l.latency_ms.p95,
            status_line(r),
            r.target.server_version
        );
        let rows = per_request_rows(r)
            .into_iter()
            .map(|row| row.to_vec())
            .collect();
        let _ = writeln!(
            out,
            "{}\n",
            markdown_table(&["per request", "value", "meaning"], rows)
        );
        if !r.target.credentials.is_empty() {
            let _ = writeln!(out, "Credentials: {}.\n", r.target.credentials.join("; "));
        }
        if let (Some(rows), Some(status)) = (baseline_rows(r), baseline_status_line(r)) {
            let _ = writeln!(
                out,
                "**Unauthenticated baseline**: the same burst without credentials (status \
                 {status}). *After authentication* is with minus without: what everything past \
                 the credential check costs.\n"
            );
            let _ = writeln!(out, "{}\n", markdown_table(&BASELINE_HEADER, rows));
        }
        if !r.statements.is_empty() {
            let rows = r
                .statements
                .iter()
                .take(10)
                .map(|s| {
                    vec![
                        format!("{:.2}", s.calls_per_request),
                        format!("{:.1}", s.rows_per_call),
                        format!("{:.2}", s.rows_per_request),
                        format!("`{}`", one_line(&s.query, 80)),
                    ]
                })
                .collect();
            let _ = writeln!(
                out,
                "{}\n",
                markdown_table(&["calls/req", "rows/call", "rows/req", "statement"], rows)
            );
        }
        if !r.findings.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>{} finding(s)</summary>\n\n```text",
                r.findings.len()
            );
            out.push_str(&findings_text(r, 98));
            let _ = writeln!(out, "```\n</details>\n");
        }
        for reason in r.invalid_reasons.iter().skip(1) {
            let _ = writeln!(out, "- ❌ {reason}");
        }
        for warning in &r.warnings {
            let _ = writeln!(out, "- ⚠️ {warning}");
        }
        out
    }
}
