//! The set-up new connections run (`report.setup`): plain data; `crate::setup` recognises it.

use serde::{Deserialize, Serialize};

/// What the new connections' set-up cost, per request and per new connection.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Setup {
    /// New connections per request (`pg_stat_database.sessions`).
    pub new_connections_per_request: f64,
    /// Top-level set-up statements per request, and per new connection.
    pub statements_per_request: f64,
    pub statements_per_connection: f64,
    /// Rows the set-up statements sent back (`pg_stat_statements.rows`).
    pub rows_returned_per_request: f64,
    pub rows_returned_per_connection: f64,
    /// Rows read outside the app's tables: the database's rows read (`tup_returned`) less
    /// the sequential rows read and index rows fetched of the tables in `tables`. On a new
    /// backend these are its catalog reads, its set-up's and its first plans'.
    pub rows_read_per_request: f64,
    pub rows_read_per_connection: f64,
    /// The set-up's part of the request's statements and rows read, from 0 to 1.
    pub share_of_statements: f64,
    pub share_of_rows_read: f64,
    /// The set-up statements, in the report's order.
    pub statements: Vec<SetupStatement>,
}

impl Setup {
    /// Its session statements and transaction control per request: all but its catalog
    /// reads, which pg_stat_statements counts as no utility statements.
    pub fn utility_per_request(&self) -> f64 {
        (self.statements.iter())
            .filter(|s| s.kind != SetupKind::Catalog)
            .map(|s| s.calls_per_request)
            .sum()
    }
}

/// One statement of the set-up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SetupStatement {
    /// Normalized text, as pg_stat_statements shows it.
    pub query: String,
    pub calls_per_request: f64,
    pub calls_per_connection: f64,
    /// `session` (SET, RESET, SHOW, DISCARD), `transaction` (BEGIN, COMMIT) or `catalog`.
    pub kind: SetupKind,
}

/// Why a statement counts as set-up.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    PartialEq,
    Eq,
    schemars::JsonSchema,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SetupKind {
    Session,
    Transaction,
    Catalog,
}

impl SetupKind {
    /// The snake_case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}
