//! Settling: waiting until every counter the app produced is visible in `pg_stat_database`.
//!
//! On PG 15+ a backend flushes its counters at most once a second, and a backend that goes
//! idle with counters pending flushes them only when its 10 s idle timer fires. A backend
//! that exits flushes at once. So the counters are complete once every backend of the
//! target database has gone, or has been idle for longer than that timer.
//!
//! Before 15, the stats collector also serves readers a stats file up to 500 ms old, so
//! two reads of the counters prove them complete only when they are further apart.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cost::snapshot::DatabaseStats;
use crate::error::Result;
use crate::postgres::views::Backend;
use crate::progress::Progress;

/// `PGSTAT_IDLE_INTERVAL` (PG 15+), in seconds.
pub const IDLE_FLUSH_SECONDS_PG15: f64 = 10.0;
/// `PGSTAT_STAT_INTERVAL` of the stats collector (PG 12-14), in seconds.
pub const COLLECTOR_INTERVAL_SECONDS: f64 = 0.5;
/// Slack on top of the server's timer, for timer latency and the flush itself.
pub const MARGIN_SECONDS: f64 = 0.5;
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
        }
    }
}

/// The verdict on one look at `pg_stat_activity`.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
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

/// Decides, from the target's backends, whether all their counters are published.
/// `quiet_seconds` is how long ago the tool's last request finished: a backend whose state
/// is hidden is taken as idle since then, the best that can be known about it.
pub fn judge(backends: &[Backend], rules: &Rules, quiet_seconds: f64) -> Verdict {
    let mut busy: Vec<String> = Vec::new();
    let mut idle_wait: f64 = 0.0;
    let mut idle_pending = 0;
    for b in backends.iter().filter(|b| holds_counters(&b.backend_type)) {
        if hidden(b) {
            let left = rules.flush_after_seconds - quiet_seconds;
            if left > 0.0 {
                idle_pending += 1;
                idle_wait = idle_wait.max(left);
            }
        } else if b.state == "idle" {
            let left = rules.flush_after_seconds - b.idle_seconds;
            if left > 0.0 {
                idle_pending += 1;
                idle_wait = idle_wait.max(left);
            }
        } else {
            let state = if b.state.is_empty() {
                "running"
            } else {
                b.state.as_str()
            };
            busy.push(format!("{} {} is {state}", b.backend_type, b.pid));
        }
    }
    if !busy.is_empty() {
        let mut reason = busy.join(", ");
        if busy.len() > 3 {
            reason = format!("{} and {} more", busy[..3].join(", "), busy.len() - 3);
        }
        return Verdict::Pending {
            reason,
            retry_in: Duration::from_millis(250),
        };
    }
    if idle_pending > 0 {
        return Verdict::Pending {
            reason: format!("{idle_pending} idle backend(s) may still hold counters"),
            retry_in: Duration::from_secs_f64(idle_wait.clamp(0.05, 1.0)),
        };
    }
    Verdict::Settled
}

/// What settling needs to read. Only implemented inside this crate, so `Send` bounds on
/// the futures are not needed.
#[allow(async_fn_in_trait)]
pub trait Probe {
    /// The target's backends, other than the reader's own.
    async fn backends(&mut self) -> Result<Vec<Backend>>;
    /// The target's `pg_stat_database` counters.
    async fn counters(&mut self) -> Result<DatabaseStats>;
}

/// How a settle wait ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub waited: Duration,
    pub timed_out: bool,
    /// What was still pending when the wait timed out.
    pub pending: Option<String>,
}

/// Waits until the target's counters are complete, or `timeout` runs out.
pub async fn wait<P: Probe>(
    probe: &mut P,
    rules: &Rules,
    timeout: Duration,
    progress: &Progress,
    label: &str,
    stop: &AtomicBool,
    quiet_since: Instant,
) -> Result<Outcome> {
    let start = Instant::now();
    let spinner = progress.spinner(format!(
        "{label}: waiting for the app's counters to be published"
    ));
    let outcome = loop {
        let elapsed = start.elapsed();
        let verdict = judge(
            &probe.backends().await?,
            rules,
            quiet_since.elapsed().as_secs_f64(),
        );
        match verdict {
            Verdict::Settled if !rules.stability_check => {
                break Outcome {
                    waited: elapsed,
                    timed_out: false,
                    pending: None,
                };
            }
            Verdict::Settled => {
                let first = probe.counters().await?;
                tokio::time::sleep(rules.stability_gap).await;
                let second = probe.counters().await?;
                if first == second {
                    break Outcome {
                        waited: start.elapsed(),
                        timed_out: false,
                        pending: None,
                    };
                }
            }
            Verdict::Pending { reason, retry_in } => {
                if stop.load(Ordering::Relaxed) {
                    break Outcome {
                        waited: elapsed,
                        timed_out: true,
                        pending: Some(format!("interrupted; {reason}")),
                    };
                }
                if elapsed >= timeout {
                    break Outcome {
                        waited: elapsed,
                        timed_out: true,
                        pending: Some(reason),
                    };
                }
                spinner.set_message(format!(
                    "{label}: {reason} ({:.1} s)",
                    elapsed.as_secs_f64()
                ));
                let left = timeout.saturating_sub(elapsed);
                tokio::time::sleep(retry_in.min(left).max(Duration::from_millis(20))).await;
            }
        }
    };
    spinner.finish_and_clear();
    Ok(outcome)
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
        }
    }

    fn pg15() -> Rules {
        Rules::for_server(150018, true)
    }

    #[test]
    fn no_backends_is_settled() {
        assert_eq!(judge(&[], &pg15(), 0.0), Verdict::Settled);
    }

    #[test]
    fn idle_pool_must_outlast_the_idle_flush_timer() {
        let v = judge(&[b(1, "idle", 3.0), b(2, "idle", 9.0)], &pg15(), 0.0);
        match v {
            Verdict::Pending { retry_in, reason } => {
                assert_eq!(retry_in, Duration::from_secs(1));
                assert!(reason.contains("2 idle"));
            }
            other => panic!("{other:?}"),
        }
        let v = judge(&[b(1, "idle", 10.3)], &pg15(), 0.0);
        assert!(
            matches!(v, Verdict::Pending { retry_in, .. } if retry_in < Duration::from_millis(250))
        );
        assert_eq!(
            judge(&[b(1, "idle", 10.6), b(2, "idle", 400.0)], &pg15(), 0.0),
            Verdict::Settled
        );
    }

    #[test]
    fn active_and_in_transaction_backends_block() {
        for state in ["active", "idle in transaction"] {
            let v = judge(&[b(7, state, 50.0)], &pg15(), 0.0);
            assert!(
                matches!(v, Verdict::Pending { ref reason, .. } if reason.contains(state)),
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
        assert_eq!(judge(&[walsender], &pg15(), 0.0), Verdict::Settled);
    }

    #[test]
    fn hidden_backends_count_as_idle_since_the_last_request() {
        let hidden = Backend {
            backend_type: String::new(),
            ..b(9, "", 0.0)
        };
        let v = judge(std::slice::from_ref(&hidden), &pg15(), 4.0);
        assert!(
            matches!(v, Verdict::Pending { ref reason, .. } if reason.contains("1 idle")),
            "{v:?}"
        );
        assert_eq!(judge(&[hidden], &pg15(), 10.6), Verdict::Settled);
    }

    #[test]
    fn collector_servers_use_the_short_interval() {
        let rules = Rules::for_server(140010, true);
        assert_eq!(rules.flush_after_seconds, 1.0);
        assert_eq!(judge(&[b(1, "idle", 1.2)], &rules, 0.0), Verdict::Settled);
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
