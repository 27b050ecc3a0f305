//! The headline figures of one report, read off it through the figure table: what the
//! unauthenticated baseline sets side by side, and what budgets and previous runs compare.

use serde::{Deserialize, Serialize};

use super::figure::{Figure, PerFigure};
use super::keyed::{Compared, Keyed};
use super::{Load, PerRequest, Report};

/// Per request, except `rps` and the latencies. `None` where the report has no value (no
/// pg_stat_statements).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    /// Requests per second over the burst.
    pub rps: f64,
    /// Median latency in ms.
    pub latency_p50_ms: f64,
    /// Each figure of the table, the p95 latency in ms. The JSON carries those the
    /// baseline compares, under their keys.
    #[serde(flatten)]
    pub per_figure: Keyed<f64, Compared>,
}

impl Figures {
    pub fn of(report: &Report) -> Figures {
        Figures::read(&report.load, &report.per_request)
    }

    /// The per-request figures alone, without a burst's rate and latencies (a survey
    /// route's).
    pub fn per_request(per_request: &PerRequest) -> Figures {
        Figures::read(None, per_request)
    }

    /// The figures of a report still being built, with the burst's rate and latencies
    /// where there is a `load`.
    pub(crate) fn read<'a>(load: impl Into<Option<&'a Load>>, per_request: &PerRequest) -> Figures {
        let load = load.into();
        Figures {
            rps: load.map_or(0.0, |load| load.rps),
            latency_p50_ms: load.map_or(0.0, |load| load.latency_ms.p50),
            per_figure: Keyed::new(PerFigure::from_fn(|f| f.read(load, per_request))),
        }
    }

    /// Only the figures the baseline compares, the others unset: a report then reads back
    /// from its JSON as it was.
    pub fn compared(self) -> Figures {
        let compared = |f: Figure| self.per_figure.get(f).filter(|_| f.spec().baseline);
        Figures {
            per_figure: Keyed::new(PerFigure::from_fn(compared)),
            ..self
        }
    }

    /// `self - other`, figure by figure; unset where either is.
    pub fn minus(&self, other: &Figures) -> Figures {
        let (a, b) = (self.per_figure, other.per_figure);
        Figures {
            rps: self.rps - other.rps,
            latency_p50_ms: self.latency_p50_ms - other.latency_p50_ms,
            per_figure: Keyed::new(PerFigure::from_fn(|f| {
                a.get(f).zip(b.get(f)).map(|(a, b)| a - b)
            })),
        }
    }
}
