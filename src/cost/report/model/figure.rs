//! The per-request figures a budget can limit, declared once: each arm's key (as in
//! pgcost.toml and JSON), label, unit, whether `--max-regression` gates it, and how to read
//! it off a report. Budgets of `check` and `survey`, and the views' columns, loop over it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Writes;
use super::figures::Figures;

/// How a figure is read: from the headline figures and the write side, `None` where the
/// report has none.
type Read = fn(&Figures, Option<&Writes>) -> Option<f64>;

/// The figures, declared once. Each entry: the doc and serde attributes of its budget key,
/// its arm of [`Figure`], its key (the budget's field and the JSON key), its label, its
/// unit, and how it is read. `with_figures!(m)` hands the list to the macro `m`: here it
/// makes [`Figure`] and [`PerFigure`], and `cost/check/budget.rs` makes a `Budget` field and
/// its `Budget::limit` arm of each entry. A new figure is one entry (and, if the report does
/// not carry it yet, its field in [`Figures`] or [`Writes`]).
macro_rules! with_figures {
    ($then:ident) => {
        $then! {
            /// Most transactions (commits + rollbacks) per request.
            #[serde(default)]
            Transactions transactions "transactions" "transactions"
                |f, _| Some(f.transactions);
            /// Most statements (round trips, BEGIN and COMMIT included) per request.
            #[serde(default)]
            Statements statements "statements" "statements" |f, _| f.statements;
            /// Most rows read (`tup_returned`) per request.
            #[serde(default)]
            RowsRead rows_read "rows read" "rows" |f, _| Some(f.rows_read);
            /// Most rows returned to the app per request.
            #[serde(default)]
            RowsReturned rows_returned "rows returned" "rows" |f, _| f.rows_returned;
            /// Highest 95th-percentile latency, in ms.
            #[serde(default)]
            P95Ms p95_ms "p95 ms" "ms" |f, _| Some(f.p95_ms);
            /// Most rows fetched (`tup_fetched`: rows an index scan or a bitmap heap scan read
            /// from the table) per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            RowsFetched rows_fetched "rows fetched" "rows" |f, _| Some(f.rows_fetched);
            /// Most bytes of WAL per request (PG 13+).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            WalBytes wal_bytes "WAL bytes" "bytes" |_, w| w.and_then(|w| w.wal_bytes);
            /// Most shared buffers dirtied per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            BlocksDirtied blocks_dirtied "blocks dirtied" "blocks"
                |_, w| w.map(|w| w.blocks_dirtied);
            /// Most shared buffers the statements had to write out themselves per request
            /// (`shared_blks_written`: no free buffer was clean).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            BlocksWritten blocks_written "blocks written" "blocks"
                |_, w| w.map(|w| w.blocks_written);
            /// Most temp-file blocks (8 kB) written per request: `0` forbids a spill.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            TempBlocksWritten temp_blocks_written "temp blocks written" "blocks"
                |_, w| w.map(|w| w.temp_blocks_written);
        }
    };
}
pub(crate) use with_figures;

/// `Figure`, its list and its key, label, unit and reading, from [`with_figures!`].
macro_rules! declare_figures {
    ($($(#[$meta:meta])* $arm:ident $key:ident $label:literal $unit:literal $read:expr;)*) => {
        /// One per-request figure a budget can limit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Figure {
            $($arm,)*
        }

        impl Figure {
            /// Every figure, the views' columns first.
            pub const ALL: [Figure; [$(stringify!($arm)),*].len()] = [$(Figure::$arm),*];

            /// (key, label, unit).
            fn spec(self) -> (&'static str, &'static str, &'static str) {
                match self {
                    $(Figure::$arm => (stringify!($key), $label, $unit),)*
                }
            }

            /// How the figure is read off a report.
            fn reader(self) -> Read {
                match self {
                    $(Figure::$arm => $read,)*
                }
            }
        }

        /// A value of each figure, `None` where unset, keyed as in pgcost.toml and JSON:
        /// `PerFigure<f64>` is a set of limits per request (`[survey.budget]`),
        /// `PerFigure<Fit>` the request's figures fitted over a parameter (`scale`).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields, bound(deserialize = "T: Deserialize<'de>"))]
        pub struct PerFigure<T> {
            $($(#[$meta])* pub $key: Option<T>,)*
        }

        impl<T: Copy> PerFigure<T> {
            /// Each figure's value from `value`.
            pub fn from_fn(mut value: impl FnMut(Figure) -> Option<T>) -> PerFigure<T> {
                PerFigure {
                    $($key: value(Figure::$arm),)*
                }
            }

            /// The value of `figure`, if set.
            pub fn get(&self, figure: Figure) -> Option<T> {
                match figure {
                    $(Figure::$arm => self.$key,)*
                }
            }
        }
    };
}
with_figures!(declare_figures);

impl Figure {
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
        self.reader()(figures, writes)
    }

    /// The figure's value among the headline figures alone (the write side is `None`).
    pub fn of(self, figures: &Figures) -> Option<f64> {
        self.read(figures, None)
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
