//! pgcost check's verdict as plain data: the document every check view reads and
//! `--write-baseline` writes (`CheckReport`), each endpoint's result, and the parts the
//! judging produces: `budget` (limits, breaches, the comparison of figures),
//! `statement_diff` (statements and findings against a previous run) and `plan_diff`
//! (the plans of its statements against the previous run's). Pure: the judging
//! itself, which reads the acknowledgements of pgcost.toml, is `commands/check`'s.

pub mod budget;
pub mod limit;
pub mod plan_diff;
pub mod statement_diff;

use serde::{Deserialize, Serialize};

use crate::report::Report;
use budget::{Breach, Budget, Delta, Regression};
use statement_diff::{FindingRef, StatementDiff};

/// Bumped whenever a key of the check document is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of `pgcost check`: the JSON document of `--format json` and `--write-baseline`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckReport {
    pub schema_version: u32,
    /// Every measurement is valid and every budget limit could be checked.
    pub valid: bool,
    /// No budget was exceeded and nothing regressed past `--max-regression`.
    pub passed: bool,
    /// The `--baseline` file compared against, if any.
    pub baseline: Option<String>,
    /// `--max-regression`, in percent.
    pub max_regression_percent: Option<f64>,
    /// In the order of pgcost.toml.
    pub endpoints: Vec<EndpointResult>,
}

/// One endpoint's verdict and the report behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointResult {
    /// As in pgcost.toml.
    pub name: String,
    /// The limits it was held to.
    pub budget: Budget,
    /// Limits exceeded. Empty when the report is not valid: its numbers prove nothing.
    pub breaches: Vec<Breach>,
    /// Limits that could not be checked (a figure is missing).
    pub unchecked: Vec<String>,
    /// Figures that grew past `--max-regression` against the baseline.
    pub regressions: Vec<Regression>,
    /// Every figure against the baseline, when the baseline has this endpoint.
    pub deltas: Vec<Delta>,
    /// Why there is no comparison with the baseline, when one was given.
    pub baseline_note: Option<String>,
    /// Statements and findings against the baseline, when it has this endpoint and
    /// both runs read pg_stat_statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_diff: Option<StatementDiff>,
    /// Every finding of the report, with its fingerprint, whether it is new against the
    /// baseline, and its acknowledgement.
    #[serde(default)]
    pub findings: Vec<FindingStatus>,
    /// Every `[[endpoint.ack]]` of the endpoint and what it matched.
    #[serde(default)]
    pub acks: Vec<AckStatus>,
    /// The full audit report (see the audit keys in docs/json.md); for an endpoint with
    /// `scale`, the report of its largest value.
    pub report: Report,
    /// With `scale = {...}`: the document of `pgcost scale` (docs/json.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<crate::scale::ScaleReport>,
}

/// One finding of an endpoint, as check judges it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FindingStatus {
    #[serde(flatten)]
    pub finding: FindingRef,
    /// Whether the baseline lacked it; null without a comparison.
    pub new: Option<bool>,
    /// The reason of the acknowledgement that covers it, if one does.
    pub acknowledged: Option<String>,
}

/// How an endpoint came out, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    OverBudget,
    Regressed,
    NotValid,
    Passed,
}

impl EndpointResult {
    /// The report is valid and every limit could be checked.
    pub fn trusted(&self) -> bool {
        self.report.valid && self.unchecked.is_empty()
    }

    pub fn status(&self) -> Status {
        if !self.breaches.is_empty() {
            Status::OverBudget
        } else if !self.regressions.is_empty() {
            Status::Regressed
        } else if !self.trusted() {
            Status::NotValid
        } else {
            Status::Passed
        }
    }
}

impl CheckReport {
    pub fn count(&self, status: Status) -> usize {
        self.endpoints
            .iter()
            .filter(|e| e.status() == status)
            .count()
    }
}

/// How one acknowledgement came out, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AckStatus {
    pub kind: String,
    pub statement: Option<String>,
    pub reason: String,
    /// `YYYY-MM-DD`, or null.
    pub expires: Option<String>,
    /// Where it is written: `pgcost.toml:LINE:COLUMN`.
    pub at: String,
    /// Fingerprints of the findings it acknowledges; empty when it matches nothing (a
    /// stale acknowledgement to delete).
    pub matched: Vec<String>,
    /// Its date has come: it fails the check.
    pub expired: bool,
}
