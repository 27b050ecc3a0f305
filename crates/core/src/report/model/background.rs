//! The report's `background` section (`--app-role`, `--control`): plain data, filled by
//! `background.rs`.

use serde::{Deserialize, Serialize};

use super::figure::{Figure, PerFigure};

/// The report's `background` section (docs/json.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Background {
    /// `--app-role`; empty when every role counts.
    pub app_roles: Vec<String>,
    /// Other roles' statements in the window, left out of the figures.
    pub other_roles: Vec<OtherRole>,
    /// Client backends that were other traffic in the window.
    pub other_backends: Vec<String>,
    /// The control window's length; `null` without `--control`.
    pub window_seconds: Option<f64>,
    /// The measured window's length (snapshot to snapshot, settle waits included).
    pub measured_window_seconds: f64,
    pub transactions_per_second: Option<f64>,
    pub rows_read_per_second: Option<f64>,
    pub statements_per_second: Option<f64>,
    /// Per request: the background expected over the measured window, taken out of
    /// `per_request`; `null` without `--control`.
    pub subtracted: Option<PerFigure<f64>>,
    /// Per request: how far each corrected figure may be from the truth.
    pub uncertainty: Option<PerFigure<f64>>,
    /// The subtracted background over the corrected signal.
    pub share: Option<PerFigure<f64>>,
    /// The background's period, read from the control window's one-second sub-windows of
    /// statements; `null` when it has none (or without `--control`).
    pub period_seconds: Option<f64>,
    /// `--max-background`, as a fraction.
    pub max_background: f64,
}

impl Background {
    /// The control window's rate of `figure`, per second; `None` for a figure it has no
    /// field for (JSON keeps one per subtracted figure).
    pub fn per_second(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Transactions => self.transactions_per_second,
            Figure::RowsRead => self.rows_read_per_second,
            Figure::Statements => self.statements_per_second,
            _ => None,
        }
    }

    /// Takes the control window's `rates`, each in its figure's field.
    pub fn set_per_second(&mut self, rates: PerFigure<f64>) {
        self.transactions_per_second = rates.transactions;
        self.rows_read_per_second = rates.rows_read;
        self.statements_per_second = rates.statements;
    }
}

/// One role outside `--app-role` whose statements ran in the window: left out of every
/// per-request figure, and shown here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OtherRole {
    pub role: String,
    /// Top-level calls.
    pub calls: i64,
    /// Rows those calls returned.
    pub rows: i64,
    /// Distinct `pg_stat_statements` entries.
    pub entries: usize,
}
