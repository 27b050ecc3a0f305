//! `[survey.budget]`: per-request limits every ranked route is held to, and the routes
//! over them. Pure.

use super::rank::{BudgetFailure, SurveyReport};
use crate::check::budget::{Held, hold};
use crate::report::model::figure::{Figure, PerFigure};
use crate::report::model::figures::Figures;

/// Every ranked route's figures against the limits, in rank order and each route's in
/// the order of [`Figure::ALL`], held by the same check as `pgcost check`'s budgets. A
/// figure the route lacks is no failure.
pub fn check(report: &SurveyReport, budget: &PerFigure<f64>) -> Vec<BudgetFailure> {
    let mut failures = Vec::new();
    for route in report.routes.iter().filter(|r| r.rank.is_some()) {
        let Some(per) = &route.per_request else {
            continue;
        };
        let figures = Figures::per_request(per);
        for figure in Figure::ALL {
            let Some(limit) = budget.get(figure) else {
                continue;
            };
            if let Held::Over(value) = hold(figure, &figures, limit) {
                failures.push(BudgetFailure {
                    method: route.method.clone(),
                    route: route.route.clone(),
                    figure: figure.key().into(),
                    value,
                    limit,
                });
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::survey::rank::{Measured, RouteInput, SurveyTraffic, rank};
    use crate::survey::routes::UrlCount;

    fn measured(statements: f64, rows_read: f64, valid: bool) -> Measured {
        let per_request = serde_json::from_value(serde_json::json!({
            "transactions": 1.0, "statements": statements, "rows_read": rows_read,
            "rows_fetched": 0.0, "rows_written": 0.0, "blocks_hit": 1.0, "blocks_read": 0.0,
            "db_time_ms": rows_read / 100.0,
        }))
        .unwrap();
        Measured {
            valid,
            invalid_reasons: Vec::new(),
            per_request: Some(per_request),
            findings: Vec::new(),
            statements: Vec::new(),
            screened: None,
        }
    }

    fn input(route: &str, m: Measured) -> RouteInput {
        RouteInput {
            method: "GET".into(),
            route: route.into(),
            urls: vec![UrlCount {
                url: route.into(),
                requests: 1,
                body: None,
                logged_status: None,
            }],
            sample: vec![UrlCount {
                url: route.into(),
                requests: 1,
                body: None,
                logged_status: None,
            }],
            credential: None,
            measured: m,
        }
    }

    #[test]
    fn every_ranked_route_is_held_to_each_limit() {
        let report = rank(
            vec![
                input("/items/{id}", measured(2.0, 60.0, true)),
                input("/scan", measured(1.0, 50.0, true)),
                input("/broken", measured(9.0, 900.0, false)),
            ],
            SurveyTraffic::default(),
        );
        let budget = PerFigure {
            rows_read: Some(55.0),
            statements: Some(1.0),
            ..PerFigure::default()
        };
        let failures = check(&report, &budget);
        let found: Vec<(&str, &str, f64, f64)> = (failures.iter())
            .map(|f| (f.route.as_str(), f.figure.as_str(), f.value, f.limit))
            .collect();
        // `/broken` is not ranked: an invalid figure is not held to a budget.
        assert_eq!(
            found,
            [
                ("/items/{id}", "statements", 2.0, 1.0),
                ("/items/{id}", "rows_read", 60.0, 55.0)
            ]
        );
        let loose = PerFigure {
            rows_read: Some(60.0),
            ..PerFigure::default()
        };
        assert!(check(&report, &loose).is_empty());
    }
}
