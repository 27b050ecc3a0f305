//! The unauthenticated baseline: the same burst sent without credentials, set beside the
//! authenticated one. The difference is what everything after authentication costs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cost::report::Report;

/// The figures compared between the two runs, per request except `rps`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Requests per second over the burst.
    pub rps: f64,
    /// Median latency in ms.
    pub latency_p50_ms: f64,
    /// Commits plus rollbacks per request.
    pub transactions: f64,
    /// Top-level statements per request; null without pg_stat_statements.
    pub statements: Option<f64>,
    /// `tup_returned` per request.
    pub rows_read: f64,
}

impl Figures {
    pub fn of(report: &Report) -> Figures {
        Figures {
            rps: report.load.rps,
            latency_p50_ms: report.load.latency_ms.p50,
            transactions: report.per_request.transactions,
            statements: report.per_request.statements,
            rows_read: report.per_request.rows_read,
        }
    }

    /// `self - other`, figure by figure.
    pub fn minus(&self, other: &Figures) -> Figures {
        Figures {
            rps: self.rps - other.rps,
            latency_p50_ms: self.latency_p50_ms - other.latency_p50_ms,
            transactions: self.transactions - other.transactions,
            statements: self.statements.zip(other.statements).map(|(a, b)| a - b),
            rows_read: self.rows_read - other.rows_read,
        }
    }
}

/// Both runs side by side (`report.baseline`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Baseline {
    /// The burst sent without any credentials.
    pub unauthenticated: Figures,
    /// The unauthenticated run's responses per HTTP status (401 and 403 expected).
    pub unauthenticated_status: BTreeMap<String, u64>,
    /// The authenticated run: the report's own figures, repeated for the comparison.
    pub authenticated: Figures,
    /// `authenticated` minus `unauthenticated`: what everything after authentication
    /// costs per request (and, for `rps` and `latency_p50_ms`, in speed).
    pub after_authentication: Figures,
}

impl Baseline {
    pub fn compare(unauthenticated: &Report, authenticated: &Report) -> Baseline {
        let without = Figures::of(unauthenticated);
        let with = Figures::of(authenticated);
        Baseline {
            unauthenticated: without,
            unauthenticated_status: unauthenticated.load.status.clone(),
            authenticated: with,
            after_authentication: with.minus(&without),
        }
    }
}

/// Sets `unauthenticated` beside `report`: its figures, and its reasons to distrust them.
/// Its 401s and 403s are expected; a 2xx means the endpoint did not need credentials.
pub fn attach(report: &mut Report, unauthenticated: &Report) {
    report.baseline = Some(Baseline::compare(unauthenticated, report));
    for reason in &unauthenticated.invalid_reasons {
        report
            .invalid_reasons
            .push(format!("unauthenticated baseline: {reason}"));
    }
    let answered: u64 = unauthenticated
        .load
        .status
        .iter()
        .filter(|(code, _)| code.starts_with('2'))
        .map(|(_, n)| n)
        .sum();
    if answered > 0 {
        report.warnings.push(format!(
            "the unauthenticated baseline got {answered} of {} responses with a 2xx status: \
             the endpoint answers without credentials, so the difference is not the cost of \
             authentication",
            unauthenticated.load.requests
        ));
    }
    report.valid = report.invalid_reasons.is_empty();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::delta::{DatabaseDelta, WindowDelta};
    use crate::cost::report::tests::{context, load, stmt};

    fn run(status: &[(u16, u64)], statements: i64, allowed: &[u16]) -> Report {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: statements,
                tup_returned: statements * 10,
                ..Default::default()
            },
            statements: if statements > 0 {
                vec![stmt(
                    1,
                    "SELECT id, label FROM small",
                    statements,
                    statements * 10,
                )]
            } else {
                vec![]
            },
            ..Default::default()
        };
        let mut ctx = context(40);
        ctx.allowed_statuses = allowed.to_vec();
        Report::build(&delta, &load(40, status), ctx)
    }

    #[test]
    fn the_difference_is_the_cost_after_authentication() {
        let unauthenticated = run(&[(401, 40)], 0, &[401, 403]);
        assert!(
            unauthenticated.valid,
            "{:?}",
            unauthenticated.invalid_reasons
        );
        let mut report = run(&[(200, 40)], 40, &[]);
        attach(&mut report, &unauthenticated);
        assert!(report.valid, "{:?}", report.invalid_reasons);
        let b = report.baseline.as_ref().unwrap();
        assert_eq!(b.unauthenticated.statements, Some(0.0));
        assert_eq!(b.authenticated.statements, Some(1.0));
        assert_eq!(b.after_authentication.statements, Some(1.0));
        assert_eq!(b.after_authentication.transactions, 1.0);
        assert_eq!(b.after_authentication.rows_read, 10.0);
        assert_eq!(b.unauthenticated_status.get("401"), Some(&40));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn a_baseline_that_is_not_rejected_or_not_valid_says_so() {
        let mut open = run(&[(200, 40)], 40, &[401, 403]);
        open.invalid_reasons
            .push("settling after the burst timed out".into());
        let mut report = run(&[(200, 40)], 40, &[]);
        attach(&mut report, &open);
        assert!(!report.valid);
        assert_eq!(
            report.invalid_reasons,
            vec!["unauthenticated baseline: settling after the burst timed out".to_string()]
        );
        assert!(report.warnings[0].contains("answers without credentials"));
    }

    #[test]
    fn the_json_carries_the_baseline_only_when_asked() {
        let plain = run(&[(200, 40)], 40, &[]);
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json.get("baseline").is_none());
        let mut report = plain.clone();
        attach(&mut report, &run(&[(401, 40)], 0, &[401]));
        let json = serde_json::to_value(&report).unwrap();
        for pointer in [
            "/baseline/unauthenticated/rps",
            "/baseline/unauthenticated/latency_p50_ms",
            "/baseline/unauthenticated/statements",
            "/baseline/unauthenticated_status/401",
            "/baseline/authenticated/transactions",
            "/baseline/after_authentication/rows_read",
        ] {
            assert!(json.pointer(pointer).is_some(), "missing {pointer}");
        }
        let back: Report = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
    }
}
