//! Each ranked route's share of the work the logged traffic causes: of the figures the
//! table marks `shared`, of the statements' execution time and of the blocks they touched.
//! Pure.

use serde::Serialize;

use super::screen::Screened;
use crate::report::model::PerRequest;
use crate::report::model::figure::PerFigure;
use crate::report::model::keyed::{Keyed, Shared};

/// Each figure's share of the total over the valid routes, at the logged traffic mix;
/// null when no valid route has the figure, or the total is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Shares {
    /// Of each figure the table marks `shared` (statements, rows read, rows returned).
    #[serde(flatten)]
    pub figures: Keyed<f64, Shared>,
    pub db_time: Option<f64>,
    pub blocks: Option<f64>,
}

impl Shares {
    /// `f` of each value of `self` and of `other`; null where either is.
    fn zip(&self, other: &Shares, f: impl Fn(f64, f64) -> Option<f64>) -> Shares {
        let both = |a: Option<f64>, b: Option<f64>| a.zip(b).and_then(|(a, b)| f(a, b));
        Shares {
            figures: Keyed::from_fn(|x| both(self.figures.get(x), other.figures.get(x))),
            db_time: both(self.db_time, other.db_time),
            blocks: both(self.blocks, other.blocks),
        }
    }
}

/// What a share is taken of, per request: the `exact` window's figures, else the
/// `screened` ones (which have no rows read).
pub fn values(exact: Option<&PerRequest>, screened: Option<&Screened>) -> Shares {
    match (exact, screened) {
        (Some(p), _) => Shares {
            figures: Keyed::from_fn(|f| f.read(None, p)),
            db_time: p.db_time_ms,
            blocks: Some(p.blocks_hit + p.blocks_read),
        },
        (None, Some(s)) => Shares {
            figures: Keyed::new(PerFigure {
                statements: Some(s.statements),
                rows_returned: Some(s.rows_returned),
                ..PerFigure::default()
            }),
            db_time: Some(s.db_time_ms),
            blocks: Some(s.blocks),
        },
        (None, None) => Shares::default(),
    }
}

/// Each route's share of the total of each value, its `values` weighed by its requests.
/// What some route lacks (rows read, when a route was only screened) has no share.
pub fn of_total(values: &[(Shares, f64)]) -> Vec<Shares> {
    let zero = Some(0.0);
    let mut sums = Shares {
        figures: Keyed::from_fn(|_| zero),
        db_time: zero,
        blocks: zero,
    };
    for (value, requests) in values {
        sums = sums.zip(value, |sum, x| Some(sum + x * requests));
    }
    let share = |(value, requests): &(Shares, f64)| {
        value.zip(&sums, |x, sum| (sum > 0.0).then(|| x * requests / sum))
    };
    values.iter().map(share).collect()
}
