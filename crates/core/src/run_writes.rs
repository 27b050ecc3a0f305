//! The rows a run with `--allow-writes` wrote, named: each table's rows inserted, updated
//! and deleted from before its first request (the probe's) to the close of its last
//! window, the transaction ids it began and ended at, and, for a table the run only
//! inserted into, a statement that would delete those rows. Pure: the runner reads the
//! tables and the ids.

use std::collections::BTreeMap;

use crate::report::model::notes::{Note, RunTable};
use crate::snapshot::TableStats;

/// The note of a run that began with `before` and `from` (the next transaction id then)
/// and ended with `after` and `to`.
pub fn named(
    before: &BTreeMap<String, TableStats>,
    after: &BTreeMap<String, TableStats>,
    from: i64,
    to: i64,
) -> Note {
    let tables = (after.iter())
        .filter_map(|(name, end)| {
            let start = before
                .get(name)
                .map(|s| s.counters.clone())
                .unwrap_or_default();
            let (end, start) = (&end.counters, &start);
            let inserted = end.n_tup_ins - start.n_tup_ins;
            let updated = end.n_tup_upd - start.n_tup_upd;
            let deleted = end.n_tup_del - start.n_tup_del;
            let only_inserts = inserted > 0 && updated == 0 && deleted == 0;
            (inserted + updated + deleted > 0).then(|| RunTable {
                table: name.clone(),
                inserted,
                updated,
                deleted,
                delete: only_inserts.then(|| delete_statement(name, from, to)),
            })
        })
        .collect();
    Note::RunWrote {
        tables,
        xid_from: from,
        xid_to: to,
    }
}

/// `DELETE FROM "s"."t" WHERE …`: the rows whose inserting transaction's id is in
/// `[from, to)`. `xmin` holds the low 32 bits of the id, so the range is taken modulo 2^32
/// (in two parts when it wraps).
fn delete_statement(table: &str, from: i64, to: i64) -> String {
    let quoted = match table.split_once('.') {
        Some((schema, name)) => format!("{}.{}", ident(schema), ident(name)),
        None => ident(table),
    };
    let (lo, hi) = (from & 0xffff_ffff, (to - 1) & 0xffff_ffff);
    let xmin = "xmin::text::bigint";
    let range = match lo <= hi {
        true => format!("{xmin} BETWEEN {lo} AND {hi}"),
        false => format!("({xmin} >= {lo} OR {xmin} <= {hi})"),
    };
    format!("DELETE FROM {quoted} WHERE {range}")
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::counters::TableCounters;

    fn stats(ins: i64, upd: i64, del: i64) -> TableStats {
        TableStats {
            counters: TableCounters {
                n_tup_ins: ins,
                n_tup_upd: upd,
                n_tup_del: del,
                ..TableCounters::default()
            },
            ..TableStats::default()
        }
    }

    #[test]
    fn each_written_table_is_named_and_only_inserts_get_a_delete() {
        let before = BTreeMap::from([
            ("public.articles".to_string(), stats(5, 0, 0)),
            ("public.users".to_string(), stats(10, 3, 0)),
        ]);
        let after = BTreeMap::from([
            ("public.articles".to_string(), stats(126, 0, 0)),
            ("public.users".to_string(), stats(10, 124, 0)),
            ("public.idle".to_string(), stats(0, 0, 0)),
            ("audit.\"log\"".to_string(), stats(3, 0, 1)),
        ]);
        let Note::RunWrote {
            tables,
            xid_from,
            xid_to,
        } = named(&before, &after, 1000, 1130)
        else {
            unreachable!()
        };
        assert_eq!((xid_from, xid_to), (1000, 1130));
        let names: Vec<&str> = tables.iter().map(|t| t.table.as_str()).collect();
        assert_eq!(names, ["audit.\"log\"", "public.articles", "public.users"]);
        assert_eq!((tables[1].inserted, tables[1].updated), (121, 0));
        assert_eq!(
            tables[1].delete.as_deref(),
            Some(
                "DELETE FROM \"public\".\"articles\" WHERE xmin::text::bigint BETWEEN 1000 AND 1129"
            )
        );
        assert_eq!(tables[2].updated, 121);
        assert_eq!(tables[2].delete, None, "an updated row has a new xmin too");
        assert_eq!(tables[0].delete, None, "rows deleted are gone");
    }

    #[test]
    fn the_range_is_taken_modulo_two_to_the_32_and_may_wrap() {
        let wrapped = delete_statement("public.t", (1 << 32) - 2, (1 << 32) + 3);
        assert_eq!(
            wrapped,
            "DELETE FROM \"public\".\"t\" WHERE (xmin::text::bigint >= 4294967294 OR xmin::text::bigint <= 2)"
        );
        let epoch = delete_statement("public.t", (3 << 32) + 7, (3 << 32) + 9);
        assert!(epoch.ends_with("BETWEEN 7 AND 8"), "{epoch}");
    }
}
