//! CPU as this host's kernel counts it: clock ticks of threads and processes under
//! `/proc`, the tick rate, pgcost's own CPU time, and the whole machine's (`/proc/stat`,
//! `/proc/loadavg`). Only reads; the arithmetic is in `pgcost_core::ramp::cpu` and
//! `pgcost_core::ramp::host`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use pgcost_core::ramp::cpu::{self, Ticks};
use pgcost_core::ramp::host::{self, CpuTimes};

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on most Linux systems).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as u64 } else { 100 }
}

/// The cores this process may run on.
pub fn usable_cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

/// pgcost's own user + system CPU time so far, in seconds.
pub fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// This machine's CPU times so far (`/proc/stat`); `None` where it cannot be read.
pub fn host_cpu_times() -> Option<CpuTimes> {
    host::parse_stat(&fs::read_to_string("/proc/stat").ok()?)
}

/// This machine's 1-minute load average (`/proc/loadavg`).
pub fn load_average() -> Option<f64> {
    host::parse_load_average(&fs::read_to_string("/proc/loadavg").ok()?)
}

/// `pids` and every process descended from them (a pre-fork server's workers).
pub fn with_descendants(pids: &[i32]) -> BTreeSet<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let parent = fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| cpu::stat_parent(&stat));
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut all = BTreeSet::new();
    let mut queue: Vec<i32> = pids.to_vec();
    while let Some(pid) = queue.pop() {
        if all.insert(pid) {
            queue.extend(children.get(&pid).into_iter().flatten());
        }
    }
    all
}

/// Ticks of every thread of `pids`, keyed by (pid, tid).
pub fn thread_ticks(pids: &BTreeSet<i32>) -> Ticks {
    let mut ticks = Ticks::new();
    for &pid in pids {
        let tasks = fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let stat = fs::read_to_string(task.path().join("stat")).ok();
            if let Some(t) = stat.as_deref().and_then(cpu::stat_ticks) {
                ticks.insert((pid, tid), t);
            }
        }
    }
    ticks
}

/// Whether `pid` is a Postgres process of this host.
fn is_postgres(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres")
}

/// The postmaster of this host that `backend` (a backend's pid, as Postgres reports it)
/// was forked by; `None` when that pid is not a Postgres process here.
pub fn postmaster_of(backend: i32) -> Option<i32> {
    if !is_postgres(backend) {
        return None;
    }
    let stat = fs::read_to_string(format!("/proc/{backend}/stat")).ok()?;
    cpu::stat_parent(&stat).filter(|&parent| is_postgres(parent))
}

/// Ticks of the Postgres processes among `pids`, keyed by (pid, pid), and with a
/// `postmaster`, its own ticks and those of the children it has reaped (keyed by
/// (postmaster, [`cpu::REAPED_TID`])): a backend that lives for one request is gone by the
/// next read, and only the postmaster's reaped total still holds its CPU. `None` when
/// none of them is a Postgres process of this host (the server runs elsewhere).
pub fn postgres_ticks(pids: &BTreeSet<i32>, postmaster: Option<i32>) -> Option<Ticks> {
    // The backends first: one reaped between the two reads is counted twice rather than
    // not at all, and the error is one backend's ticks at most.
    let mut ticks: Ticks = pids
        .iter()
        .filter(|&&pid| is_postgres(pid))
        .filter_map(|&pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some(((pid, pid), cpu::stat_ticks(&stat)?))
        })
        .collect();
    let postmaster_stat = postmaster
        .and_then(|pid| Some((pid, fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)));
    if let Some((pid, stat)) = postmaster_stat {
        ticks.extend(cpu::stat_ticks(&stat).map(|t| ((pid, pid), t)));
        ticks.extend(cpu::stat_reaped_ticks(&stat).map(|t| ((pid, cpu::REAPED_TID), t)));
    }
    (!ticks.is_empty()).then_some(ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_threads_are_read() {
        let me = std::process::id() as i32;
        let tree = with_descendants(&[me]);
        assert!(tree.contains(&me));
        let ticks = thread_ticks(&tree);
        assert!(
            ticks.keys().any(|(pid, tid)| *pid == me && *tid == me),
            "{ticks:?}"
        );
        assert!(ticks_per_second() > 0);
        assert!(own_cpu_seconds() > 0.0);
        assert_eq!(
            postgres_ticks(&[me].into(), None),
            None,
            "not a postgres process"
        );
        assert_eq!(postmaster_of(me), None, "not a postgres process");
        let times = host_cpu_times().unwrap();
        assert!(
            times.busy > 0 && times.total > times.busy && times.cpus >= 1,
            "{times:?}"
        );
        assert!(load_average().is_some_and(|l| l >= 0.0));
    }
}
