//! Tags sampled while the app is busy: `pg_stat_activity` is read every few milliseconds
//! during each warm-up and burst, inside the time they take anyway (no extra settle
//! wait). Only over the admin connection: read through the target, the samples would
//! land in its counters.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::postgres::stats_connection::{Mode, StatsConnection};
use pgcost_core::tags::Observed;

/// How often `pg_stat_activity` is read for tags. An idle backend keeps its last
/// statement, and every execution is counted once, so a read between two executions of
/// a backend loses nothing.
const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// Reads `pg_stat_activity` until `done`; `None` in target mode, or when off (`--no-tags`).
pub async fn sample(source: &StatsConnection, on: bool, done: &AtomicBool) -> Option<Observed> {
    if !on || source.mode != Mode::Admin {
        return None;
    }
    let mut observed = Observed::default();
    loop {
        // The last read comes after the last response: the backends' last statements.
        let last = done.load(Ordering::Relaxed);
        if let Ok(Some(rows)) = source.tag_sample().await {
            observed.add_read(&rows);
        }
        if last {
            return Some(observed);
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// Runs `work` (a warm-up) while sampling tags, unless they are off.
pub async fn during<T>(
    source: &StatsConnection,
    on: bool,
    work: impl Future<Output = T>,
) -> (T, Option<Observed>) {
    let done = AtomicBool::new(false);
    let work = async {
        let out = work.await;
        done.store(true, Ordering::Relaxed);
        out
    };
    tokio::join!(work, sample(source, on, &done))
}

/// Both runs' samples; `None` when neither sampled.
pub fn merged(first: Option<Observed>, second: Option<&Observed>) -> Option<Observed> {
    match (first, second) {
        (Some(mut a), Some(b)) => {
            a.merge(b);
            Some(a)
        }
        (a, b) => a.or_else(|| b.cloned()),
    }
}
