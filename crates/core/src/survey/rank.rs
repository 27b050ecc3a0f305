//! The survey's report: each route's figures per request, its share of the work its
//! logged traffic causes, and the ranking. Pure.

use serde::Serialize;

use super::input::Unparsed;
use super::production::{self, Production, ProductionStats, RouteRun, RouteStatement};
use super::replay::CredentialUsed;
use super::routes::{Skipped, UrlCount};
use super::screen::{self, Screened};
use super::shares::{self, Shares};
use crate::findings::Finding;
use crate::report::Report;
use crate::report::model::PerRequest;
use crate::report::model::figure::Figure;
use crate::report::model::invalid::Invalid;

/// The version of the survey's JSON document.
pub const SCHEMA_VERSION: u32 = 1;

/// What the replay of one route gave, as the ranking reads it.
#[derive(Debug, Clone)]
pub struct Measured {
    pub valid: bool,
    pub invalid_reasons: Vec<Invalid>,
    /// None when the route was not measured.
    pub per_request: Option<PerRequest>,
    pub findings: Vec<Finding>,
    /// The statements the replay ran, for `--production-stats`.
    pub statements: Vec<RouteStatement>,
    /// The figures of its screening burst, when it was screened.
    pub screened: Option<Screened>,
}

impl Measured {
    /// What the ranking reads of an audit's report.
    pub fn of(report: Report) -> Measured {
        Measured {
            valid: report.valid,
            invalid_reasons: report.invalid_reasons,
            per_request: Some(report.per_request),
            findings: report.findings,
            statements: route_statements(report.statements),
            screened: None,
        }
    }

    /// What the ranking reads of a screening's report (`measure::screen`): its statement
    /// figures, and the findings a screening can judge.
    pub fn screened(report: Report) -> Measured {
        Measured {
            screened: Screened::of(&report),
            valid: report.valid,
            invalid_reasons: report.invalid_reasons,
            per_request: None,
            findings: screen::screened_findings(report.findings),
            statements: route_statements(report.statements),
        }
    }

    /// This exact measurement with the figures its screening gave before.
    pub fn with_screened(self, screened: Option<Screened>) -> Measured {
        Measured { screened, ..self }
    }

    /// Not measured, for `reason`.
    pub fn not_measured(reason: Invalid) -> Measured {
        Measured {
            valid: false,
            invalid_reasons: vec![reason],
            per_request: None,
            findings: Vec::new(),
            statements: Vec::new(),
            screened: None,
        }
    }
}

/// The statements of a report, as `--production-stats` reads them.
fn route_statements(statements: Vec<crate::report::model::StatementRow>) -> Vec<RouteStatement> {
    (statements.into_iter())
        .map(|s| RouteStatement {
            queryid: s.queryid,
            query: s.query,
            calls_per_request: s.calls_per_request,
        })
        .collect()
}

/// Where a route's figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Measurement {
    /// A window between two settle waits, as `audit` measures: every figure.
    Exact,
    /// Its screening burst alone: pg_stat_statements' figures (`screened`), no rows read,
    /// transactions or table figures.
    Screened,
}

/// One route as it goes into the ranking.
#[derive(Debug, Clone)]
pub struct RouteInput {
    pub method: String,
    pub route: String,
    pub urls: Vec<UrlCount>,
    pub sample: Vec<UrlCount>,
    /// The `[[survey.auth]]` entry it sent; None for the command line's credentials.
    pub credential: Option<CredentialUsed>,
    pub measured: Measured,
}

/// One route of the survey.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RouteResult {
    /// 1 for the route with the largest share of db time; null when not valid or static.
    pub rank: Option<usize>,
    pub method: String,
    pub route: String,
    pub log_requests: u64,
    /// `log_requests` over every parsed request (static and skipped ones included).
    pub traffic_share: f64,
    /// Its concrete URLs with their logged counts, most logged first.
    pub urls: Vec<UrlCount>,
    /// The burst's requests shared among `urls` in proportion to their counts: the URLs
    /// the burst sent, each this many times, in a fixed rotation.
    pub sample: Vec<UrlCount>,
    /// The `[[survey.auth]]` entry whose path prefix matched the route, by its index and
    /// paths (never its values); null when it sent the command line's credentials.
    pub credential: Option<CredentialUsed>,
    pub valid: bool,
    pub invalid_reasons: Vec<Invalid>,
    /// `exact` when `per_request` has the figures of an exact window, `screened` when only
    /// `screened` has figures; null when the route was not measured.
    pub measurement: Option<Measurement>,
    /// Its replay ran no statement: a static file without a known extension, or a cached
    /// page. Not ranked, no share of the total; its traffic counts as static.
    pub static_by_statements: bool,
    /// The audit's figures, from an exact window; null when the route was not measured
    /// exactly.
    pub per_request: Option<PerRequest>,
    /// The figures of its screening burst (pg_stat_statements alone, read without a
    /// settle wait); null when it was not screened.
    pub screened: Option<Screened>,
    /// Null when not valid.
    pub share_of_total: Option<Shares>,
    pub findings: Vec<Finding>,
}

impl RouteResult {
    /// Statements per request: the exact window's, else the screening's.
    pub fn statements(&self) -> Option<f64> {
        (self.per_request.as_ref().and_then(|p| p.statements))
            .or(self.screened.as_ref().map(|s| s.statements))
    }

    /// Db time per request (ms): the exact window's, else the screening's.
    pub fn db_time_ms(&self) -> Option<f64> {
        (self.per_request.as_ref().and_then(|p| p.db_time_ms))
            .or(self.screened.as_ref().map(|s| s.db_time_ms))
    }

    /// Rows read per request: an exact window's alone.
    pub fn rows_read(&self) -> Option<f64> {
        self.per_request.as_ref().map(|p| p.rows_read)
    }
}

/// The survey's document, every view reads it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SurveyReport {
    pub schema_version: u32,
    /// True when every replayed route's figures are valid.
    pub valid: bool,
    pub base_url: String,
    /// Requests parsed from every input.
    pub parsed_requests: u64,
    pub unparsed_lines: usize,
    pub first_unparsed: Vec<Unparsed>,
    /// Requests of static files: by extension (never replayed) and of the routes static
    /// by statements (replayed, not ranked).
    pub static_requests: u64,
    pub routes: Vec<RouteResult>,
    pub skipped: Vec<Skipped>,
    /// The static files by extension, by folder and extension (`/static/js/*.js`): counted
    /// in `static_requests`, never replayed.
    pub static_files: Vec<Skipped>,
    pub warnings: Vec<String>,
    /// With `--production-stats`: production's statements mapped onto the routes; null
    /// otherwise.
    pub production: Option<Production>,
    /// Ranked routes over a `[survey.budget]` limit (set by the command).
    pub budget_failures: Vec<BudgetFailure>,
}

/// A ranked route over one limit.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BudgetFailure {
    pub method: String,
    pub route: String,
    /// The limit's key, as in `[survey.budget]` (`rows_read`, `statements`, ...).
    pub figure: String,
    /// The route's figure per request.
    pub value: f64,
    pub limit: f64,
}

/// The inputs of the report besides the routes.
#[derive(Debug, Clone, Default)]
pub struct SurveyTraffic {
    pub base_url: String,
    pub parsed_requests: u64,
    pub unparsed_lines: usize,
    pub first_unparsed: Vec<Unparsed>,
    pub static_requests: u64,
    pub skipped: Vec<Skipped>,
    pub static_files: Vec<Skipped>,
    pub warnings: Vec<String>,
    pub production: Option<ProductionStats>,
}

/// Ranks the routes: valid ones by share of db time, then of rows read (most first),
/// then the routes that are not valid, unranked.
pub fn rank(routes: Vec<RouteInput>, traffic: SurveyTraffic) -> SurveyReport {
    let total = traffic.parsed_requests.max(1) as f64;
    let production = (traffic.production.as_ref()).map(|stats| attribution(stats, &routes));
    let mut results: Vec<RouteResult> = routes.into_iter().map(|r| result(r, total)).collect();
    let static_by_statements: u64 = (results.iter())
        .filter(|r| r.static_by_statements)
        .map(|r| r.log_requests)
        .sum();
    let ranked = |r: &RouteResult| r.valid && !r.static_by_statements;
    shares(&mut results, ranked);
    let key = |r: &RouteResult| {
        let s = r.share_of_total.unwrap_or_default();
        let then = s.figures.get(Figure::RowsRead).or(s.blocks);
        (s.db_time.unwrap_or(0.0), then.unwrap_or(0.0))
    };
    // Ranked routes first, then the static ones, then those that are not valid.
    let group = |r: &RouteResult| (!ranked(r), !r.valid);
    results.sort_by(|a, b| {
        (group(a).cmp(&group(b)))
            .then(
                key(b)
                    .partial_cmp(&key(a))
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(b.log_requests.cmp(&a.log_requests))
            .then(a.route.cmp(&b.route))
    });
    for (i, r) in results.iter_mut().enumerate() {
        r.rank = ranked(r).then_some(i + 1);
    }
    SurveyReport {
        schema_version: SCHEMA_VERSION,
        valid: results.iter().all(|r| r.valid),
        base_url: traffic.base_url,
        parsed_requests: traffic.parsed_requests,
        unparsed_lines: traffic.unparsed_lines,
        first_unparsed: traffic.first_unparsed,
        static_requests: traffic.static_requests + static_by_statements,
        routes: results,
        skipped: traffic.skipped,
        static_files: traffic.static_files,
        warnings: traffic.warnings,
        production,
        budget_failures: Vec::new(),
    }
}

/// Each ranked route's share of the total of each figure, at the logged traffic mix. The
/// screening's figures weigh every route when some ranked route was only screened, so that
/// each is weighed by the same counters; else the exact windows'.
fn shares(results: &mut [RouteResult], ranked: impl Fn(&RouteResult) -> bool) {
    let screened = (results.iter().filter(|r| ranked(r)))
        .any(|r| r.measurement == Some(Measurement::Screened));
    let values: Vec<(Shares, f64)> = (results.iter().filter(|r| ranked(r)))
        .map(|r| {
            let exact = (r.per_request.as_ref()).filter(|_| !screened || r.screened.is_none());
            let values = shares::values(exact, r.screened.as_ref());
            (values, r.log_requests as f64)
        })
        .collect();
    let ranked_results = results.iter_mut().filter(|r| ranked(r));
    for (r, share) in ranked_results.zip(shares::of_total(&values)) {
        r.share_of_total = Some(share);
    }
}

fn attribution(stats: &ProductionStats, routes: &[RouteInput]) -> Production {
    let runs: Vec<RouteRun> = (routes.iter())
        .map(|r| RouteRun {
            method: &r.method,
            route: &r.route,
            log_requests: r.urls.iter().map(|u| u.requests).sum(),
            valid: r.measured.valid,
            statements: &r.measured.statements,
        })
        .collect();
    production::attribute(stats, &runs)
}

fn result(r: RouteInput, total: f64) -> RouteResult {
    let log_requests: u64 = r.urls.iter().map(|u| u.requests).sum();
    let Measured {
        valid,
        invalid_reasons,
        per_request,
        findings,
        screened,
        ..
    } = r.measured;
    let statements = (per_request.as_ref().and_then(|p| p.statements))
        .or(screened.as_ref().map(|s| s.statements));
    let static_by_statements = valid && statements == Some(0.0);
    let measurement = match (&per_request, &screened) {
        (Some(_), _) => Some(Measurement::Exact),
        (None, Some(_)) => Some(Measurement::Screened),
        (None, None) => None,
    };
    RouteResult {
        rank: None,
        method: r.method,
        route: r.route,
        log_requests,
        traffic_share: log_requests as f64 / total,
        urls: r.urls,
        sample: r.sample,
        credential: r.credential,
        valid,
        invalid_reasons,
        measurement,
        static_by_statements,
        per_request,
        screened,
        share_of_total: None,
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::invalid::Code;

    fn per_request(statements: f64, rows_read: f64, db_time_ms: f64) -> PerRequest {
        PerRequest {
            transactions: 1.0,
            statements: Some(statements),
            statements_excluding_utility: Some(statements),
            rows_read,
            rows_fetched: 0.0,
            rows_returned: Some(1.0),
            rows_written: 0.0,
            blocks_hit: rows_read / 10.0,
            blocks_read: 0.0,
            db_time_ms: Some(db_time_ms),
            new_sessions: None,
            writes: None,
            setup: None,
        }
    }

    /// A route whose two probe answers were 403, as the survey's probe says so.
    fn rejected_403() -> Measured {
        let probed = std::collections::BTreeMap::from([(403, 2)]);
        Measured::not_measured(
            crate::survey::replay::Expectation::default().probe_rejected(&probed),
        )
    }

    fn route(name: &str, requests: u64, measured: Measured) -> RouteInput {
        RouteInput {
            method: "GET".into(),
            route: name.into(),
            urls: vec![UrlCount {
                url: name.into(),
                requests,
                body: None,
                logged_status: None,
            }],
            sample: Vec::new(),
            credential: None,
            measured,
        }
    }

    fn report(p: PerRequest, valid: bool) -> Measured {
        Measured {
            valid,
            invalid_reasons: Vec::new(),
            per_request: Some(p),
            findings: Vec::new(),
            statements: Vec::new(),
            screened: None,
        }
    }

    #[test]
    fn shares_weigh_cost_by_traffic_and_add_to_one() {
        let routes = vec![
            route("/cheap", 90, report(per_request(1.0, 1.0, 0.1), true)),
            route("/heavy", 10, report(per_request(3.0, 1000.0, 5.0), true)),
            route("/denied", 50, rejected_403()),
            route("/broken", 5, report(per_request(9.0, 9.0, 9.0), false)),
        ];
        let traffic = SurveyTraffic {
            parsed_requests: 200,
            ..SurveyTraffic::default()
        };
        let survey = rank(routes, traffic);
        let names: Vec<&str> = survey.routes.iter().map(|r| r.route.as_str()).collect();
        assert_eq!(names, ["/heavy", "/cheap", "/denied", "/broken"]);
        let ranks: Vec<Option<usize>> = survey.routes.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [Some(1), Some(2), None, None]);
        assert!(!survey.valid);
        let heavy = survey.routes[0].share_of_total.unwrap();
        let cheap = survey.routes[1].share_of_total.unwrap();
        // Statements: 10 × 3 = 30 against 90 × 1 = 90.
        assert_eq!(heavy.figures.statements, Some(30.0 / 120.0));
        assert_eq!(heavy.db_time, Some(50.0 / 59.0));
        for (a, b) in [
            (heavy.figures.statements, cheap.figures.statements),
            (heavy.figures.rows_read, cheap.figures.rows_read),
            (heavy.figures.rows_returned, cheap.figures.rows_returned),
            (heavy.db_time, cheap.db_time),
            (heavy.blocks, cheap.blocks),
        ] {
            assert!((a.unwrap() + b.unwrap() - 1.0).abs() < 1e-12);
        }
        assert_eq!(survey.routes[2].share_of_total, None);
        // Without --production-stats, no production key.
        assert_eq!(survey.production, None);
        assert_eq!(survey.routes[2].traffic_share, 0.25);
        assert_eq!(survey.routes[2].invalid_reasons[0].code, Code::Rejected);
        assert!(
            survey.routes[2].invalid_reasons[0]
                .message
                .contains("403 x2")
        );
    }

    #[test]
    fn a_screened_survey_weighs_every_route_by_its_screened_figures() {
        let screened = |db_time_ms: f64, blocks: f64| Screened {
            statements: 1.0,
            rows_returned: 1.0,
            blocks,
            db_time_ms,
        };
        // Exact, with larger database blocks (catalog reads count there) than screened.
        let exact =
            report(per_request(1.0, 1000.0, 9.0), true).with_screened(Some(screened(1.0, 4.0)));
        let only = Measured {
            per_request: None,
            screened: Some(screened(3.0, 12.0)),
            ..report(per_request(1.0, 1.0, 1.0), true)
        };
        let survey = rank(
            vec![route("/a", 1, exact), route("/b", 1, only)],
            SurveyTraffic::default(),
        );
        let (a, b) = (&survey.routes[1], &survey.routes[0]);
        assert_eq!((a.route.as_str(), b.route.as_str()), ("/a", "/b"));
        let shares = a.share_of_total.unwrap();
        assert_eq!(shares.db_time, Some(0.25));
        assert_eq!(shares.blocks, Some(0.25));
        assert_eq!(shares.figures.rows_read, None);
        // The exact figures are still the route's own.
        assert_eq!(a.per_request.as_ref().unwrap().db_time_ms, Some(9.0));
    }

    #[test]
    fn a_figure_no_route_has_has_no_share() {
        let mut p = per_request(1.0, 0.0, 0.0);
        p.statements = None;
        let survey = rank(
            vec![route("/a", 1, report(p, true))],
            SurveyTraffic::default(),
        );
        let shares = survey.routes[0].share_of_total.unwrap();
        assert_eq!(
            (
                shares.figures.statements,
                shares.figures.rows_read,
                shares.db_time
            ),
            (None, None, None)
        );
        assert_eq!(shares.figures.rows_returned, Some(1.0));
    }

    #[test]
    fn a_route_that_ran_no_statement_is_static_not_ranked() {
        let mut cached = per_request(0.0, 0.0, 0.0);
        cached.rows_returned = Some(0.0);
        let routes = vec![
            route("/cached", 70, report(cached, true)),
            route("/a", 20, report(per_request(2.0, 10.0, 1.0), true)),
            route("/b", 10, report(per_request(1.0, 10.0, 3.0), true)),
            route("/denied", 5, rejected_403()),
        ];
        let traffic = SurveyTraffic {
            parsed_requests: 110,
            static_requests: 5,
            ..SurveyTraffic::default()
        };
        let survey = rank(routes, traffic);
        let names: Vec<&str> = survey.routes.iter().map(|r| r.route.as_str()).collect();
        assert_eq!(names, ["/b", "/a", "/cached", "/denied"]);
        let ranks: Vec<Option<usize>> = survey.routes.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [Some(1), Some(2), None, None]);
        let flags: Vec<bool> = (survey.routes.iter())
            .map(|r| r.static_by_statements)
            .collect();
        assert_eq!(flags, [false, false, true, false]);
        let cached = &survey.routes[2];
        assert!(cached.valid);
        assert_eq!(cached.share_of_total, None);
        assert_eq!(survey.static_requests, 5 + 70);
        // Statements: 20 × 2 = 40 against 10 × 1 = 10; the static route takes no share.
        let a = survey.routes[1].share_of_total.unwrap();
        assert_eq!(a.figures.statements, Some(40.0 / 50.0));
        assert_eq!(a.db_time, Some(20.0 / 50.0));
        assert_eq!(a.figures.rows_read, Some(200.0 / 300.0));
        // The invalid route keeps the survey from being valid, the static one does not.
        assert!(!survey.valid);
    }
}
