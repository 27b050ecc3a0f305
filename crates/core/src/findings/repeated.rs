//! `repeated_statement`: the same read runs more than once per request.

use super::sql::Access;
use super::{Finding, FindingKind, Saving, Statement, Thresholds, amount, evidence};

/// The same read at least twice per request (and not an N+1, which has its own finding).
/// Without `$n` every call returns the same answer; with parameters the calls may differ,
/// so it is a memoisation candidate. A page with parameters that runs more than once is
/// left alone: several pages or widgets of one response differ in their parameters.
pub(super) fn repeated_statement(s: &Statement, t: &Thresholds) -> Option<Finding> {
    if s.shape.access != Access::Read
        || s.calls_per_request < t.repeated_min_calls_per_request
        || s.is_n_plus_one(t)
        || (s.page && s.shape.placeholders > 0)
    {
        return None;
    }
    let extra = s.calls_per_request - 1.0;
    let share = extra / s.calls_per_request;
    let parameterless = s.shape.placeholders == 0;
    let mut suggestion = if parameterless {
        format!(
            "This statement has no parameters and runs {} times per request, so every call \
             returns the same answer: {} of the calls are pure waste. Compute it once per \
             request and pass the value to every place that needs it.",
            amount(s.calls_per_request),
            amount(extra),
        )
    } else {
        format!(
            "This statement runs {} times per request. When the parameters repeat within \
             the request (the same user, tenant or item), memoise the result for the rest \
             of the request; when they differ, it is a loop: batch it with `= ANY($1)`.",
            amount(s.calls_per_request),
        )
    };
    if s.shape.counts {
        suggestion.push_str(
            "\n\nA count that runs twice per request is usually a paginator's: one count \
             for the page numbers and a second \"full count\" of the same query, or a count \
             property evaluated once for the page and again for the total. Count once and \
             hand the number to both.",
        );
    }
    Some(Finding {
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
            ("parameters", s.shape.placeholders as f64),
        ]),
        avoidable_rows_per_request: s.rows_per_request * share,
        round_trips_per_request: extra,
        saves_per_request: Saving {
            statements: extra,
            rows_read: s.table_rows_read * share,
            rows_returned: s.rows_per_request * share,
            db_time_ms: s.db_time_ms * share,
            ..Saving::default()
        },
        ..s.finding(FindingKind::RepeatedStatement, suggestion)
    })
}
