//! The per-request figures a budget can limit, declared once in one table: each entry's
//! key (as in pgcost.toml and JSON) and its [`FigureSpec`]. Budgets of `check` and `survey`,
//! the slope limits and the views' figure columns loop over it; the write side per request
//! ([`Writes`]) lives beside it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::counters::WriteCounters;
use super::figures::Figures;

/// How a figure is read: from the headline figures and the write side, `None` where the
/// report has none.
type Read = fn(&Figures, Option<&Writes>) -> Option<f64>;

/// One figure's entry in [`with_figures!`]: everything the budgets, the verdict and the
/// views ask of it.
#[derive(Debug, Clone, Copy)]
pub struct FigureSpec {
    /// The snake_case key, as in pgcost.toml and JSON: the field's name as written.
    pub key: &'static str,
    /// The column heading in tables.
    pub label: &'static str,
    /// The unit of one value, per request.
    pub unit: &'static str,
    /// What the views say a value is counted in: `per request`, or a latency's own unit.
    pub counted: &'static str,
    /// Its name in a chart's title, where the label does not say what it is (`p95 ms`).
    pub chart_name: Option<&'static str>,
    /// Whether `--max-regression` applies: the work per request, not the latency, which
    /// depends on the machine.
    pub gated: bool,
    /// Whether one database of several has the figure of its own (latency is the request's).
    pub per_database: bool,
    /// What a missing value needs, as the unchecked budget line says.
    pub needs: &'static str,
    /// The budget key limiting its slope over `scale = {...}`, if it has one.
    pub slope: Option<&'static str>,
    /// What the per-request grid says it means.
    pub meaning: &'static str,
    /// Whether it is on the write side ([`Writes`]: the statements' buffer and temp-file I/O).
    pub write_side: bool,
    /// How it is read off a report.
    pub read: Read,
}

/// What an entry of [`with_figures!`] does not say.
const UNSAID: FigureSpec = FigureSpec {
    key: "",
    label: "",
    unit: "",
    counted: "per request",
    chart_name: None,
    gated: false,
    per_database: true,
    needs: "pg_stat_statements",
    slope: None,
    meaning: "",
    write_side: false,
    read: |_, _| None,
};

/// The figures, declared once, one entry each: the doc and serde attributes of its budget
/// key, the field as written (its key in pgcost.toml and JSON), its arm of [`Figure`], and
/// its [`FigureSpec`]. `with_figures!(m)` hands the list to the macro `m`: here it makes
/// [`Figure`], its spec and [`PerFigure`], and `cost/check/budget.rs` makes a `Budget` field
/// and its `Budget::limit` arm of each entry. A new figure is one entry (and, if the report
/// does not carry it yet, its field in [`Figures`] or [`Writes`]).
macro_rules! with_figures {
    ($then:ident) => {
        $then! {
            /// Most transactions (commits + rollbacks) per request.
            #[serde(default)]
            pub transactions: Transactions {
                label: "transactions", unit: "transactions", meaning: "commits + rollbacks",
                read: |f, _| Some(f.transactions),
            }
            /// Most statements (round trips, BEGIN and COMMIT included) per request.
            #[serde(default)]
            pub statements: Statements {
                label: "statements", unit: "statements", gated: true,
                meaning: "round trips, BEGIN/COMMIT included",
                slope: Some("statements_slope"), read: |f, _| f.statements,
            }
            /// Most rows read (`tup_returned`) per request.
            #[serde(default)]
            pub rows_read: RowsRead {
                label: "rows read", unit: "rows", gated: true,
                meaning: "tup_returned: scanned rows + index entries",
                slope: Some("rows_read_slope"), read: |f, _| Some(f.rows_read),
            }
            /// Most rows returned to the app per request.
            #[serde(default)]
            pub rows_returned: RowsReturned {
                label: "rows returned", unit: "rows", gated: true,
                meaning: "rows sent back to the app",
                slope: Some("rows_returned_slope"), read: |f, _| f.rows_returned,
            }
            /// Highest 95th-percentile latency, in ms.
            #[serde(default)]
            pub p95_ms: P95Ms {
                label: "p95 ms", unit: "ms", counted: "ms", chart_name: Some("p95 latency"),
                per_database: false,
                read: |f, _| Some(f.p95_ms),
            }
            /// Most rows fetched (`tup_fetched`: rows an index scan or a bitmap heap scan read
            /// from the table) per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rows_fetched: RowsFetched {
                label: "rows fetched", unit: "rows", read: |f, _| Some(f.rows_fetched),
                meaning: "tup_fetched: rows fetched by index scans",
            }
            /// Most bytes of WAL per request (PG 13+).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub wal_bytes: WalBytes {
                label: "WAL bytes", unit: "bytes", write_side: true,
                meaning: "write-ahead log generated",
                needs: "pg_stat_statements and PostgreSQL 13 or later",
                read: |_, w| w.and_then(|w| w.wal_bytes),
            }
            /// Most shared buffers dirtied per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub blocks_dirtied: BlocksDirtied {
                label: "blocks dirtied", unit: "blocks", write_side: true,
                meaning: "shared buffers changed",
                read: |_, w| w.map(|w| w.blocks_dirtied),
            }
            /// Most shared buffers the statements had to write out themselves per request
            /// (`shared_blks_written`: no free buffer was clean).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub blocks_written: BlocksWritten {
                label: "blocks written", unit: "blocks", write_side: true,
                meaning: "buffers written out by the statements",
                read: |_, w| w.map(|w| w.blocks_written),
            }
            /// Most temp-file blocks (8 kB) written per request: `0` forbids a spill.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub temp_blocks_written: TempBlocksWritten {
                label: "temp blocks written", unit: "blocks", write_side: true,
                meaning: "8 kB temp-file blocks: sorts and hashes over work_mem",
                read: |_, w| w.map(|w| w.temp_blocks_written),
            }
            /// Most temp-file blocks (8 kB) read back per request: a spilled sort or hash reads
            /// what it wrote, once per pass.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub temp_blocks_read: TempBlocksRead {
                label: "temp blocks read", unit: "blocks", write_side: true,
                meaning: "8 kB temp-file blocks read back by those sorts and hashes",
                read: |_, w| w.map(|w| w.temp_blocks_read),
            }
        }
    };
}
pub(crate) use with_figures;

/// `Figure`, its list and its spec, and `PerFigure`, from [`with_figures!`].
macro_rules! declare_figures {
    ($($(#[$meta:meta])* pub $key:ident: $arm:ident { $($spec:ident: $value:expr),* $(,)? })*) => {
        /// One per-request figure a budget can limit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Figure {
            $($arm,)*
        }

        impl Figure {
            /// Every figure, the views' columns first.
            pub const ALL: [Figure; [$(stringify!($arm)),*].len()] = [$(Figure::$arm),*];

            /// Its entry of [`with_figures!`].
            pub fn spec(self) -> FigureSpec {
                match self {
                    $(Figure::$arm => FigureSpec {
                        key: stringify!($key),
                        $($spec: $value,)*
                        ..UNSAID
                    },)*
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
        self.spec().key
    }

    /// The column heading in tables.
    pub fn label(self) -> &'static str {
        self.spec().label
    }

    /// The unit of one value, per request.
    pub fn unit(self) -> &'static str {
        self.spec().unit
    }

    /// The figure's value per request, from the headline figures and the write side;
    /// `None` where the report has none (no pg_stat_statements, no WAL before PG 13).
    pub fn read(self, figures: &Figures, writes: Option<&Writes>) -> Option<f64> {
        (self.spec().read)(figures, writes)
    }

    /// The figure's value among the headline figures alone (the write side is `None`).
    pub fn of(self, figures: &Figures) -> Option<f64> {
        self.read(figures, None)
    }
}

/// What statements wrote, per request (`pg_stat_statements`). Reads can write too: hint
/// bits dirty pages, and a sort or hash that outgrows `work_mem` spills to temp files.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Writes {
    /// Bytes of WAL generated; null before PG 13.
    pub wal_bytes: Option<f64>,
    /// WAL records; null before PG 13.
    pub wal_records: Option<f64>,
    /// Full-page images among the WAL records (a page's first change after a checkpoint
    /// logs the whole 8 kB page); null before PG 13.
    pub wal_full_page_images: Option<f64>,
    /// Shared buffers the statements dirtied.
    pub blocks_dirtied: f64,
    /// Shared buffers the statements had to write out themselves.
    pub blocks_written: f64,
    /// Temp-file blocks (8 kB each) written by sorts, hashes and materializations that
    /// outgrew `work_mem`.
    pub temp_blocks_written: f64,
    /// Temp-file blocks read back by those sorts and hashes (`temp_blks_read`); 0 in
    /// reports written before it existed.
    #[serde(default)]
    pub temp_blocks_read: f64,
}

impl Writes {
    /// The write counters, each divided by `divide` (by the requests).
    pub fn divided(w: &WriteCounters, divide: impl Fn(i64) -> f64) -> Writes {
        Writes {
            wal_bytes: w.wal_bytes.map(&divide),
            wal_records: w.wal_records.map(&divide),
            wal_full_page_images: w.wal_fpi.map(&divide),
            blocks_dirtied: divide(w.shared_blks_dirtied),
            blocks_written: divide(w.shared_blks_written),
            temp_blocks_written: divide(w.temp_blks_written),
            temp_blocks_read: divide(w.temp_blks_read),
        }
    }

    /// `self + other`, figure by figure; a WAL figure is null only where both are.
    pub fn plus(&self, other: &Writes) -> Writes {
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        Writes {
            wal_bytes: add(self.wal_bytes, other.wal_bytes),
            wal_records: add(self.wal_records, other.wal_records),
            wal_full_page_images: add(self.wal_full_page_images, other.wal_full_page_images),
            blocks_dirtied: self.blocks_dirtied + other.blocks_dirtied,
            blocks_written: self.blocks_written + other.blocks_written,
            temp_blocks_written: self.temp_blocks_written + other.temp_blocks_written,
            temp_blocks_read: self.temp_blocks_read + other.temp_blocks_read,
        }
    }

    /// True when nothing was written (every written figure and the WAL records 0 or null).
    pub fn is_empty(&self) -> bool {
        let written = (Figure::ALL.into_iter()).filter(|f| f.spec().write_side);
        let values = written.map(|f| f.read(&Figures::default(), Some(self)));
        values
            .chain([self.wal_records])
            .all(|v| v.unwrap_or(0.0) == 0.0)
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
