//! What the rules of findings read off a measurement: its parts, borrowed, not the whole
//! report. A leaf: it imports the model alone.

use std::collections::BTreeMap;

use crate::report::model::{PerRequest, Pool, Report, StatementRow, TableRow};

/// What the plan of one statement says, as the rules read it (`crate::plan` reads it off
/// EXPLAIN's JSON): the plan that ran, the custom one where it was explained as well.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RanPlan {
    /// The tables scanned under a SubPlan the executor runs once per row of the outer
    /// query (neither hashed nor an InitPlan, both run once), in plan order.
    pub per_row_tables: Vec<String>,
    /// The tables read by a sequential scan, in plan order.
    pub seq_scanned: Vec<String>,
    /// The tables scanned sequentially on the inner side of a Nested Loop: read again for
    /// every row of its outer side.
    pub loop_rescanned: Vec<String>,
}

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
    /// The plans fetched for the statements, by normalized text; `None` when none were
    /// fetched (plans off, or before they are): the rules that need a plan say nothing.
    pub plans: Option<&'a BTreeMap<String, RanPlan>>,
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
            plans: None,
        }
    }

    /// The same parts, judged by these plans.
    pub fn with_plans(self, plans: Option<&'a BTreeMap<String, RanPlan>>) -> Inputs<'a> {
        Inputs { plans, ..self }
    }

    /// The plan of `query`, when plans were fetched and it has one.
    pub fn plan(&self, query: &str) -> Option<&'a RanPlan> {
        self.plans.and_then(|plans| plans.get(query))
    }
}
