//! The set-up of new connections, and where a finding's statement was sent from, in every
//! view of the audit.

use crate::render::format::Format;
use crate::render::tests::sample;
use crate::render::text::Exporter;
use crate::render::view::View;
use pgcost_core::setup::{Setup, SetupKind, SetupStatement};

use super::{MarkdownExporter, TableExporter};

/// The sample report, as if each request had opened two connections with a set-up of two
/// statements each.
fn with_setup() -> pgcost_core::report::Report {
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

/// The sample report, its first finding's statement tagged from two routes (one line
/// tagged), located as the audit locates it.
fn tagged() -> pgcost_core::report::Report {
    use pgcost_core::tags::{StatementTags, TagShare, Tags};
    let mut r = sample();
    let set = |route: &str, line: Option<u32>, share| TagShare {
        tags: Tags {
            route: Some(route.into()),
            controller: Some("projects".into()),
            file: line.map(|_| "app/controllers/projects.rb".into()),
            line,
            ..Tags::default()
        },
        samples: 1,
        share: Some(share),
    };
    let query = r.findings[0].query.clone().unwrap();
    let statement = r.statements.iter_mut().find(|s| s.query == query).unwrap();
    statement.tags = Some(StatementTags {
        samples: 4,
        seen: vec![set("/api/x", Some(12), 0.75), set("/api/y", None, 0.25)],
    });
    pgcost_core::findings::locate(&mut r.findings, &r.statements, None);
    r
}

const TAGGED_AT: &str =
    "app/controllers/projects.rb:12, the call site the app tagged (route /api/x, 75% of samples)";
const SENT_BY: &str = "sent by route /api/x (controller projects), 75% of samples; route /api/y \
     (controller projects), 25% of samples";

#[test]
fn a_finding_names_the_route_and_line_its_statement_was_sent_from_in_every_view() {
    let r = tagged();
    let f = &r.findings[0];
    assert_eq!(f.locations.len(), 1, "{:?}", f.locations);
    let table = TableExporter.render(&r);
    assert!(table.contains(&format!("   at {TAGGED_AT}\n")), "{table}");
    assert!(
        !table.contains("sent by"),
        "the brief shows the tagged line: {table}"
    );
    let markdown = MarkdownExporter.render(&r);
    let sent_by = "   sent by route /api/x (controller projects), 75% of samples; route /api/y \
                   (controller projects),\n     25% of samples\n";
    assert!(
        markdown.contains(&format!("{sent_by}   at {TAGGED_AT}\n")),
        "{markdown}"
    );
    let html = View::render(&r, Format::Html).unwrap();
    assert!(
        html.contains(&format!("<p class=\"tags\">{SENT_BY}</p>")),
        "{html}"
    );
    assert!(
        html.contains("<li><code>app/controllers/projects.rb:12</code>, the call site"),
        "{html}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&View::render(&r, Format::Json).unwrap()).unwrap();
    let finding = &json["findings"][0];
    assert_eq!(finding["tags"]["seen"][1]["route"], "/api/y");
    let at = &finding["locations"][0];
    assert_eq!(at["origin"]["kind"], "tag");
    assert_eq!(at["origin"]["route"], "/api/x");
    assert_eq!(at["origin"]["share"], 0.75);
    assert_eq!(at["line"], 12);
    assert!(
        json["findings"][1].get("tags").is_none(),
        "untagged: no key"
    );
}

#[test]
fn without_a_tagged_line_the_brief_says_who_sent_it() {
    let mut r = tagged();
    for s in r.statements.iter_mut() {
        if let Some(tags) = s.tags.as_mut() {
            tags.seen.remove(0);
            tags.seen[0].share = Some(1.0);
        }
    }
    pgcost_core::findings::locate(&mut r.findings, &r.statements, None);
    assert!(r.findings[0].locations.is_empty());
    let table = TableExporter.render(&r);
    let line = "   sent by route /api/y (controller projects), 100% of samples\n";
    assert!(table.contains(line), "{table}");
}
