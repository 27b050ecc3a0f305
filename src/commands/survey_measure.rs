//! How `pgcost survey` measures the routes its probes accepted: each screened from
//! pg_stat_statements with no settle wait (`measure::screen`), then the top ones, as
//! `--exact` chooses (`pgcost_core::survey::screen`), in one sequence of exact windows with shared
//! settle waits, as `check`'s endpoints are; each report held to the route's logged
//! statuses (`pgcost_core::survey::replay`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::AuditConfig;
use crate::error::Result;
use crate::measure::{self, Screen};
use crate::progress::Progress;
use pgcost_core::report::Report;
use pgcost_core::report::model::invalid::{Code, Invalid};
use pgcost_core::survey::Measured;
use pgcost_core::survey::replay::{self, Expectation};
use pgcost_core::survey::routes::Route;
use pgcost_core::survey::screen::{self, Candidate, Exact};

/// The routes to measure: each one's audit, what its replay expects and its route, and
/// `None` where the probe already decided (a rejected route).
pub struct Routes<'a> {
    pub configs: &'a [AuditConfig],
    pub expectations: &'a [Expectation],
    pub routes: &'a [Route],
    pub outcomes: Vec<Option<Measured>>,
}

/// Measures every route the probes accepted: screened unless `exact` is `all` (or the
/// database cannot be screened), then the chosen ones exactly. A route left unmeasured by
/// an interruption says so.
pub async fn measure(
    routes: Routes<'_>,
    exact: Exact,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Measured>> {
    let Routes {
        configs,
        expectations,
        routes,
        mut outcomes,
    } = routes;
    let accepted: Vec<usize> = (0..configs.len())
        .filter(|&i| outcomes[i].is_none())
        .collect();
    let wanted: Vec<AuditConfig> = accepted.iter().map(|&i| configs[i].clone()).collect();
    let ready = measure::authenticate_all(&wanted, progress).await?;
    let mut screened: Vec<Option<Measured>> = vec![None; ready.len()];
    let on_begin =
        |k: usize| progress.status(&step("screening", k, ready.len(), &routes[accepted[k]]));
    if exact != Exact::All
        && let Some(mut screen) = Screen::open(&ready, progress, stop.clone(), on_begin).await?
    {
        for k in 0..ready.len() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let report = screen.route(k).await?;
            let expectation = &expectations[accepted[k]];
            screened[k] = Some(held_to_log(expectation, report, Measured::screened));
        }
    }
    let chosen = exact_routes(&screened, &accepted, routes, exact);
    let to_measure: Vec<AuditConfig> = chosen.iter().map(|&k| ready[k].clone()).collect();
    if !to_measure.is_empty() && !stop.load(Ordering::Relaxed) {
        progress.status(&format!(
            "{} route(s) screened: measuring {} in exact windows between shared settle waits",
            screened.iter().flatten().count(),
            to_measure.len()
        ));
        let reports = measure::run_sequence(&to_measure, progress, stop, |j| {
            let route = &routes[accepted[chosen[j]]];
            progress.status(&step("measuring", j, chosen.len(), route));
        })
        .await?;
        for (&k, report) in chosen.iter().zip(reports) {
            let before = screened[k].take().and_then(|m| m.screened);
            let exact = held_to_log(&expectations[accepted[k]], report, Measured::of);
            screened[k] = Some(exact.with_screened(before));
        }
    }
    for (&i, measured) in accepted.iter().zip(screened) {
        outcomes[i] = measured;
    }
    Ok((outcomes.into_iter())
        .map(|outcome| {
            outcome.unwrap_or_else(|| {
                Measured::not_measured(Invalid::new(Code::Interrupted, "not measured: interrupted"))
            })
        })
        .collect())
}

/// The status line of the `k`th of `n` routes, e.g. `screening 2/7: GET /items/{id}`.
fn step(verb: &str, k: usize, n: usize, route: &Route) -> String {
    format!("{verb} {}/{n}: {} {}", k + 1, route.method, route.template)
}

/// A route's report as the ranking reads it (`read`: exact, or screened), its reasons held
/// to the statuses its URLs were logged with.
fn held_to_log(
    expectation: &Expectation,
    report: Report,
    read: fn(Report) -> Measured,
) -> Measured {
    let replayed = replay::statuses(&report.load.status);
    let mut measured = read(report);
    let reasons = std::mem::take(&mut measured.invalid_reasons);
    measured.invalid_reasons = expectation.judge(&replayed, reasons);
    measured.valid = measured.invalid_reasons.is_empty();
    measured
}

/// The indices (into the accepted routes) to measure exactly: every one when nothing was
/// screened, else those `exact` chooses from the screened figures, most db time first.
fn exact_routes(
    screened: &[Option<Measured>],
    accepted: &[usize],
    routes: &[Route],
    exact: Exact,
) -> Vec<usize> {
    if screened.iter().all(Option::is_none) {
        return (0..screened.len()).collect();
    }
    let candidates: Vec<Candidate> = (screened.iter().zip(accepted))
        .map(|(m, &i)| Candidate {
            screened: m
                .as_ref()
                .filter(|m| m.valid)
                .and_then(|m| m.screened.as_ref()),
            log_requests: routes[i].requests(),
        })
        .collect();
    screen::choose(&candidates, exact)
}
