//! The counter sets of the statistics views, each declared once with its arithmetic
//! (`counter_set!`, which `snapshot::StatementStats` uses too): a snapshot reads one, a
//! window delta is one, and the report's totals serialize one. Field names are the views'
//! column names and the JSON keys.

use serde::{Deserialize, Serialize};

/// A counter that went backwards between the two readings of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backwards {
    pub counter: &'static str,
    pub before: i64,
    pub after: i64,
}

/// Where counters are read from by column name: a row of a statistics view.
pub trait Columns {
    fn counter(&self, column: &str) -> i64;
    /// A column that is NULL where the server version lacks the counter.
    fn optional_counter(&self, column: &str) -> Option<i64>;
    /// A time in milliseconds, such as pg_stat_statements' `total_exec_time`.
    fn time(&self, column: &str) -> f64;
    fn optional_time(&self, column: &str) -> Option<f64>;
}

/// One counter's arithmetic. `Option<_>` is a counter that some server versions lack.
pub trait Counter: Sized {
    fn read(columns: &impl Columns, column: &str) -> Self;
    /// `self - before`; a count that went backwards is named in `backwards` and grows by 0.
    /// A time that went backwards is only floored.
    fn grown(&self, before: &Self, _: &'static str, _: &mut Vec<Backwards>) -> Self {
        self.minus(before)
    }
    /// `self - other`, floored at 0, used to take the tool's own footprint out.
    fn minus(&self, other: &Self) -> Self;
    /// `self` seen `times` times, for a per-operation footprint.
    fn times(&self, times: i64) -> Self;
    fn plus(&self, other: &Self) -> Self {
        self.minus(&other.times(-1))
    }
}

impl Counter for i64 {
    fn read(columns: &impl Columns, column: &str) -> Self {
        columns.counter(column)
    }

    fn grown(&self, before: &Self, counter: &'static str, backwards: &mut Vec<Backwards>) -> Self {
        if self < before {
            backwards.push(Backwards {
                counter,
                before: *before,
                after: *self,
            });
        }
        self.minus(before)
    }

    fn minus(&self, other: &Self) -> Self {
        (self - other).max(0)
    }

    fn times(&self, times: i64) -> Self {
        self * times
    }
}

impl Counter for Option<i64> {
    fn read(columns: &impl Columns, column: &str) -> Self {
        columns.optional_counter(column)
    }

    /// Grows only where both readings have the counter.
    fn grown(&self, before: &Self, counter: &'static str, backwards: &mut Vec<Backwards>) -> Self {
        Some(self.as_ref()?.grown(before.as_ref()?, counter, backwards))
    }

    /// Keeps `self` where `other` lacks the counter.
    fn minus(&self, other: &Self) -> Self {
        match (self, other) {
            (Some(a), Some(b)) => Some(a.minus(b)),
            (a, _) => *a,
        }
    }

    fn times(&self, times: i64) -> Self {
        self.map(|s| s * times)
    }
}

/// A time in milliseconds.
impl Counter for f64 {
    fn read(columns: &impl Columns, column: &str) -> Self {
        columns.time(column)
    }

    fn minus(&self, other: &Self) -> Self {
        (self - other).max(0.0)
    }

    fn times(&self, times: i64) -> Self {
        self * times as f64
    }
}

/// A time that some servers or settings lack (pg_stat_statements' plan time).
impl Counter for Option<f64> {
    fn read(columns: &impl Columns, column: &str) -> Self {
        columns.optional_time(column)
    }

    /// Keeps `self` where `other` lacks the time.
    fn minus(&self, other: &Self) -> Self {
        self.map(|a| a.minus(&other.unwrap_or(0.0)))
    }

    fn times(&self, times: i64) -> Self {
        self.map(|s| s.times(times))
    }

    /// Sums only where both have the time.
    fn plus(&self, other: &Self) -> Self {
        self.zip(*other).map(|(a, b)| a + b)
    }
}

/// Declares a counter set: the struct as written, and its field-wise arithmetic as a
/// `Counter`, in declaration order (which is the order in which backwards counters are
/// named). The fields in `carried { .. }` are not counters: the arithmetic carries them
/// over from `self`, and `read` leaves them at their default. A set can hold another, read
/// from the columns of the inner set's names.
macro_rules! counter_set {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( carried { $( $(#[$carried_meta:meta])* pub $carried:ident: $carried_ty:ty, )* } )?
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $( $(#[$carried_meta])* pub $carried: $carried_ty, )* )?
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $name {
            /// Reads each counter from the column of its name.
            pub fn read(columns: &impl Columns) -> $name {
                $name {
                    $( $( $carried: Default::default(), )* )?
                    $( $field: Counter::read(columns, stringify!($field)), )*
                }
            }

            /// Growth from `before` to `self`, and the counters that went backwards
            /// (which grow by 0).
            pub fn since(&self, before: &$name) -> ($name, Vec<Backwards>) {
                let mut backwards = Vec::new();
                (self.grown(before, stringify!($name), &mut backwards), backwards)
            }
        }

        impl Counter for $name {
            fn read(columns: &impl Columns, _: &str) -> $name {
                $name::read(columns)
            }

            fn grown(&self, before: &$name, _: &'static str, out: &mut Vec<Backwards>) -> $name {
                $name {
                    $( $( $carried: self.$carried.clone(), )* )?
                    $( $field: self.$field.grown(&before.$field, stringify!($field), out), )*
                }
            }

            fn minus(&self, other: &$name) -> $name {
                $name {
                    $( $( $carried: self.$carried.clone(), )* )?
                    $( $field: self.$field.minus(&other.$field), )*
                }
            }

            fn times(&self, times: i64) -> $name {
                $name {
                    $( $( $carried: self.$carried.clone(), )* )?
                    $( $field: self.$field.times(times), )*
                }
            }

            fn plus(&self, other: &$name) -> $name {
                $name {
                    $( $( $carried: self.$carried.clone(), )* )?
                    $( $field: self.$field.plus(&other.$field), )*
                }
            }
        }
    };
}
pub(crate) use counter_set;

counter_set! {
    /// The counters of the target database's row of `pg_stat_database`.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
    pub struct DatabaseCounters {
        pub xact_commit: i64,
        pub xact_rollback: i64,
        pub tup_returned: i64,
        pub tup_fetched: i64,
        pub tup_inserted: i64,
        pub tup_updated: i64,
        pub tup_deleted: i64,
        pub blks_hit: i64,
        pub blks_read: i64,
        /// `None` before PG 14, which has no `sessions` column.
        pub sessions: Option<i64>,
    }
}

counter_set! {
    /// The counters of one row of `pg_stat_user_tables`.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
    pub struct TableCounters {
        pub seq_scan: i64,
        pub seq_tup_read: i64,
        pub idx_scan: i64,
        pub idx_tup_fetch: i64,
        /// The index entries its indexes returned (`pg_stat_user_indexes.idx_tup_read`,
        /// summed): index-only scans read these and fetch no heap row.
        pub idx_tup_read: i64,
        pub n_tup_ins: i64,
        pub n_tup_upd: i64,
        pub n_tup_del: i64,
    }
}

counter_set! {
    /// What one `pg_stat_statements` entry wrote: buffers it dirtied and wrote out, temp
    /// files of sorts and hashes that spilled (and their blocks read back), and WAL. The WAL
    /// counters are `None` before pg_stat_statements 1.8 (PG 13).
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
    pub struct WriteCounters {
        pub shared_blks_dirtied: i64,
        pub shared_blks_written: i64,
        pub temp_blks_written: i64,
        pub temp_blks_read: i64,
        /// Blocks of the session's temporary tables it changed (local buffers).
        pub local_blks_dirtied: i64,
        pub wal_records: Option<i64>,
        /// Full-page images: the first change to a page after a checkpoint logs the page.
        pub wal_fpi: Option<i64>,
        pub wal_bytes: Option<i64>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(commit: i64, returned: i64, sessions: Option<i64>) -> DatabaseCounters {
        DatabaseCounters {
            xact_commit: commit,
            tup_returned: returned,
            sessions,
            ..Default::default()
        }
    }

    #[test]
    fn growth_names_each_backwards_counter_in_declaration_order() {
        let before = DatabaseCounters {
            sessions: Some(9),
            ..db(300, 1000, None)
        };
        let (grown, backwards) = db(5, 1010, Some(2)).since(&before);
        assert_eq!(grown, db(0, 10, Some(0)));
        let named: Vec<_> = backwards
            .iter()
            .map(|b| (b.counter, b.before, b.after))
            .collect();
        assert_eq!(named, vec![("xact_commit", 300, 5), ("sessions", 9, 2)]);
    }

    #[test]
    fn an_optional_counter_grows_only_where_both_readings_have_it() {
        let (grown, backwards) = db(1, 1, Some(4)).since(&db(0, 0, None));
        assert_eq!(grown.sessions, None);
        assert!(backwards.is_empty());
    }

    #[test]
    fn subtraction_floors_at_zero_and_keeps_what_the_other_side_lacks() {
        assert_eq!(db(5, 10, Some(3)).minus(&db(7, 4, None)), db(0, 6, Some(3)));
        assert_eq!(
            db(5, 10, Some(3)).minus(&db(1, 1, Some(1))),
            db(4, 9, Some(2))
        );
        assert_eq!(
            db(1, 2, None).times(3).plus(&db(1, 1, None)),
            db(4, 7, None)
        );
    }

    struct Row;

    impl Columns for Row {
        fn counter(&self, column: &str) -> i64 {
            column.len() as i64
        }
        fn optional_counter(&self, _: &str) -> Option<i64> {
            None
        }
        fn time(&self, column: &str) -> f64 {
            column.len() as f64 / 2.0
        }
        fn optional_time(&self, _: &str) -> Option<f64> {
            None
        }
    }

    #[test]
    fn counters_are_read_from_the_columns_of_their_names() {
        let read = DatabaseCounters::read(&Row);
        assert_eq!((read.xact_commit, read.blks_hit), (11, 8));
        assert_eq!(read.sessions, None);
        assert_eq!(TableCounters::read(&Row).idx_tup_fetch, 13);
    }

    #[test]
    fn times_nested_sets_and_carried_fields_are_read_too() {
        let read = crate::snapshot::StatementStats::read(&Row);
        assert_eq!(
            (read.calls, read.exec_time_ms, read.plan_time_ms),
            (5, 6.0, None)
        );
        assert_eq!(read.writes.shared_blks_dirtied, 19);
        assert_eq!((read.key, read.query), Default::default());
    }
}
