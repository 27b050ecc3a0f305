//! One database of a request measured across several (`report.nodes`): plain data.

use serde::{Deserialize, Serialize};

use super::{PerRequest, StatementRow, TableRow};

/// One database of the request, with its own share of the cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Node {
    /// The database name: how statements, tables and findings name their database, and
    /// the key of `[endpoint.budget.nodes.NAME]` in pgcost.toml.
    pub name: String,
    /// `postgres://user@host:port/dbname`, never with the password.
    pub database: String,
    /// `primary`: a database the app writes to (`--db`); `replica`: a hot standby it
    /// reads from (`--replica`).
    pub role: String,
    pub per_request: PerRequest,
    /// This database's statements, most expensive first.
    pub statements: Vec<StatementRow>,
    /// This database's tables whose counters moved.
    pub tables: Vec<TableRow>,
}
