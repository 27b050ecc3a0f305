//! Screening: a route's figures read from pg_stat_statements alone, right around its burst
//! with no settle wait, the findings that need nothing else, and which routes the survey
//! then measures in exact windows (`--exact`). Pure: `measure::screen` reads the counters.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::findings::{Finding, FindingKind};
use crate::report::Report;

/// The share of the screened work (db time, and blocks) that the routes measured exactly
/// make up by default.
pub const AUTO_SHARE: f64 = 0.8;
/// The most routes `--exact auto` measures exactly.
pub const AUTO_CAP: usize = 5;

/// The finding kinds a screening can judge: they read statements alone. The others read
/// the table counters or `pg_stat_database` (a cache candidate needs the writes of its
/// tables, a heavy sequential scan the rows read), which only an exact window has.
pub const SCREENED_KINDS: &[FindingKind] = &[
    FindingKind::CollectionToBoolean,
    FindingKind::RepeatedStatement,
    FindingKind::NPlusOne,
    FindingKind::RoundTrips,
    FindingKind::CheckoutPing,
    FindingKind::TransactionAroundSingleRead,
    FindingKind::Overfetch,
    FindingKind::DuplicateLoad,
    FindingKind::SessionSetupPerCheckout,
    FindingKind::PlanningDominates,
    FindingKind::SpillsToDisk,
];

/// A route's figures per request from its screening burst: what pg_stat_statements
/// counted between a read right before the burst and one right after it. Exact for the
/// app's statements in that time, other traffic of the app's role included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Screened {
    /// Top-level statements (round trips), BEGIN and COMMIT included.
    pub statements: f64,
    /// Rows sent back to the app.
    pub rows_returned: f64,
    /// Shared blocks the statements hit or read (`shared_blks_hit + shared_blks_read`).
    pub blocks: f64,
    /// Execution time of the top-level statements, in ms.
    pub db_time_ms: f64,
}

impl Screened {
    /// The screened figures of a report built from a screening window (statement figures
    /// only); `None` when pg_stat_statements was not read.
    pub fn of(report: &Report) -> Option<Screened> {
        let p = &report.per_request;
        let top = report.statements.iter().filter(|s| s.toplevel);
        Some(Screened {
            statements: p.statements?,
            rows_returned: p.rows_returned?,
            blocks: top.map(|s| s.blocks_per_request).sum(),
            db_time_ms: p.db_time_ms?,
        })
    }
}

/// The findings of a screening report that it can judge ([`SCREENED_KINDS`]).
pub fn screened_findings(findings: Vec<Finding>) -> Vec<Finding> {
    (findings.into_iter())
        .filter(|f| SCREENED_KINDS.contains(&f.kind))
        .collect()
}

/// Which screened routes `pgcost survey` measures in exact windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Exact {
    /// The fewest top routes that make up [`AUTO_SHARE`] of the screened db time, with
    /// those that make up as much of the blocks, at most [`AUTO_CAP`].
    #[default]
    Auto,
    /// The top N by screened db time (0: screening only).
    Top(usize),
    /// Every route: no screening.
    All,
}

impl FromStr for Exact {
    type Err = String;

    fn from_str(text: &str) -> Result<Exact, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Exact::Auto),
            "all" => Ok(Exact::All),
            n => n
                .parse()
                .map(Exact::Top)
                .map_err(|_| format!("{text:?} is not a number of routes, `auto` or `all`")),
        }
    }
}

/// `exact` in pgcost.toml's `[survey]`: a number of routes, `"auto"` or `"all"`.
impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Exact, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Key {
            Count(usize),
            Word(String),
        }
        match Key::deserialize(deserializer)? {
            Key::Count(n) => Ok(Exact::Top(n)),
            Key::Word(word) => word.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// One screened route as the choice reads it: its screened figures (none when the
/// screening was not valid) and its logged requests.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub screened: Option<&'a Screened>,
    pub log_requests: u64,
}

/// The indices of the routes to measure exactly, most screened db time first. Routes
/// without valid screened figures, or that ran no statement, are never chosen: an exact
/// window would not be valid either, or would have nothing to count.
pub fn choose(candidates: &[Candidate], exact: Exact) -> Vec<usize> {
    let weight = |c: &Candidate, f: fn(&Screened) -> f64| {
        c.screened.map_or(0.0, |s| f(s) * c.log_requests as f64)
    };
    let db_time = |s: &Screened| s.db_time_ms;
    let blocks = |s: &Screened| s.blocks;
    let mut order: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].screened.is_some_and(|s| s.statements > 0.0))
        .collect();
    order.sort_by(|&a, &b| {
        (weight(&candidates[b], db_time).total_cmp(&weight(&candidates[a], db_time)))
            .then(weight(&candidates[b], blocks).total_cmp(&weight(&candidates[a], blocks)))
            .then(a.cmp(&b))
    });
    match exact {
        Exact::All => order,
        Exact::Top(n) => order.into_iter().take(n).collect(),
        Exact::Auto => {
            let by_time = covering(&order, |i| weight(&candidates[i], db_time));
            let by_blocks = covering(&order, |i| weight(&candidates[i], blocks));
            (order.iter().copied())
                .filter(|i| by_time.contains(i) || by_blocks.contains(i))
                .take(AUTO_CAP)
                .collect()
        }
    }
}

/// The fewest routes, taken from the most weighty down, whose weights make up
/// [`AUTO_SHARE`] of the total (none when the total is 0).
fn covering(order: &[usize], weight: impl Fn(usize) -> f64) -> Vec<usize> {
    let total: f64 = order.iter().map(|&i| weight(i)).sum();
    let mut by_weight = order.to_vec();
    by_weight.sort_by(|&a, &b| weight(b).total_cmp(&weight(a)).then(a.cmp(&b)));
    let mut covered = 0.0;
    let mut chosen = Vec::new();
    for i in by_weight {
        if total <= 0.0 || covered >= AUTO_SHARE * total {
            break;
        }
        covered += weight(i);
        chosen.push(i);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screened(db_time_ms: f64, blocks: f64) -> Screened {
        Screened {
            statements: 2.0,
            rows_returned: 1.0,
            blocks,
            db_time_ms,
        }
    }

    #[test]
    fn exact_parses_auto_all_and_counts() {
        assert_eq!("auto".parse(), Ok(Exact::Auto));
        assert_eq!("ALL".parse(), Ok(Exact::All));
        assert_eq!("3".parse(), Ok(Exact::Top(3)));
        assert_eq!("0".parse(), Ok(Exact::Top(0)));
        assert!("-1".parse::<Exact>().unwrap_err().contains("auto"));
    }

    #[test]
    fn auto_takes_the_routes_that_make_up_most_of_the_time_or_the_blocks() {
        // Weighted by their logged requests: db time 50, 30, 15, 5; blocks 10, 10, 70, 10.
        let s = [
            screened(5.0, 1.0),
            screened(3.0, 1.0),
            screened(1.5, 7.0),
            screened(0.5, 1.0),
        ];
        let candidates: Vec<Candidate> = (s.iter())
            .map(|s| Candidate {
                screened: Some(s),
                log_requests: 10,
            })
            .collect();
        // 80% of the time: routes 0 and 1 (80 of 100); of the blocks: route 2, then one
        // of the 10s (the first by index): 0.
        assert_eq!(choose(&candidates, Exact::Auto), [0, 1, 2]);
        assert_eq!(choose(&candidates, Exact::Top(2)), [0, 1]);
        assert_eq!(choose(&candidates, Exact::All), [0, 1, 2, 3]);
        assert!(choose(&candidates, Exact::Top(0)).is_empty());
    }

    #[test]
    fn auto_is_capped_and_leaves_out_what_an_exact_window_could_not_use() {
        let even = screened(1.0, 1.0);
        let idle = Screened {
            statements: 0.0,
            ..screened(0.0, 0.0)
        };
        let mut candidates: Vec<Candidate> = (0..10)
            .map(|_| Candidate {
                screened: Some(&even),
                log_requests: 1,
            })
            .collect();
        assert_eq!(choose(&candidates, Exact::Auto).len(), AUTO_CAP);
        candidates[0].screened = None;
        candidates[1].screened = Some(&idle);
        let all = choose(&candidates, Exact::All);
        assert_eq!(all, (2..10).collect::<Vec<_>>());
    }
}
