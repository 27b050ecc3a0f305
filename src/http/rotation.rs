//! The requests one burst sends: one pre-encoded request per URL, and which of them the
//! k-th request of the burst is. A single URL is the common case and costs one branch; a
//! survey's route sends its sample's URLs in a fixed rotation that gives each exactly its
//! count in a burst of the sample's size, and a near-proportional share in any prefix of
//! it (a warm-up, a probe). Each target may carry its own body: one route rotates over
//! several GraphQL documents, each encoded once.

use bytes::Bytes;
use reqwest::Url;

/// One URL to send and how many of the sample's requests are its own; with a body of its
/// own (a GraphQL operation), sent instead of the request's, with the Content-Type guessed
/// for it unless a header names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: Url,
    pub requests: u64,
    pub body: Option<Bytes>,
}

/// The encoded requests, and the order the burst's requests take them in.
#[derive(Debug, Clone)]
pub(crate) struct Rotation {
    requests: Vec<Vec<u8>>,
    /// The index into `requests` of request k is `schedule[k % len]`; empty when there is
    /// one request.
    schedule: Vec<u32>,
}

impl Rotation {
    /// One request, sent every time.
    pub(crate) fn single(bytes: Vec<u8>) -> Rotation {
        Rotation {
            requests: vec![bytes],
            schedule: Vec::new(),
        }
    }

    /// `requests[i]` sent `counts[i]` times in every `counts`-sum requests.
    pub(crate) fn weighted(requests: Vec<Vec<u8>>, counts: &[u64]) -> Rotation {
        if requests.len() <= 1 {
            return Rotation {
                requests,
                schedule: Vec::new(),
            };
        }
        Rotation {
            requests,
            schedule: schedule(counts),
        }
    }

    /// The bytes of the burst's request number `k` (from 0).
    #[inline]
    pub(crate) fn bytes(&self, k: u64) -> &[u8] {
        if self.schedule.is_empty() {
            return &self.requests[0];
        }
        let slot = (k % self.schedule.len() as u64) as usize;
        &self.requests[self.schedule[slot] as usize]
    }
}

/// A deterministic order holding index i exactly `counts[i]` times: the j-th occurrence of
/// i sits at (j + ½) / counts[i] of the way through, so that the indices interleave
/// evenly and any prefix holds each in near proportion. Ties go to the lower index.
pub(crate) fn schedule(counts: &[u64]) -> Vec<u32> {
    let total: u64 = counts.iter().sum();
    let mut slots: Vec<(u64, u64, u32)> = Vec::with_capacity(total as usize);
    for (i, &count) in counts.iter().enumerate() {
        // Position (2j + 1) / (2 count), compared exactly as (2j + 1) × L / (2 count) for
        // the common multiple L of the counts would be: as a pair, by cross products.
        for j in 0..count {
            slots.push((2 * j + 1, 2 * count, i as u32));
        }
    }
    slots.sort_by(|a, b| {
        (u128::from(a.0) * u128::from(b.1))
            .cmp(&(u128::from(b.0) * u128::from(a.1)))
            .then(a.2.cmp(&b.2))
    });
    slots.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts_in(order: &[u32], n: usize) -> Vec<u64> {
        let mut counts = vec![0; n];
        for &i in order {
            counts[i as usize] += 1;
        }
        counts
    }

    #[test]
    fn a_whole_rotation_holds_each_index_its_count() {
        let order = schedule(&[20, 13, 7]);
        assert_eq!(order.len(), 40);
        assert_eq!(counts_in(&order, 3), [20, 13, 7]);
        // The first requests already mix the URLs (a warm-up, a probe).
        assert_eq!(order[..3], [0, 1, 2]);
        // Every prefix is within one request of its proportional share.
        for n in 1..=40 {
            let prefix = counts_in(&order[..n], 3);
            for (got, count) in prefix.iter().zip([20.0, 13.0, 7.0]) {
                let due = count * n as f64 / 40.0;
                assert!((*got as f64 - due).abs() <= 1.0, "{n}: {prefix:?}");
            }
        }
    }

    #[test]
    fn request_k_takes_its_slot_and_wraps_around() {
        let requests = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        let rotation = Rotation::weighted(requests, &[1, 2, 1]);
        let sent: Vec<&[u8]> = (0..8).map(|k| rotation.bytes(k)).collect();
        assert_eq!(
            sent,
            [b"b", b"a", b"c", b"b", b"b", b"a", b"c", b"b"].map(|b| &b[..])
        );
        let single = Rotation::single(b"x".to_vec());
        assert_eq!((single.bytes(0), single.bytes(99)), (&b"x"[..], &b"x"[..]));
    }
}
