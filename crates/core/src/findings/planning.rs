//! `planning_dominates`: a statement that spends at least as long being planned as being
//! run, on every call (pg_stat_statements' `total_plan_time`, counted while
//! `pg_stat_statements.track_planning` is on). `db time` counts execution only, so this
//! cost shows nowhere else.

use super::{Finding, FindingKind, Saving, Statement, Thresholds, evidence, quoted};
use crate::report::model::StatementRow;

/// A statement run on every request that reads at least this many relations is a join
/// whose planning may cost as much as its execution: only then is the note
/// `track_planning_off` worth a reader's time.
pub const NOTE_MIN_RELATIONS: usize = 4;

/// Whether plan time may matter in these statements: one of them, run about once per
/// request or more, reads at least [`NOTE_MIN_RELATIONS`] relations.
pub fn planning_may_matter(statements: &[StatementRow]) -> bool {
    statements.iter().any(|s| {
        let shape = super::sql::shape(&s.query);
        s.toplevel
            && !s.utility
            && s.calls_per_request >= 0.99
            && shape.relations.len().max(shape.mentioned.len()) >= NOTE_MIN_RELATIONS
    })
}

pub(super) fn planning_dominates(s: &Statement, t: &Thresholds) -> Option<Finding> {
    let plan_ms = s.plan_time_ms?;
    if plan_ms < t.planning_min_ms_per_request
        || plan_ms < t.planning_min_ratio_to_execution * s.db_time_ms
        || s.calls_per_request <= 0.0
    {
        return None;
    }
    let per_call = |ms: f64| ms / s.calls_per_request;
    let relations = s.relation_names().len();
    let suggestion = format!(
        "Postgres spends {:.2} ms planning this statement for {:.2} ms running it, on every \
         call ({} per request){}:\n\n\
         \x20   {}\n\n\
         It is planned afresh each time: the app sends it unprepared (or through an unnamed \
         statement). Options:\n\
         \x20 - prepare it once per connection and reuse the plan: server-side prepared \
         statements (psycopg prepare_threshold, JDBC prepareThreshold, a name on the \
         node-postgres query, Rails prepared_statements: true; behind PgBouncer in \
         transaction mode, max_prepared_statements from 1.21);\n\
         \x20 - a simpler statement: fewer tables per join (load the page's relations in a \
         second, keyed query), so the planner weighs fewer join orders;\n\
         \x20 - when the join order as written is good, SET join_collapse_limit = 1 for this \
         statement's transaction so the planner keeps it.",
        per_call(plan_ms),
        per_call(s.db_time_ms),
        super::counted(s.calls_per_request, "call", "calls"),
        if relations >= 2 {
            format!(", a join of {relations} relations")
        } else {
            String::new()
        },
        quoted(s.query),
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("plan_ms_per_call", per_call(plan_ms)),
            ("exec_ms_per_call", per_call(s.db_time_ms)),
            ("plan_time_ms_per_request", plan_ms),
            ("relations", relations as f64),
        ]),
        unparsed: !s.shape.parsed,
        saves_per_request: Saving {
            plan_time_ms: plan_ms,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::PlanningDominates, suggestion)
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{report, stmt};
    use super::super::{Inputs, Thresholds, analyze};
    use super::*;
    use crate::report::StatementRow;

    const JOIN: &str = "SELECT a.id FROM a JOIN b ON b.a_id = a.id JOIN c ON c.b_id = b.id \
                        JOIN d ON d.c_id = c.id WHERE a.id = $1";

    /// `JOIN` once per request, with this execution and plan time per call.
    fn timed(exec_ms: f64, plan_ms: Option<f64>) -> StatementRow {
        StatementRow {
            mean_exec_ms: exec_ms,
            mean_plan_ms: plan_ms,
            ..stmt(JOIN, 1.0, 1.0)
        }
    }

    fn planning(row: StatementRow) -> Vec<Finding> {
        (analyze(
            &Inputs::of(&report(vec![row], vec![])),
            &Thresholds::default(),
        )
        .into_iter())
        .filter(|f| f.kind == FindingKind::PlanningDominates)
        .collect()
    }

    #[test]
    fn plan_time_above_execution_is_named_with_its_saving() {
        let found = planning(timed(1.0, Some(11.8)));
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!(f.evidence["plan_ms_per_call"], 11.8);
        assert_eq!(f.evidence["exec_ms_per_call"], 1.0);
        assert_eq!(f.evidence["relations"], 4.0);
        assert_eq!(f.saves_per_request.plan_time_ms, 11.8);
        assert_eq!(f.saves_per_request.db_time_ms, 0.0);
        // 11.8 ms per request is above the high db time threshold (10 ms).
        assert_eq!(f.severity, crate::findings::Severity::High);
        assert!(f.suggestion.contains("prepare"), "{}", f.suggestion);
        assert!(
            f.saves_per_request.describe().contains("11.80 ms planning"),
            "{}",
            f.saves_per_request.describe()
        );
    }

    #[test]
    fn cheap_or_untracked_planning_is_not_named() {
        // Execution dominates.
        assert!(planning(timed(5.0, Some(2.0))).is_empty());
        // Plan time above execution, but too small to matter (a primary key lookup).
        assert!(planning(timed(0.02, Some(0.08))).is_empty());
        // track_planning off: nothing is known.
        assert!(planning(timed(0.1, None)).is_empty());
    }

    #[test]
    fn only_a_join_of_four_relations_run_per_request_makes_plan_time_worth_a_note() {
        assert!(planning_may_matter(&[timed(0.1, None)]));
        // The same join run on one request in ten, or three relations: no note.
        assert!(!planning_may_matter(&[stmt(JOIN, 0.1, 1.0)]));
        let three = "SELECT a.id FROM a JOIN b ON b.a_id = a.id JOIN c ON c.b_id = b.id";
        assert!(!planning_may_matter(&[stmt(three, 1.0, 1.0)]));
        assert!(!planning_may_matter(&[]));
    }
}
