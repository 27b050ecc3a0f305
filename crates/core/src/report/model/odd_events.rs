//! The one-offs of a window as plain data, for the notes and the views to name: which
//! counter moved, by how many events beyond a whole number per request, and how far apart
//! the windows were. `crate::one_off` finds them.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::figure::Figure;
use super::keyed::{Headline, Keyed};

/// Which counter moved.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A table's sequential scans (`seq_scan`).
    SeqScan,
    /// A table's index scans (`idx_scan`).
    IdxScan,
    /// Rows a table had inserted, updated or deleted.
    RowsInserted,
    RowsUpdated,
    RowsDeleted,
    /// A statement's calls.
    Calls,
    /// The database's transactions (`xact_commit + xact_rollback`).
    Transactions,
    /// Scans of a system catalog or catalog index.
    CatalogScans,
}

impl EventKind {
    fn noun(&self) -> &'static str {
        match self {
            EventKind::SeqScan => "sequential scan(s)",
            EventKind::IdxScan => "index scan(s)",
            EventKind::RowsInserted => "row(s) inserted",
            EventKind::RowsUpdated => "row(s) updated",
            EventKind::RowsDeleted => "row(s) deleted",
            EventKind::Calls => "call(s)",
            EventKind::Transactions => "transaction(s)",
            EventKind::CatalogScans => "catalog scan(s)",
        }
    }
}

/// Events of one counter beyond (or short of) a whole number per request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct OddEvents {
    pub kind: EventKind,
    /// The table (`schema.table`) or the statement's text; empty for transactions.
    pub of: String,
    /// The whole number per request that the other requests show.
    pub whole_per_request: i64,
    /// Events beyond that (positive) or short of it (negative), over the window.
    pub events: i64,
    /// The rows the odd scans read, when the other requests do not scan the table that
    /// way at all (so every such scan in the window is an odd one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<i64>,
}

impl fmt::Display for OddEvents {
    /// `1 sequential scan(s) of public.grants more than 0 per request (863 rows)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (count, side) = match self.events > 0 {
            true => (self.events, "more"),
            false => (-self.events, "fewer"),
        };
        write!(f, "{count} {}", self.kind.noun())?;
        if !self.of.is_empty() {
            write!(f, " of {}", self.of)?;
        }
        write!(f, " {side} than {} per request", self.whole_per_request)?;
        match self.rows {
            Some(rows) => write!(f, " ({rows} rows)"),
            None => Ok(()),
        }
    }
}

/// How far apart the windows with one-offs were, per request: half the range of each
/// figure over them. 0 where every window agreed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Spread")]
pub struct WindowSpread {
    #[serde(flatten)]
    pub figures: Keyed<f64, Headline>,
}

impl WindowSpread {
    /// True when every window gave the same figures.
    pub fn is_zero(&self) -> bool {
        self.figures.shown().all(|(_, v)| v.unwrap_or(0.0) == 0.0)
    }
}

/// The one-offs as one line: `1 sequential scan(s) of ... ; 1 index scan(s) of ...`.
pub fn describe(odd: &[OddEvents], requests: u64) -> String {
    let list: Vec<String> = odd.iter().map(ToString::to_string).collect();
    format!("{} in {requests} requests", list.join("; "))
}

/// The app's own rare work, kept in the figures (the note `rare_events`): the events of
/// the last window, and how far apart the last two windows were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RareWork {
    /// Windows measured, the kept one included.
    pub windows: u32,
    pub requests: u64,
    pub events: Vec<OddEvents>,
    /// Rows the odd scans read, per request, where known.
    pub rows_read_per_request: f64,
    /// How far apart the last two windows' figures were, per request.
    pub spread: WindowSpread,
    /// How often it came, per minute of the windows that had it (the most events of one
    /// counter in each, over their seconds): a clock-driven event (a token touched once a
    /// minute, a heartbeat) comes back at its own rate in any window long enough. Null
    /// where the windows' lengths are not known.
    #[serde(default)]
    pub per_minute: Option<f64>,
    /// What the rare work cost over the kept window, taken out of every per-request figure
    /// and reported here instead. Null in reports written before it was taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_out: Option<RareCost>,
}

/// The rare work's own cost over the kept window: each figure's total there and per minute
/// of the window, with the ± of one event more or fewer (work on a clock comes a whole
/// number of times into a window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RareCost {
    /// The kept window's length.
    pub window_seconds: f64,
    /// The fewest events of one counter in it, the times the rare work came at the most
    /// (the ± is one of them).
    pub events: i64,
    /// Each headline figure's; those of pg_stat_statements are null without it.
    #[serde(flatten)]
    pub figures: Keyed<RareFigure, Headline>,
}

/// One figure of the rare work: its total over the kept window, and per minute with its ±.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RareFigure {
    pub total: i64,
    pub per_minute: f64,
    pub plus_minus_per_minute: f64,
}

impl RareFigure {
    /// `total` over `seconds` in which `events` events came: its rate, ± one event's share.
    pub fn of(total: i64, seconds: f64, events: i64) -> RareFigure {
        let per_minute = total as f64 * 60.0 / seconds;
        RareFigure {
            total,
            per_minute,
            plus_minus_per_minute: per_minute / events.max(1) as f64,
        }
    }

    fn text(&self, noun: &str) -> String {
        format!(
            "{:.1} ± {:.1} {noun}",
            self.per_minute, self.plus_minus_per_minute
        )
    }
}

impl RareCost {
    /// `5.2 ± 0.4 transactions, 5.2 ± 0.4 statements and 31.0 ± 2.5 rows read a minute`.
    pub fn text(&self) -> String {
        let figures = self.figures.shown();
        let mut parts: Vec<String> = figures
            .filter_map(|(figure, value)| Some(value?.text(figure.label())))
            .collect();
        let last = parts.pop().unwrap_or_default();
        match parts.is_empty() {
            true => format!("{last} a minute"),
            false => format!("{} and {last} a minute", parts.join(", ")),
        }
    }
}

impl RareWork {
    /// What the few requests did, and how far apart the last two windows were.
    pub fn message(&self) -> String {
        let rows = match self.rows_read_per_request > 0.0 {
            true => format!(
                "; rows read include {:.3} per request from it",
                self.rows_read_per_request
            ),
            false => String::new(),
        };
        let spread = |figure: Figure| self.spread.figures.get(figure).unwrap_or(0.0);
        let apart = match self.spread.is_zero() {
            true => "both gave the same figures".to_string(),
            false => format!(
                "their figures were up to ±{:.3} transactions, ±{:.3} statements and ±{:.3} \
                 rows read per request apart",
                spread(Figure::Transactions),
                spread(Figure::Statements),
                spread(Figure::RowsRead)
            ),
        };
        let rate = match self.per_minute {
            Some(rate) => format!(", about {rate:.1} a minute"),
            None => String::new(),
        };
        let kept = match &self.taken_out {
            Some(cost) => format!(
                "taken out of the per-request figures: {} over the kept window's {:.1} s",
                cost.text(),
                cost.window_seconds
            ),
            None => format!("kept in the figures{rows}"),
        };
        format!(
            "in each of the last 2 of {} windows, a few requests did what the others did not, \
             in the same counters ({}{rate}): the app's own rare work (work on a clock comes \
             back in any window long enough), {kept}; {apart}",
            self.windows,
            describe(&self.events, self.requests)
        )
    }
}
