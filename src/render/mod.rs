//! The views of every document, one folder per document and one file per format:
//! `audit/` (the `Report`), `check/` (check's verdict), `demo/` (the demo's comparison),
//! `ramp/`. Each document implements `View`, which picks the view of a format. The
//! sections hold what the audit's views share; the table and Markdown views only draw
//! them. The one JSON writer lives here too, for every command, and the SARIF model the
//! audit's and check's SARIF views share (`sarif.rs`); `tags.rs` lists the statements' tags.
//! Views import the model (`cost/`), never a command.

pub mod audit;
mod background;
mod check;
pub mod demo;
#[cfg(test)]
mod documents_tests;
pub mod format;
pub mod html;
mod pgbouncer;
pub mod ramp;
pub mod sarif;
#[cfg(test)]
pub(crate) mod sarif_tests;
pub mod scale;
mod sections;
mod survey;
mod tags;
pub mod text;
pub mod view;

pub use audit::{HtmlExporter, JsonExporter, MarkdownExporter, TableExporter};
pub use audit::{markdown_table, terminal_table};
pub use check::github;
pub use sections::{Grid, finding_text, findings_brief, findings_text};
pub use view::{Unsupported, View};

pub use text::{Exporter, command_load_line, figure, json, status_line, verdict_line};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::render::format::Format;
    use pgcost_core::delta::{DatabaseDelta, TableDelta, WindowDelta};
    use pgcost_core::findings::{Inputs, Thresholds, analyze};
    use pgcost_core::report::model::counters::TableCounters;
    use pgcost_core::report::tests::{context, load, stmt};
    use pgcost_core::report::{Context, Report};

    pub(crate) fn sample() -> Report {
        build(context(200))
    }

    fn build(context: Context) -> Report {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: 200,
                tup_returned: 72_400,
                tup_fetched: 1_200,
                sessions: Some(0),
                blks_hit: 2_000,
                ..Default::default()
            },
            statements: vec![
                stmt(1, "BEGIN", 200, 0),
                stmt(
                    2,
                    "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
                    200,
                    60_200,
                ),
                stmt(
                    3,
                    "SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2",
                    200,
                    4_000,
                ),
                stmt(4, "COMMIT", 200, 0),
            ],
            tables: vec![TableDelta {
                name: "public.a_table_with_a_really_quite_long_name_indeed".into(),
                counters: TableCounters {
                    seq_scan: 200,
                    seq_tup_read: 60_200,
                    ..Default::default()
                },
                relpages: 3,
                n_live_tup: 301,
            }],
            ..Default::default()
        };
        let mut report = Report::build(&delta, &load(200, &[(200, 200)]), context);
        report.load.wall_seconds = 2.0;
        report.findings = analyze(&Inputs::of(&report), &Thresholds::default());
        report
    }

    #[test]
    fn a_command_load_says_what_counted_it_instead_of_statuses_and_latency() {
        let mut r = sample();
        assert_eq!(command_load_line(&r), None);
        r.load.source = "locust".into();
        r.load.command_exit = Some(0);
        r.load.requests = 100;
        r.load.wall_seconds = 4.0;
        r.load.rps = 25.0;
        let line = "100 requests counted by locust, command exit 0, 4.00 s, 25.0 req/s";
        assert_eq!(command_load_line(&r).as_deref(), Some(line));
        let table = TableExporter.render(&r);
        assert!(table.contains(&format!("load       {line}\n")), "{table}");
        assert!(!table.contains("latency    "), "{table}");
        assert!(!table.contains("status     "), "{table}");
        let markdown = MarkdownExporter.render(&r);
        assert!(
            markdown.contains(&format!("{line}; PostgreSQL")),
            "{markdown}"
        );
        r.load.latency_percentiles_ms.clear();
        r.load.latency_ms = Default::default();
        r.target.method = "$".into();
        r.target.url = "./load.sh".into();
        let html = View::render(&r, Format::Html).unwrap();
        assert!(html.contains("$ ./load.sh"), "the page names the command");
        r.load.source = "given".into();
        assert!(
            command_load_line(&r)
                .unwrap()
                .starts_with("100 requests given with --requests,")
        );
    }

    #[test]
    fn table_view_fits_in_100_columns() {
        let text = TableExporter.render(&sample());
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!("table_view", text);
    }

    #[test]
    fn markdown_view() {
        insta::assert_snapshot!("markdown_view", MarkdownExporter.render(&sample()));
    }

    fn with_baseline() -> Report {
        let mut anonymous = sample();
        anonymous.load.rps = 250.0;
        anonymous.load.latency_ms.p50 = 0.4;
        anonymous.load.status = [("401".to_string(), 200)].into();
        anonymous.per_request.transactions = 0.0;
        anonymous.per_request.statements = Some(0.0);
        anonymous.per_request.rows_read = 0.0;
        let mut c = context(200);
        c.target.credentials = vec!["Authorization: Bearer (minted HS256 JWT)".into()];
        c.unauthenticated = Some(anonymous);
        build(c)
    }

    #[test]
    fn baseline_in_table_and_markdown() {
        let report = with_baseline();
        let table = TableExporter.render(&report);
        for line in table.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!("table_view_with_baseline", table);
        insta::assert_snapshot!(
            "markdown_view_with_baseline",
            MarkdownExporter.render(&report)
        );
    }

    #[test]
    fn json_view_has_the_documented_keys() {
        let value: serde_json::Value =
            serde_json::from_str(&JsonExporter.render(&sample())).unwrap();
        for pointer in [
            "/schema_version",
            "/valid",
            "/warnings",
            "/notes",
            "/load/requests",
            "/load/rps",
            "/load/status/200",
            "/load/latency_ms/p50",
            "/load/latency_ms/p95",
            "/load/latency_ms/p99",
            "/load/latency_ms/max",
            "/per_request/transactions",
            "/per_request/statements",
            "/per_request/rows_read",
            "/per_request/rows_fetched",
            "/per_request/rows_returned",
            "/statements/0/query",
            "/statements/0/calls_per_request",
            "/statements/0/rows_per_call",
            "/findings/0/kind",
            "/findings/0/severity",
            "/findings/0/evidence",
            "/findings/0/suggestion",
            "/findings/0/saves_per_request/statements",
            "/findings/0/saves_per_request/rows_read",
            "/findings/0/saves_per_request/rows_returned",
            "/findings/0/saves_per_request/db_time_ms",
        ] {
            assert!(value.pointer(pointer).is_some(), "missing {pointer}");
        }
    }
}
