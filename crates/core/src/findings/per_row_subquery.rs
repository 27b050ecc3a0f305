//! `per_row_subquery`: a statement whose plan runs a subquery once per row of the outer
//! query (a SubPlan, as ORM annotations and computed counters write), judged from the plan
//! that ran: one finding per statement, with each table the SubPlans scan and the rows it
//! adds. Without a plan it says nothing: a table scanned many times per call is also what a
//! nested loop, or a table named twice in one statement, looks like in the counters.

use super::{
    Finding, FindingKind, RanPlan, Saving, Statement, Thresholds, amount, evidence, quoted,
};
use crate::report::model::TableRow;

/// One table a statement's SubPlans scan, as the counters saw it.
struct PerRowTable<'a> {
    table: &'a TableRow,
    /// Scans (sequential and index) per request.
    scans: f64,
    /// Calls per request of the statements that read the table.
    calls: f64,
    /// Rows read per request that reading it once per call would save.
    saved: f64,
}

impl PerRowTable<'_> {
    fn rows_read(&self) -> f64 {
        self.table.seq_rows_read + self.table.idx_rows_fetched
    }
}

/// The tables of `plan`'s per-row SubPlans that the counters show scanned many times per
/// call of their readers (`per_row_min_scans_per_request`, `per_row_min_scans_per_call`).
fn per_row_tables<'a>(
    s: &Statement<'a>,
    plan: &RanPlan,
    all: &[Statement],
    t: &Thresholds,
) -> Vec<PerRowTable<'a>> {
    let mut tables = Vec::new();
    for table in (s.tables.iter()).filter(|table| plan.per_row_tables.contains(&table.table)) {
        let scans = table.seq_scans + table.idx_scans;
        let calls: f64 = (all.iter())
            .filter(|r| r.tables.iter().any(|touched| touched.table == table.table))
            .map(|r| r.calls_per_request)
            .sum();
        if scans < t.per_row_min_scans_per_request
            || calls <= 0.0
            || scans < t.per_row_min_scans_per_call * calls
        {
            continue;
        }
        // Rewritten as a join or a GROUP BY, the table is scanned about once per call:
        // each sequential scan beyond that reads the whole table again.
        let saved = match table.seq_scans > calls {
            true => table.seq_rows_read * (1.0 - calls / table.seq_scans),
            false => 0.0,
        };
        tables.push(PerRowTable {
            table,
            scans,
            calls,
            saved,
        });
    }
    tables.sort_by(|a, b| b.rows_read().total_cmp(&a.rows_read()));
    tables
}

pub(super) fn per_row_subquery(
    s: &Statement,
    plan: &RanPlan,
    all: &[Statement],
    t: &Thresholds,
) -> Option<Finding> {
    let tables = per_row_tables(s, plan, all, t);
    let first = tables.first()?;
    let saved: f64 = tables.iter().map(|p| p.saved).sum();
    let mut figures = vec![
        ("scans_per_request", first.scans),
        ("seq_scans_per_request", first.table.seq_scans),
        ("idx_scans_per_request", first.table.idx_scans),
        ("reader_calls_per_request", first.calls),
        ("scans_per_call", first.scans / first.calls),
        ("rows_read_per_request", first.rows_read()),
        ("pages", first.table.pages as f64),
        ("tables", tables.len() as f64),
    ];
    let keys: Vec<(String, f64)> = (tables.iter())
        .flat_map(|p| {
            [
                (format!("scans_per_request.{}", p.table.table), p.scans),
                (
                    format!("rows_read_per_request.{}", p.table.table),
                    p.rows_read(),
                ),
            ]
        })
        .collect();
    figures.extend(keys.iter().map(|(k, v)| (k.as_str(), *v)));
    Some(Finding {
        query: Some(s.query.to_string()),
        table: Some(first.table.table.clone()),
        evidence: evidence(&figures),
        unparsed: !s.shape.parsed,
        avoidable_rows_per_request: saved,
        saves_per_request: Saving::of_rows_read(saved),
        ..Finding::new(FindingKind::PerRowSubquery, suggestion(s, &tables))
    })
}

fn suggestion(s: &Statement, tables: &[PerRowTable]) -> String {
    let scanned: Vec<String> = (tables.iter())
        .map(|p| {
            format!(
                "{} ({} pages): scanned {} per request, {} per call, {} rows read",
                p.table.table,
                p.table.pages,
                super::counted(p.scans, "time", "times"),
                amount(p.scans / p.calls),
                amount(p.rows_read()),
            )
        })
        .collect();
    format!(
        "The plan of this statement runs a subquery once per row of the outer query (a \
         SubPlan), as ORM annotations and computed counters do:\n\n    {}\n\n\
         Its SubPlans scan:\n  - {}\n\n\
         Rewrite the subquery as a join to a grouped derived table, so each table is read \
         once per call:\n\n    \
         SELECT o.*, coalesce(c.n, 0) FROM <outer> o LEFT JOIN (SELECT key, count(*) AS n \
         FROM {} GROUP BY key) c ON c.key = o.id\n\n\
         or LEFT JOIN LATERAL with an index on the correlated column, or keep the figure in \
         a counter column.",
        quoted(s.query),
        scanned.join("\n  - "),
        tables[0].table.table,
    )
}
