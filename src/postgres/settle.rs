//! Settling: waiting until every counter the app produced is visible in `pg_stat_database`.
//!
//! On PG 15+ a backend flushes its counters at most once a second, and a backend that goes
//! idle with counters pending flushes them only when its 10 s idle timer fires. A backend
//! that exits flushes at once. So the counters are complete once every backend of the
//! target database has gone, or has been idle for longer than that timer.
//!
//! Before 15, the stats collector also serves readers a stats file up to 500 ms old, so
//! two reads of the counters prove them complete only when they are further apart.
//!
//! Idle times come from the server's wall clock, but a backend's flush timer runs on its
//! monotonic clock: when the wall clock steps forward (a time sync, a resumed virtual
//! machine), a backend looks idle for longer than it has been. Each wait therefore checks
//! the server's clock against pgcost's own since an anchor read before the traffic, and
//! takes any step out of the idle times. An apparent step may only lengthen a wait: it is
//! never used to take a backend for other traffic, nor to take one as flushed.
//!
//! Other traffic (a steady writer, a cron job) never idles for 10 s. On PG 15+ a backend
//! also flushes at the end of any transaction at least `PGSTAT_MIN_INTERVAL` (1 s) after
//! its previous flush, so one that went idle again well after pgcost's last request has
//! published everything it held then. After a burst, that shortcut is taken only for
//! backends already seen as other traffic while pgcost sent nothing (an earlier wait, the
//! control window): any other backend may be the app's, finishing work of the burst, and
//! is waited for in full. Backends of roles outside `--app-role`, and busy backends seen
//! active in the control window, are not waited for at all ([`Others`],
//! docs/background.md).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::postgres::views::{Activity, Backend};
use crate::progress::Progress;
use pgcost_core::snapshot::DatabaseStats;

/// `PGSTAT_IDLE_INTERVAL` (PG 15+), in seconds.
pub const IDLE_FLUSH_SECONDS_PG15: f64 = 10.0;
/// `PGSTAT_STAT_INTERVAL` of the stats collector (PG 12-14), in seconds.
pub const COLLECTOR_INTERVAL_SECONDS: f64 = 0.5;
/// Slack on top of the server's timer, for timer latency and the flush itself.
pub const MARGIN_SECONDS: f64 = 0.5;
/// `PGSTAT_MIN_INTERVAL` (PG 15+), in seconds: a backend flushes at a transaction's end
/// when its last flush is at least this old.
pub const MIN_FLUSH_INTERVAL_SECONDS_PG15: f64 = 1.0;
/// Time between the two reads of the stability check on PG 15+, whose reads are fresh.
pub const STABILITY_GAP_SECONDS: f64 = 0.15;
/// Slack on top of the collector's file age, for the gap between the two reads (PG 12-14).
pub const STATS_FILE_MARGIN_SECONDS: f64 = 0.05;

/// How the server publishes counters, which decides how long an idle backend may hold them.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// A backend idle for at least this long has flushed.
    pub flush_after_seconds: f64,
    /// Confirm by reading the counters twice and finding them unchanged. Off when the
    /// reading connection itself is in the target database and moves them.
    pub stability_check: bool,
    /// Time between those two reads. Before 15 a reader accepts a stats file up to
    /// `PGSTAT_STAT_INTERVAL` old (`backend_read_statsfile`), so two reads closer than that
    /// can both see the same stale file; the second read must come later, so that its
    /// file was written after the first read, when every backend had already settled.
    pub stability_gap: Duration,
    /// PG 15+: a backend whose last transaction ended at least this long after pgcost's
    /// last request (the minimum flush interval plus a margin) has published what it held
    /// then. `None` before 15, where an idle backend may hold its counters indefinitely.
    pub flushed_after_quiet_seconds: Option<f64>,
}

impl Rules {
    pub fn for_server(version_num: i32, stability_check: bool) -> Rules {
        let (interval, gap) = if version_num >= 150000 {
            (IDLE_FLUSH_SECONDS_PG15, STABILITY_GAP_SECONDS)
        } else {
            (
                COLLECTOR_INTERVAL_SECONDS,
                COLLECTOR_INTERVAL_SECONDS + STATS_FILE_MARGIN_SECONDS,
            )
        };
        Rules {
            flush_after_seconds: interval + MARGIN_SECONDS,
            stability_check,
            stability_gap: Duration::from_secs_f64(gap),
            flushed_after_quiet_seconds: (version_num >= 150000)
                .then_some(MIN_FLUSH_INTERVAL_SECONDS_PG15 + MARGIN_SECONDS),
        }
    }
}

/// The server's wall clock beside pgcost's monotonic clock, read before the traffic whose
/// counters a wait is for.
#[derive(Debug, Clone, Copy)]
pub struct ClockAnchor {
    /// Taken before the read was sent.
    pub local: Instant,
    /// The server's clock during the read, in seconds since the Unix epoch.
    pub server: f64,
}

impl ClockAnchor {
    /// How many seconds the server's clock ran ahead of pgcost's since the anchor, given a
    /// later server reading and the local time taken after it returned; 0 when it did not.
    pub fn server_ahead(&self, server_now: f64, local_after: Instant) -> f64 {
        let local = local_after
            .saturating_duration_since(self.local)
            .as_secs_f64();
        ((server_now - self.server) - local).max(0.0)
    }
}

/// What one look at `pg_stat_activity` says: settled, or pending and why.
#[derive(Debug, Clone, PartialEq)]
pub enum SettleOutcome {
    Settled,
    /// Look again after `retry_in`; `reason` says what is still pending.
    Pending {
        reason: String,
        retry_in: Duration,
    },
}

/// Backend types whose counters go to the target database and that can hold them.
fn holds_counters(backend_type: &str) -> bool {
    matches!(
        backend_type,
        "client backend" | "autovacuum worker" | "parallel worker" | ""
    )
}

/// True when `pg_stat_activity` hides the backend's details (another role's backend, seen
/// without pg_read_all_stats).
fn hidden(b: &Backend) -> bool {
    b.backend_type.is_empty() && b.state.is_empty()
}

/// The backends that are other traffic, which the waits do not wait for
/// (docs/background.md).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Others {
    /// `--app-role`: backends of any other role are left out. Empty: none are.
    pub app_roles: Vec<String>,
    /// Backends seen active in the control window, while pgcost sent nothing: left out
    /// while busy (an idle one is judged as any other).
    pub background_pids: BTreeSet<i32>,
    /// Backends seen doing something well after pgcost's last request in an earlier wait
    /// (or busy in the control window): known other traffic, whose late transactions may
    /// end a wait after a burst early (see [`judge`]).
    pub seen_quiet: BTreeSet<i32>,
}

impl Others {
    /// True for a backend of a role outside `--app-role`.
    pub fn other_role(&self, b: &Backend) -> bool {
        !self.app_roles.is_empty() && !self.app_roles.contains(&b.role)
    }

    /// True for a backend known as other traffic before the wait began.
    fn known_background(&self, b: &Backend) -> bool {
        self.seen_quiet.contains(&b.pid) || self.background_pids.contains(&b.pid)
    }
}

/// Which backends a wait may take as flushed because they transacted well after pgcost's
/// last request (PG 15+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Any backend: a wait before a burst, where only the warm-up's counters are at stake
    /// and nothing is known yet of the other traffic.
    Any,
    /// Only backends known as other traffic (`Others::known_background`): a wait after
    /// a burst, where a backend that served it may still be working for it.
    KnownBackground,
}

/// Seconds between pgcost's last request (`quiet_seconds` ago) and the backend's last
/// change of state; `None` for a backend whose state is hidden. Read off the server's
/// clock as it is: a step of that clock makes the change look earlier, never later, so
/// that no step can make a backend look busy after the burst (other traffic) or flushed.
fn changed_after_quiet(b: &Backend, quiet_seconds: f64) -> Option<f64> {
    (!hidden(b)).then_some(quiet_seconds - b.idle_seconds)
}

/// The backends that did something at least `after` seconds after pgcost's last request:
/// traffic that is not pgcost's (its requests were answered by then).
pub fn active_after_quiet(
    backends: &[Backend],
    quiet_seconds: f64,
    after: f64,
) -> impl Iterator<Item = &Backend> {
    backends.iter().filter(move |b| {
        b.backend_type == "client backend"
            && changed_after_quiet(b, quiet_seconds).is_some_and(|s| s >= after)
    })
}

/// Decides, from the target's backends, whether all their counters are published.
/// `quiet_seconds` is how long ago the tool's last request finished: a backend whose state
/// is hidden is taken as idle since then, the best that can be known about it.
/// `server_ahead` is how far the server's wall clock stepped ahead of pgcost's clock since
/// before the traffic: the backends' idle times are that much shorter than they read.
/// `others` are not waited for (see [`Others`]); `shortcut` says which backends may be
/// taken as flushed for a transaction well after the last request.
pub fn judge(
    backends: &[Backend],
    rules: &Rules,
    (quiet_seconds, server_ahead): (f64, f64),
    others: &Others,
    shortcut: Shortcut,
) -> SettleOutcome {
    let mut busy: Vec<String> = Vec::new();
    let mut idle_wait: f64 = 0.0;
    let mut idle_pending = 0;
    let counted = |b: &&Backend| holds_counters(&b.backend_type) && !others.other_role(b);
    for b in backends.iter().filter(counted) {
        let left = if hidden(b) {
            rules.flush_after_seconds - quiet_seconds
        } else if b.state == "idle" {
            let may = shortcut == Shortcut::Any || others.known_background(b);
            let flushed_since = changed_after_quiet(b, quiet_seconds)
                .zip(rules.flushed_after_quiet_seconds)
                .is_some_and(|(changed, needed)| may && changed >= needed);
            match flushed_since {
                true => 0.0,
                false => rules.flush_after_seconds - (b.idle_seconds - server_ahead),
            }
        } else {
            if !others.background_pids.contains(&b.pid) {
                busy.push(describe(b));
            }
            continue;
        };
        if left > 0.0 {
            idle_pending += 1;
            idle_wait = idle_wait.max(left);
        }
    }
    if !busy.is_empty() {
        let mut reason = busy.join(", ");
        if busy.len() > 3 {
            reason = format!("{} and {} more", busy[..3].join(", "), busy.len() - 3);
        }
        return SettleOutcome::Pending {
            reason,
            retry_in: Duration::from_millis(250),
        };
    }
    if idle_pending > 0 {
        return SettleOutcome::Pending {
            reason: format!("{idle_pending} idle backend(s) may still hold counters"),
            retry_in: Duration::from_secs_f64(idle_wait.clamp(0.05, 1.0)),
        };
    }
    SettleOutcome::Settled
}

/// `client backend 123 (role app, application "cron") is active`.
fn describe(b: &Backend) -> String {
    let state = if b.state.is_empty() {
        "running"
    } else {
        b.state.as_str()
    };
    format!("{} {} ({}) is {state}", b.backend_type, b.pid, b.who())
}

/// What settling needs to read. Only implemented inside this crate, so `Send` bounds on
/// the futures are not needed.
#[allow(async_fn_in_trait)]
pub trait Probe {
    /// The target's backends, other than the reader's own, and the server's clock.
    async fn activity(&mut self) -> Result<Activity>;
    /// The target's `pg_stat_database` counters.
    async fn counters(&mut self) -> Result<DatabaseStats>;
}

/// How a settle wait ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub waited: Duration,
    pub timed_out: bool,
    /// What was still pending when the wait timed out.
    pub pending: Option<String>,
    /// How far the server's wall clock stepped ahead of pgcost's clock (seconds), as
    /// claimed: see [`claimed_step`]. 0 when no step was measured robustly.
    pub server_clock_ahead: f64,
    /// The largest step any single reading allowed for: the wait was lengthened by it.
    pub clock_allowance: f64,
    /// Each reading's lower bound of the step, with its own round trip (seconds).
    pub clock_readings: Vec<(f64, f64)>,
    /// Client backends seen doing something well after pgcost's last request, during the
    /// wait: other traffic, by pid (the last reading of each).
    pub others: BTreeMap<i32, Backend>,
    /// The counters moved between the two reads of the stability check, when every
    /// backend of the target had published its own: traffic that is not the app's
    /// requests (background), seen while pgcost sent nothing.
    pub moved_while_quiet: bool,
}

impl Outcome {
    /// No wait: the counters were read at once.
    pub fn immediate() -> Outcome {
        Outcome::default()
    }
}

/// A reading whose round trip took longer than this says too little about the server's
/// clock to claim a step from it.
pub const CLOCK_READING_MAX_ROUND_TRIP_SECONDS: f64 = 0.25;
/// Readings that must each show a step before one is claimed.
pub const CLOCK_STEP_READINGS: usize = 3;

/// The step of the server's clock that `readings` (each one's lower bound of the step, and
/// its round trip) show robustly: the smallest of the [`CLOCK_STEP_READINGS`] largest
/// bounds among readings with a short round trip, or 0 with fewer such readings. Every
/// bound already gives the server the whole round trip (pgcost's clock is read before the
/// anchor was sent and after the reading returned), so a slow reading can only shrink it;
/// needing several keeps one odd reading from being reported.
pub fn claimed_step(readings: &[(f64, f64)]) -> f64 {
    let mut bounds: Vec<f64> = (readings.iter())
        .filter(|(_, round_trip)| *round_trip <= CLOCK_READING_MAX_ROUND_TRIP_SECONDS)
        .map(|(bound, _)| *bound)
        .collect();
    if bounds.len() < CLOCK_STEP_READINGS {
        return 0.0;
    }
    bounds.sort_by(|a, b| b.total_cmp(a));
    bounds[CLOCK_STEP_READINGS - 1].max(0.0)
}

/// When the app's traffic ended, the clocks read before it began, the backends that are
/// other traffic, and which backends may be taken as flushed early.
#[derive(Debug, Clone, Copy)]
pub struct Quiet<'a> {
    pub since: Instant,
    pub anchor: ClockAnchor,
    pub others: &'a Others,
    pub shortcut: Shortcut,
}

/// A backend that changed state this long after pgcost's last request is other traffic:
/// the app had answered every request by then.
pub const OTHER_TRAFFIC_AFTER_SECONDS: f64 = 1.0;

/// Waits until the target's counters are complete, or `timeout` runs out.
pub async fn wait<P: Probe>(
    probe: &mut P,
    rules: &Rules,
    timeout: Duration,
    progress: &Progress,
    label: &str,
    stop: &AtomicBool,
    quiet: Quiet<'_>,
) -> Result<Outcome> {
    let start = Instant::now();
    let mut outcome = Outcome::immediate();
    let spinner = progress.spinner(format!(
        "{label}: waiting for the app's counters to be published"
    ));
    loop {
        let elapsed = start.elapsed();
        let (verdict, others_now) = look(probe, rules, &quiet, &mut outcome).await?;
        outcome.waited = elapsed;
        let (reason, retry_in) = match verdict {
            SettleOutcome::Settled if !rules.stability_check => break,
            SettleOutcome::Settled if others_now => {
                // Other traffic keeps the counters moving: the judge's word stands (PG 15+);
                // before 15, the next read must come from a fresh stats file.
                if rules.flushed_after_quiet_seconds.is_none() {
                    tokio::time::sleep(rules.stability_gap).await;
                }
                outcome.waited = start.elapsed();
                break;
            }
            SettleOutcome::Settled => {
                if stable(probe, rules).await? {
                    outcome.waited = start.elapsed();
                    break;
                }
                // Every backend had published its counters, yet they moved: background.
                outcome.moved_while_quiet = true;
                continue;
            }
            SettleOutcome::Pending { reason, retry_in } => (reason, retry_in),
        };
        if stop.load(Ordering::Relaxed) || elapsed >= timeout {
            outcome.timed_out = true;
            outcome.pending = Some(match stop.load(Ordering::Relaxed) {
                true => format!("interrupted; {reason}"),
                false => reason,
            });
            break;
        }
        spinner.set_message(format!(
            "{label}: {reason} ({:.1} s)",
            elapsed.as_secs_f64()
        ));
        let left = timeout.saturating_sub(elapsed);
        tokio::time::sleep(retry_in.min(left).max(Duration::from_millis(20))).await;
    }
    spinner.finish_and_clear();
    Ok(outcome)
}

/// One read of the target's backends: the verdict, and whether other traffic is moving
/// the counters now (recorded in `outcome`, with the server clock's step).
async fn look<P: Probe>(
    probe: &mut P,
    rules: &Rules,
    quiet: &Quiet<'_>,
    outcome: &mut Outcome,
) -> Result<(SettleOutcome, bool)> {
    let sent = Instant::now();
    let activity = probe.activity().await?;
    let returned = Instant::now();
    let ahead = quiet.anchor.server_ahead(activity.server_now, returned);
    let round_trip = returned.saturating_duration_since(sent).as_secs_f64();
    outcome.clock_readings.push((ahead, round_trip));
    outcome.server_clock_ahead = claimed_step(&outcome.clock_readings);
    // Any reading's step only lengthens the wait (see `changed_after_quiet`).
    outcome.clock_allowance = outcome.clock_allowance.max(ahead);
    let quiet_seconds = quiet.since.elapsed().as_secs_f64();
    let mut others_now = false;
    let after = OTHER_TRAFFIC_AFTER_SECONDS;
    for b in active_after_quiet(&activity.backends, quiet_seconds, after) {
        outcome.others.insert(b.pid, b.clone());
        others_now = true;
    }
    let timing = (quiet_seconds, outcome.clock_allowance);
    let verdict = judge(
        &activity.backends,
        rules,
        timing,
        quiet.others,
        quiet.shortcut,
    );
    Ok((verdict, others_now))
}

/// Two reads of the counters, `rules.stability_gap` apart, that agree.
async fn stable<P: Probe>(probe: &mut P, rules: &Rules) -> Result<bool> {
    let first = probe.counters().await?;
    tokio::time::sleep(rules.stability_gap).await;
    let second = probe.counters().await?;
    Ok(first == second)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(pid: i32, state: &str, idle: f64) -> Backend {
        Backend {
            pid,
            backend_type: "client backend".into(),
            state: state.into(),
            idle_seconds: idle,
            role: "app".into(),
            application: String::new(),
        }
    }

    fn none() -> Others {
        Others::default()
    }

    fn pg15() -> Rules {
        Rules::for_server(150018, true)
    }

    #[test]
    fn no_backends_is_settled() {
        assert_eq!(
            judge(&[], &pg15(), (0.0, 0.0), &none(), Shortcut::Any),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn idle_pool_must_outlast_the_idle_flush_timer() {
        let v = judge(
            &[b(1, "idle", 3.0), b(2, "idle", 9.0)],
            &pg15(),
            (0.0, 0.0),
            &none(),
            Shortcut::Any,
        );
        match v {
            SettleOutcome::Pending { retry_in, reason } => {
                assert_eq!(retry_in, Duration::from_secs(1));
                assert!(reason.contains("2 idle"));
            }
            other => panic!("{other:?}"),
        }
        let v = judge(
            &[b(1, "idle", 10.3)],
            &pg15(),
            (0.0, 0.0),
            &none(),
            Shortcut::Any,
        );
        assert!(
            matches!(v, SettleOutcome::Pending { retry_in, .. } if retry_in < Duration::from_millis(250))
        );
        assert_eq!(
            judge(
                &[b(1, "idle", 10.6), b(2, "idle", 400.0)],
                &pg15(),
                (0.0, 0.0),
                &none(),
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn active_and_in_transaction_backends_block() {
        for state in ["active", "idle in transaction"] {
            let v = judge(
                &[b(7, state, 50.0)],
                &pg15(),
                (0.0, 0.0),
                &none(),
                Shortcut::Any,
            );
            assert!(
                matches!(v, SettleOutcome::Pending { ref reason, .. } if reason.contains(state)),
                "{v:?}"
            );
        }
    }

    #[test]
    fn other_backend_types_are_ignored() {
        let walsender = Backend {
            backend_type: "walsender".into(),
            ..b(3, "active", 0.0)
        };
        assert_eq!(
            judge(&[walsender], &pg15(), (0.0, 0.0), &none(), Shortcut::Any),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn hidden_backends_count_as_idle_since_the_last_request() {
        let hidden = Backend {
            backend_type: String::new(),
            ..b(9, "", 0.0)
        };
        let v = judge(
            std::slice::from_ref(&hidden),
            &pg15(),
            (4.0, 0.0),
            &none(),
            Shortcut::Any,
        );
        assert!(
            matches!(v, SettleOutcome::Pending { ref reason, .. } if reason.contains("1 idle")),
            "{v:?}"
        );
        assert_eq!(
            judge(&[hidden], &pg15(), (10.6, 0.0), &none(), Shortcut::Any),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn a_server_clock_that_stepped_ahead_does_not_shorten_the_wait() {
        // 12 s idle by the server's clock, of which 11 s are a step of that clock: the
        // backend's flush timer has run for 1 s only.
        let v = judge(
            &[b(1, "idle", 12.0)],
            &pg15(),
            (0.0, 11.0),
            &none(),
            Shortcut::Any,
        );
        assert!(
            matches!(v, SettleOutcome::Pending { ref reason, .. } if reason.contains("1 idle")),
            "{v:?}"
        );
        assert_eq!(
            judge(
                &[b(1, "idle", 22.0)],
                &pg15(),
                (0.0, 11.0),
                &none(),
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
    }

    /// A server whose wall clock stepped `step` seconds ahead after one backend went idle at
    /// `idle_at`; its counters are always stable.
    struct SteppedServer {
        idle_at: Instant,
        step: f64,
    }

    impl Probe for SteppedServer {
        async fn activity(&mut self) -> Result<Activity> {
            let idle = self.idle_at.elapsed().as_secs_f64();
            Ok(Activity {
                server_now: 1000.0 + idle + self.step,
                backends: vec![b(1, "idle", idle + self.step)],
            })
        }
        async fn counters(&mut self) -> Result<DatabaseStats> {
            Ok(DatabaseStats::default())
        }
    }

    #[tokio::test]
    async fn the_wait_lasts_the_flush_interval_by_this_clock_when_the_server_clock_steps() {
        let rules = Rules {
            flush_after_seconds: 0.4,
            stability_check: true,
            stability_gap: Duration::from_millis(10),
            flushed_after_quiet_seconds: None,
        };
        let idle_at = Instant::now();
        let quiet = Quiet {
            since: idle_at,
            anchor: ClockAnchor {
                local: idle_at,
                server: 1000.0,
            },
            others: &none(),
            shortcut: Shortcut::Any,
        };
        let mut server = SteppedServer {
            idle_at,
            step: 30.0,
        };
        let outcome = wait(
            &mut server,
            &rules,
            Duration::from_secs(5),
            &Progress::hidden(),
            "test",
            &AtomicBool::new(false),
            quiet,
        )
        .await
        .unwrap();
        assert!(!outcome.timed_out);
        assert!(!outcome.moved_while_quiet, "{outcome:?}");
        assert!(
            idle_at.elapsed() >= Duration::from_millis(400),
            "settled after {:?}",
            idle_at.elapsed()
        );
        assert!((outcome.clock_allowance - 30.0).abs() < 0.05, "{outcome:?}");
        // Two readings lengthen the wait, but are too few to claim the step in the report.
        assert_eq!(outcome.clock_readings.len(), 2, "{outcome:?}");
        assert_eq!(outcome.server_clock_ahead, 0.0);
    }

    /// A database with no backend of its own whose counters another server's traffic
    /// moves `moves` more times (a cron job's short connections), then leaves alone.
    struct Background {
        moves: i64,
        commits: i64,
    }

    impl Probe for Background {
        async fn activity(&mut self) -> Result<Activity> {
            Ok(Activity {
                server_now: 1000.0,
                backends: Vec::new(),
            })
        }
        async fn counters(&mut self) -> Result<DatabaseStats> {
            if self.moves > 0 {
                self.moves -= 1;
                self.commits += 1;
            }
            let mut stats = DatabaseStats::default();
            stats.counters.xact_commit = self.commits;
            Ok(stats)
        }
    }

    #[tokio::test]
    async fn counters_that_move_with_every_backend_published_are_background() {
        let rules = Rules {
            flush_after_seconds: 0.4,
            stability_check: true,
            stability_gap: Duration::from_millis(1),
            flushed_after_quiet_seconds: None,
        };
        let now = Instant::now();
        let others = none();
        let quiet = Quiet {
            since: now,
            anchor: ClockAnchor {
                local: now,
                server: 1000.0,
            },
            others: &others,
            shortcut: Shortcut::Any,
        };
        let outcome = |moves| async move {
            let mut probe = Background { moves, commits: 0 };
            let (progress, stop) = (Progress::hidden(), AtomicBool::new(false));
            let timeout = Duration::from_secs(5);
            (wait(&mut probe, &rules, timeout, &progress, "test", &stop, quiet).await).unwrap()
        };
        let busy = outcome(3).await;
        assert!(busy.moved_while_quiet && !busy.timed_out, "{busy:?}");
        // The first read only sets the level; a second one that agrees settles.
        let still = outcome(1).await;
        assert!(!still.moved_while_quiet, "{still:?}");
    }

    #[test]
    fn a_steady_writer_that_transacted_well_after_the_last_request_has_flushed() {
        // pgcost's last request 3 s ago; the writer went idle again 10 ms ago.
        let writer = b(5, "idle", 0.01);
        assert_eq!(
            judge(
                std::slice::from_ref(&writer),
                &pg15(),
                (3.0, 0.0),
                &none(),
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
        // 1.2 s after the last request is too soon: its last flush may predate it.
        assert!(matches!(
            judge(
                std::slice::from_ref(&writer),
                &pg15(),
                (1.2, 0.0),
                &none(),
                Shortcut::Any
            ),
            SettleOutcome::Pending { .. }
        ));
        // Before 15 an idle backend may hold its counters: no such rule.
        let pg14 = Rules::for_server(140010, true);
        let idle = b(5, "idle", 0.1);
        assert!(matches!(
            judge(&[idle], &pg14, (3.0, 0.0), &none(), Shortcut::Any),
            SettleOutcome::Pending { .. }
        ));
        let seen: Vec<i32> = active_after_quiet(&[writer, b(6, "idle", 2.9)], 3.0, 1.0)
            .map(|b| b.pid)
            .collect();
        assert_eq!(
            seen,
            vec![5],
            "the pooled backend idle since the burst is the app's"
        );
    }

    #[test]
    fn after_a_burst_only_known_background_is_taken_as_flushed_early() {
        // pgcost's last request 3 s ago; the backend went idle again 1 s ago: it may be the
        // app's, finishing work of the burst, with counters still pending.
        let late = b(5, "idle", 1.0);
        let after_burst = |others: &Others| {
            judge(
                std::slice::from_ref(&late),
                &pg15(),
                (3.0, 0.0),
                others,
                Shortcut::KnownBackground,
            )
        };
        assert!(matches!(
            after_burst(&none()),
            SettleOutcome::Pending { .. }
        ));
        let known = Others {
            seen_quiet: [5].into(),
            ..Others::default()
        };
        assert_eq!(after_burst(&known), SettleOutcome::Settled);
        // Before a burst, nothing is known yet: the transaction is enough.
        assert_eq!(
            judge(&[late], &pg15(), (3.0, 0.0), &none(), Shortcut::Any),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn a_stepped_clock_never_makes_a_backend_look_busy_after_the_burst() {
        // Idle 0.5 s by the server's clock, which stepped 3 s: by the raw reading it changed
        // state 2.5 s after the last request (3 s ago); the step is not added to that.
        let idle = b(4, "idle", 0.5);
        let seen = active_after_quiet(std::slice::from_ref(&idle), 3.0, 1.0).count();
        assert_eq!(seen, 1);
        let earlier = b(4, "idle", 2.5);
        assert_eq!(active_after_quiet(&[earlier], 3.0, 1.0).count(), 0);
        // The step still lengthens the flush timer's wait: 11 s idle, of which 3 s a step.
        let v = judge(
            &[b(4, "idle", 11.0)],
            &pg15(),
            (0.0, 3.0),
            &none(),
            Shortcut::KnownBackground,
        );
        assert!(matches!(v, SettleOutcome::Pending { .. }), "{v:?}");
    }

    #[test]
    fn a_step_is_claimed_from_several_quick_readings_only() {
        assert_eq!(claimed_step(&[(3.1, 0.01)]), 0.0, "one reading");
        assert_eq!(claimed_step(&[(3.1, 0.01), (3.0, 0.01), (0.2, 0.01)]), 0.2);
        let quick = [(3.1, 0.01), (3.0, 0.02), (2.9, 0.01), (0.0, 0.01)];
        assert!((claimed_step(&quick) - 2.9).abs() < 1e-9);
        // Slow readings (a starved machine) are not used.
        let slow = [(3.1, 0.9), (3.0, 1.2), (2.9, 0.5), (3.0, 0.01)];
        assert_eq!(claimed_step(&slow), 0.0);
    }

    #[test]
    fn other_roles_and_busy_background_backends_are_not_waited_for() {
        let writer = Backend {
            role: "cron".into(),
            application: "nightly".into(),
            ..b(8, "idle in transaction", 0.0)
        };
        let v = judge(
            std::slice::from_ref(&writer),
            &pg15(),
            (0.0, 0.0),
            &none(),
            Shortcut::Any,
        );
        assert!(
            matches!(v, SettleOutcome::Pending { ref reason, .. }
                if reason.contains("8 (role cron, application \"nightly\") is idle in transaction")),
            "{v:?}"
        );
        let by_role = Others {
            app_roles: vec!["app".into()],
            ..Others::default()
        };
        assert_eq!(
            judge(
                std::slice::from_ref(&writer),
                &pg15(),
                (0.0, 0.0),
                &by_role,
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
        let by_pid = Others {
            background_pids: [8].into(),
            ..Others::default()
        };
        assert_eq!(
            judge(
                std::slice::from_ref(&writer),
                &pg15(),
                (0.0, 0.0),
                &by_pid,
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
        // Idle, a background pid is judged as any backend: it may hold the app's counters.
        let idle = Backend {
            state: "idle".into(),
            idle_seconds: 0.5,
            ..writer
        };
        assert!(matches!(
            judge(&[idle], &pg15(), (0.5, 0.0), &by_pid, Shortcut::Any),
            SettleOutcome::Pending { .. }
        ));
    }

    #[test]
    fn server_ahead_is_the_step_beyond_the_time_that_passed_here() {
        let local = Instant::now();
        let anchor = ClockAnchor {
            local,
            server: 1000.0,
        };
        let later = local + Duration::from_secs(3);
        assert_eq!(anchor.server_ahead(1003.0, later), 0.0);
        assert_eq!(anchor.server_ahead(1002.0, later), 0.0, "behind is safe");
        assert!((anchor.server_ahead(1014.5, later) - 11.5).abs() < 1e-9);
    }

    #[test]
    fn collector_servers_use_the_short_interval() {
        let rules = Rules::for_server(140010, true);
        assert_eq!(rules.flush_after_seconds, 1.0);
        assert_eq!(
            judge(
                &[b(1, "idle", 1.2)],
                &rules,
                (0.0, 0.0),
                &none(),
                Shortcut::Any
            ),
            SettleOutcome::Settled
        );
    }

    #[test]
    fn collector_servers_read_twice_further_apart_than_the_stats_file_may_be_old() {
        for version_num in [130023, 140023] {
            let gap = Rules::for_server(version_num, true).stability_gap;
            assert!(
                gap > Duration::from_secs_f64(COLLECTOR_INTERVAL_SECONDS),
                "{gap:?}"
            );
        }
        for version_num in [150018, 180004] {
            let gap = Rules::for_server(version_num, true).stability_gap;
            assert_eq!(gap, Duration::from_millis(150));
        }
    }
}
