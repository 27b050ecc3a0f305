//! The open-model load driver: requests sent on a fixed schedule, at a constant arrival
//! rate, whatever the responses do. Latency runs from each request's scheduled send time,
//! so a server that falls behind shows it (corrected for coordinated omission, as wrk2
//! does); a request that could not start on time is counted as late.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::http::connection::Driver;
use crate::http::load::{WorkerTally, count_in_second, empty_result};
use pgcost_core::load::LoadResult;

/// A request that starts this long after its scheduled time is late (tokio's timer
/// wakes at millisecond granularity, so a threshold of 1 ms would count every request).
pub const LATE_AFTER: Duration = Duration::from_millis(5);

/// What an open-model step observed: the load, the requests that started late, and the
/// responses in each second from the start of the schedule (the last second partial).
pub struct Paced {
    pub load: LoadResult,
    pub late: u64,
    pub per_second: Vec<u64>,
}

/// What the workers count together: the tally, the late requests, the responses per
/// second.
type Tally = Mutex<(WorkerTally, u64, Vec<u64>)>;

/// One worker: claims the next slot of the schedule, waits for its time, sends it.
async fn work(
    driver: &Driver,
    schedule: (Instant, f64, u64),
    next: &AtomicU64,
    stop: &AtomicBool,
    tally: &Tally,
) {
    let (start, rate, total) = schedule;
    let mut link = None;
    loop {
        let slot = next.fetch_add(1, Ordering::Relaxed);
        if slot >= total || stop.load(Ordering::Relaxed) {
            return;
        }
        let due = start + Duration::from_secs_f64(slot as f64 / rate);
        tokio::time::sleep_until(due.into()).await;
        let late = Instant::now().saturating_duration_since(due) > LATE_AFTER;
        let outcome = tokio::time::timeout(driver.timeout, driver.exchange(&mut link, false, slot))
            .await
            .ok();
        let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
        tally.1 += late as u64;
        if tally.0.record(outcome, due, driver.timeout) {
            link = None;
        } else {
            count_in_second(&mut tally.2, start);
        }
    }
}

/// Sends `total` requests at `rate` per second with up to `workers` in flight.
pub async fn paced(
    driver: &Arc<Driver>,
    rate: f64,
    total: u64,
    workers: u32,
    stop: Arc<AtomicBool>,
) -> Paced {
    let start = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let tally: Arc<Tally> = Arc::new(Mutex::new((WorkerTally::new(), 0, Vec::new())));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers.max(1) {
        let (driver, next, stop, tally) =
            (driver.clone(), next.clone(), stop.clone(), tally.clone());
        tasks.spawn(async move { work(&driver, (start, rate, total), &next, &stop, &tally).await });
    }
    while tasks.join_next().await.is_some() {}
    let mut load = empty_result(workers);
    let (late, per_second) = {
        let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
        tally.0.merge_into(&mut load);
        (tally.1, std::mem::take(&mut tally.2))
    };
    load.wall = start.elapsed();
    load.sent = load.responses() + load.error_count();
    load.interrupted = load.sent < total;
    Paced {
        load,
        late,
        per_second,
    }
}
