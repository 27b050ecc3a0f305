//! The SARIF views on hand-built documents: the audit's sample report and a check of it.

use serde_json::Value;

use crate::render::format::Format;
use crate::render::tests::sample;
use crate::render::view::View;
use pgcost_core::check::budget::{Breach, Budget, Regression};
use pgcost_core::check::{CheckReport, EndpointResult};
use pgcost_core::findings::{self, FindingKind};
use pgcost_core::report::model::figure::Figure;

fn sarif(view: &dyn View) -> Value {
    serde_json::from_str(&view.render(Format::Sarif).unwrap()).unwrap()
}

fn rule_ids(log: &Value) -> Vec<&str> {
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    rules.iter().map(|r| r["id"].as_str().unwrap()).collect()
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap()
}

#[test]
fn the_audit_has_a_rule_per_kind_with_explains_help_and_a_result_per_finding() {
    let report = sample();
    let log = sarif(&report);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["$schema"], crate::render::sarif::SCHEMA);
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "pgcost");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let kinds: Vec<&str> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(rule_ids(&log), kinds);
    let rule = &driver["rules"][0];
    assert_eq!(
        rule["help"]["text"],
        findings::explain(FindingKind::CollectionToBoolean)
    );
    assert_eq!(
        rule["shortDescription"]["text"],
        "A statement fetches a set where the caller needs a yes or no."
    );

    let results = results(&log);
    assert_eq!(results.len(), report.findings.len());
    let first = &report.findings[0];
    assert_eq!(first.kind, FindingKind::CollectionToBoolean);
    let result = &results[0];
    assert_eq!(result["ruleId"], "collection_to_boolean");
    assert_eq!(result["level"], "error", "{:?} is high", first.severity);
    let query = first.query.as_deref().unwrap();
    let message = result["message"]["text"].as_str().unwrap();
    assert!(message.contains(query), "{message}");
    let request = "GET http://127.0.0.1:1/x";
    assert!(message.contains(request), "{message}");
    let at = &result["locations"][0]["logicalLocations"];
    assert_eq!(at[0]["kind"], "function");
    assert_eq!(at[0]["fullyQualifiedName"], request);
    assert_eq!(at[1]["kind"], "member");
    assert_eq!(at[1]["fullyQualifiedName"], query);
    assert_eq!(
        result["properties"]["evidence"]["rows_per_call"],
        first.evidence["rows_per_call"]
    );
    insta::assert_snapshot!("audit_sarif", report.render(Format::Sarif).unwrap());
}

pub(crate) fn check() -> CheckReport {
    let report = sample();
    let breach = |metric: &str, actual, budget, detail: Option<&str>| Breach {
        metric: metric.to_string().try_into().unwrap(),
        actual,
        budget,
        detail: detail.map(Into::into),
    };
    let endpoint = EndpointResult {
        name: "projects".into(),
        budget: Budget::default(),
        breaches: vec![
            breach("statements", 4.0, 3.0, None),
            breach("collection_to_boolean", 1.0, 0.0, Some("SELECT g.action")),
            breach("nodes.replica.n_plus_one", 1.0, 0.0, Some("SELECT 1")),
            breach("new_statements", 2.0, 0.0, Some("SELECT 2")),
        ],
        unchecked: vec!["the wal_bytes budget cannot be checked".into()],
        regressions: vec![Regression {
            metric: Figure::RowsRead,
            baseline: 100.0,
            actual: 200.0,
            change_percent: Some(100.0),
            limit_percent: 10.0,
        }],
        deltas: vec![],
        baseline_note: None,
        statement_diff: None,
        scale: None,
        findings: vec![],
        acks: vec![],
        report,
    };
    CheckReport {
        schema_version: pgcost_core::check::SCHEMA_VERSION,
        valid: false,
        passed: false,
        baseline: None,
        max_regression_percent: Some(10.0),
        endpoints: vec![endpoint],
    }
}

#[test]
fn check_has_an_error_per_breach_regression_and_reason_then_the_findings() {
    let report = check();
    let log = sarif(&report);
    let ids = rule_ids(&log);
    for id in [
        "n_plus_one",
        "budget_exceeded",
        "forbidden_finding",
        "new_statements",
        "fail_on_findings",
        "ack_expired",
        "regression",
        "not_valid",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let results = results(&log);
    let rules: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["ruleId"].as_str().unwrap(), r["level"].as_str().unwrap()))
        .collect();
    let findings = &report.endpoints[0].report.findings;
    assert_eq!(results.len(), 4 + 1 + 1 + findings.len());
    assert_eq!(
        rules[..6],
        [
            ("budget_exceeded", "error"),
            ("forbidden_finding", "error"),
            ("forbidden_finding", "error"),
            ("new_statements", "error"),
            ("regression", "error"),
            ("not_valid", "error"),
        ]
    );
    assert_eq!(
        results[0]["message"]["text"],
        "projects: over budget: statements 4.00 per request, budget 3"
    );
    assert_eq!(results[0]["properties"]["actual"], 4.0);
    let endpoint = &results[0]["locations"][0]["logicalLocations"][0];
    assert_eq!(endpoint["name"], "projects");
    assert_eq!(endpoint["fullyQualifiedName"], "GET http://127.0.0.1:1/x");
    let finding = &results[6];
    assert_eq!(finding["ruleId"], findings[0].kind.as_str());
    assert!(
        (finding["partialFingerprints"]["pgcostFinding/v1"].as_str())
            .unwrap()
            .starts_with("projects|collection_to_boolean:")
    );
    // The rules are the audit's snapshot; here, the results.
    let results = serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap();
    insta::assert_snapshot!("check_sarif_results", results);
}

#[test]
fn ramp_and_demo_offer_no_sarif() {
    use crate::render::format::{CHECK_FORMATS, DEMO_FORMATS, RAMP_FORMATS, REPORT_FORMATS};
    assert!(REPORT_FORMATS.contains(&Format::Sarif));
    assert!(CHECK_FORMATS.contains(&Format::Sarif));
    assert!(!RAMP_FORMATS.contains(&Format::Sarif));
    assert!(!DEMO_FORMATS.contains(&Format::Sarif));
}

#[test]
fn a_finding_is_at_its_tagged_line_with_its_tags_unless_the_path_is_absolute() {
    use pgcost_core::tags::seen_always;
    let mut report = sample();
    let tag = |uri: &str| tagged_line(uri, "/x");
    let tags = seen_always("/x", "app/api.rb", 12, 3);
    report.findings.truncate(1);
    report.findings[0].tags = Some(tags);
    report.findings[0].locations = vec![tag("app/api.rb")];
    let mut absolute = report.findings[0].clone();
    absolute.locations = vec![tag("/srv/app/api.rb")];
    report.findings.push(absolute);
    let log = sarif(&report);
    let results = results(&log);
    let physical = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "app/api.rb");
    assert_eq!(physical["region"]["startLine"], 12);
    let tags = &results[0]["properties"]["tags"];
    assert_eq!(tags["seen"][0]["route"], "/x");
    assert_eq!(tags["seen"][0]["share"], 1.0);
    let message = results[0]["message"]["text"].as_str().unwrap();
    assert!(
        message.contains(
            "Open app/api.rb:12, the call site the app tagged (route /x, 100% of samples)."
        ),
        "{message}"
    );
    assert!(
        results[1]["locations"][0].get("physicalLocation").is_none(),
        "an absolute path is no SARIF uri: {}",
        results[1]
    );
}

#[test]
fn a_findings_other_places_are_related_locations_relative_ones_only() {
    let mut report = sample();
    report.findings.truncate(1);
    let model = pgcost_core::source::CodeLocation {
        uri: "app/models/item.rb".into(),
        line: 2,
        origin: pgcost_core::source::Origin::Model {
            table: "items".into(),
            model: "Item".into(),
        },
    };
    report.findings[0].locations = vec![
        tagged_line("/srv/app/api.rb", "/x"),
        tagged_line("app/api.rb", "/y"),
        model,
    ];
    let log = sarif(&report);
    let result = &results(&log)[0];
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "app/api.rb");
    assert_eq!(
        result["relatedLocations"],
        serde_json::json!([{
            "id": 1,
            "physicalLocation": {
                "artifactLocation": {"uri": "app/models/item.rb"},
                "region": {"startLine": 2}
            },
            "message": {"text": "the model of `items` (Item)"}
        }])
    );
    // One location: none related.
    report.findings[0].locations.truncate(2);
    let log = sarif(&report);
    assert!(results(&log)[0].get("relatedLocations").is_none());
}

/// Line 12 of `uri`, tagged with `route` in every sample.
pub(crate) fn tagged_line(uri: &str, route: &str) -> pgcost_core::source::CodeLocation {
    pgcost_core::source::CodeLocation {
        uri: uri.into(),
        line: 12,
        origin: pgcost_core::source::Origin::Tag {
            route: Some(route.into()),
            controller: None,
            action: None,
            job: None,
            share: Some(1.0),
        },
    }
}
