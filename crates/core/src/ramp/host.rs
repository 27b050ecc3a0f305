//! This machine's CPU over a step, from `/proc/stat` and `/proc/loadavg`: how busy its
//! CPUs were, how much of that the ramp's own processes (pgcost, the `--pid` app,
//! Postgres's backends) do not explain, and whether that other work saturated it.

use serde::{Deserialize, Serialize};

/// Busy CPUs at or above this share of the machine's...
pub const BUSY_SHARE: f64 = 0.9;
/// ...with at least this share of its CPUs used by other work: the machine is saturated,
/// and the steps measure it, not the app or the database.
pub const OTHERS_SHARE: f64 = 0.25;

/// Clock ticks of all CPUs together (the `cpu` line of `/proc/stat`): busy (user, nice,
/// system, irq, softirq, steal) and in all; and the CPUs (`cpuN` lines).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub busy: u64,
    pub total: u64,
    pub cpus: u32,
}

/// The CPU times of `/proc/stat`'s text; `None` when it has no `cpu` line.
pub fn parse_stat(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let field = |i: usize| ticks.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l[3..].starts_with(|c: char| c.is_ascii_digit()))
        .count() as u32;
    Some(CpuTimes {
        busy,
        total: busy + field(3) + field(4),
        cpus: cpus.max(1),
    })
}

/// The 1-minute load average of `/proc/loadavg`'s text.
pub fn parse_load_average(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// This machine's CPU over one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Host {
    /// CPUs of the machine (`cpuN` lines of `/proc/stat`).
    pub cpus: u32,
    /// Cores busy over the step, every process of the machine counted.
    pub busy_cores: f64,
    /// Of them, the cores that neither pgcost, nor the `--pid` processes, nor the target's
    /// backends used: other work (the app itself when it runs here without `--pid`).
    pub others_cores: f64,
    /// The 1-minute load average at the end of the step (context: it lags by a minute and
    /// counts the ramp's own processes, so the rule does not read it).
    pub load_average: Option<f64>,
    /// Busy at [`BUSY_SHARE`] of its CPUs or more, [`OTHERS_SHARE`] of them by other work.
    pub saturated: bool,
}

/// The machine over a step, from its CPU times `before` and `after`, the cores the ramp's
/// own processes used over it (`ours`), and the load average at its end; `None` when no
/// tick passed.
pub fn over_step(
    before: &CpuTimes,
    after: &CpuTimes,
    ours: f64,
    load_average: Option<f64>,
) -> Option<Host> {
    let total = after.total.checked_sub(before.total).filter(|&t| t > 0)?;
    let cpus = after.cpus.max(1);
    let busy = after.busy.saturating_sub(before.busy) as f64 / total as f64 * cpus as f64;
    let others = (busy - ours).max(0.0);
    Some(Host {
        cpus,
        busy_cores: busy,
        others_cores: others,
        load_average,
        saturated: busy >= BUSY_SHARE * cpus as f64 && others >= OTHERS_SHARE * cpus as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  4705 150 1120 16250 520 0 24 3 0 0\n\
                        cpu0 2355 75 560 8125 260 0 12 2 0 0\n\
                        cpu1 2350 75 560 8125 260 0 12 1 0 0\n\
                        intr 1234 0\nctxt 99\ncpus_allowed 3\n";

    #[test]
    fn busy_ticks_leave_out_idle_and_iowait() {
        let t = parse_stat(STAT).unwrap();
        assert_eq!(t.busy, 4705 + 150 + 1120 + 24 + 3);
        assert_eq!(t.total, t.busy + 16250 + 520);
        assert_eq!(t.cpus, 2);
        assert_eq!(parse_stat("intr 1\n"), None);
        assert_eq!(
            parse_load_average("5.31 3.02 1.20 7/512 4242\n"),
            Some(5.31)
        );
        assert_eq!(parse_load_average(""), None);
    }

    fn times(busy: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            busy,
            total: busy + idle,
            cpus: 2,
        }
    }

    #[test]
    fn a_machine_busy_with_other_work_is_saturated() {
        let before = times(1000, 1000);
        // 980 of 1000 ticks busy on 2 CPUs: 1.96 cores.
        let after = times(1980, 1020);
        let hogged = over_step(&before, &after, 1.2, Some(6.5)).unwrap();
        assert!((hogged.busy_cores - 1.96).abs() < 1e-12, "{hogged:?}");
        assert!((hogged.others_cores - 0.76).abs() < 1e-12, "{hogged:?}");
        assert!(hogged.saturated);
        // The same busy machine, all of it the ramp's own processes: the app's wall (or
        // the database's), not a saturated machine.
        assert!(!over_step(&before, &after, 1.7, None).unwrap().saturated);
        // Other work, but CPUs to spare.
        let idle = over_step(&before, &times(1600, 1400), 0.2, None).unwrap();
        assert!(!idle.saturated, "{idle:?}");
        assert_eq!(over_step(&before, &before, 0.0, None), None, "no tick");
    }
}
