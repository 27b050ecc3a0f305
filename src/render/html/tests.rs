use crate::render::audit::html::HtmlExporter;
use crate::render::tests::sample;
use crate::render::text::Exporter;

/// The page's structure, one tag per line, for a snapshot: the stylesheet, the script and
/// the drawn SVG are left out, and digits become `#` so that a figure's format shows but
/// not its value.
pub fn outline(html: &str) -> String {
    let mut text = html.to_string();
    for (open, close) in [("<style>", "</style>"), ("<script>", "</script>")] {
        text = cut_between(&text, open, close);
    }
    text = cut_between(&text, "<svg", "</svg>");
    text.replace('<', "\n<")
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// Every `open … close` span emptied.
fn cut_between(text: &str, open: &str, close: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        let Some(length) = rest[start..].find(close) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(open);
        out.push('…');
        out.push_str(close);
        rest = &rest[start + length + close.len()..];
    }
    out.push_str(rest);
    out
}

/// `src`/`href`/`url(` pointing anywhere: what a self-contained page must not have.
pub fn external_references(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    ["src=", "href=", "url(", "@import", "http://", "https://"]
        .into_iter()
        .filter(|needle| lower.contains(needle))
        .map(|needle| {
            let at = lower.find(needle).unwrap();
            lower[at..(at + 80).min(lower.len())].to_string()
        })
        .collect()
}

#[test]
fn audit_page_structure() {
    let html = HtmlExporter.render(&sample());
    insta::assert_snapshot!("html_audit_outline", outline(&html));
}

#[test]
fn audit_page_is_self_contained_and_holds_the_figures() {
    let report = sample();
    let html = HtmlExporter.render(&report);
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    // The measured URL is the one http:// in the page, shown as text.
    let without_target = html.replace(&report.target.url, "");
    assert_eq!(external_references(&without_target), Vec::<String>::new());
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "share, latency, tables, findings"
    );
    assert_eq!(html.matches("<figcaption>").count(), 4);
    for figure in [
        // statements, rows read and rows returned per request
        ">4.00<",
        ">362.00<",
        ">321.00<",
        // the first finding's kind
        "collection_to_boolean",
        "✓ VALID: GET http://127.0.0.1:1/x<",
    ] {
        assert!(html.contains(figure), "{figure} missing");
    }
    assert!(html.contains("prefers-color-scheme: dark"));
}

#[test]
fn an_invalid_report_says_so_first() {
    let mut report = sample();
    report.valid = false;
    report.invalid_reasons = vec![pgcost_core::report::model::invalid::Invalid::new(
        pgcost_core::report::model::invalid::Code::SettleTimeout,
        "settling after the burst timed out",
    )];
    report.notes = vec![pgcost_core::report::model::notes::Note::NewConnections {
        sessions: 3,
        per_request: 0.03,
    }];
    let html = HtmlExporter.render(&report);
    let verdict = html.find("NOT VALID").expect("the verdict");
    let first_chart = html.find("<figure").unwrap();
    assert!(verdict < first_chart);
    assert!(html[verdict..first_chart].contains("settling after the burst timed out"));
    assert!(
        html[verdict..first_chart]
            .contains("the app opened 3 new connection(s) during the window (0.03 per request)")
    );
}

#[test]
fn pgbouncer_figures_have_their_table() {
    let mut report = sample();
    assert!(!HtmlExporter.render(&report).contains("<h2>PgBouncer</h2>"));
    report.pgbouncer = Some(pgcost_core::pgbouncer::PgBouncerFigures {
        database: "app".into(),
        transactions_per_request: 2.0,
        queries_per_request: 3.0,
        wait_ms_per_request: 1.25,
        max_cl_waiting: 4,
        own_statements: 17,
    });
    let html = HtmlExporter.render(&report);
    let at = html
        .find("<h2>PgBouncer</h2>")
        .expect("the PgBouncer section");
    let section = &html[at..html[at..].find("</section>").unwrap() + at];
    for figure in [">2.00<", ">3.00<", ">1.250<", ">4<", ">17<"] {
        assert!(section.contains(figure), "{figure} missing: {section}");
    }
}
