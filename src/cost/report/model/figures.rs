//! The headline figures of one report, read off it in one place: what the
//! unauthenticated baseline sets side by side, and what budgets and previous runs compare.

use serde::{Deserialize, Serialize};

use super::{Load, PerRequest, Report};

/// Per request, except `rps` and the latencies. `None` where the report has no value (no
/// pg_stat_statements).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Figures {
    /// Requests per second over the burst.
    pub rps: f64,
    /// Median latency in ms.
    pub latency_p50_ms: f64,
    /// Commits plus rollbacks per request.
    pub transactions: f64,
    /// Top-level statements per request; null without pg_stat_statements.
    pub statements: Option<f64>,
    /// `tup_returned` per request.
    pub rows_read: f64,
    /// Rows returned to the app per request. Left out of the baseline's JSON (schema 1),
    /// which compares the five figures above.
    #[serde(skip)]
    pub rows_returned: Option<f64>,
    /// 95th-percentile latency in ms; left out of the baseline's JSON too.
    #[serde(skip)]
    pub p95_ms: f64,
    /// `tup_fetched` per request; left out of the baseline's JSON too.
    #[serde(skip)]
    pub rows_fetched: f64,
}

impl Figures {
    pub fn of(report: &Report) -> Figures {
        Figures::read(&report.load, &report.per_request)
    }

    /// The per-request figures alone, without a burst's rate and latencies (a survey
    /// route's).
    pub fn per_request(per_request: &PerRequest) -> Figures {
        Figures {
            transactions: per_request.transactions,
            statements: per_request.statements,
            rows_read: per_request.rows_read,
            rows_returned: per_request.rows_returned,
            rows_fetched: per_request.rows_fetched,
            ..Figures::default()
        }
    }

    /// The figures of a report still being built.
    pub(crate) fn read(load: &Load, per_request: &PerRequest) -> Figures {
        Figures {
            rps: load.rps,
            latency_p50_ms: load.latency_ms.p50,
            p95_ms: load.latency_ms.p95,
            ..Figures::per_request(per_request)
        }
    }

    /// Only the figures the baseline's JSON carries, the others empty: a report then reads
    /// back from its JSON as it was.
    pub fn compared(self) -> Figures {
        Figures {
            rows_returned: None,
            p95_ms: 0.0,
            rows_fetched: 0.0,
            ..self
        }
    }

    /// `self - other`, figure by figure.
    pub fn minus(&self, other: &Figures) -> Figures {
        Figures {
            rps: self.rps - other.rps,
            latency_p50_ms: self.latency_p50_ms - other.latency_p50_ms,
            transactions: self.transactions - other.transactions,
            statements: self.statements.zip(other.statements).map(|(a, b)| a - b),
            rows_read: self.rows_read - other.rows_read,
            rows_returned: (self.rows_returned.zip(other.rows_returned)).map(|(a, b)| a - b),
            p95_ms: self.p95_ms - other.p95_ms,
            rows_fetched: self.rows_fetched - other.rows_fetched,
        }
    }
}
