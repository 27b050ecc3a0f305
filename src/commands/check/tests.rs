//! Judging and rendering a check run, on hand-built reports.

use super::budget::{Budget, Limit};
use super::previous_run::PreviousRun;
use super::*;
use crate::render::View;
use crate::render::format::Format;
use pgcost_core::delta::{DatabaseDelta, WindowDelta};
use pgcost_core::findings::{FindingKind, Inputs, Thresholds, analyze};
use pgcost_core::report::model::figure::Figure;
use pgcost_core::report::tests::{context, load, stmt};

/// The check's view in `format`.
fn render(report: &CheckReport, format: Format) -> String {
    View::render(report, format).unwrap()
}

const N: i64 = 200;

/// A report of `N` requests to `path`, each costing `statements` one-statement
/// transactions that read `rows_read` and return `returned` rows; `naive` adds the
/// whole-permission-set query (a collection_to_boolean finding).
fn report(path: &str, statements: i64, rows_read: i64, returned: i64, naive: bool) -> Report {
    let mut stmts = vec![stmt(
        2,
        "SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2",
        N * (statements - i64::from(naive)),
        N * (returned - if naive { 300 } else { 0 }),
    )];
    if naive {
        stmts.push(stmt(
            1,
            "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
            N,
            N * 300,
        ));
    }
    let delta = WindowDelta {
        database: DatabaseDelta {
            xact_commit: N * statements,
            tup_returned: N * rows_read,
            sessions: Some(0),
            ..Default::default()
        },
        statements: stmts,
        ..Default::default()
    };
    let mut c = context(N as u64);
    c.target.url = format!("http://127.0.0.1:3000{path}");
    let mut r = Report::build(&delta, &load(N as u64, &[(200, N as u64)]), c);
    r.findings = analyze(&Inputs::of(&r), &Thresholds::default());
    r
}

fn budget(statements: f64, rows_read: f64) -> Budget {
    Budget {
        transactions: Some(statements),
        statements: Some(statements),
        rows_read: Some(rows_read),
        rows_returned: Some(400.0),
        p95_ms: Some(50.0),
        forbid: vec![FindingKind::CollectionToBoolean],
        ..Budget::default()
    }
}

fn measured(name: &str, report: Report, budget: Budget) -> Measured {
    Measured {
        name: name.into(),
        budget,
        report,
        acks: Vec::new(),
        scale: None,
    }
}

/// The day the hand-built runs are judged on.
const TODAY: &str = "2027-01-15";

/// Judges on [`TODAY`]; these runs have no acknowledgement that could be ambiguous.
fn evaluate(
    measured: Vec<Measured>,
    baseline: Option<(&str, &PreviousRun)>,
    max_regression_percent: Option<f64>,
) -> CheckReport {
    super::evaluate(
        measured,
        baseline,
        max_regression_percent,
        acks::parse_date(TODAY).unwrap(),
    )
    .unwrap()
}

fn naive() -> Measured {
    measured(
        "naive",
        report("/naive/p", 10, 889, 333, true),
        budget(6.0, 60.0),
    )
}
fn exists() -> Measured {
    measured(
        "exists",
        report("/exists/p", 6, 39, 25, false),
        budget(6.0, 60.0),
    )
}
fn cached() -> Measured {
    measured(
        "cached",
        report("/cached/p", 3, 30, 22, false),
        budget(6.0, 60.0),
    )
}
fn rejected() -> Measured {
    let mut r = report("/private", 1, 0, 0, false);
    r.load.status = [("401".to_string(), N as u64)].into();
    r.invalid_reasons = vec![pgcost_core::report::model::invalid::Invalid::new(
        pgcost_core::report::model::invalid::Code::Rejected,
        "200 of 200 responses were 401: these numbers measure the rejection path, not the endpoint",
    )];
    r.valid = false;
    measured("private", r, budget(1.0, 1.0))
}

/// A baseline in which exists cost 5 statements (it now costs 6: +20%) and cached read
/// 40 rows (now 30).
fn baseline() -> PreviousRun {
    let before = evaluate(
        vec![
            measured(
                "exists",
                report("/exists/p", 5, 39, 25, false),
                Budget::default(),
            ),
            measured(
                "cached",
                report("/cached/p", 3, 40, 22, false),
                Budget::default(),
            ),
        ],
        None,
        None,
    );
    PreviousRun::parse(&render(&before, Format::Json), "baseline.json").unwrap()
}

#[test]
fn a_burst_that_moved_nothing_passes_but_is_listed() {
    let mut r = report("/replica-read", 0, 0, 0, false);
    r.statements.clear();
    let line = pgcost_core::replica::moved_nothing_warning(
        &WindowDelta::default(),
        &load(N as u64, &[(200, N as u64)]),
    )
    .expect("nothing moved");
    r.notes.push(line.clone());
    let run = evaluate(vec![measured("reads", r, budget(6.0, 60.0))], None, None);
    assert_eq!(exit_code(&run), 0);
    let table = render(&run, Format::Table);
    assert!(
        table.contains(&format!("\nMeasured nothing\n- reads: {line}\n")),
        "{table}"
    );
    let markdown = render(&run, Format::Markdown);
    assert!(
        markdown.contains(&format!("- ⚠️ **reads** measured nothing: {line}")),
        "{markdown}"
    );
}

#[test]
fn within_budget_exits_0() {
    let run = evaluate(vec![exists(), cached()], None, None);
    assert!(run.valid && run.passed);
    assert_eq!(exit_code(&run), 0);
    assert!(run.endpoints.iter().all(|e| e.status() == Status::Passed));
}

#[test]
fn over_budget_exits_1_and_lists_each_breach() {
    let run = evaluate(vec![naive(), exists()], None, None);
    assert!(run.valid);
    assert!(!run.passed);
    assert_eq!(exit_code(&run), 1);
    let breaches: Vec<(String, f64, f64)> = run.endpoints[0]
        .breaches
        .iter()
        .map(|b| (b.metric.to_string(), b.actual, b.budget))
        .collect();
    assert_eq!(
        breaches,
        vec![
            ("transactions".to_string(), 10.0, 6.0),
            ("statements".to_string(), 10.0, 6.0),
            ("rows_read".to_string(), 889.0, 60.0),
            ("collection_to_boolean".to_string(), 1.0, 0.0),
        ]
    );
    assert!(run.endpoints[1].breaches.is_empty());
}

#[test]
fn an_invalid_measurement_exits_3_unless_a_valid_one_is_over_budget() {
    let run = evaluate(vec![exists(), rejected()], None, None);
    assert!(!run.valid);
    assert!(run.passed);
    assert_eq!(exit_code(&run), 3);
    // Its numbers prove nothing, so they breach nothing.
    assert!(run.endpoints[1].breaches.is_empty());
    assert_eq!(run.endpoints[1].status(), Status::NotValid);

    let run = evaluate(vec![naive(), rejected()], None, None);
    assert_eq!(exit_code(&run), 1);
}

#[test]
fn baseline_deltas_and_the_regression_threshold() {
    let b = baseline();
    let run = evaluate(vec![exists(), cached()], Some(("baseline.json", &b)), None);
    assert_eq!(exit_code(&run), 0, "without --max-regression, deltas only");
    let exists = &run.endpoints[0];
    let statements = exists
        .deltas
        .iter()
        .find(|d| d.metric == Figure::Statements)
        .unwrap();
    assert_eq!((statements.baseline, statements.actual), (5.0, 6.0));
    assert_eq!(statements.change_percent, Some(20.0));

    let run = evaluate(
        vec![self::exists(), cached()],
        Some(("baseline.json", &b)),
        Some(25.0),
    );
    assert_eq!(exit_code(&run), 0, "+20% is within 25%");

    let run = evaluate(
        vec![self::exists(), cached(), naive()],
        Some(("baseline.json", &b)),
        Some(10.0),
    );
    assert_eq!(exit_code(&run), 1, "+20% is past 10%, though within budget");
    let exists = &run.endpoints[0];
    assert!(exists.breaches.is_empty());
    assert_eq!(exists.status(), Status::Regressed);
    let metrics: Vec<&str> = exists.regressions.iter().map(|r| r.metric.key()).collect();
    // Transactions grew as much, but only statements and rows gate.
    assert_eq!(metrics, vec!["statements"]);
    assert!(
        run.endpoints[1].regressions.is_empty(),
        "cached got cheaper"
    );
    assert_eq!(
        run.endpoints[2].baseline_note.as_deref(),
        Some("not in the baseline")
    );
}

fn full_run() -> CheckReport {
    let b = baseline();
    evaluate(
        vec![cached(), exists(), naive(), rejected()],
        Some(("baseline.json", &b)),
        Some(10.0),
    )
}

#[test]
fn markdown_puts_failures_first() {
    let text = render(&full_run(), Format::Markdown);
    insta::assert_snapshot!("check_markdown", text);
}

#[test]
fn table_names_every_breach_with_its_numbers() {
    let text = render(&full_run(), Format::Table);
    println!("{text}");
    assert!(
        text.starts_with("pgcost check, 4 endpoint(s): 1 over budget, 1 regressed, 1 not valid\n")
    );
    assert!(
        text.contains("- cached: rows_read 40.00 → 30.00 (-25.0%)\n"),
        "{text}"
    );
    assert!(
        text.contains("- naive: rows_read 889.00 per request, budget 60\n"),
        "{text}"
    );
    assert!(
        text.contains("- exists: statements 5.00 → 6.00 per request (+20.0%, limit +10%)"),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too wide: {line}");
    }
}

#[test]
fn json_is_one_document_with_every_report() {
    let run = full_run();
    let value: serde_json::Value = serde_json::from_str(&render(&run, Format::Json)).unwrap();
    for pointer in [
        "/schema_version",
        "/valid",
        "/passed",
        "/baseline",
        "/max_regression_percent",
        "/endpoints/0/name",
        "/endpoints/0/budget/rows_read",
        "/endpoints/0/report/per_request/statements",
        "/endpoints/0/deltas/0/change_percent",
        "/endpoints/1/regressions/0/limit_percent",
        "/endpoints/2/breaches/0/actual",
        "/endpoints/2/breaches/0/budget",
    ] {
        assert!(value.pointer(pointer).is_some(), "missing {pointer}");
    }
    let back: CheckReport = serde_json::from_value(value).unwrap();
    assert_eq!((back.valid, back.passed), (run.valid, run.passed));
    for (back, run) in back.endpoints.iter().zip(&run.endpoints) {
        assert_eq!(
            (&back.name, &back.budget, &back.breaches, &back.regressions),
            (&run.name, &run.budget, &run.breaches, &run.regressions)
        );
    }
}

/// Parses JUnit XML back, failing on anything that is not well-formed.
/// (element, failures attribute) of the suite elements.
type Suites = Vec<(String, String)>;
/// (testcase name, [(element, type, message)]) per testcase.
type Cases = Vec<(String, Vec<[String; 3]>)>;

fn parse_junit(text: &str) -> (Suites, Cases) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut roots = Vec::new();
    let mut cases: Cases = Vec::new();
    let mut depth = 0usize;
    loop {
        let event = reader.read_event().expect("well-formed XML");
        let attr = |e: &quick_xml::events::BytesStart, name: &str| -> String {
            e.try_get_attribute(name)
                .unwrap()
                .map(|a| {
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .expect("attribute values unescape")
                        .into_owned()
                })
                .unwrap_or_default()
        };
        match event {
            Event::Start(e) => {
                depth += 1;
                let tag = AsRef::<str>::as_ref(&e.name()).to_string();
                match tag.as_str() {
                    "testsuites" | "testsuite" => roots.push((tag, attr(&e, "failures"))),
                    "testcase" => cases.push((attr(&e, "name"), Vec::new())),
                    "failure" | "error" => cases.last_mut().unwrap().1.push([
                        tag,
                        attr(&e, "type"),
                        attr(&e, "message"),
                    ]),
                    _ => {}
                }
            }
            Event::End(_) => depth -= 1,
            Event::GeneralRef(r) => {
                let name = r.xml10_content();
                assert!(
                    r.is_char_ref() || ["amp", "lt", "gt", "quot", "apos"].contains(&&*name),
                    "undefined entity &{name};"
                );
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "every element is closed");
    (roots, cases)
}

#[test]
fn junit_is_well_formed_with_a_failure_per_breach() {
    let mut run = full_run();
    // Markup in names and statements must be escaped.
    run.endpoints[0].name = "cached <fast> & \"cheap\"".into();
    let text = render(&run, Format::Junit);
    let (roots, cases) = parse_junit(&text);
    assert_eq!(
        roots,
        vec![
            ("testsuites".to_string(), "2".to_string()),
            ("testsuite".to_string(), "2".to_string())
        ]
    );
    let names: Vec<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec!["cached <fast> & \"cheap\"", "exists", "naive", "private"]
    );
    assert!(cases[0].1.is_empty());
    assert_eq!(
        cases[1].1,
        vec![[
            "failure".to_string(),
            "regression".to_string(),
            "regressed: statements 5.00 → 6.00 per request (+20.0%, limit +10%)".to_string()
        ]]
    );
    let naive: Vec<&str> = cases[2].1.iter().map(|f| f[2].as_str()).collect();
    assert_eq!(
        naive[..3],
        [
            "over budget: transactions 10.00 per request, budget 6",
            "over budget: statements 10.00 per request, budget 6",
            "over budget: rows_read 889.00 per request, budget 60",
        ]
    );
    assert!(naive[3].starts_with("over budget: forbidden finding collection_to_boolean"));
    assert_eq!(cases[2].1.len(), 4);
    assert_eq!(cases[3].1[0][0], "error");
    assert!(cases[3].1[0][2].contains("were 401"));
}

/// A run of `naive` (judged on [`TODAY`]) with these acknowledgements.
fn naive_with(
    acks: Vec<acks::Ack>,
    budget: Budget,
    baseline: Option<&PreviousRun>,
) -> Result<CheckReport> {
    let mut m = naive();
    m.budget = budget;
    m.acks = acks;
    super::evaluate(
        vec![m],
        baseline.map(|b| ("baseline.json", b)),
        None,
        acks::parse_date(TODAY).unwrap(),
    )
}

fn ack(kind: FindingKind, statement: Option<&str>, expires: Option<&str>) -> acks::Ack {
    acks::Ack {
        kind,
        statement: statement.map(str::to_string),
        reason: "fixed in #123; the rewrite ships next release".into(),
        expires: expires.map(|d| acks::parse_date(d).unwrap()),
        at: "pgcost.toml:30:13".into(),
    }
}

/// A baseline in which naive was the exists pipeline: the listing only, 6 per request.
fn naive_baseline() -> PreviousRun {
    let before = evaluate(
        vec![measured(
            "naive",
            report("/naive/p", 6, 39, 25, false),
            Budget::default(),
        )],
        None,
        None,
    );
    PreviousRun::parse(&render(&before, Format::Json), "baseline.json").unwrap()
}

#[test]
fn a_new_or_changed_statement_names_the_line_and_route_it_was_tagged_with() {
    use pgcost_core::tags::{StatementTags, TagShare, Tags};
    let b = naive_baseline();
    let mut m = naive();
    for (i, s) in m.report.statements.iter_mut().enumerate() {
        let tags = Tags {
            route: Some("/naive/p".into()),
            file: Some("app/api.rb".into()),
            line: Some(10 + u32::try_from(i).unwrap()),
            ..Tags::default()
        };
        let seen = vec![TagShare {
            tags,
            samples: 5,
            share: Some(1.0),
        }];
        s.tags = Some(StatementTags { samples: 5, seen });
    }
    let date = acks::parse_date(TODAY).unwrap();
    let run = super::evaluate(vec![m], Some(("baseline.json", &b)), None, date).unwrap();
    let diff = run.endpoints[0].statement_diff.as_ref().unwrap();
    let at = |c: &pgcost_core::check::statement_diff::StatementChange| {
        c.tags.as_ref().unwrap().location()
    };
    assert_eq!(at(&diff.added[0]).as_deref(), Some("app/api.rb:11"));
    assert_eq!(at(&diff.calls_changed[0]).as_deref(), Some("app/api.rb:10"));
    let table = render(&run, Format::Table);
    let changed = "(6.00 → 9.00 per request; from app/api.rb:10, route /naive/p)";
    assert!(table.contains(changed), "{table}");
    let markdown = render(&run, Format::Markdown);
    let added = "WHERE m.user_id = $1 (1.00 per request; from app/api.rb:11, route /naive/p)\n";
    assert!(markdown.contains(added), "{markdown}");
    let changed = "(9.00 per request; from app/api.rb:10, route /naive/p)\n";
    assert!(markdown.contains(changed), "{markdown}");
    let json: serde_json::Value = serde_json::from_str(&render(&run, Format::Json)).unwrap();
    let added = &json["endpoints"][0]["statement_diff"]["added"][0];
    assert_eq!(added["tags"]["route"], "/naive/p");
    assert_eq!(added["tags"]["line"], 11);
}

#[test]
fn the_statement_diff_names_the_new_statement_and_the_one_called_more() {
    let b = naive_baseline();
    let frozen = Budget {
        new_statements: Some(0),
        ..Budget::default()
    };
    let run = naive_with(vec![], frozen, Some(&b)).unwrap();
    assert_eq!(exit_code(&run), 1);
    let e = &run.endpoints[0];
    let diff = e.statement_diff.as_ref().unwrap();
    assert_eq!(diff.added.len(), 1);
    assert!(
        diff.added[0]
            .query
            .starts_with("SELECT g.action FROM group_grants")
    );
    assert_eq!(diff.added[0].calls_per_request, Some(1.0));
    assert!(diff.removed.is_empty());
    // The listing ran 6 times per request, now 9.
    assert_eq!(diff.calls_changed.len(), 1);
    let c = &diff.calls_changed[0];
    assert!(c.query.starts_with("SELECT id, name FROM projects"));
    assert_eq!(
        (c.baseline_calls_per_request, c.calls_per_request),
        (Some(6.0), Some(9.0))
    );
    let kinds: Vec<&str> = diff.new_findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, vec!["collection_to_boolean"]);
    assert_eq!(
        e.breaches
            .iter()
            .map(|b| (&b.metric, b.actual, b.budget))
            .collect::<Vec<_>>(),
        vec![(&Limit::NewStatements, 1.0, 0.0)]
    );

    let table = render(&run, Format::Table);
    assert!(
        table.contains("- naive: 1 new statement(s), budget 0: SELECT g.action"),
        "{table}"
    );
    assert!(
        table.contains("\nStatements against the baseline baseline.json\n"),
        "{table}"
    );
    assert!(
        table.contains("- naive: + SELECT g.action FROM group_grants g JOIN"),
        "{table}"
    );
    let print = &run.endpoints[0].findings[0].finding.fingerprint;
    assert!(
        table.contains(&format!(
            "- naive: + new finding {print} collection_to_boolean (high): SELECT"
        )),
        "{table}"
    );
    assert!(
        table.contains("- naive: ~ SELECT id, name FROM projects WHERE tenant_id = $1 ORDE… (6.00 → 9.00 per request)"),
        "{table}"
    );
    let markdown = render(&run, Format::Markdown);
    assert!(markdown.contains("```diff\n@@ naive @@\n+ SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1 (1.00 per request)\n"), "{markdown}");
    assert!(markdown.contains("\n- SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2 (6.00 per request)\n+ SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2 (9.00 per request)\n"), "{markdown}");
    let json: serde_json::Value = serde_json::from_str(&render(&run, Format::Json)).unwrap();
    let diff = &json["endpoints"][0]["statement_diff"];
    assert_eq!(diff["added"][0]["calls_per_request"], 1.0);
    assert_eq!(diff["calls_changed"][0]["baseline_calls_per_request"], 6.0);
    assert_eq!(diff["new_findings"][0]["kind"], "collection_to_boolean");
    assert!(diff["added"][0]["queryid"].is_string());

    // Against itself: no statement change, and the frozen set passes.
    let same = PreviousRun::parse(&render(&run, Format::Json), "same.json").unwrap();
    let frozen = Budget {
        new_statements: Some(0),
        ..Budget::default()
    };
    let run = naive_with(vec![], frozen, Some(&same)).unwrap();
    assert_eq!(exit_code(&run), 0);
    assert!(run.endpoints[0].statement_diff.as_ref().unwrap().is_empty());
    assert!(render(&run, Format::Table).contains("- naive: no statement change\n"));
    assert!(render(&run, Format::Markdown).contains("@@ naive: no statement change @@"));
}

#[test]
fn fail_on_findings_fails_on_a_new_finding_unless_acknowledged() {
    let b = naive_baseline();
    let strict = Budget {
        fail_on_findings: Some(pgcost_core::findings::Severity::High),
        ..Budget::default()
    };
    let run = naive_with(vec![], strict.clone(), Some(&b)).unwrap();
    assert_eq!(exit_code(&run), 1);
    let breach = &run.endpoints[0].breaches[0];
    assert_eq!((&breach.metric, breach.actual), (&Limit::NewFindings, 1.0));
    assert!(
        breach
            .detail
            .as_deref()
            .unwrap()
            .starts_with("collection_to_boolean (high): SELECT g.action")
    );
    // round_trips was in the baseline too: not new, not failing.
    let new: Vec<(&str, Option<bool>)> = run.endpoints[0]
        .findings
        .iter()
        .map(|f| (f.finding.kind.as_str(), f.new))
        .collect();
    assert_eq!(
        new,
        vec![
            ("collection_to_boolean", Some(true)),
            ("round_trips", Some(false))
        ]
    );

    // Acknowledged: shown with its reason, and it passes.
    let acked = vec![ack(
        FindingKind::CollectionToBoolean,
        Some("group_grants"),
        Some("2027-03-01"),
    )];
    let run = naive_with(acked, strict.clone(), Some(&b)).unwrap();
    assert_eq!(exit_code(&run), 0, "{:?}", run.endpoints[0].breaches);
    let f = &run.endpoints[0].findings[0];
    assert_eq!(
        f.acknowledged.as_deref(),
        Some("fixed in #123; the rewrite ships next release")
    );
    let table = render(&run, Format::Table);
    assert!(
        table.contains(&format!(
            "\nAcknowledgements\n- naive acknowledged: collection_to_boolean SELECT g.action FROM group_grants g JOIN group_… ({}): fixed in #123",
            f.finding.fingerprint
        )),
        "{table}"
    );
    let markdown = render(&run, Format::Markdown);
    assert!(
        markdown.contains(
            "#### Acknowledgements\n\n- naive acknowledged: collection_to_boolean `SELECT g.action"
        ),
        "{markdown}"
    );
    // By fingerprint, the same.
    let by_print = vec![ack(
        FindingKind::CollectionToBoolean,
        Some(&f.finding.fingerprint),
        None,
    )];
    assert_eq!(
        exit_code(&naive_with(by_print, strict, Some(&b)).unwrap()),
        0
    );

    // Without a baseline, the statement-set limits do not apply.
    let frozen = Budget {
        new_statements: Some(0),
        fail_on_findings: Some(pgcost_core::findings::Severity::Low),
        ..Budget::default()
    };
    let run = naive_with(vec![], frozen, None).unwrap();
    assert_eq!(exit_code(&run), 0);
    assert!(run.endpoints[0].statement_diff.is_none());
    assert_eq!(run.endpoints[0].findings[0].new, None);
}

#[test]
fn an_expired_acknowledgement_fails_with_its_reason() {
    let acked = vec![ack(
        FindingKind::CollectionToBoolean,
        Some("group_grants"),
        Some(TODAY),
    )];
    let run = naive_with(acked, Budget::default(), None).unwrap();
    assert_eq!(exit_code(&run), 1);
    let e = &run.endpoints[0];
    assert!(
        e.findings[0].acknowledged.is_some(),
        "still shown as acknowledged"
    );
    assert!(e.acks[0].expired);
    assert_eq!(e.breaches.len(), 1);
    assert_eq!(e.breaches[0].metric, Limit::AckExpired);
    let table = render(&run, Format::Table);
    assert!(
        table.contains(
            "- naive: acknowledgement expired: collection_to_boolean \"group_grants\" at pgcost.toml:30:13 expired on 2027-01-15: fixed in #123; the rewrite ships next release\n"
        ),
        "{table}"
    );
    let junit = render(&run, Format::Junit);
    assert!(
        junit.contains("over budget: acknowledgement expired: collection_to_boolean"),
        "{junit}"
    );
}

#[test]
fn an_acknowledgement_that_matches_nothing_is_reported() {
    let stale = vec![ack(
        FindingKind::NPlusOne,
        Some("SELECT label FROM small"),
        None,
    )];
    let run = naive_with(stale, Budget::default(), None).unwrap();
    assert_eq!(exit_code(&run), 0);
    assert!(run.endpoints[0].acks[0].matched.is_empty());
    let table = render(&run, Format::Table);
    assert!(
        table.contains("- naive ack n_plus_one SELECT label FROM small at pgcost.toml:30:13 matches no finding: delete it\n"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(&run, Format::Json)).unwrap();
    assert_eq!(
        json["endpoints"][0]["acks"][0]["matched"],
        serde_json::json!([])
    );
    assert_eq!(json["endpoints"][0]["acks"][0]["at"], "pgcost.toml:30:13");
}

#[test]
fn an_acknowledgement_that_matches_two_findings_is_a_usage_error() {
    // Both findings of naive (collection_to_boolean and round_trips) are of other kinds;
    // the permission query and the listing both contain "SELECT".
    let mut m = naive();
    m.report.findings.push(m.report.findings[0].clone());
    m.report.findings[1].query = Some("SELECT g.action FROM group_grants g WHERE g.id = $1".into());
    m.acks = vec![ack(
        FindingKind::CollectionToBoolean,
        Some("group_grants"),
        None,
    )];
    let e = super::evaluate(vec![m], None, None, acks::parse_date(TODAY).unwrap()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.message
            .starts_with("pgcost.toml:30:13: the ack statement \"group_grants\" matches 2"),
        "{}",
        e.message
    );
}
