//! The set-up of new connections in every view of the audit.

use crate::cost::setup::{Setup, SetupKind, SetupStatement};
use crate::render::format::Format;
use crate::render::tests::sample;
use crate::render::text::Exporter;
use crate::render::view::View;

use super::{MarkdownExporter, TableExporter};

/// The sample report, as if each request had opened two connections with a set-up of two
/// statements each.
fn with_setup() -> crate::cost::report::Report {
    let mut r = sample();
    r.per_request.new_sessions = Some(2.0);
    let statement = |query: &str, kind| SetupStatement {
        query: query.to_string(),
        calls_per_request: 2.0,
        calls_per_connection: 1.0,
        kind,
    };
    r.per_request.setup = Some(Setup {
        new_connections_per_request: 2.0,
        statements_per_request: 4.0,
        statements_per_connection: 2.0,
        rows_returned_per_request: 6.0,
        rows_returned_per_connection: 3.0,
        rows_read_per_request: 339.0,
        rows_read_per_connection: 169.5,
        share_of_statements: 0.25,
        share_of_rows_read: 0.75,
        statements: vec![
            statement("SET TIME ZONE 'UTC'", SetupKind::Session),
            statement(
                "SELECT oid, typname FROM pg_type WHERE typname = ANY($1)",
                SetupKind::Catalog,
            ),
        ],
    });
    r
}

const TITLE: &str = "Set-up per new connection: 2 statements, 169.50 rows read";
const DETAIL: &str = "Per request: 2 new connections, 4 set-up statements (25% of the statements), 339 rows \
     read (75%)";

#[test]
fn the_set_up_is_shown_apart_in_every_view() {
    let r = with_setup();
    let table = TableExporter.render(&r);
    assert!(table.contains(&format!("{TITLE}\n{DETAIL}\n")), "{table}");
    assert!(table.contains("pg_type WHERE typname"), "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    let markdown = MarkdownExporter.render(&r);
    assert!(
        markdown.contains(&format!("**{TITLE}**\n\n{DETAIL}\n\n")),
        "{markdown}"
    );
    assert!(markdown.contains("| catalog |"), "{markdown}");
    let html = View::render(&r, Format::Html).unwrap();
    assert!(html.contains(TITLE), "the page shows the set-up");
    let json: serde_json::Value =
        serde_json::from_str(&View::render(&r, Format::Json).unwrap()).unwrap();
    let setup = &json["per_request"]["setup"];
    assert_eq!(setup["statements_per_connection"], 2.0);
    assert_eq!(setup["rows_read_per_request"], 339.0);
    assert_eq!(setup["statements"][1]["kind"], "catalog");
}

#[test]
fn a_pooled_app_shows_no_set_up() {
    let r = sample();
    assert!(
        !TableExporter
            .render(&r)
            .contains("Set-up per new connection")
    );
    assert!(
        !MarkdownExporter
            .render(&r)
            .contains("Set-up per new connection")
    );
    let json: serde_json::Value =
        serde_json::from_str(&View::render(&r, Format::Json).unwrap()).unwrap();
    assert!(
        json["per_request"].get("setup").is_none(),
        "absent, not null"
    );
}
