//! The warm-up: the `--warmup` requests alone (`send`, a ramp's), or going on to a steady
//! state; and plan changes inside a window. After the
//! `--warmup` floor, slices of requests are sent until two in a row agree on every
//! statement's rows and blocks per call (`pgcost_core::steady`), the app's connections have each
//! had the executions a prepared statement needs to go generic, and no app connection
//! opened during the last slice; at least one slice past the floor is always compared, so
//! that "steady" always rests on a comparison. A capped wait, shown.
//! The two halves of a window's burst (pg_stat_statements is read once half the requests
//! are done, by the meter) are compared for plan changes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::meter::{Burst, Meter, Notes};
use super::nodes::{Boundaries, Meters};
use crate::auth;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::connection::Driver;
use crate::http::load;
use crate::progress::Progress;
use pgcost_core::report::model::notes::Note;
use pgcost_core::snapshot::{StatementKey, StatementStats};
use pgcost_core::steady::{self, Change, PerCall, Warmed};

/// The warm-up stops after this many slices past the floor...
const MAX_SLICES: u32 = 20;
/// ...or after this long (floor included), steady or not.
const MAX_WARMUP: Duration = Duration::from_secs(60);
/// The fewest requests in one slice.
const MIN_SLICE: u64 = 20;
/// Slices past the floor the warm-up compares before it trusts a steady state after a
/// window with one-offs was discarded (one otherwise).
pub const MIN_SLICES_AFTER_ONE_OFF: u32 = 3;

type Statements = BTreeMap<StatementKey, StatementStats>;

/// Warms the endpoint up: the `--warmup` floor, sent in two halves compared as the first
/// two slices, then at least `min_slices` more until a steady state (see the module).
/// `None` when no slice can be compared: a floor under 2 requests, or no
/// pg_stat_statements.
pub async fn warm_up(
    meters: &Meters,
    config: &AuditConfig,
    driver: &Arc<Driver>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
    min_slices: u32,
) -> Result<Option<Warmed>> {
    let started = Instant::now();
    let meter = meters.first();
    let before = match config.warmup {
        0 | 1 => None,
        _ => meter.source.statements_now().await?,
    };
    let Some(before) = before else {
        send(config, driver, progress, stop).await?;
        return Ok(None);
    };
    let (mut last, mut previous, mut slice) =
        floor_in_halves(meter, before, config, driver, progress, stop).await?;
    let mut warmed = Warmed {
        requests: config.warmup,
        slices: 0,
        steady: false,
        seconds: 0.0,
        connections: None,
        pids: BTreeSet::new(),
    };
    loop {
        let pids = meter.source.app_pids(&meter.watch.others).await?;
        let connections = pids.len() as u64;
        // A connection that opened during the last slice has not had its executions yet.
        let same_connections = warmed.slices == 0 || pids.is_subset(&warmed.pids);
        warmed.connections = Some(connections);
        warmed.pids = pids;
        // An endpoint that runs no statement has no plan to settle on any connection.
        let quiet = previous.is_empty() && slice.is_empty();
        let reached = quiet || warmed.requests >= steady::requests_to_reach(connections);
        let compared = quiet || (warmed.slices >= min_slices.max(1) && same_connections);
        if compared && reached && steady::steady(&previous, &slice) {
            warmed.steady = true;
            break;
        }
        if warmed.slices >= MAX_SLICES || started.elapsed() >= MAX_WARMUP {
            break;
        }
        let size = slice_size(config.concurrency, connections);
        let slice_config = AuditConfig {
            warmup: size,
            ..config.clone()
        };
        send(&slice_config, driver, progress, stop).await?;
        warmed.requests += size;
        warmed.slices += 1;
        let now = meter.source.statements_now().await?.unwrap_or_default();
        previous = std::mem::replace(&mut slice, steady::per_call(&last, &now));
        last = now;
    }
    warmed.seconds = started.elapsed().as_secs_f64();
    if !warmed.steady && !config.quiet {
        progress.status(&format!(
            "the warm-up stopped at its cap ({} requests, {:.0} s) before a steady state",
            warmed.requests, warmed.seconds
        ));
    }
    Ok(Some(warmed))
}

type Slice = BTreeMap<StatementKey, PerCall>;

/// The `--warmup` floor in two halves: the statements after it, and each half's figures.
async fn floor_in_halves(
    meter: &Meter,
    mut last: Statements,
    config: &AuditConfig,
    driver: &Arc<Driver>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<(Statements, Slice, Slice)> {
    let half = config.warmup / 2;
    let mut halves = Vec::with_capacity(2);
    for part in [half, config.warmup - half] {
        let part = AuditConfig {
            warmup: part,
            ..config.clone()
        };
        send(&part, driver, progress, stop).await?;
        let now = meter.source.statements_now().await?.unwrap_or_default();
        halves.push(steady::per_call(&last, &now));
        last = now;
    }
    let second = halves.pop().unwrap_or_default();
    let first = halves.pop().unwrap_or_default();
    Ok((last, first, second))
}

/// A slice gives every connection in play (the app's, or the burst's own when more) one
/// execution past the custom plans, were the requests spread evenly.
fn slice_size(concurrency: u32, connections: u64) -> u64 {
    steady::requests_to_reach(connections.max(u64::from(concurrency))).max(MIN_SLICE)
}

/// The statements of the first database whose rows or blocks per call differ between the
/// two halves of the burst, when the burst was read at its middle.
pub fn plan_changes(opened: &Boundaries, burst: &Burst, closed: &Boundaries) -> Vec<Change> {
    let (Some(mid), Some(start), Some(end)) = (
        burst.mid.as_ref(),
        opened.first().and_then(|b| b.start.as_ref()),
        closed.first().and_then(|b| b.end.as_ref()),
    ) else {
        return Vec::new();
    };
    let first = steady::per_call(&start.statements, mid);
    let second = steady::per_call(mid, &end.statements);
    steady::changes(&first, &second)
}

/// Why a window with plan changes was measured again, for the report.
pub fn discard_reason(changes: &[Change]) -> String {
    format!(
        "the plan of {} statement(s) changed inside the window",
        changes.len()
    )
}

/// `notes` with a line naming each statement whose plan changed in every window, with the
/// tables scanned sequentially in the last one.
pub fn with_plan_warning(
    mut notes: Notes,
    changes: &[Change],
    (opened, closed): (&Boundaries, &Boundaries),
    retries: u32,
) -> Notes {
    let Some(end) = closed.first().and_then(|b| b.end.as_ref()) else {
        return notes;
    };
    let seq_scanned = seq_scanned(opened, closed);
    for change in changes {
        let text = end.statements.get(&change.key).map(|s| s.query.clone());
        notes.warnings.push(Note::PlanChanged {
            statement: text.unwrap_or_else(|| format!("queryid {}", change.key.queryid)),
            rows_per_call: [change.first.rows, change.second.rows],
            blocks_per_call: [change.first.blocks, change.second.blocks],
            seq_scanned: seq_scanned.clone(),
            retries,
        });
    }
    notes
}

/// The first database's tables with sequential scans between the two boundaries.
fn seq_scanned(opened: &Boundaries, closed: &Boundaries) -> Vec<String> {
    let (Some(before), Some(after)) = (opened.first(), closed.first()) else {
        return Vec::new();
    };
    (after.tables.iter())
        .filter(|(name, stats)| {
            let start = before.tables.get(*name).map_or(0, |t| t.counters.seq_scan);
            stats.counters.seq_scan > start
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Sends `config.warmup` requests, no more: a target that refuses connections is a setup
/// error, and so is one that rejects every request.
pub async fn send(
    config: &AuditConfig,
    driver: &Arc<Driver>,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    if config.warmup == 0 {
        return Ok(());
    }
    let concurrency = config.concurrency.min(config.warmup as u32);
    let bar = progress.counter("warm-up", config.warmup);
    let warm = load::burst(driver, config.warmup, concurrency, &bar, stop.clone()).await;
    bar.finish_and_clear();
    if stop.load(Ordering::Relaxed) {
        return Err(Error::interrupted());
    }
    if warm.errors.contains_key("connect") {
        return Err(Error::target(format!(
            "{} refused connections during the warm-up: {}",
            config.request.url.origin().ascii_serialization(),
            warm.first_error.as_deref().unwrap_or("connection refused")
        ))
        .with_hint("check that the app is running and listening at --url"));
    }
    if let Some(statuses) = warm.all_rejected(&config.auth.allowed_statuses) {
        // Measuring on would cost two settle waits only to report the rejection path.
        return Err(Error::untrustworthy(format!(
            "every warm-up response to {} {} was rejected ({statuses}): the burst would \
             measure the rejection path, not the endpoint",
            config.request.method,
            auth::redact::url(&config.request.url)
        ))
        .with_hint(
            "check the credentials (-H 'Authorization: ...', --bearer, --cookie, --login-url) \
             and --url; --allow-status CODE accepts a status on purpose",
        ));
    }
    if let Some(seen) = warm.all_error_answers() {
        return Err(Error::untrustworthy(format!(
            "every warm-up response to {} {} was an error answered with a 2xx status ({seen}): \
             the burst would measure the error path, not the endpoint",
            config.request.method,
            auth::redact::url(&config.request.url)
        ))
        .with_hint(
            "check the credentials (-H 'Authorization: ...', --bearer, --cookie, --login-url); \
             an API that answers errors with 200 is read by its body and --error-header",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_reaches_every_connection_six_times() {
        assert_eq!(slice_size(8, 3), 48);
        assert_eq!(slice_size(2, 12), 72);
        assert_eq!(slice_size(1, 0), MIN_SLICE);
    }
}
