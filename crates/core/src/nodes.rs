//! Several databases measured in one window (`--db` repeated): each is a node with its
//! own figures, statements and tables, and the report's figures are their sum; and the
//! warning about a database that moved in the window without being measured. No I/O.

use std::collections::BTreeMap;

use crate::delta::{WindowDelta, per_request, share};
use crate::findings;
use crate::report::model::counters::Counter;
pub use crate::report::model::node::Node;
use crate::report::model::notes::Note;
use crate::report::model::{self, Report};

/// The role of a database the app reads and writes itself.
pub const PRIMARY: &str = "primary";

/// `text` after its database (`auth: text`) when the request touches several databases
/// (`database` is then set), else `text` alone.
pub fn in_database(database: &Option<String>, text: &str) -> String {
    match database {
        Some(name) => format!("{name}: {text}"),
        None => text.to_string(),
    }
}

/// The name and redacted URL of a node, beside what it was measured with.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeName {
    pub name: String,
    pub database: String,
    /// [`PRIMARY`] or [`crate::replica::REPLICA`].
    pub role: &'static str,
}

/// The nodes' deltas as one: the database counters added up, the statements and tables
/// side by side, and each node's reasons and warnings prefixed with its name.
pub fn merge(nodes: &[(&NodeName, &WindowDelta)]) -> WindowDelta {
    let mut total = WindowDelta::default();
    for (i, (node, delta)) in nodes.iter().enumerate() {
        // Counters a server lacks (sessions before PG 14) stay absent in the sum.
        total.database = match i {
            0 => delta.database.clone(),
            _ => total.database.plus(&delta.database),
        };
        total.statements.extend(delta.statements.iter().cloned());
        total.tables.extend(delta.tables.iter().cloned());
        total
            .invalid_reasons
            .extend(delta.invalid_reasons.iter().map(|r| r.within(&node.name)));
        total
            .warnings
            .extend(delta.warnings.iter().map(|note| note.on_node(&node.name)));
    }
    total
}

/// The report of the sum (`total`, built from [`merge`]'s delta), with each node's own
/// report: the statements, tables and findings become the nodes', each labelled with its
/// database. A statement that runs in two databases is two statements.
pub fn combine(total: Report, nodes: Vec<(NodeName, Report)>) -> Report {
    let mut statements = Vec::new();
    let mut tables = Vec::new();
    let mut found = Vec::new();
    let mut described = Vec::with_capacity(nodes.len());
    let rows_returned = total.totals.statement_rows.unwrap_or(0);
    for (name, report) in nodes {
        let label = Some(name.name.clone());
        statements.extend(report.statements.iter().cloned().map(|mut s| {
            s.database = label.clone();
            if s.toplevel {
                s.share_of_rows_returned = share(s.rows, rows_returned);
            }
            s
        }));
        tables.extend(report.tables.iter().cloned().map(|mut t| {
            t.database = label.clone();
            t
        }));
        found.extend(report.findings.into_iter().map(|mut f| {
            f.database = label.clone();
            f
        }));
        described.push(Node {
            name: name.name,
            database: name.database,
            role: name.role.into(),
            per_request: report.per_request,
            statements: report.statements,
            tables: report.tables,
        });
    }
    model::sort_statements(&mut statements);
    model::sort_tables(&mut tables);
    findings::rank(&mut found);
    Report {
        statements,
        tables,
        findings: found,
        nodes: described,
        ..total
    }
}

/// One database's transactions (commits and rollbacks) and rows read, from
/// `pg_stat_database`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatabaseTraffic {
    pub transactions: i64,
    pub tup_returned: i64,
}

/// Transactions per request from which a database that was not measured gets a warning.
pub const UNMEASURED_MIN_TRANSACTIONS: f64 = 0.5;

/// A line for every database of the server that moved by at least
/// [`UNMEASURED_MIN_TRANSACTIONS`] per request between `before` and `after` but is not
/// among the `measured` ones (the caller leaves out its own statistics database and the
/// templates). `flag(name)` is the `--db` that would add it.
pub fn unmeasured_warnings(
    before: &BTreeMap<String, DatabaseTraffic>,
    after: &BTreeMap<String, DatabaseTraffic>,
    measured: &[&str],
    requests: u64,
    flag: impl Fn(&str) -> String,
) -> Vec<Note> {
    let mut warnings = Vec::new();
    for (name, end) in after {
        if measured.contains(&name.as_str()) {
            continue;
        }
        let start = before.get(name).copied().unwrap_or_default();
        let transactions = per_request(end.transactions - start.transactions, requests);
        if transactions < UNMEASURED_MIN_TRANSACTIONS {
            continue;
        }
        let rows_read = per_request(end.tup_returned - start.tup_returned, requests);
        warnings.push(Note::UnmeasuredDatabase {
            database: name.clone(),
            transactions_per_request: transactions,
            rows_read_per_request: rows_read,
            add: flag(name),
        });
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::invalid::{Code, Invalid};

    fn traffic(transactions: i64, rows_read: i64) -> DatabaseTraffic {
        DatabaseTraffic {
            transactions,
            tup_returned: rows_read,
        }
    }

    #[test]
    fn a_database_that_moved_unmeasured_is_named_with_its_figures_and_flag() {
        let before: BTreeMap<_, _> = [
            ("app".to_string(), traffic(100, 1000)),
            ("auth".to_string(), traffic(50, 500)),
            ("quiet".to_string(), traffic(7, 70)),
        ]
        .into();
        let after: BTreeMap<_, _> = [
            ("app".to_string(), traffic(400, 9000)),
            ("auth".to_string(), traffic(250, 1780)),
            ("quiet".to_string(), traffic(56, 70)),
            ("new".to_string(), traffic(100, 0)),
        ]
        .into();
        let warnings = unmeasured_warnings(&before, &after, &["app"], 100, |name| {
            format!("--db postgres://u@h:5432/{name}")
        });
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(
            warnings[0],
            Note::UnmeasuredDatabase {
                database: "auth".into(),
                transactions_per_request: 2.0,
                rows_read_per_request: 12.8,
                add: "--db postgres://u@h:5432/auth".into(),
            }
        );
        let warnings: Vec<String> = warnings.iter().map(Note::message).collect();
        assert!(warnings[0].starts_with("database \"auth\" also moved during the window (2.0 transactions and 12.8 rows read per request"));
        assert!(warnings[0].contains("or other traffic on this server"));
        assert!(warnings[0].ends_with("add --db postgres://u@h:5432/auth"));
        // 49 transactions in 100 requests stay under the threshold; a new database counts
        // from zero.
        assert!(
            warnings[1]
                .starts_with("database \"new\" also moved during the window (1.0 transactions")
        );
    }

    #[test]
    fn merged_deltas_add_up_and_name_their_node() {
        let mut a = WindowDelta::default();
        a.database.xact_commit = 6;
        a.database.tup_returned = 545;
        let broke = Invalid::new(Code::SettleTimeout, "it broke");
        a.invalid_reasons.push(broke);
        a.warnings.push(Note::PgStatStatementsEntriesVanished {
            entries: 3,
            node: None,
        });
        let mut b = WindowDelta::default();
        b.database.xact_commit = 16;
        b.database.tup_returned = 128;
        let name = |n: &str| NodeName {
            name: n.into(),
            database: format!("postgres://u@h:5432/{n}"),
            role: PRIMARY,
        };
        let (app, auth) = (name("app"), name("auth"));
        let total = merge(&[(&app, &a), (&auth, &b)]);
        assert_eq!(total.database.xact_commit, 22);
        assert_eq!(total.database.tup_returned, 673);
        assert_eq!(total.database.sessions, None);
        let named = Invalid::new(Code::SettleTimeout, "app: it broke");
        assert_eq!(total.invalid_reasons, vec![named]);
        assert_eq!(
            total.warnings[0].message(),
            "app: 3 pg_stat_statements entries vanished during the window: entries may have \
             been evicted"
        );
    }
}
