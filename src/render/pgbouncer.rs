//! The PgBouncer section of the table and Markdown views (`--pgbouncer`): its figures per
//! request as a grid, set beside Postgres's.

use super::sections::Grid;
use pgcost_core::report::Report;

/// PgBouncer's figures and Postgres's for the same requests; `None` without
/// `--pgbouncer`.
pub fn grid(report: &Report) -> Option<Grid> {
    let b = report.pgbouncer.as_ref()?;
    let p = &report.per_request;
    let postgres = |value: Option<f64>| value.map_or("-".into(), |v| format!("{v:.2}"));
    let rows = vec![
        vec![
            "transactions".into(),
            format!("{:.2}", b.transactions_per_request),
            postgres(Some(p.transactions)),
        ],
        vec![
            "queries (statements)".into(),
            format!("{:.2}", b.queries_per_request),
            postgres(p.statements),
        ],
        vec![
            "wait for a server, ms".into(),
            format!("{:.3}", b.wait_ms_per_request),
            "-".into(),
        ],
        vec![
            "clients waiting, peak".into(),
            b.max_cl_waiting.to_string(),
            "-".into(),
        ],
        vec![
            "own statements left out".into(),
            b.own_statements.to_string(),
            "-".into(),
        ],
    ];
    let pool = format!("PgBouncer ({})", b.database);
    Some(Grid::new(&["per request", &pool, "Postgres"], rows, 1..3))
}
