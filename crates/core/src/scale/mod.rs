//! `pgcost scale`'s model: one endpoint measured at several sizes of one parameter, and
//! each figure fitted to a line over the size (`fit.rs`): every figure per request, each
//! statement's calls and each table's rows read; and the findings its slopes prove.
//! Pure: built from the reports of the points.

pub mod fit;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::findings::{self, Finding, FindingKind, Saving, Thresholds};
use crate::report::model::figure::PerFigure;
use crate::report::model::figures::Figures;
use crate::report::model::invalid::Invalid;
use crate::report::{PerRequest, Report};
pub use fit::{Fit, fit};

/// Bumped whenever a key of the scale document is renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;
/// n_plus_one: a statement whose calls per request grow by at least this much per unit
/// of n runs once per item.
pub const N_PLUS_ONE_MIN_SLOPE: f64 = 0.5;
/// scan_grows_with_page: rows read grow more than this many times faster than rows
/// returned...
pub const SCAN_MIN_GROWTH_RATIO: f64 = 10.0;
/// ...and by at least this many rows per unit of n, so that noise never fires.
pub const SCAN_MIN_ROWS_READ_SLOPE: f64 = 1.0;
/// A slope budget holds while the slope is at most the limit plus this: per-request
/// figures are ratios of counters, and a flat figure's slope is 0 only up to rounding.
pub const SLOPE_TOLERANCE: f64 = 0.05;

/// One size of the parameter, measured as `pgcost audit` measures an endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    /// The parameter's value.
    pub n: u64,
    /// The URL measured, the template with `n` in place.
    pub url: String,
    /// Whether this point's measurement is valid.
    pub valid: bool,
    pub requests: u64,
    /// As in `pgcost audit`'s report.
    pub per_request: PerRequest,
}

/// The request's figures, each fitted over n; null without pg_stat_statements (or, for
/// WAL, before PG 13).
pub type Growth = PerFigure<Fit>;

/// One statement, matched across the points by its queryid (its text without one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementGrowth {
    /// Normalized text, as pg_stat_statements gives it.
    pub query: String,
    pub queryid: String,
    /// Calls per request at each point, in the points' order; 0 where it did not run.
    pub calls_per_request: Vec<f64>,
    /// Calls per request over n.
    #[serde(flatten)]
    pub fit: Fit,
    /// The database it ran in, when the request touches several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One table's rows read (sequential scans' rows plus index fetches) per request over n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableGrowth {
    /// `schema.table`.
    pub table: String,
    /// Rows read per request at each point; 0 where it was not read.
    pub rows_read_per_request: Vec<f64>,
    #[serde(flatten)]
    pub fit: Fit,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// The whole `pgcost scale` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScaleReport {
    pub schema_version: u32,
    /// Every point's measurement is valid.
    pub valid: bool,
    /// Why not, point by point.
    pub invalid_reasons: Vec<Invalid>,
    pub method: String,
    /// The URL template, with `{param}` where the values go.
    pub url: String,
    /// The parameter's name, `n` on the command line.
    pub param: String,
    /// In ascending n.
    pub points: Vec<Point>,
    /// The request's statements, rows read and rows returned per request, fitted over n.
    pub per_request: Growth,
    /// Steepest first.
    pub statements: Vec<StatementGrowth>,
    /// Steepest first.
    pub tables: Vec<TableGrowth>,
    /// What the slopes prove.
    pub findings: Vec<Finding>,
}

/// What was measured: the request's method, its URL template and parameter name.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub method: String,
    pub url: String,
    pub param: String,
}

impl ScaleReport {
    /// The sizes, as the fits take them.
    pub fn sizes(&self) -> Vec<f64> {
        self.points.iter().map(|p| p.n as f64).collect()
    }
}

/// Builds the document from each size and its report, in ascending n.
pub fn build(template: Template, measured: &[(u64, Report)]) -> ScaleReport {
    let xs: Vec<f64> = measured.iter().map(|(n, _)| *n as f64).collect();
    let reports: Vec<&Report> = measured.iter().map(|(_, r)| r).collect();
    let invalid_reasons = measured
        .iter()
        .flat_map(|(n, r)| {
            let param = &template.param;
            r.invalid_reasons
                .iter()
                .map(move |reason| reason.within(&format!("{param} = {n}")))
        })
        .collect();
    let figures: Vec<Figures> = reports.iter().map(|r| Figures::of(r)).collect();
    let per_request = Growth::from_fn(|figure| {
        let ys: Option<Vec<f64>> = figures.iter().map(|f| figure.of(f)).collect();
        ys.and_then(|ys| fit(&xs, &ys))
    });
    let statements = statements(&xs, &reports);
    let tables = tables(&xs, &reports);
    let largest = measured.last().map_or(0, |(n, _)| *n);
    let mut found: Vec<Finding> = (statements.iter())
        .filter_map(|s| n_plus_one(s, &template.param, largest))
        .chain(scan_grows(&per_request, &tables, &template.param, largest))
        .collect();
    // The tags its statement was sent with at the largest point, and their file:line.
    if let Some((_, last)) = measured.last() {
        findings::locate(&mut found, &last.statements, None);
    }
    findings::rank(&mut found);
    ScaleReport {
        schema_version: SCHEMA_VERSION,
        valid: reports.iter().all(|r| r.valid),
        invalid_reasons,
        method: template.method,
        url: template.url,
        param: template.param,
        points: (measured.iter())
            .map(|(n, r)| Point {
                n: *n,
                url: r.target.url.clone(),
                valid: r.valid,
                requests: r.load.requests,
                per_request: r.per_request.clone(),
            })
            .collect(),
        per_request,
        statements,
        tables,
        findings: found,
    }
}

/// A row's values at each point, 0 where the point lacks it, gathered under its key.
struct Series<T> {
    first: T,
    values: Vec<f64>,
}

fn gather<'a, T: Clone + 'a, K: Ord>(
    points: usize,
    rows: impl Iterator<Item = (usize, &'a T)>,
    key: impl Fn(&T) -> K,
    value: impl Fn(&T) -> f64,
) -> Vec<Series<T>> {
    let mut by_key: BTreeMap<K, Series<T>> = BTreeMap::new();
    for (i, row) in rows {
        let series = by_key.entry(key(row)).or_insert_with(|| Series {
            first: row.clone(),
            values: vec![0.0; points],
        });
        series.values[i] += value(row);
    }
    by_key.into_values().collect()
}

/// Steepest first, then the most called at the largest size.
fn steepest(a: &Fit, b: &Fit, a_last: f64, b_last: f64) -> std::cmp::Ordering {
    b.slope.total_cmp(&a.slope).then(b_last.total_cmp(&a_last))
}

fn statements(xs: &[f64], reports: &[&Report]) -> Vec<StatementGrowth> {
    let rows =
        (reports.iter().enumerate()).flat_map(|(i, r)| r.statements.iter().map(move |s| (i, s)));
    let key = |s: &crate::report::StatementRow| {
        let id = if s.queryid.is_empty() {
            s.query.clone()
        } else {
            s.queryid.clone()
        };
        (s.database.clone(), s.toplevel, id)
    };
    let mut out: Vec<StatementGrowth> = gather(xs.len(), rows, key, |s| s.calls_per_request)
        .into_iter()
        .filter_map(|series| {
            Some(StatementGrowth {
                fit: fit(xs, &series.values)?,
                query: series.first.query,
                queryid: series.first.queryid,
                calls_per_request: series.values,
                database: series.first.database,
            })
        })
        .collect();
    let last = |s: &StatementGrowth| s.calls_per_request.last().copied().unwrap_or(0.0);
    out.sort_by(|a, b| steepest(&a.fit, &b.fit, last(a), last(b)));
    out
}

fn tables(xs: &[f64], reports: &[&Report]) -> Vec<TableGrowth> {
    let rows = (reports.iter().enumerate()).flat_map(|(i, r)| r.tables.iter().map(move |t| (i, t)));
    let key = |t: &crate::report::TableRow| (t.database.clone(), t.table.clone());
    let read = |t: &crate::report::TableRow| t.seq_rows_read + t.idx_rows_fetched;
    let mut out: Vec<TableGrowth> = gather(xs.len(), rows, key, read)
        .into_iter()
        .filter_map(|series| {
            Some(TableGrowth {
                fit: fit(xs, &series.values)?,
                table: series.first.table,
                rows_read_per_request: series.values,
                database: series.first.database,
            })
        })
        .collect();
    let last = |t: &TableGrowth| t.rows_read_per_request.last().copied().unwrap_or(0.0);
    out.sort_by(|a, b| steepest(&a.fit, &b.fit, last(a), last(b)));
    out
}

/// A statement whose calls grow with n runs once per item: proven by the slope, however
/// few items the fixture's page holds.
fn n_plus_one(statement: &StatementGrowth, param: &str, largest: u64) -> Option<Finding> {
    let f = &statement.fit;
    if f.slope < N_PLUS_ONE_MIN_SLOPE {
        return None;
    }
    let calls = statement.calls_per_request.last().copied().unwrap_or(0.0);
    // Batched, the loop is one statement whatever n is.
    let saved = (calls - 1.0).max(0.0);
    let evidence = BTreeMap::from([
        ("slope".to_string(), f.slope),
        ("intercept".to_string(), f.intercept),
        ("r2".to_string(), f.r2),
        ("largest_n".to_string(), largest as f64),
        ("calls_per_request".to_string(), calls),
    ]);
    let suggestion = format!(
        "Its calls per request grow by {:.2} for each unit of {param}: one call per item \
         of the page, {calls:.0} at {param} = {largest}. {}",
        f.slope,
        findings::summary(FindingKind::NPlusOne)
    );
    Some(finding(
        FindingKind::NPlusOne,
        Some(statement.query.clone()),
        None,
        evidence,
        suggestion,
        Saving::of_statements(saved),
        statement.database.clone(),
    ))
}

/// Rows read that grow far faster than the rows returned: a scan whose cost follows the
/// page's size times the table's, which will not stay small.
fn scan_grows(
    growth: &Growth,
    tables: &[TableGrowth],
    param: &str,
    largest: u64,
) -> Option<Finding> {
    let (read, returned) = (growth.rows_read?, growth.rows_returned?);
    let returned_slope = returned.slope.max(0.0);
    if read.slope < SCAN_MIN_ROWS_READ_SLOPE || read.slope <= SCAN_MIN_GROWTH_RATIO * returned_slope
    {
        return None;
    }
    let table = tables.first().filter(|t| t.fit.slope > 0.0);
    let mut evidence = BTreeMap::from([
        ("rows_read_slope".to_string(), read.slope),
        ("rows_returned_slope".to_string(), returned.slope),
        ("largest_n".to_string(), largest as f64),
    ]);
    if returned_slope > 0.0 {
        evidence.insert("ratio".to_string(), read.slope / returned_slope);
    }
    if let Some(t) = table {
        evidence.insert("table_rows_read_slope".to_string(), t.fit.slope);
    }
    let suggestion = format!(
        "Rows read grow by {:.1} for each unit of {param}, rows returned by {:.1}: each \
         item of the page costs a scan. {}",
        read.slope,
        returned.slope,
        findings::summary(FindingKind::ScanGrowsWithPage)
    );
    let avoidable = (read.slope - returned_slope) * largest as f64;
    Some(finding(
        FindingKind::ScanGrowsWithPage,
        None,
        table.map(|t| t.table.clone()),
        evidence,
        suggestion,
        Saving::of_rows_read(avoidable),
        table.and_then(|t| t.database.clone()),
    ))
}

fn finding(
    kind: FindingKind,
    query: Option<String>,
    table: Option<String>,
    evidence: BTreeMap<String, f64>,
    suggestion: String,
    saves_per_request: Saving,
    database: Option<String>,
) -> Finding {
    let mut finding = Finding {
        kind,
        severity: findings::Severity::Low,
        query,
        table,
        evidence,
        suggestion,
        unparsed: false,
        avoidable_rows_per_request: saves_per_request.rows(),
        round_trips_per_request: saves_per_request.statements,
        plan: None,
        index: None,
        saves_per_request,
        database,
        locations: Vec::new(),
        tags: None,
    };
    finding.severity = findings::severity(&finding, &Thresholds::default());
    finding
}
