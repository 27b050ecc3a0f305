//! The database side of a step, from `pg_stat_activity` samples: connected and active
//! client backends, idle-in-transaction ones, and the wait-event profile of the active
//! samples.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One sample of the target's client backends.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    pub connected: u32,
    pub active: u32,
    pub idle_in_transaction: u32,
    /// Active backends by what they were waiting for.
    pub waits: WaitCounts,
}

/// Active backends by wait-event type; `on_cpu` is no wait at all.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WaitCounts {
    pub on_cpu: u32,
    pub lock: u32,
    pub lwlock: u32,
    pub io: u32,
    pub ipc: u32,
    pub client: u32,
    pub other: u32,
}

impl WaitCounts {
    /// Counts one active backend by its `wait_event_type` (`None`: running, on CPU).
    pub fn add(&mut self, wait_event_type: Option<&str>) {
        match wait_event_type {
            None => self.on_cpu += 1,
            Some("Lock") => self.lock += 1,
            Some("LWLock") => self.lwlock += 1,
            Some("IO") => self.io += 1,
            Some("IPC") => self.ipc += 1,
            Some("Client") => self.client += 1,
            Some(_) => self.other += 1,
        }
    }

    fn plus(self, o: WaitCounts) -> WaitCounts {
        WaitCounts {
            on_cpu: self.on_cpu + o.on_cpu,
            lock: self.lock + o.lock,
            lwlock: self.lwlock + o.lwlock,
            io: self.io + o.io,
            ipc: self.ipc + o.ipc,
            client: self.client + o.client,
            other: self.other + o.other,
        }
    }

    fn total(self) -> u32 {
        self.on_cpu + self.lock + self.lwlock + self.io + self.ipc + self.client + self.other
    }
}

/// Shares of the active samples (0 to 1; all 0 when nothing was active).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WaitShares {
    pub on_cpu: f64,
    pub lock: f64,
    pub lwlock: f64,
    pub io: f64,
    pub ipc: f64,
    pub client: f64,
    pub other: f64,
}

impl WaitShares {
    /// Lock, LWLock and IO together: the waits that say the database is the wall.
    pub fn database_waits(&self) -> f64 {
        self.lock + self.lwlock + self.io
    }

    /// The largest share and its name (`on_cpu` included); `None` when nothing was active.
    pub fn top(&self) -> Option<(&'static str, f64)> {
        let all = [
            ("on_cpu", self.on_cpu),
            ("Lock", self.lock),
            ("LWLock", self.lwlock),
            ("IO", self.io),
            ("IPC", self.ipc),
            ("Client", self.client),
            ("other", self.other),
        ];
        let best = all
            .into_iter()
            .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
        (best.1 > 0.0).then_some(best)
    }
}

/// What a step's samples say, as the report shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivitySummary {
    pub samples: u32,
    pub connected_backends_max: u32,
    pub active_backends_mean: f64,
    pub active_backends_max: u32,
    pub idle_in_transaction_mean: f64,
    pub waits: WaitShares,
}

/// Summarises a step's samples.
pub fn summarise(samples: &[Sample]) -> ActivitySummary {
    let n = samples.len() as f64;
    let mean = |f: fn(&Sample) -> u32| {
        if samples.is_empty() {
            0.0
        } else {
            samples.iter().map(|s| f(s) as f64).sum::<f64>() / n
        }
    };
    let waits = samples
        .iter()
        .fold(WaitCounts::default(), |acc, s| acc.plus(s.waits));
    let total = waits.total() as f64;
    let share = |count: u32| {
        if total > 0.0 {
            count as f64 / total
        } else {
            0.0
        }
    };
    ActivitySummary {
        samples: samples.len() as u32,
        connected_backends_max: samples.iter().map(|s| s.connected).max().unwrap_or(0),
        active_backends_mean: mean(|s| s.active),
        active_backends_max: samples.iter().map(|s| s.active).max().unwrap_or(0),
        idle_in_transaction_mean: mean(|s| s.idle_in_transaction),
        waits: WaitShares {
            on_cpu: share(waits.on_cpu),
            lock: share(waits.lock),
            lwlock: share(waits.lwlock),
            io: share(waits.io),
            ipc: share(waits.ipc),
            client: share(waits.client),
            other: share(waits.other),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(connected: u32, waits: &[Option<&str>], idle_in_tx: u32) -> Sample {
        let mut counts = WaitCounts::default();
        waits.iter().for_each(|w| counts.add(*w));
        Sample {
            connected,
            active: waits.len() as u32,
            idle_in_transaction: idle_in_tx,
            waits: counts,
        }
    }

    #[test]
    fn wait_shares_are_of_active_samples() {
        let samples = [
            sample(4, &[None, Some("Lock"), Some("Lock"), Some("Timeout")], 0),
            sample(
                4,
                &[Some("Lock"), Some("IO"), Some("Client"), Some("LWLock")],
                1,
            ),
            sample(4, &[], 2),
            sample(3, &[Some("IPC"), None], 1),
        ];
        let s = summarise(&samples);
        assert_eq!(s.samples, 4);
        assert_eq!(s.connected_backends_max, 4);
        assert_eq!(s.active_backends_max, 4);
        assert!((s.active_backends_mean - 2.5).abs() < 1e-12);
        assert!((s.idle_in_transaction_mean - 1.0).abs() < 1e-12);
        // 10 active samples: 3 Lock, 2 on CPU, 1 each of IO, LWLock, IPC, Client, other.
        assert!((s.waits.lock - 0.3).abs() < 1e-12, "{:?}", s.waits);
        assert!((s.waits.on_cpu - 0.2).abs() < 1e-12);
        assert!((s.waits.other - 0.1).abs() < 1e-12);
        assert!((s.waits.database_waits() - 0.5).abs() < 1e-12);
        assert_eq!(s.waits.top(), Some(("Lock", 0.3)));
    }

    #[test]
    fn no_samples_no_shares() {
        let s = summarise(&[]);
        assert_eq!(s, ActivitySummary::default());
        assert_eq!(s.waits.top(), None);
    }
}
