//! The per-request figures a budget can limit, declared once in one table: each entry's
//! key (as in pgcost.toml and JSON) and its [`FigureSpec`]. Budgets of `check` and `survey`,
//! the slope limits and the views' figure columns loop over it; the write side per request
//! ([`Writes`]) lives beside it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::counters::WriteCounters;
use super::figures::Figures;
use super::{Load, PerRequest};

/// Where a figure's value per request comes from, `None` where the report has none.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A figure the window's counters give, divided by the requests (`per_request`).
    Request(fn(&PerRequest) -> Option<f64>),
    /// What the statements wrote, divided by the requests (`per_request.writes`).
    Writes(fn(&Writes) -> Option<f64>),
    /// The burst's 95th-percentile latency (`load.latency_ms.p95`).
    Latency,
}

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
    /// Whether every report has its value: a figure of `pg_stat_database`, not of
    /// pg_stat_statements (which may not be installed).
    pub database: bool,
    /// Whether the unauthenticated baseline compares it (and its JSON carries it).
    pub baseline: bool,
    /// Whether the survey gives each route its share of the figure's total.
    pub shared: bool,
    /// Whether `--control` subtracts the background from it (the background's figures).
    pub subtracted: bool,
    /// Where its value comes from: the write side is [`Writes`], the statements' buffer
    /// and temp-file I/O.
    pub source: Source,
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
    database: false,
    baseline: false,
    shared: false,
    subtracted: false,
    source: Source::Latency,
};

/// The figures, declared once, one entry each: the doc and serde attributes of its budget
/// key, the field as written (its key in pgcost.toml and JSON), its arm of [`Figure`], and
/// its [`FigureSpec`]. `with_figures!(m)` hands the list to the macro `m`: here it makes
/// [`Figure`], its spec and [`PerFigure`], and `check/budget.rs` makes a `Budget` field
/// and its `Budget::limit` arm of each entry. A new figure is one entry (and, if the report
/// does not carry it yet, its field in [`PerRequest`] or [`Writes`], and its counter).
macro_rules! with_figures {
    ($then:ident) => {
        $then! {
            /// Most transactions (commits + rollbacks) per request.
            #[serde(default)]
            pub transactions: Transactions {
                label: "transactions", unit: "transactions", meaning: "commits + rollbacks",
                database: true, baseline: true,
                subtracted: true,
                source: Source::Request(|p| Some(p.transactions)),
            }
            /// Most statements (round trips, BEGIN and COMMIT included) per request.
            #[serde(default)]
            pub statements: Statements {
                label: "statements", unit: "statements", gated: true,
                meaning: "round trips, BEGIN/COMMIT included",
                slope: Some("statements_slope"), baseline: true, shared: true,
                subtracted: true,
                source: Source::Request(|p| p.statements),
            }
            /// Most rows read (`tup_returned`) per request.
            #[serde(default)]
            pub rows_read: RowsRead {
                label: "rows read", unit: "rows", gated: true,
                meaning: "tup_returned: scanned rows + index entries",
                slope: Some("rows_read_slope"), database: true, baseline: true, shared: true,
                subtracted: true,
                source: Source::Request(|p| Some(p.rows_read)),
            }
            /// Most rows returned to the app per request.
            #[serde(default)]
            pub rows_returned: RowsReturned {
                label: "rows returned", unit: "rows", gated: true,
                meaning: "rows sent back to the app",
                slope: Some("rows_returned_slope"), shared: true,
                source: Source::Request(|p| p.rows_returned),
            }
            /// Highest 95th-percentile latency, in ms.
            #[serde(default)]
            pub p95_ms: P95Ms {
                label: "p95 ms", unit: "ms", counted: "ms", chart_name: Some("p95 latency"),
                per_database: false, source: Source::Latency,
            }
            /// Most rows fetched (`tup_fetched`: rows an index scan or a bitmap heap scan read
            /// from the table) per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rows_fetched: RowsFetched {
                label: "rows fetched", unit: "rows", database: true,
                source: Source::Request(|p| Some(p.rows_fetched)),
                meaning: "tup_fetched: rows fetched by index scans",
            }
            /// Most bytes of WAL per request (PG 13+).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub wal_bytes: WalBytes {
                label: "WAL bytes", unit: "bytes", source: Source::Writes(|w| w.wal_bytes),
                meaning: "write-ahead log generated",
                needs: "pg_stat_statements and PostgreSQL 13 or later",
            }
            /// Most shared buffers dirtied per request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub blocks_dirtied: BlocksDirtied {
                label: "blocks dirtied", unit: "blocks",
                source: Source::Writes(|w| Some(w.blocks_dirtied)),
                meaning: "shared buffers changed",
            }
            /// Most shared buffers the statements had to write out themselves per request
            /// (`shared_blks_written`: no free buffer was clean).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub blocks_written: BlocksWritten {
                label: "blocks written", unit: "blocks",
                source: Source::Writes(|w| Some(w.blocks_written)),
                meaning: "buffers written out by the statements",
            }
            /// Most temp-file blocks (8 kB) written per request: `0` forbids a spill.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub temp_blocks_written: TempBlocksWritten {
                label: "temp blocks written", unit: "blocks",
                source: Source::Writes(|w| Some(w.temp_blocks_written)),
                meaning: "8 kB temp-file blocks: sorts and hashes over work_mem",
            }
            /// Most temp-file blocks (8 kB) read back per request: a spilled sort or hash reads
            /// what it wrote, once per pass.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub temp_blocks_read: TempBlocksRead {
                label: "temp blocks read", unit: "blocks",
                source: Source::Writes(|w| Some(w.temp_blocks_read)),
                meaning: "8 kB temp-file blocks read back by those sorts and hashes",
            }
            /// Most blocks of temporary tables changed per request: `0` forbids filling a
            /// temporary table on each request.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub local_blocks_dirtied: LocalBlocksDirtied {
                label: "local blocks dirtied", unit: "blocks",
                source: Source::Writes(|w| Some(w.local_blocks_dirtied)),
                meaning: "8 kB blocks of temporary tables changed",
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

            /// Sets the value of `figure`.
            pub fn set(&mut self, figure: Figure, value: Option<T>) {
                match figure {
                    $(Figure::$arm => self.$key = value,)*
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

    /// The figure's value per request, read off a report's `per_request` and, for the
    /// latency, its `load`; `None` where the report has none (no pg_stat_statements, no WAL
    /// before PG 13, no burst).
    pub fn read(self, load: Option<&Load>, per_request: &PerRequest) -> Option<f64> {
        match self.spec().source {
            Source::Request(read) => read(per_request),
            Source::Writes(read) => per_request.writes.as_ref().and_then(read),
            Source::Latency => load.map(|load| load.latency_ms.p95),
        }
    }

    /// The figure's value among the headline figures.
    pub fn of(self, figures: &Figures) -> Option<f64> {
        figures.per_figure.get(self)
    }

    /// The figure's value on the write side; `None` for a figure not on it.
    pub fn written(self, writes: &Writes) -> Option<f64> {
        match self.spec().source {
            Source::Writes(read) => read(writes),
            _ => None,
        }
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
    /// Blocks of temporary tables (local buffers) the statements changed
    /// (`local_blks_dirtied`); 0 in reports written before it existed.
    #[serde(default)]
    pub local_blocks_dirtied: f64,
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
            local_blocks_dirtied: divide(w.local_blks_dirtied),
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
            local_blocks_dirtied: self.local_blocks_dirtied + other.local_blocks_dirtied,
        }
    }

    /// True when nothing was written (every written figure and the WAL records 0 or null).
    pub fn is_empty(&self) -> bool {
        (Figure::ALL.into_iter().map(|f| f.written(self)))
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
    fn reads_the_request_the_write_side_and_the_latency() {
        let per_request: PerRequest = serde_json::from_value(serde_json::json!({
            "transactions": 1.0, "statements": 3.0, "rows_read": 40.0, "rows_fetched": 0.0,
            "rows_written": 0.0, "blocks_hit": 0.0, "blocks_read": 0.0, "db_time_ms": null,
            "writes": { "wal_bytes": null, "wal_records": null, "wal_full_page_images": null,
                "blocks_dirtied": 2.0, "blocks_written": 0.0, "temp_blocks_written": 0.0 },
        }))
        .unwrap();
        let read = |f: Figure| f.read(None, &per_request);
        assert_eq!(read(Figure::Statements), Some(3.0));
        assert_eq!(read(Figure::RowsReturned), None);
        assert_eq!(read(Figure::BlocksDirtied), Some(2.0));
        assert_eq!(read(Figure::WalBytes), None);
        assert_eq!(read(Figure::P95Ms), None);
        let writes = per_request.writes.as_ref().unwrap();
        assert_eq!(Figure::BlocksDirtied.written(writes), Some(2.0));
        assert_eq!(Figure::RowsRead.written(writes), None);
    }
}
