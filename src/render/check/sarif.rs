//! Check's SARIF (`--format sarif`): a result per finding of each endpoint, and an error
//! per breach of its budget, regression past `--max-regression` and reason its figures
//! cannot be trusted; a rule per finding kind and per kind of failure.

use super::{breach_text, plain, reasons, regression_text};
use crate::render::sarif::{
    Configuration, Endpoint, Level, Log, Properties, Rule, SarifResult, Text, finding_result,
    finding_rules,
};
use pgcost_core::check::budget::{Breach, Limit};
use pgcost_core::check::{CheckReport, EndpointResult};
use pgcost_core::source::CodeLocation;

/// The rules of what fails a check, beside the finding kinds: (id, short description, help).
const FAILURES: [(&str, &str, &str); 7] = [
    (
        BUDGET_EXCEEDED,
        "A per-request figure is over its budget.",
        "A figure per request (transactions, statements, rows read or returned, p95 \
         latency, WAL bytes, blocks dirtied, temp blocks, or a database's own figure under \
         [endpoint.budget.nodes]) is over the limit pgcost.toml sets. Fix the cause the \
         findings name, or raise the limit when the growth is intended.",
    ),
    (
        FORBIDDEN_FINDING,
        "A finding the budget forbids was found.",
        "The endpoint's budget lists this kind of finding in `forbid`. Fix the statement \
         it names (`pgcost explain KIND` gives the advice), or acknowledge it with an \
         [[endpoint.ack]].",
    ),
    (
        NEW_STATEMENTS,
        "More statements than the budget allows are new against the baseline.",
        "The request runs statements the baseline did not have, more than `new_statements` \
         allows. Check that each new statement is meant, then write a new baseline.",
    ),
    (
        NEW_FINDINGS,
        "A new finding at or above `fail_on_findings` severity.",
        "A finding the baseline did not have, at or above the budget's `fail_on_findings` \
         severity, and no acknowledgement covers it. Fix it, or acknowledge it with an \
         [[endpoint.ack]].",
    ),
    (
        ACK_EXPIRED,
        "An acknowledgement's date has come.",
        "An [[endpoint.ack]] of pgcost.toml has an `expires` date that has passed. Fix the \
         finding it covers, or renew the acknowledgement with a reason.",
    ),
    (
        REGRESSION,
        "A figure grew past --max-regression against the baseline.",
        "A per-request figure (statements, rows read or returned) grew by more than \
         --max-regression percent against the baseline run.",
    ),
    (
        NOT_VALID,
        "The measurement cannot be trusted.",
        "The endpoint's figures are not valid, or a budget limit could not be checked (a \
         figure is missing): the check proves nothing about it. The message says why; \
         `pgcost audit` on the endpoint shows the whole report.",
    ),
];

const BUDGET_EXCEEDED: &str = "budget_exceeded";
const NEW_STATEMENTS: &str = "new_statements";
const NEW_FINDINGS: &str = "fail_on_findings";
const ACK_EXPIRED: &str = "ack_expired";
const FORBIDDEN_FINDING: &str = "forbidden_finding";
const REGRESSION: &str = "regression";
const NOT_VALID: &str = "not_valid";

pub(super) fn render(report: &CheckReport) -> String {
    let mut rules = finding_rules();
    rules.extend(FAILURES.map(|(id, short, help)| Rule {
        id: id.to_string(),
        short_description: Text::plain(short),
        full_description: None,
        help: Text::plain(help),
        default_configuration: Configuration {
            level: Level::Error,
        },
    }));
    let results = report.endpoints.iter().flat_map(endpoint_results).collect();
    Log::of(rules, results).render()
}

/// The endpoint's failures first, then its findings.
fn endpoint_results(e: &EndpointResult) -> Vec<SarifResult> {
    let target = &e.report.target;
    let endpoint = Endpoint {
        name: &e.name,
        request: format!("{} {}", target.method, target.url),
    };
    let error = |rule: &str, text: String, properties: Option<Properties>| SarifResult {
        rule_id: rule.to_string(),
        level: Level::Error,
        message: Text::plain(format!("{}: {text}", e.name)),
        locations: vec![endpoint.at(None, None)],
        related_locations: Vec::new(),
        partial_fingerprints: [(
            "pgcostFailure/v1".to_string(),
            format!(
                "{}|{rule}|{}",
                e.name,
                text.split(':').next().unwrap_or_default()
            ),
        )]
        .into(),
        properties,
    };
    let mut out = Vec::new();
    for b in &e.breaches {
        let properties = Properties {
            actual: Some(b.actual),
            budget: Some(b.budget),
            ..Properties::default()
        };
        let mut result = error(
            breach_rule(b),
            format!("over budget: {}", breach_text(b, plain)),
            Some(properties),
        );
        result.partial_fingerprints.insert(
            "pgcostFailure/v1".to_string(),
            format!("{}|{}", e.name, b.metric),
        );
        let at = breach_location(e, b);
        result.locations = vec![endpoint.at(None, None).in_code(at.as_ref())];
        out.push(result);
    }
    for r in &e.regressions {
        let text = format!("regressed: {}", regression_text(r));
        let mut result = error(REGRESSION, text, None);
        let fingerprint = format!("{}|{REGRESSION}|{}", e.name, r.metric.key());
        result
            .partial_fingerprints
            .insert("pgcostFailure/v1".to_string(), fingerprint);
        out.push(result);
    }
    for reason in reasons(e) {
        out.push(error(NOT_VALID, format!("not valid: {reason}"), None));
    }
    out.extend((e.report.findings.iter()).map(|f| finding_result(&endpoint, f)));
    out
}

/// The line of pgcost.toml that sets the limit `b` broke: a forbidden kind's is `forbid`.
pub(super) fn breach_location(e: &EndpointResult, b: &Breach) -> Option<CodeLocation> {
    let lines = e.budget.lines.as_ref()?;
    let key = match &b.metric {
        Limit::Forbidden(Some(node), _) => format!("nodes.{node}.forbid"),
        Limit::Forbidden(None, _) => "forbid".into(),
        other => other.to_string(),
    };
    Some(lines.of_key(key))
}

/// The rule a breach falls under: a limit on the statement set or an acknowledgement has
/// its own (`fail_on_plan_change` apart), a forbidden finding kind is one, and every figure
/// over its limit is `budget_exceeded`.
fn breach_rule(b: &Breach) -> &'static str {
    match b.metric {
        Limit::NewStatements => NEW_STATEMENTS,
        Limit::NewFindings => NEW_FINDINGS,
        Limit::AckExpired => ACK_EXPIRED,
        Limit::Forbidden(..) => FORBIDDEN_FINDING,
        _ => BUDGET_EXCEEDED,
    }
}
