//! Budgets and baselines: pure comparisons of one endpoint's per-request figures with the
//! limits in pgcost.toml and with a previous run. No I/O here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::limit::Limit;
use super::statement_diff::{FindingRef, StatementDiff};
use super::{AckStatus, FindingStatus};
use crate::findings::{Finding, FindingKind, Severity};
use crate::report::Report;
pub use crate::report::model::figures::Figures;
use crate::scale::{SLOPE_TOLERANCE, ScaleReport};

/// `Budget`, with a limit of each figure of [`with_figures!`] and `Budget::limit`: the
/// entry `pub rows_read: RowsRead { .. }` in `report/model/figure.rs` is the field
/// `pub rows_read: Option<f64>` here, under the entry's doc and serde attributes.
macro_rules! declare_budget {
    ($($(#[$meta:meta])* pub $key:ident: $arm:ident { $($spec:tt)* })*) => {
        /// An endpoint's limits per request, as `[endpoint.budget]` spells them. Every limit is
        /// optional; an empty budget passes.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct Budget {
            /// Where pgcost.toml sets this budget's limits, for the annotations that point at
            /// them; never read from, nor written to, a file.
            #[serde(skip)]
            #[schemars(skip)]
            pub lines: Option<crate::source::ConfigLines>,
            $($(#[$meta])* pub $key: Option<f64>,)*
            /// With `scale = {...}`: the most statements per request that one more unit of the
            /// parameter may add (`0`: the same statements whatever the page size). Held within
            /// [`SLOPE_TOLERANCE`].
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub statements_slope: Option<f64>,
            /// With `scale = {...}`: the most rows read per request one more unit may add.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rows_read_slope: Option<f64>,
            /// With `scale = {...}`: the most rows returned per request one more unit may add.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rows_returned_slope: Option<f64>,
            /// Finding kinds that must not appear.
            #[serde(default)]
            pub forbid: Vec<FindingKind>,
            /// Most statements the baseline did not have (`0`: the statement set is frozen).
            /// Judged only against a baseline that has the endpoint.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub new_statements: Option<u64>,
            /// Fail on a finding of at least this severity that the baseline did not have and
            /// that is not acknowledged. Judged only against a baseline that has the endpoint.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fail_on_findings: Option<Severity>,
            /// Fail when a sequential scan replaced an index in the plan of a statement, against
            /// the baseline's plan (`[defaults] fail_on_plan_change` when the endpoint does not
            /// say). Without it a changed plan is reported, not failed.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fail_on_plan_change: Option<bool>,
            /// Limits on one database of the request, by its name (`[endpoint.budget.nodes.NAME]`):
            /// `transactions`, `statements`, `rows_read`, `rows_returned` and `forbid` apply to
            /// that database's own figures and findings.
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub nodes: BTreeMap<String, Budget>,
        }

        impl Budget {
            /// The limit `self` sets on `figure`, if any.
            pub fn limit(&self, figure: Figure) -> Option<f64> {
                match figure {
                    $(Figure::$arm => self.$key,)*
                }
            }

            /// The limit `self` sets on the slope of `figure` (its entry's `slope`), if any.
            fn slope_limit(&self, figure: Figure) -> Option<f64> {
                match figure {
                    Figure::Statements => self.statements_slope,
                    Figure::RowsRead => self.rows_read_slope,
                    Figure::RowsReturned => self.rows_returned_slope,
                    _ => None,
                }
            }
        }
    };
}
with_figures!(declare_budget);

pub use crate::report::model::figure::Figure;
use crate::report::model::figure::with_figures;

/// One figure over its limit: the shared check of `check`'s and `survey`'s budgets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Held {
    /// Within the limit.
    Within,
    /// Over it, by the measured value.
    Over(f64),
    /// The report has no value for the figure.
    Missing,
}

/// `figure` of what was measured against `limit`, with the slack that ratios of integer
/// counters need.
pub fn hold(figure: Figure, figures: &Figures, limit: f64) -> Held {
    match figure.of(figures) {
        Some(actual) if exceeds(actual, limit) => Held::Over(actual),
        Some(_) => Held::Within,
        None => Held::Missing,
    }
}

/// The slope limits, from the figure table: each figure's slope key and its limit in a
/// budget.
fn slope_limits(budget: &Budget) -> impl Iterator<Item = (&'static str, Figure, Option<f64>)> {
    (Figure::ALL.into_iter()).filter_map(move |f| Some((f.spec().slope?, f, budget.slope_limit(f))))
}

/// Whether `budget` sets a slope, which needs `scale = {...}`.
pub fn has_slope_limits(budget: &Budget) -> bool {
    slope_limits(budget).any(|(_, _, limit)| limit.is_some())
}

/// The slope limits of `budget` against the fits of `scale`: a slope over its limit plus
/// [`SLOPE_TOLERANCE`] is a breach; without the scale document (an endpoint without
/// `scale`) or the figure, the limit is unchecked. The document should be valid.
pub fn check_slopes(budget: &Budget, scale: Option<&ScaleReport>) -> BudgetVerdict {
    let mut verdict = BudgetVerdict::default();
    for (name, figure, limit) in slope_limits(budget) {
        let Some(limit) = limit else {
            continue;
        };
        match scale.and_then(|s| s.per_request.get(figure)) {
            Some(fit) if fit.slope > limit + SLOPE_TOLERANCE => verdict.breaches.push(Breach {
                metric: Limit::Slope(figure),
                actual: fit.slope,
                budget: limit,
                detail: None,
            }),
            Some(_) => {}
            None => verdict.unchecked.push(format!(
                "the {name} budget cannot be checked: it needs scale = {{...}} on the \
                 endpoint, and pg_stat_statements for statements and rows returned"
            )),
        }
    }
    verdict
}

/// One limit exceeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Breach {
    /// `transactions`, `statements`, `rows_read`, `rows_returned`, `p95_ms`, or the kind of
    /// a forbidden finding (`collection_to_boolean`, ...).
    #[schemars(with = "String")]
    pub metric: Limit,
    /// The measured value per request; for a forbidden finding, how many were found.
    pub actual: f64,
    /// The limit; 0 for a forbidden finding.
    pub budget: f64,
    /// For a forbidden finding: the statement or table it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The outcome of comparing one report with its budget.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetVerdict {
    pub breaches: Vec<Breach>,
    /// Limits that could not be checked because the figure is missing.
    pub unchecked: Vec<String>,
}

/// Slack for comparing per-request figures, which are ratios of integer counters.
fn exceeds(actual: f64, limit: f64) -> bool {
    actual > limit + 1e-9 * limit.abs().max(1.0)
}

/// Compares a report with its budget. The report should be valid: an invalid report's
/// numbers prove nothing either way.
pub fn check(budget: &Budget, report: &Report) -> BudgetVerdict {
    let mut verdict = BudgetVerdict::default();
    let all: Vec<&Finding> = report.findings.iter().collect();
    check_limits(budget, &Figures::of(report), &all, None, &mut verdict);
    for (name, node_budget) in &budget.nodes {
        let single =
            report.nodes.is_empty() && report.target.database.ends_with(&format!("/{name}"));
        let node = report.nodes.iter().find(|n| &n.name == name);
        let measured = match node {
            Some(node) => Figures::read(&report.load, &node.per_request),
            None if single => Figures::of(report),
            None => {
                verdict.unchecked.push(format!(
                    "the budget of database {name:?} cannot be checked: no --db or [database] \
                     url names it"
                ));
                continue;
            }
        };
        let found: Vec<&Finding> = (report.findings.iter())
            .filter(|f| single || f.database.as_deref() == Some(name.as_str()))
            .collect();
        check_limits(node_budget, &measured, &found, Some(name), &mut verdict);
    }
    verdict
}

/// Every numeric limit `budget` sets, by name: the metrics and the write side.
pub fn numeric_limits(budget: &Budget) -> Vec<(&'static str, f64)> {
    let figures = (Figure::ALL.into_iter()).filter_map(|f| budget.limit(f).map(|v| (f.key(), v)));
    let slopes = slope_limits(budget).filter_map(|(name, _, limit)| Some((name, limit?)));
    figures.chain(slopes).collect()
}

/// The limits of `budget` against what was `measured` and the `findings` they apply to;
/// each breach names its limit, a database's (`node`) under its name. A database's budget
/// has no latency of its own.
fn check_limits(
    budget: &Budget,
    measured: &Figures,
    findings: &[&Finding],
    node: Option<&str>,
    verdict: &mut BudgetVerdict,
) {
    for figure in Figure::ALL {
        let Some(limit) = budget.limit(figure) else {
            continue;
        };
        let name = match node {
            Some(_) if !figure.spec().per_database => continue,
            Some(node) => Limit::NodeFigure(node.into(), figure),
            None => Limit::Figure(figure),
        };
        match hold(figure, measured, limit) {
            Held::Over(actual) => verdict.breaches.push(Breach {
                metric: name,
                actual,
                budget: limit,
                detail: None,
            }),
            Held::Within => {}
            Held::Missing => verdict.unchecked.push(format!(
                "the {name} budget cannot be checked: the figure needs {}",
                figure.spec().needs
            )),
        }
    }
    for kind in &budget.forbid {
        let found: Vec<_> = findings.iter().filter(|f| f.kind == *kind).collect();
        if let Some(first) = found.first() {
            verdict.breaches.push(Breach {
                metric: Limit::Forbidden(node.map(str::to_string), *kind),
                actual: found.len() as f64,
                budget: 0.0,
                detail: first.query.clone().or_else(|| first.table.clone()),
            });
        }
    }
}

/// The limits on the statement set, against the baseline: `new_statements` on the
/// statements the baseline did not have, `fail_on_findings` on new findings at or above
/// the severity that no acknowledgement covers, `fail_on_plan_change` on plans in which
/// a sequential scan replaced an index. Without a statement diff (no baseline for the
/// endpoint), none applies.
pub fn statement_set(
    budget: &Budget,
    diff: Option<&StatementDiff>,
    findings: &[FindingStatus],
) -> Vec<Breach> {
    let mut breaches = Vec::new();
    let Some(diff) = diff else {
        return breaches;
    };
    if let Some(limit) = budget.new_statements
        && diff.added.len() as u64 > limit
    {
        breaches.push(Breach {
            metric: Limit::NewStatements,
            actual: diff.added.len() as f64,
            budget: limit as f64,
            detail: diff.added.first().map(|s| s.query.clone()),
        });
    }
    let replaced: Vec<_> = (diff.plan_changed.iter())
        .filter(|c| c.index_replaced)
        .collect();
    if budget.fail_on_plan_change == Some(true)
        && let Some(first) = replaced.first()
    {
        breaches.push(Breach {
            metric: Limit::PlanChange,
            actual: replaced.len() as f64,
            budget: 0.0,
            detail: Some(format!("{}: {}", first.query, first.summary())),
        });
    }
    if let Some(threshold) = budget.fail_on_findings {
        // Severity is ordered most severe first.
        let failing: Vec<&FindingStatus> = findings
            .iter()
            .filter(|f| f.new == Some(true) && f.acknowledged.is_none())
            .filter(|f| f.finding.severity <= threshold)
            .collect();
        if let Some(first) = failing.first() {
            breaches.push(Breach {
                metric: Limit::NewFindings,
                actual: failing.len() as f64,
                budget: 0.0,
                detail: Some(finding_text(&first.finding)),
            });
        }
    }
    breaches
}

/// `kind (severity): statement`, to name a finding in one line.
pub fn finding_text(f: &FindingRef) -> String {
    match f.subject() {
        Some(subject) => format!("{} ({}): {subject}", f.kind, f.severity),
        None => format!("{} ({})", f.kind, f.severity),
    }
}

/// An acknowledgement whose date has come fails the check, with its reason.
pub fn expired(ack: &AckStatus) -> Breach {
    let what = match &ack.statement {
        Some(statement) => format!("{} {statement:?}", ack.kind),
        None => ack.kind.clone(),
    };
    Breach {
        metric: Limit::AckExpired,
        actual: 1.0,
        budget: 0.0,
        detail: Some(format!(
            "{what} at {} expired on {}: {}",
            ack.at,
            ack.expires.as_deref().unwrap_or("?"),
            ack.reason
        )),
    }
}

/// How one figure moved against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delta {
    #[serde(with = "super::limit::figure_key")]
    #[schemars(with = "String")]
    pub metric: Figure,
    pub baseline: f64,
    pub actual: f64,
    /// `actual - baseline`.
    pub change: f64,
    /// The change in percent of the baseline; null when the baseline is 0.
    pub change_percent: Option<f64>,
}

/// A figure that grew more than `--max-regression` allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Regression {
    #[serde(with = "super::limit::figure_key")]
    #[schemars(with = "String")]
    pub metric: Figure,
    pub baseline: f64,
    pub actual: f64,
    /// Null when the baseline is 0 (any growth from nothing is a regression).
    pub change_percent: Option<f64>,
    pub limit_percent: f64,
}

/// The deltas of every figure both runs have, and the regressions past
/// `max_regression_percent` among statements, rows read and rows returned.
pub fn compare(
    baseline: &Figures,
    current: &Figures,
    max_regression_percent: Option<f64>,
) -> (Vec<Delta>, Vec<Regression>) {
    let mut deltas = Vec::new();
    let mut regressions = Vec::new();
    for metric in Figure::COLUMNS {
        let (Some(before), Some(now)) = (metric.of(baseline), metric.of(current)) else {
            continue;
        };
        let change_percent = (before != 0.0).then(|| (now - before) / before * 100.0);
        deltas.push(Delta {
            metric,
            baseline: before,
            actual: now,
            change: now - before,
            change_percent,
        });
        if let Some(limit) = max_regression_percent
            && metric.spec().gated
            && exceeds(now, before * (1.0 + limit / 100.0))
        {
            regressions.push(Regression {
                metric,
                baseline: before,
                actual: now,
                change_percent,
                limit_percent: limit,
            });
        }
    }
    (deltas, regressions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{DatabaseDelta, WindowDelta};
    use crate::findings::{Inputs, Thresholds, analyze};
    use crate::report::Writes;
    use crate::report::model::figure::PerFigure;
    use crate::report::model::keyed::Keyed;
    use crate::report::tests::{context, load, stmt};

    /// 200 requests, each: 2 statements, 1 transaction, 301 + 1 rows returned, the naive
    /// permission query among them (a collection_to_boolean finding).
    fn report() -> Report {
        let delta = WindowDelta {
            database: DatabaseDelta {
                xact_commit: 200,
                tup_returned: 200 * 350,
                sessions: Some(0),
                ..Default::default()
            },
            statements: vec![
                stmt(
                    1,
                    "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
                    400,
                    200 * 300,
                ),
                stmt(2, "SELECT id FROM projects WHERE id = $1", 200, 200),
            ],
            ..Default::default()
        };
        let mut r = Report::build(&delta, &load(200, &[(200, 200)]), context(200));
        r.findings = analyze(&Inputs::of(&r), &Thresholds::default());
        r
    }

    #[test]
    fn a_budget_that_holds_has_no_breach() {
        let r = report();
        let budget = Budget {
            transactions: Some(1.0),
            statements: Some(3.0),
            rows_read: Some(350.0),
            rows_returned: Some(301.0),
            p95_ms: Some(10.0),
            forbid: vec![FindingKind::NPlusOne],
            ..Budget::default()
        };
        assert_eq!(check(&budget, &r), BudgetVerdict::default());
        assert_eq!(check(&Budget::default(), &r), BudgetVerdict::default());
    }

    #[test]
    fn rows_fetched_is_a_budget_of_its_own() {
        let mut r = report();
        r.per_request.rows_fetched = 12.5;
        let budget = Budget {
            rows_fetched: Some(10.0),
            ..Budget::default()
        };
        let verdict = check(&budget, &r);
        let got: Vec<_> = (verdict.breaches.iter())
            .map(|b| (b.metric.to_string(), b.actual, b.budget))
            .collect();
        assert_eq!(got, vec![("rows_fetched".to_string(), 12.5, 10.0)]);
        assert_eq!(numeric_limits(&budget), vec![("rows_fetched", 10.0)]);
        let toml: Budget = toml::from_str("rows_fetched = 13").unwrap();
        assert!(check(&toml, &r).breaches.is_empty());
    }

    #[test]
    fn blocks_written_is_a_budget_from_its_one_entry() {
        let mut r = report();
        r.per_request.writes = Some(Writes {
            blocks_written: 4.0,
            ..Writes::default()
        });
        let budget: Budget = toml::from_str("blocks_written = 3").unwrap();
        let verdict = check(&budget, &r);
        let got: Vec<_> = (verdict.breaches.iter())
            .map(|b| (b.metric.to_string(), b.actual, b.budget))
            .collect();
        assert_eq!(got, vec![("blocks_written".to_string(), 4.0, 3.0)]);
        assert_eq!(numeric_limits(&budget), vec![("blocks_written", 3.0)]);
        let json = serde_json::to_value(&budget).unwrap();
        assert_eq!(json["blocks_written"], 3.0);
        // Without pg_stat_statements there is no write side: unchecked, not passed.
        r.per_request.writes = None;
        let verdict = check(&budget, &r);
        assert!(verdict.breaches.is_empty());
        assert!(verdict.unchecked[0].contains("blocks_written"));
    }

    #[test]
    fn write_side_limits_breach_and_a_missing_wal_figure_is_unchecked() {
        let mut r = report();
        r.per_request.writes = Some(Writes {
            wal_bytes: Some(150.0),
            blocks_dirtied: 2.0,
            temp_blocks_written: 0.0,
            ..Writes::default()
        });
        let budget = Budget {
            wal_bytes: Some(100.0),
            blocks_dirtied: Some(2.0),
            temp_blocks_written: Some(0.0),
            ..Budget::default()
        };
        let verdict = check(&budget, &r);
        let got: Vec<_> = (verdict.breaches.iter())
            .map(|b| (b.metric.to_string(), b.actual, b.budget))
            .collect();
        assert_eq!(got, vec![("wal_bytes".to_string(), 150.0, 100.0)]);
        assert_eq!(
            numeric_limits(&budget),
            vec![
                ("wal_bytes", 100.0),
                ("blocks_dirtied", 2.0),
                ("temp_blocks_written", 0.0)
            ]
        );
        // Before PG 13 there is no WAL figure: the limit is unchecked, not passed.
        r.per_request.writes.as_mut().unwrap().wal_bytes = None;
        let verdict = check(&budget, &r);
        assert!(verdict.breaches.is_empty());
        assert_eq!(verdict.unchecked.len(), 1, "{:?}", verdict.unchecked);
        assert!(verdict.unchecked[0].contains("wal_bytes"));
    }

    #[test]
    fn each_exceeded_limit_is_one_breach_with_its_numbers() {
        let r = report();
        assert_eq!(r.per_request.statements, Some(3.0));
        let budget = Budget {
            transactions: Some(1.0),
            statements: Some(2.0),
            rows_read: Some(100.0),
            rows_returned: None,
            p95_ms: Some(0.5),
            forbid: vec![FindingKind::CollectionToBoolean],
            ..Budget::default()
        };
        let verdict = check(&budget, &r);
        assert!(verdict.unchecked.is_empty());
        let got: Vec<(String, f64, f64)> = verdict
            .breaches
            .iter()
            .map(|b| (b.metric.to_string(), b.actual, b.budget))
            .collect();
        assert_eq!(
            got,
            vec![
                ("statements".to_string(), 3.0, 2.0),
                ("rows_read".to_string(), 350.0, 100.0),
                ("p95_ms".to_string(), r.load.latency_ms.p95, 0.5),
                ("collection_to_boolean".to_string(), 1.0, 0.0),
            ]
        );
        assert!(
            verdict.breaches[3]
                .detail
                .as_deref()
                .unwrap()
                .contains("group_grants")
        );
    }

    #[test]
    fn a_missing_figure_is_unchecked_not_passed() {
        let mut r = report();
        r.per_request.statements = None;
        let budget = Budget {
            statements: Some(1.0),
            ..Budget::default()
        };
        let verdict = check(&budget, &r);
        assert!(verdict.breaches.is_empty());
        assert_eq!(verdict.unchecked.len(), 1);
        assert!(verdict.unchecked[0].contains("pg_stat_statements"));
    }

    #[test]
    fn a_database_budget_holds_that_database_to_its_own_figures() {
        // One database: its name (the target's, `d`) is the whole report.
        let r = report();
        let limits = |transactions: f64| Budget {
            transactions: Some(transactions),
            p95_ms: Some(0.0),
            ..Budget::default()
        };
        let budget = |name: &str, transactions: f64| Budget {
            nodes: [(name.to_string(), limits(transactions))].into(),
            ..Budget::default()
        };
        assert_eq!(check(&budget("d", 1.0), &r), BudgetVerdict::default());
        let over = check(&budget("d", 0.5), &r);
        let names: Vec<String> = over.breaches.iter().map(|b| b.metric.to_string()).collect();
        assert_eq!(names, ["nodes.d.transactions"], "no latency per database");
        assert_eq!(over.breaches[0].actual, 1.0);
        let elsewhere = check(&budget("auth", 1.0), &r);
        assert!(elsewhere.breaches.is_empty());
        assert!(elsewhere.unchecked[0].contains("\"auth\""), "{elsewhere:?}");
    }

    fn figures(statements: f64, rows_read: f64) -> Figures {
        let per_figure = PerFigure {
            transactions: Some(statements),
            statements: Some(statements),
            rows_read: Some(rows_read),
            rows_returned: Some(20.0),
            p95_ms: Some(4.0),
            ..PerFigure::default()
        };
        Figures {
            per_figure: Keyed::new(per_figure),
            ..Figures::default()
        }
    }

    #[test]
    fn deltas_cover_every_shared_figure() {
        let (deltas, regressions) = compare(&figures(6.0, 40.0), &figures(3.0, 50.0), None);
        assert!(regressions.is_empty());
        let statements = deltas
            .iter()
            .find(|d| d.metric == Figure::Statements)
            .unwrap();
        assert_eq!(statements.change, -3.0);
        assert_eq!(statements.change_percent, Some(-50.0));
        let rows = deltas
            .iter()
            .find(|d| d.metric == Figure::RowsRead)
            .unwrap();
        assert_eq!((rows.baseline, rows.actual), (40.0, 50.0));
        assert_eq!(rows.change_percent, Some(25.0));
        assert_eq!(deltas.len(), 5);

        let mut without = figures(3.0, 50.0);
        without.per_figure.statements = None;
        let (deltas, _) = compare(&figures(6.0, 40.0), &without, Some(0.0));
        assert!(deltas.iter().all(|d| d.metric != Figure::Statements));
    }

    #[test]
    fn the_regression_threshold_is_exclusive_and_only_gates_work() {
        let base = figures(10.0, 100.0);
        // Exactly 10% more rows: within a 10% limit.
        let (_, r) = compare(&base, &figures(10.0, 110.0), Some(10.0));
        assert!(r.is_empty(), "{r:?}");
        // A little more: a regression, with its numbers.
        let (_, r) = compare(&base, &figures(10.0, 110.5), Some(10.0));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].metric, Figure::RowsRead);
        assert_eq!(
            (r[0].baseline, r[0].actual, r[0].limit_percent),
            (100.0, 110.5, 10.0)
        );
        assert!((r[0].change_percent.unwrap() - 10.5).abs() < 1e-9);
        // Transactions and latency are shown but never gate.
        let mut slower = figures(10.0, 100.0);
        slower.per_figure.transactions = Some(30.0);
        slower.per_figure.p95_ms = Some(400.0);
        let (_, r) = compare(&base, &slower, Some(10.0));
        assert!(r.is_empty(), "{r:?}");
        // Fewer statements is never a regression; more is, also from zero.
        let (_, r) = compare(&base, &figures(5.0, 100.0), Some(0.0));
        assert!(r.is_empty());
        let mut zero = base;
        zero.per_figure.rows_returned = Some(0.0);
        let (_, r) = compare(&zero, &base, Some(50.0));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].metric, Figure::RowsReturned);
        assert_eq!(r[0].change_percent, None);
    }

    fn scaled(statements_slope: f64) -> ScaleReport {
        use crate::scale::{Fit, Growth};
        let line = |slope: f64| Fit {
            slope,
            intercept: 3.0,
            r2: 1.0,
        };
        ScaleReport {
            schema_version: crate::scale::SCHEMA_VERSION,
            valid: true,
            invalid_reasons: vec![],
            method: "GET".into(),
            url: "http://127.0.0.1:1/items?limit={n}".into(),
            param: "n".into(),
            points: vec![],
            per_request: Growth {
                statements: Some(line(statements_slope)),
                rows_read: Some(line(2.0)),
                ..Growth::from_fn(|_| None)
            },
            statements: vec![],
            tables: vec![],
            findings: vec![],
        }
    }

    #[test]
    fn a_slope_budget_of_zero_tolerates_float_noise_only() {
        let budget = Budget {
            statements_slope: Some(0.0),
            rows_read_slope: Some(2.0),
            ..Budget::default()
        };
        assert!(has_slope_limits(&budget));
        assert!(!has_slope_limits(&Budget::default()));
        assert_eq!(
            check_slopes(&budget, Some(&scaled(0.04))),
            BudgetVerdict::default()
        );
        let verdict = check_slopes(&budget, Some(&scaled(1.0)));
        assert_eq!(
            verdict.breaches,
            [Breach {
                metric: Limit::Slope(Figure::Statements),
                actual: 1.0,
                budget: 0.0,
                detail: None,
            }]
        );
        assert!(check_slopes(&budget, Some(&scaled(0.06))).breaches.len() == 1);
        let unchecked = Budget {
            rows_returned_slope: Some(1.0),
            ..Budget::default()
        };
        let verdict = check_slopes(&unchecked, Some(&scaled(0.0)));
        assert!(verdict.breaches.is_empty());
        assert_eq!(verdict.unchecked.len(), 1, "{verdict:?}");
        assert_eq!(check_slopes(&budget, None).unchecked.len(), 2);
    }
}
