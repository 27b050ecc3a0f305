//! CPU arithmetic of the ramp: utime + stime read from `/proc/PID/task/TID/stat`, and the
//! conversion of clock ticks (jiffies) to cores: divide by the tick rate AND by the wall
//! time, never compare raw jiffies with milliseconds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// utime + stime of one `stat` line, in clock ticks: fields 14 and 15, counted after the
/// command name, which may hold spaces and parentheses (so split after its last `)`).
pub fn stat_ticks(stat: &str) -> Option<u64> {
    sum_of_fields(stat, 14, 15)
}

/// The sum of two numeric fields of one `stat` line, numbered as in proc(5) (from 1).
fn sum_of_fields(stat: &str, first: usize, second: usize) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // After the name, field 3 (state) is the first.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let a: u64 = fields.get(first - 3)?.parse().ok()?;
    let b: u64 = fields.get(second - 3)?.parse().ok()?;
    Some(a + b)
}

/// cutime + cstime of one `stat` line, in clock ticks (fields 16 and 17): the CPU of the
/// children this process has reaped. The postmaster reaps every backend, so this is where
/// the CPU of a backend that lived for one request ends up.
pub fn stat_reaped_ticks(stat: &str) -> Option<u64> {
    sum_of_fields(stat, 16, 17)
}

/// The key under which the postmaster's reaped children's ticks are kept in [`Ticks`]:
/// (postmaster pid, 0); no thread has id 0.
pub const REAPED_TID: i32 = 0;

/// The parent pid of one `stat` line (field 4).
pub fn stat_parent(stat: &str) -> Option<i32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Cores used: `ticks` of CPU time over `wall_seconds`, at `ticks_per_second`.
pub fn cores(ticks: u64, ticks_per_second: u64, wall_seconds: f64) -> f64 {
    if ticks_per_second == 0 || wall_seconds <= 0.0 {
        return 0.0;
    }
    ticks as f64 / ticks_per_second as f64 / wall_seconds
}

/// Milliseconds of CPU per request.
pub fn ms_per_request(ticks: u64, ticks_per_second: u64, requests: u64) -> f64 {
    if ticks_per_second == 0 || requests == 0 {
        return 0.0;
    }
    ticks as f64 * 1000.0 / ticks_per_second as f64 / requests as f64
}

/// CPU ticks per thread (or per process), keyed by (pid, tid), at one instant.
pub type Ticks = BTreeMap<(i32, i32), u64>;

/// The growth of each key present at both instants (a thread that ended is left out, one
/// that started counts from zero).
pub fn grown(before: &Ticks, after: &Ticks) -> Vec<u64> {
    after
        .iter()
        .map(|(key, end)| end.saturating_sub(before.get(key).copied().unwrap_or(0)))
        .collect()
}

/// The database's CPU ticks over a step. Without the postmaster's reaped ticks it is
/// [`grown`] summed. With them, a backend that exited during the step is counted through
/// the postmaster's reaped total, which holds its whole life: so the ticks it had before
/// the step are taken out again, and a backend that started and ended within the step
/// counts in full.
pub fn database_grown(before: &Ticks, after: &Ticks) -> u64 {
    let grown: u64 = grown(before, after).iter().sum();
    let reaped = |t: &Ticks| t.keys().any(|&(_, tid)| tid == REAPED_TID);
    if !(reaped(before) && reaped(after)) {
        return grown;
    }
    let ended_before: u64 = (before.iter())
        .filter(|(key, _)| key.1 != REAPED_TID && !after.contains_key(key))
        .map(|(_, ticks)| ticks)
        .sum();
    grown.saturating_sub(ended_before)
}

/// A thread at or above this share of one core is busy: one of the app's workers at work.
pub const BUSY_THREAD: f64 = 0.5;

/// The processes' CPU over a step: the busiest thread's share of one core, the total in
/// cores, and the busy threads (the app's workers at work).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppCpu {
    pub busiest_thread_share: f64,
    pub cores: f64,
    /// Threads seen (of the processes and their children).
    pub threads: usize,
    /// Threads at half a core or more ([`BUSY_THREAD`]): the app's workers at work.
    #[serde(default)]
    pub busy_threads: usize,
    /// The share of one core of the least busy of the busy threads (0 with none).
    #[serde(default)]
    pub least_busy_thread_share: f64,
}

/// [`AppCpu`] of per-thread tick counts read before and after a step.
pub fn app_cpu(before: &Ticks, after: &Ticks, ticks_per_second: u64, wall_seconds: f64) -> AppCpu {
    let share = |ticks: u64| cores(ticks, ticks_per_second, wall_seconds);
    let grown = grown(before, after);
    let busy: Vec<u64> = (grown.iter().copied())
        .filter(|&t| share(t) >= BUSY_THREAD)
        .collect();
    AppCpu {
        busiest_thread_share: share(grown.iter().copied().max().unwrap_or(0)),
        cores: share(grown.iter().sum()),
        threads: after.len(),
        busy_threads: busy.len(),
        least_busy_thread_share: share(busy.iter().copied().min().unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (tokio (rt) x) R 4200 4242 4200 0 -1 4194304 100 0 0 0 \
                        1000 80 0 0 20 0 3 0 12345 1000000 200";

    #[test]
    fn ticks_come_from_fields_14_and_15_after_a_name_with_spaces_and_parens() {
        assert_eq!(stat_ticks(STAT), Some(1080));
        assert_eq!(stat_parent(STAT), Some(4200));
        assert_eq!(stat_ticks("garbage"), None);
    }

    #[test]
    fn reaped_children_ticks_are_fields_16_and_17() {
        let stat = "77 (postgres) S 1 77 77 0 -1 4194560 10 0 0 0 5 3 900 40 20 0 1 0 9 0 0";
        assert_eq!(stat_ticks(stat), Some(8));
        assert_eq!(stat_reaped_ticks(stat), Some(940));
        assert_eq!(stat_reaped_ticks("77 (postgres) S 1"), None);
    }

    #[test]
    fn backends_that_exit_during_a_step_count_through_the_postmaster() {
        let postmaster = (77, REAPED_TID);
        // Backend 100 lives on; 101 had 30 ticks, used 20 more and exited; 102 started,
        // used 15 and exited. The postmaster reaped 101 (50) and 102 (15).
        let before: Ticks = [((100, 100), 10), ((101, 101), 30), (postmaster, 1000)].into();
        let after: Ticks = [((100, 100), 14), (postmaster, 1065)].into();
        assert_eq!(database_grown(&before, &after), 4 + 20 + 15);
        // Without the postmaster's figure, only the backends still alive count.
        let (before, after) = ([((100, 100), 10)].into(), [((100, 100), 14)].into());
        assert_eq!(database_grown(&before, &after), 4);
    }

    #[test]
    fn jiffies_divide_by_the_tick_rate_and_by_the_wall_time() {
        // The trap: 1000 jiffies over 10 s at 100 Hz is ONE core, not 10 (or 100).
        assert!((cores(1000, 100, 10.0) - 1.0).abs() < 1e-12);
        assert!((cores(108, 100, 1.0) - 1.08).abs() < 1e-12);
        assert!((cores(500, 250, 4.0) - 0.5).abs() < 1e-12);
        assert_eq!(cores(10, 0, 1.0), 0.0);
        assert_eq!(cores(10, 100, 0.0), 0.0);
        // 150 ticks at 100 Hz = 1.5 s of CPU over 300 requests = 5 ms each.
        assert!((ms_per_request(150, 100, 300) - 5.0).abs() < 1e-12);
    }

    #[test]
    fn busiest_thread_and_total_over_a_step() {
        let before: Ticks = [((1, 1), 100), ((1, 2), 50), ((1, 3), 7)].into();
        // Thread 3 ended; thread 4 started during the step.
        let after: Ticks = [((1, 1), 295), ((1, 2), 60), ((1, 4), 15)].into();
        let cpu = app_cpu(&before, &after, 100, 2.0);
        assert!((cpu.busiest_thread_share - 0.975).abs() < 1e-12, "{cpu:?}");
        assert!((cpu.cores - 1.10).abs() < 1e-12, "{cpu:?}");
        assert_eq!(cpu.threads, 3);
        // Thread 1 alone used half a core or more: 195 ticks over 2 s.
        assert_eq!(cpu.busy_threads, 1);
        assert_eq!(cpu.least_busy_thread_share, cpu.busiest_thread_share);
        // Two workers at 170 and 174 ticks over 2 s, the master idle.
        let after: Ticks = [((1, 1), 270), ((1, 2), 224), ((1, 3), 8)].into();
        let cpu = app_cpu(&before, &after, 100, 2.0);
        assert_eq!((cpu.busy_threads, cpu.least_busy_thread_share), (2, 0.85));
        assert_eq!(
            app_cpu(&before, &before, 100, 2.0).least_busy_thread_share,
            0.0
        );
    }
}
