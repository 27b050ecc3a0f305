//! What the rules of findings read off a measurement: its parts, borrowed, not the whole
//! report. A leaf: it imports the model alone.

use crate::cost::report::model::{PerRequest, Pool, Report, StatementRow, TableRow};

/// The parts of a measurement the rules read.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The request's figures: statements, new sessions and the set-up of new connections.
    pub per_request: &'a PerRequest,
    /// Every statement row, nested and utility ones included.
    pub statements: &'a [StatementRow],
    /// The tables the request touched.
    pub tables: &'a [TableRow],
    /// Backends at the peak against `max_connections`.
    pub pool: &'a Pool,
    /// The endpoint's HTTP method (a read that writes is named for GET and HEAD alone).
    pub method: &'a str,
    /// Items in the burst's first 2xx JSON response, when it had a list.
    pub response_items: Option<u64>,
}

impl<'a> Inputs<'a> {
    /// The parts of `report` the rules read.
    pub fn of(report: &'a Report) -> Inputs<'a> {
        Inputs {
            per_request: &report.per_request,
            statements: &report.statements,
            tables: &report.tables,
            pool: &report.pool,
            method: &report.target.method,
            response_items: report.load.response_items,
        }
    }
}
