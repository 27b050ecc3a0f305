//! The unauthenticated baseline: the same burst sent without credentials, set beside the
//! authenticated one. The difference is what everything after authentication costs.

use crate::report::model::Report;
pub use crate::report::model::baseline::Baseline;
use crate::report::model::figures::Figures;
use crate::report::model::invalid::{Code, Invalid};
use crate::report::model::notes::Note;

/// What the unauthenticated run adds to the authenticated report, after the report's own
/// reasons and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub baseline: Baseline,
    pub invalid_reasons: Vec<Invalid>,
    pub warnings: Vec<Note>,
}

/// Sets `unauthenticated` beside the authenticated run's figures: its figures, and its
/// reasons to distrust them. Its 401s and 403s are expected; a 2xx means the endpoint did
/// not need credentials.
pub fn compare(unauthenticated: &Report, authenticated: Figures) -> Comparison {
    let invalid_reasons = unauthenticated
        .invalid_reasons
        .iter()
        .map(|reason| reason.within("unauthenticated baseline"))
        .collect();
    let mut warnings = Vec::new();
    let answered: u64 = unauthenticated
        .load
        .status
        .iter()
        .filter(|(code, _)| code.starts_with('2'))
        .map(|(_, n)| n)
        .sum();
    if answered > 0 {
        warnings.push(Note::UnauthenticatedAnswered {
            answered,
            requests: unauthenticated.load.requests,
        });
    }
    Comparison {
        baseline: Baseline::compare(unauthenticated, authenticated),
        invalid_reasons,
        warnings,
    }
}

/// The unauthenticated run's report, when Ctrl-C ended the run before the authenticated
/// burst: the only report there is, and not valid.
pub fn interrupted(unauthenticated: Report) -> Report {
    let mut invalid_reasons = vec![Invalid::new(
        Code::Interrupted,
        "interrupted during the unauthenticated baseline: the authenticated burst was not sent",
    )];
    invalid_reasons.extend(unauthenticated.invalid_reasons);
    Report {
        valid: false,
        invalid_reasons,
        ..unauthenticated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{DatabaseDelta, WindowDelta};
    use crate::report::tests::{context, load, stmt};

    /// A burst of 40 requests, set beside `unauthenticated` when given.
    fn build(
        status: &[(u16, u64)],
        statements: i64,
        allowed: &[u16],
        unauthenticated: Option<Report>,
    ) -> Report {
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
        ctx.unauthenticated = unauthenticated;
        Report::build(&delta, &load(40, status), ctx)
    }

    fn run(status: &[(u16, u64)], statements: i64, allowed: &[u16]) -> Report {
        build(status, statements, allowed, None)
    }

    #[test]
    fn the_difference_is_the_cost_after_authentication() {
        let unauthenticated = run(&[(401, 40)], 0, &[401, 403]);
        assert!(
            unauthenticated.valid,
            "{:?}",
            unauthenticated.invalid_reasons
        );
        let report = build(&[(200, 40)], 40, &[], Some(unauthenticated));
        assert!(report.valid, "{:?}", report.invalid_reasons);
        let b = report.baseline.as_ref().unwrap();
        assert_eq!(b.unauthenticated.per_figure.statements, Some(0.0));
        assert_eq!(b.authenticated.per_figure.statements, Some(1.0));
        assert_eq!(b.after_authentication.per_figure.statements, Some(1.0));
        assert_eq!(b.after_authentication.per_figure.transactions, Some(1.0));
        assert_eq!(b.after_authentication.per_figure.rows_read, Some(10.0));
        assert_eq!(b.unauthenticated_status.get("401"), Some(&40));
        assert!(report.notes.is_empty(), "{:?}", report.notes);
    }

    #[test]
    fn a_baseline_that_is_not_rejected_or_not_valid_says_so() {
        let mut open = run(&[(200, 40)], 40, &[401, 403]);
        let settle = Invalid::new(Code::SettleTimeout, "settling after the burst timed out");
        open.invalid_reasons.push(settle.clone());
        let report = build(&[(200, 40)], 40, &[], Some(open));
        assert!(!report.valid);
        assert_eq!(
            report.invalid_reasons,
            vec![settle.within("unauthenticated baseline")]
        );
        assert_eq!(report.notes[0].code(), "unauthenticated_answered");
        assert!(
            report.notes[0]
                .message()
                .contains("answers without credentials")
        );
    }

    #[test]
    fn the_json_carries_the_baseline_only_when_asked() {
        let plain = run(&[(200, 40)], 40, &[]);
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json.get("baseline").is_none());
        let report = build(&[(200, 40)], 40, &[], Some(run(&[(401, 40)], 0, &[401])));
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
        let figures = serde_json::to_string(&report.baseline.unwrap().authenticated).unwrap();
        assert_eq!(
            figures,
            r#"{"rps":20.0,"latency_p50_ms":1.019,"transactions":1.0,"statements":1.0,"rows_read":10.0}"#
        );
    }

    #[test]
    fn an_interrupted_baseline_is_the_report_and_says_so_first() {
        let mut anonymous = run(&[(401, 40)], 0, &[401]);
        let timed_out = Invalid::new(Code::SettleTimeout, "settling timed out");
        anonymous.invalid_reasons.push(timed_out.clone());
        let report = interrupted(anonymous);
        assert!(!report.valid);
        assert_eq!(report.invalid_reasons[0].code, Code::Interrupted);
        let first = &report.invalid_reasons[0].message;
        assert!(first.starts_with("interrupted during the unauthenticated"));
        assert_eq!(report.invalid_reasons[1], timed_out);
    }
}
