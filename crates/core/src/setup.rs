//! The set-up an app runs on each new connection (its SETs, SHOWs, start-up transaction and
//! catalog lookups), recognised from pg_stat_statements and the window's new sessions, so
//! that a connection-per-request app's cost shows its set-up apart from its handler's.
//!
//! The rule (documented in `docs/findings.md`): with at least
//! [`MIN_NEW_CONNECTIONS_PER_REQUEST`] new sessions per request, a top-level statement text
//! is set-up when its calls per request are a whole multiple (1 to
//! [`MAX_CALLS_PER_CONNECTION`]) of the new connections per request, and it is either a
//! session statement (SET, RESET, SHOW, DISCARD) or a read of the catalog (`pg_*` relations
//! or functions, `information_schema`, `version()`, `current_setting()`, ...). BEGIN and
//! COMMIT that run so count as the start-up transaction only beside such statements.

pub use crate::report::model::setup::{Setup, SetupKind, SetupStatement};
use crate::report::model::{StatementRow, TableRow};

/// Fewer new connections per request than this: the app has a pool, and a statement that
/// runs once per connection is no per-request set-up.
pub const MIN_NEW_CONNECTIONS_PER_REQUEST: f64 = 0.5;
/// A set-up statement runs at most this many times on one connection.
pub const MAX_CALLS_PER_CONNECTION: f64 = 4.0;
/// How far calls per connection may be from a whole number (rounding of the division).
const WHOLE_TOLERANCE: f64 = 0.02;

/// The window's figures the rule reads.
pub struct Inputs<'a> {
    pub new_sessions_per_request: Option<f64>,
    pub statements_per_request: Option<f64>,
    pub rows_read_per_request: f64,
    pub statements: &'a [StatementRow],
    pub tables: &'a [TableRow],
}

/// The set-up of the window's new connections; `None` when the app opened fewer than
/// [`MIN_NEW_CONNECTIONS_PER_REQUEST`] per request or no statement fits the rule.
pub fn recognise(inputs: &Inputs) -> Option<Setup> {
    let connections = inputs
        .new_sessions_per_request
        .filter(|c| *c >= MIN_NEW_CONNECTIONS_PER_REQUEST)?;
    let mut found: Vec<(SetupStatement, f64)> = Vec::new();
    for (query, calls, rows) in by_text(inputs.statements) {
        let per_connection = calls / connections;
        let whole = per_connection.round();
        if !(1.0..=MAX_CALLS_PER_CONNECTION).contains(&whole)
            || (per_connection - whole).abs() > WHOLE_TOLERANCE
        {
            continue;
        }
        let Some(kind) = kind_of(query) else {
            continue;
        };
        let statement = SetupStatement {
            query: query.to_string(),
            calls_per_request: calls,
            calls_per_connection: whole,
            kind,
        };
        found.push((statement, rows));
    }
    // A BEGIN and COMMIT alone, once per connection, are the handler's own transaction.
    if found.iter().all(|(s, _)| s.kind == SetupKind::Transaction) {
        return None;
    }
    Some(totals(inputs, connections, found))
}

fn totals(inputs: &Inputs, connections: f64, found: Vec<(SetupStatement, f64)>) -> Setup {
    let statements: f64 = found.iter().map(|(s, _)| s.calls_per_request).sum();
    let rows_returned: f64 = found.iter().map(|(_, rows)| rows).sum();
    let app_tables: f64 = (inputs.tables.iter())
        .map(|t| t.seq_rows_read + t.idx_rows_fetched)
        .sum();
    let rows_read = (inputs.rows_read_per_request - app_tables).max(0.0);
    let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
    Setup {
        new_connections_per_request: connections,
        statements_per_request: statements,
        statements_per_connection: statements / connections,
        rows_returned_per_request: rows_returned,
        rows_returned_per_connection: rows_returned / connections,
        rows_read_per_request: rows_read,
        rows_read_per_connection: rows_read / connections,
        share_of_statements: share(statements, inputs.statements_per_request.unwrap_or(0.0)),
        share_of_rows_read: share(rows_read, inputs.rows_read_per_request),
        statements: found.into_iter().map(|(s, _)| s).collect(),
    }
}

/// Top-level statements by text (other users and query ids added together): text, calls
/// per request, rows per request; in the report's order.
fn by_text(rows: &[StatementRow]) -> Vec<(&str, f64, f64)> {
    let mut texts: Vec<(&str, f64, f64)> = Vec::new();
    for row in rows.iter().filter(|r| r.toplevel) {
        match texts.iter_mut().find(|(q, _, _)| *q == row.query) {
            Some((_, calls, returned)) => {
                *calls += row.calls_per_request;
                *returned += row.rows_per_request;
            }
            None => texts.push((&row.query, row.calls_per_request, row.rows_per_request)),
        }
    }
    texts
}

/// Session statements, transaction control and catalog reads; `None` for anything else.
pub fn kind_of(query: &str) -> Option<SetupKind> {
    let words = words(query);
    let first = words.first()?.as_str();
    match first {
        "set" | "reset" | "show" | "discard" => Some(SetupKind::Session),
        "begin" | "start" | "commit" | "end" => Some(SetupKind::Transaction),
        "select" | "with" if reads_catalog(query, &words) => Some(SetupKind::Catalog),
        _ => None,
    }
}

/// Functions a driver or framework calls at connect to learn about the server.
const CATALOG_FUNCTIONS: [&str; 7] = [
    "version",
    "current_setting",
    "current_schema",
    "current_schemas",
    "current_database",
    "set_config",
    "has_database_privilege",
];

/// It names a `pg_*` relation or function, `information_schema`, or one of
/// [`CATALOG_FUNCTIONS`] as a call.
fn reads_catalog(query: &str, words: &[String]) -> bool {
    let lower = query.to_ascii_lowercase();
    words
        .iter()
        .any(|w| w.starts_with("pg_") || w == "information_schema")
        || CATALOG_FUNCTIONS.iter().any(|f| calls(&lower, f))
}

/// `text` calls function `name`: the name as a whole word, then `(`.
fn calls(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].trim_start();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && after.starts_with('(')
    })
}

/// The identifiers and keywords of `query`, lower-case, outside comments and literals.
fn words(query: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in query.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        if !quoted && (c.is_ascii_alphanumeric() || c == '_') {
            word.push(c.to_ascii_lowercase());
        } else if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// True when `query` is a statement of `setup`.
pub fn is_setup(setup: Option<&Setup>, query: &str) -> bool {
    setup.is_some_and(|s| s.statements.iter().any(|st| st.query == query))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::tests::{stmt, table};

    /// Two connections per request, each with the PHP-like set-up, then one handler query.
    fn php_like() -> Vec<StatementRow> {
        vec![
            stmt("SET client_encoding TO 'UTF8'", 2.0, 0.0),
            stmt("SET TIME ZONE 'UTC'", 2.0, 0.0),
            stmt("SHOW server_version_num", 2.0, 1.0),
            stmt("BEGIN", 2.0, 0.0),
            stmt(
                "SELECT oid, typname FROM pg_type WHERE typname = ANY($1)",
                2.0,
                3.0,
            ),
            stmt("COMMIT", 2.0, 0.0),
            stmt("SELECT version()", 2.0, 1.0),
            stmt(
                "SELECT id, name FROM items WHERE owner = $1 LIMIT $2",
                1.0,
                5.0,
            ),
            stmt("SELECT count(*) FROM items WHERE owner = $1", 1.0, 1.0),
            stmt("SET search_path TO public", 1.0, 0.0),
        ]
    }

    fn inputs<'a>(
        sessions: f64,
        statements: &'a [StatementRow],
        tables: &'a [TableRow],
    ) -> Inputs<'a> {
        Inputs {
            new_sessions_per_request: Some(sessions),
            statements_per_request: Some(statements.iter().map(|s| s.calls_per_request).sum()),
            rows_read_per_request: 300.0,
            statements,
            tables,
        }
    }

    #[test]
    fn the_set_up_of_two_connections_per_request_is_recognised() {
        let rows = php_like();
        let mut items = table("public.items", 1);
        (items.seq_rows_read, items.idx_rows_fetched) = (50.0, 10.0);
        let tables = [items];
        let setup = recognise(&inputs(2.0, &rows, &tables)).unwrap();
        let queries: Vec<&str> = setup.statements.iter().map(|s| s.query.as_str()).collect();
        // The handler's queries are not set-up; nor is a SET run once per request (half a
        // call per connection).
        assert_eq!(queries.len(), 7, "{queries:?}");
        assert!(!queries.iter().any(|q| q.contains("items")));
        assert!(!queries.contains(&"SET search_path TO public"));
        assert_eq!(setup.new_connections_per_request, 2.0);
        assert_eq!(setup.statements_per_request, 14.0);
        assert_eq!(setup.statements_per_connection, 7.0);
        assert_eq!(setup.rows_returned_per_request, 10.0);
        assert_eq!(setup.rows_returned_per_connection, 5.0);
        assert_eq!(setup.rows_read_per_request, 240.0);
        assert_eq!(setup.rows_read_per_connection, 120.0);
        assert_eq!(setup.share_of_statements, 14.0 / 17.0);
        assert_eq!(setup.share_of_rows_read, 0.8);
        assert_eq!(setup.statements[4].kind, SetupKind::Catalog);
        assert_eq!(setup.statements[3].kind, SetupKind::Transaction);
        assert_eq!(setup.statements[0].kind, SetupKind::Session);
    }

    #[test]
    fn a_pooled_app_has_no_set_up() {
        let rows = php_like();
        assert_eq!(recognise(&inputs(0.0, &rows, &[])), None);
        assert_eq!(recognise(&inputs(0.02, &rows, &[])), None);
        let no_sessions = Inputs {
            new_sessions_per_request: None,
            ..inputs(0.0, &rows, &[])
        };
        assert_eq!(recognise(&no_sessions), None);
    }

    #[test]
    fn a_handler_transaction_alone_is_no_set_up() {
        let rows = vec![
            stmt("BEGIN", 1.0, 0.0),
            stmt("SELECT name FROM items WHERE id = $1", 1.0, 1.0),
            stmt("COMMIT", 1.0, 0.0),
        ];
        assert_eq!(recognise(&inputs(1.0, &rows, &[])), None);
    }

    #[test]
    fn calls_that_are_no_whole_multiple_of_the_connections_are_not_set_up() {
        let rows = vec![
            stmt("SHOW server_version_num", 1.5, 1.0),
            stmt("SELECT version()", 5.0, 1.0),
            stmt("SET TIME ZONE 'UTC'", 1.0, 0.0),
        ];
        let setup = recognise(&inputs(1.0, &rows, &[])).unwrap();
        let queries: Vec<&str> = setup.statements.iter().map(|s| s.query.as_str()).collect();
        assert_eq!(queries, ["SET TIME ZONE 'UTC'"]);
    }

    #[test]
    fn catalog_reads_are_told_from_app_reads() {
        let catalog = [
            "SELECT oid, typname FROM pg_type WHERE typname = ANY($1)",
            "SELECT version()",
            "select current_setting($1)",
            "SELECT column_name FROM information_schema.columns WHERE table_name = $1",
            "SELECT n.nspname FROM pg_catalog.pg_namespace n",
            "SELECT pg_is_in_recovery()",
        ];
        for q in catalog {
            assert_eq!(kind_of(q), Some(SetupKind::Catalog), "{q}");
        }
        let app = [
            "SELECT id, name FROM items WHERE owner = $1",
            "SELECT version FROM schema_migrations",
            "SELECT 'pg_type' AS label FROM small",
            "INSERT INTO hits DEFAULT VALUES",
            "UPDATE pg_settings SET setting = $1",
            "SELECT my_version(1)",
        ];
        for q in app {
            assert_eq!(kind_of(q), None, "{q}");
        }
        assert_eq!(kind_of("SET search_path = $1"), Some(SetupKind::Session));
        assert_eq!(kind_of("DISCARD ALL"), Some(SetupKind::Session));
        assert_eq!(kind_of("START TRANSACTION"), Some(SetupKind::Transaction));
        assert_eq!(kind_of(""), None);
    }

    #[test]
    fn is_setup_reads_the_list() {
        let rows = php_like();
        let setup = recognise(&inputs(2.0, &rows, &[]));
        assert!(is_setup(setup.as_ref(), "SELECT version()"));
        assert!(!is_setup(
            setup.as_ref(),
            "SELECT count(*) FROM items WHERE owner = $1"
        ));
        assert!(!is_setup(None, "SELECT version()"));
    }
}
