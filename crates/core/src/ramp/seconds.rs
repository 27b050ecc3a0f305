//! A step's one-second samples (its responses, the growth of the target's statement
//! execution time, and the `pg_stat_activity` samples of each whole second) and the
//! spread each figure the verdict judges gets from them (docs/ramp.md, "How sure the
//! verdict is").

use serde::{Deserialize, Serialize};

use crate::ramp::activity::{Sample, summarise};
use crate::spread::{self, Spread};

/// What the sampler saw in one second of a step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampledSecond {
    pub samples: Vec<Sample>,
    /// The growth of the target's statement execution time over the second, in ms; `None`
    /// when it was not read at both ends.
    pub exec_time_ms: Option<f64>,
}

/// The spread of a step's judged figures over its whole seconds. Each is `None` with
/// fewer than 5 seconds that have it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepSpread {
    /// Whole seconds of the measured load: a last partial second (the drain of a timed
    /// step) is left out.
    pub seconds: u32,
    /// Responses that came in within each whole second.
    pub rps_per_second: Vec<u64>,
    /// Of the responses per second.
    pub rps: Option<Spread>,
    /// Of each second's statement execution time divided by its responses (ms).
    pub db_time_ms: Option<Spread>,
    /// Of each second's mean active backends.
    pub active_backends: Option<Spread>,
    /// Of each second's share of Lock, LWLock and IO waits among its active samples.
    pub database_waits: Option<Spread>,
}

/// A last second this much short of whole still counts as whole: a timed step's clock
/// starts a moment before its load does, and an open-model step's last request is due a
/// moment before its time is up.
pub const SHORT_SECOND: f64 = 0.05;

/// The spread of a step whose load lasted `seconds` (its drain left out when it is
/// known), from its `responses` per second since the load began and what the sampler saw
/// each second.
pub fn of(responses: &[u64], seconds: f64, sampled: &[SampledSecond]) -> StepSpread {
    let whole = (seconds + SHORT_SECOND).max(0.0).floor() as usize;
    let per_second: Vec<u64> = (0..whole)
        .map(|i| responses.get(i).copied().unwrap_or(0))
        .collect();
    let sampled = &sampled[..whole.min(sampled.len())];
    let db_time: Vec<f64> = (per_second.iter().zip(sampled))
        .filter(|(n, _)| **n > 0)
        .filter_map(|(n, second)| Some(second.exec_time_ms? / *n as f64))
        .collect();
    let activity: Vec<_> = (sampled.iter())
        .filter(|second| !second.samples.is_empty())
        .map(|second| summarise(&second.samples))
        .collect();
    let active: Vec<f64> = activity.iter().map(|a| a.active_backends_mean).collect();
    let waits: Vec<f64> = (activity.iter())
        .filter(|a| a.active_backends_max > 0)
        .map(|a| a.waits.database_waits())
        .collect();
    let rps: Vec<f64> = per_second.iter().map(|&n| n as f64).collect();
    StepSpread {
        seconds: whole as u32,
        rps: spread::of(&rps),
        rps_per_second: per_second,
        db_time_ms: spread::of(&db_time),
        active_backends: spread::of(&active),
        database_waits: spread::of(&waits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ramp::activity::WaitCounts;

    fn second(active: u32, lock: u32, exec_time_ms: Option<f64>) -> SampledSecond {
        let sample = Sample {
            connected: 4,
            active,
            idle_in_transaction: 0,
            waits: WaitCounts {
                on_cpu: active - lock,
                lock,
                ..Default::default()
            },
        };
        SampledSecond {
            samples: vec![sample; 50],
            exec_time_ms,
        }
    }

    #[test]
    fn whole_seconds_only_and_each_figure_from_its_own_seconds() {
        // 7.4 s: the eighth second (the drain) is partial and left out; the driver saw no
        // response in the fifth.
        let responses = [100, 102, 98, 100, 0, 101, 99, 3];
        let sampled = [
            second(2, 1, Some(500.0)),
            second(2, 1, Some(510.0)),
            second(2, 0, None),
            second(0, 0, Some(0.0)),
            second(4, 2, Some(0.0)),
            second(4, 4, Some(505.0)),
            second(4, 2, Some(495.0)),
            second(4, 4, Some(9.0)),
        ];
        let s = of(&responses, 7.4, &sampled);
        assert_eq!(s.seconds, 7);
        assert_eq!(s.rps_per_second, [100, 102, 98, 100, 0, 101, 99]);
        let rps = s.rps.unwrap();
        assert_eq!(rps.samples, 7);
        // Mean 600 / 7; each second's deviation from it squared, over 6.
        let mean = 600.0 / 7.0;
        let squares: f64 = (responses[..7].iter())
            .map(|&n| (n as f64 - mean).powi(2))
            .sum();
        assert!((rps.sd - (squares / 6.0).sqrt()).abs() < 1e-9, "{rps:?}");
        // db time per request: 5.0, 5.0, (no read), 0.0, (no response), 5.0 and 5.0 ms.
        let db = s.db_time_ms.unwrap();
        assert_eq!(db.samples, 5, "{db:?}");
        assert!((db.sd - 5.0f64.sqrt()).abs() < 1e-9, "{db:?}");
        // Active backends in every sampled second; waits only where some were active.
        assert_eq!(s.active_backends.unwrap().samples, 7);
        let waits = s.database_waits.unwrap();
        assert_eq!(waits.samples, 6, "{waits:?}");
    }

    #[test]
    fn a_step_under_five_seconds_has_no_spread() {
        let sampled = vec![second(2, 0, Some(1.0)); 3];
        let s = of(&[300, 290, 10], 2.1, &sampled);
        assert_eq!(s.seconds, 2);
        // 4.97 s is five seconds, the last one a little short.
        assert_eq!(of(&[100; 5], 4.97, &[]).seconds, 5);
        assert_eq!(of(&[100; 5], 4.9, &[]).rps, None);
        assert_eq!((s.rps, s.db_time_ms, s.active_backends), (None, None, None));
        assert_eq!(of(&[], 0.4, &[]), StepSpread::default());
    }
}
