//! The HTTP load driver: a closed loop of exactly N requests with C in flight (the
//! connections are in `connection`), latency in an HDR histogram, statuses per code and
//! transport errors per kind. The workers run on a runtime of their own, on one thread, as
//! wrk's `-t1` does: at a handful of connections, wake-ups across threads and work stealing
//! cost more than they give, and the server being measured needs the other cores.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::ProgressBar;
use tokio::time::Sleep;

use crate::http::connection::{Answer, Driver, Failure};
use pgcost_core::load::{LoadResult, new_histogram};

/// What one worker saw, merged into the burst's [`LoadResult`] at the end.
pub(crate) struct WorkerTally {
    latency_us: Histogram<u64>,
    /// Responses per status code: a burst sees very few codes, so a list is the quickest.
    status: Vec<(u16, u64)>,
    errors: BTreeMap<String, u64>,
    first_error: Option<String>,
    /// 2xx responses that were error answers, by what was seen, and the first one whole.
    error_answers: BTreeMap<String, u64>,
    first_error_answer: Option<String>,
}

/// One exchange as the worker awaited it: a response, a failure, or `None` when the
/// timeout ran out first.
pub(crate) type Outcome = Option<Result<Answer, Failure>>;

impl WorkerTally {
    pub(crate) fn new() -> WorkerTally {
        WorkerTally {
            latency_us: new_histogram(),
            status: Vec::new(),
            errors: BTreeMap::new(),
            first_error: None,
            error_answers: BTreeMap::new(),
            first_error_answer: None,
        }
    }

    /// Counts one exchange: a response's status and its latency since `since`, or the
    /// failure by kind. Returns true when the connection's state is unknown after a
    /// failure, so that the next request must open a new one.
    pub(crate) fn record(&mut self, outcome: Outcome, since: Instant, timeout: Duration) -> bool {
        let failure = match outcome {
            Some(Ok(Answer {
                status: code,
                error,
                ..
            })) => {
                let us = since.elapsed().as_micros().max(1) as u64;
                self.latency_us.saturating_record(us);
                match self.status.iter_mut().find(|(c, _)| *c == code) {
                    Some((_, n)) => *n += 1,
                    None => self.status.push((code, 1)),
                }
                if let Some(error) = error {
                    self.first_error_answer
                        .get_or_insert_with(|| error.to_string());
                    *self.error_answers.entry(error.seen).or_default() += 1;
                }
                return false;
            }
            Some(Err(failure)) => failure,
            None => Failure {
                kind: "timeout",
                text: format!("no complete response within {timeout:?}"),
            },
        };
        *self.errors.entry(failure.kind.to_string()).or_default() += 1;
        self.first_error.get_or_insert(failure.text);
        true
    }

    /// Adds this worker's counts to `result`.
    pub(crate) fn merge_into(&self, result: &mut LoadResult) {
        result
            .latency_us
            .add(&self.latency_us)
            .expect("same histogram bounds");
        for (code, n) in &self.status {
            *result.status.entry(*code).or_default() += n;
        }
        for (kind, n) in &self.errors {
            *result.errors.entry(kind.clone()).or_default() += n;
        }
        if result.first_error.is_none() {
            result.first_error = self.first_error.clone();
        }
        for (seen, n) in &self.error_answers {
            *result.error_answers.entry(seen.clone()).or_default() += n;
        }
        if result.first_error_answer.is_none() {
            result.first_error_answer = self.first_error_answer.clone();
        }
    }
}

/// A load with nothing counted yet, from `workers` workers.
pub(crate) fn empty_result(workers: u32) -> LoadResult {
    LoadResult::new(0, workers, Duration::ZERO)
}

/// A worker's timeout, one timer for all its requests. A new timer per request costs a
/// registration in the timer wheel and its removal; this one is moved only when it fires
/// before the request that is in flight has run out of time.
struct Timer {
    sleep: Pin<Box<Sleep>>,
}

impl Timer {
    fn new(deadline: Instant) -> Timer {
        Timer {
            sleep: Box::pin(tokio::time::sleep_until(deadline.into())),
        }
    }

    /// Awaits `fut` until `deadline`: its output, or `None` once the deadline has passed.
    /// Deadlines must not decrease from one call to the next.
    async fn within<F: Future>(&mut self, deadline: Instant, fut: F) -> Option<F::Output> {
        let mut fut = pin!(fut);
        poll_fn(|cx| {
            if let Poll::Ready(output) = fut.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            while self.sleep.as_mut().poll(cx).is_ready() {
                if Instant::now() >= deadline {
                    return Poll::Ready(None);
                }
                self.sleep.as_mut().reset(deadline.into());
            }
            Poll::Pending
        })
        .await
    }
}

/// `timeout` after `from`; a timeout too long to add (`--timeout 1000years`) never runs out
/// in practice: 30 years, as tokio's own far future.
fn deadline(from: Instant, timeout: Duration) -> Instant {
    from.checked_add(timeout)
        .unwrap_or_else(|| from + Duration::from_secs(86_400 * 365 * 30))
}

/// What the workers of one burst share, on their one thread.
struct Shared {
    /// Request numbers claimed so far.
    next: Cell<u64>,
    /// Requests answered or failed so far, for the progress bar.
    done: Cell<u64>,
    /// The progress bar, moved by each response: a read at the burst's middle
    /// (`meter::read_at_half`) waits for its position, which must not lag a fast second
    /// half.
    bar: ProgressBar,
    /// The items of the burst's first 2xx response (`None` inside while none has come):
    /// only bodies read before then are parsed.
    first_items: Cell<Option<Option<u64>>>,
    /// When the burst started, and its responses by the second since then that they came
    /// in (the spread of a ramp step's throughput).
    started: Instant,
    per_second: RefCell<Vec<u64>>,
}

impl Shared {
    fn new(started: Instant, bar: ProgressBar) -> Shared {
        Shared {
            next: Cell::new(0),
            done: Cell::new(0),
            bar,
            first_items: Cell::new(None),
            started,
            per_second: RefCell::new(Vec::new()),
        }
    }
}

/// Counts one response in the second since `started` that it came in.
pub(crate) fn count_in_second(per_second: &mut Vec<u64>, started: Instant) {
    let second = started.elapsed().as_secs() as usize;
    if per_second.len() <= second {
        per_second.resize(second + 1, 0);
    }
    per_second[second] += 1;
}

/// One worker's loop: claims request numbers while they are below `limit`, on one
/// keep-alive connection (a new one after an error, or when the server closes it).
async fn work(
    driver: Arc<Driver>,
    shared: Rc<Shared>,
    limit: Arc<AtomicU64>,
    tally: Rc<RefCell<WorkerTally>>,
) {
    let timeout = driver.timeout;
    let mut timer = Timer::new(deadline(Instant::now(), timeout));
    // Connect before the first request's clock starts, so that the handshake is not in its
    // latency. A failure here is not counted: the first request tries again, and counts.
    let mut link = timer
        .within(
            deadline(Instant::now(), timeout),
            Box::pin(driver.connect()),
        )
        .await
        .and_then(Result::ok);
    loop {
        let claimed = shared.next.get();
        if claimed >= limit.load(Ordering::Relaxed) {
            return;
        }
        shared.next.set(claimed + 1);
        let t0 = Instant::now();
        let count_items = shared.first_items.get().is_none();
        let outcome = timer
            .within(
                deadline(t0, timeout),
                driver.exchange(&mut link, count_items, claimed),
            )
            .await;
        if let Some(Ok(answer)) = &outcome
            && count_items
            && shared.first_items.get().is_none()
            && (200..300).contains(&answer.status)
        {
            shared.first_items.set(Some(answer.items));
        }
        if tally.borrow_mut().record(outcome, t0, timeout) {
            link = None;
        } else {
            count_in_second(&mut shared.per_second.borrow_mut(), shared.started);
        }
        shared.done.set(shared.done.get() + 1);
        shared.bar.set_position(shared.done.get());
    }
}

/// Sends exactly `total` requests with `concurrency` in flight, unless `stop` is raised.
pub async fn burst(
    driver: &Arc<Driver>,
    total: u64,
    concurrency: u32,
    bar: &ProgressBar,
    stop: Arc<AtomicBool>,
) -> LoadResult {
    let limit = Arc::new(AtomicU64::new(total));
    burst_counted(driver, limit, concurrency, bar, stop).await.0
}

/// Raises its flag when dropped: a burst whose caller stopped waiting ends too.
struct Abandon(Arc<AtomicBool>);

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sends requests with `concurrency` in flight until `limit` of them have been claimed,
/// and counts its responses in each second from its start (the last second partial).
/// Lowering `limit` (to 0) ends the burst gently: no request starts after that, and the
/// ones in flight finish and are counted. A raised `stop` aborts them instead.
pub async fn burst_counted(
    driver: &Arc<Driver>,
    limit: Arc<AtomicU64>,
    concurrency: u32,
    bar: &ProgressBar,
    stop: Arc<AtomicBool>,
) -> (LoadResult, Vec<u64>) {
    let abandoned = Abandon(Arc::new(AtomicBool::new(false)));
    let (driver, bar, flag) = (driver.clone(), bar.clone(), abandoned.0.clone());
    let total = limit.load(Ordering::Relaxed);
    let thread = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the burst's thread");
        let stops = [stop, flag];
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, drive(driver, limit, concurrency, &bar, &stops))
    });
    match thread.await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // The outer runtime is shutting down: nothing was measured that can be kept.
        Err(_) => {
            let mut result = empty_result(concurrency);
            result.interrupted = total > 0;
            (result, Vec::new())
        }
    }
}

/// The burst on the current (single-threaded) runtime: the workers, and a watcher that
/// moves the progress bar and aborts the workers once any of `stops` is raised.
async fn drive(
    driver: Arc<Driver>,
    limit: Arc<AtomicU64>,
    concurrency: u32,
    bar: &ProgressBar,
    stops: &[Arc<AtomicBool>],
) -> (LoadResult, Vec<u64>) {
    let started = Instant::now();
    let total = limit.load(Ordering::Relaxed);
    let workers = concurrency.max(1).min(total.max(1) as u32);
    let shared = Rc::new(Shared::new(started, bar.clone()));
    let mut tallies = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let tally = Rc::new(RefCell::new(WorkerTally::new()));
        let task = work(driver.clone(), shared.clone(), limit.clone(), tally.clone());
        handles.push(tokio::task::spawn_local(task));
        tallies.push(tally);
    }
    let all_done = async {
        for handle in &mut handles {
            let _ = handle.await;
        }
    };
    // Each response moves the bar; the watcher only looks for a stop, which aborts the
    // workers: the request in flight is abandoned, counted neither as a response nor as an
    // error, and the burst is reported as interrupted.
    let watch = async {
        while !stops.iter().any(|s| s.load(Ordering::Relaxed)) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let stopped = tokio::select! {
        () = all_done => false,
        () = watch => true,
    };
    if stopped {
        handles.iter().for_each(tokio::task::JoinHandle::abort);
    }
    let mut result = empty_result(workers);
    for tally in tallies {
        tally.borrow().merge_into(&mut result);
    }
    result.wall = started.elapsed();
    result.sent = result.responses() + result.error_count();
    result.interrupted = result.sent < limit.load(Ordering::Relaxed).min(total);
    result.response_items = shared.first_items.get().flatten();
    (result, shared.per_second.take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_too_long_to_add_is_far_away() {
        let now = Instant::now();
        assert_eq!(
            deadline(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        let far = deadline(now, Duration::MAX);
        assert_eq!(far - now, Duration::from_secs(86_400 * 365 * 30));
    }
}
