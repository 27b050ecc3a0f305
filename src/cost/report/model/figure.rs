//! The per-request figures a budget can limit, declared once: each arm's key (as in
//! pgcost.toml and JSON), label, unit, whether `--max-regression` gates it, and how to read
//! it off a report. Budgets of `check` and `survey`, and the views' columns, loop over it.

use super::Writes;
use super::figures::Figures;

/// One per-request figure a budget can limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Figure {
    Transactions,
    Statements,
    RowsRead,
    RowsReturned,
    P95Ms,
    RowsFetched,
    WalBytes,
    BlocksDirtied,
    TempBlocksWritten,
}

impl Figure {
    /// Every figure, the views' columns first.
    pub const ALL: [Figure; 9] = [
        Figure::Transactions,
        Figure::Statements,
        Figure::RowsRead,
        Figure::RowsReturned,
        Figure::P95Ms,
        Figure::RowsFetched,
        Figure::WalBytes,
        Figure::BlocksDirtied,
        Figure::TempBlocksWritten,
    ];

    /// The figures the views show as columns; the write side is not one (most endpoints
    /// write nothing).
    pub const COLUMNS: [Figure; 5] = [
        Figure::Transactions,
        Figure::Statements,
        Figure::RowsRead,
        Figure::RowsReturned,
        Figure::P95Ms,
    ];

    /// The snake_case key, as in pgcost.toml and JSON.
    pub fn key(self) -> &'static str {
        self.spec().0
    }

    /// The column heading in tables.
    pub fn label(self) -> &'static str {
        self.spec().1
    }

    /// The unit of one value, per request.
    pub fn unit(self) -> &'static str {
        self.spec().2
    }

    /// Whether `--max-regression` applies: the work per request, not the latency, which
    /// depends on the machine.
    pub fn gated_by_regression(self) -> bool {
        matches!(
            self,
            Figure::Statements | Figure::RowsRead | Figure::RowsReturned
        )
    }

    /// Whether one database of several has the figure of its own (latency is the
    /// request's).
    pub fn per_database(self) -> bool {
        self != Figure::P95Ms
    }

    /// What a missing value needs, as the unchecked budget line says.
    pub fn needs(self) -> &'static str {
        match self {
            Figure::WalBytes => "pg_stat_statements and PostgreSQL 13 or later",
            _ => "pg_stat_statements",
        }
    }

    /// The figure's value per request, from the headline figures and the write side;
    /// `None` where the report has none (no pg_stat_statements, no WAL before PG 13).
    pub fn read(self, figures: &Figures, writes: Option<&Writes>) -> Option<f64> {
        match self {
            Figure::Transactions => Some(figures.transactions),
            Figure::Statements => figures.statements,
            Figure::RowsRead => Some(figures.rows_read),
            Figure::RowsReturned => figures.rows_returned,
            Figure::P95Ms => Some(figures.p95_ms),
            Figure::RowsFetched => Some(figures.rows_fetched),
            Figure::WalBytes => writes.and_then(|w| w.wal_bytes),
            Figure::BlocksDirtied => writes.map(|w| w.blocks_dirtied),
            Figure::TempBlocksWritten => writes.map(|w| w.temp_blocks_written),
        }
    }

    /// The figure's value among the headline figures alone (the write side is `None`).
    pub fn of(self, figures: &Figures) -> Option<f64> {
        self.read(figures, None)
    }

    /// (key, label, unit).
    fn spec(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Figure::Transactions => ("transactions", "transactions", "transactions"),
            Figure::Statements => ("statements", "statements", "statements"),
            Figure::RowsRead => ("rows_read", "rows read", "rows"),
            Figure::RowsReturned => ("rows_returned", "rows returned", "rows"),
            Figure::P95Ms => ("p95_ms", "p95 ms", "ms"),
            Figure::RowsFetched => ("rows_fetched", "rows fetched", "rows"),
            Figure::WalBytes => ("wal_bytes", "WAL bytes", "bytes"),
            Figure::BlocksDirtied => ("blocks_dirtied", "blocks dirtied", "blocks"),
            Figure::TempBlocksWritten => ("temp_blocks_written", "temp blocks written", "blocks"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_columns_lead() {
        let keys: std::collections::BTreeSet<_> = Figure::ALL.iter().map(|f| f.key()).collect();
        assert_eq!(keys.len(), Figure::ALL.len());
        assert_eq!(Figure::ALL[..Figure::COLUMNS.len()], Figure::COLUMNS);
    }

    #[test]
    fn reads_the_headline_and_the_write_side() {
        let figures = Figures {
            transactions: 1.0,
            statements: Some(3.0),
            rows_read: 40.0,
            p95_ms: 2.5,
            ..Figures::default()
        };
        let writes = Writes {
            wal_bytes: None,
            blocks_dirtied: 2.0,
            ..Writes::default()
        };
        assert_eq!(Figure::Statements.of(&figures), Some(3.0));
        assert_eq!(Figure::RowsReturned.of(&figures), None);
        assert_eq!(Figure::BlocksDirtied.of(&figures), None);
        assert_eq!(
            Figure::BlocksDirtied.read(&figures, Some(&writes)),
            Some(2.0)
        );
        assert_eq!(Figure::WalBytes.read(&figures, Some(&writes)), None);
        assert_eq!(Figure::P95Ms.read(&figures, Some(&writes)), Some(2.5));
    }
}
