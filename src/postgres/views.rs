//! Talking to Postgres: connecting, learning what the server offers, and reading each
//! statistics view with the SQL in `sql/`.

use std::collections::BTreeMap;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls, Row};

use crate::error::{Error, Result, describe_pg};
use crate::postgres::conninfo::DbTarget;
use pgcost_core::nodes::DatabaseTraffic;
use pgcost_core::report::model::counters::{Columns, Counter, DatabaseCounters, TableCounters};
use pgcost_core::snapshot::{
    DatabaseStats, StatementKey, StatementStats, StatementsInfo, TableStats,
};

/// What pg_stat_statements shows for another role's statement without pg_read_all_stats.
pub const HIDDEN_TEXT: &str = "<insufficient privilege>";
pub use pgcost_core::snapshot::UNAVAILABLE_TEXT;

const SQL_SERVER: &str = include_str!("../../sql/server.sql");
const SQL_EXTENSION: &str = include_str!("../../sql/extension.sql");
const SQL_DATABASE: &str = include_str!("../../sql/database.sql");
const SQL_DATABASE_V14: &str = include_str!("../../sql/database_columns_v14.sql");
const SQL_DATABASE_V12: &str = include_str!("../../sql/database_columns_v12.sql");
const SQL_STATEMENTS: &str = include_str!("../../sql/statements.sql");
const SQL_STATEMENTS_V1_7: &str = include_str!("../../sql/statements_columns_v1_7.sql");
const SQL_STATEMENTS_V1_8: &str = include_str!("../../sql/statements_columns_v1_8.sql");
const SQL_STATEMENTS_V1_9: &str = include_str!("../../sql/statements_columns_v1_9.sql");
const SQL_STATEMENT_TEXTS: &str = include_str!("../../sql/statement_texts.sql");
const SQL_STATEMENT_TEXTS_V1_7: &str = include_str!("../../sql/statement_texts_v1_7.sql");
const SQL_STATEMENTS_INFO: &str = include_str!("../../sql/statements_info.sql");
const SQL_TABLES: &str = include_str!("../../sql/tables.sql");
const SQL_CATALOG_SCANS: &str = include_str!("../../sql/catalog_scans.sql");
const SQL_CATALOG_NAMES: &str = include_str!("../../sql/catalog_names.sql");
const SQL_ACTIVITY: &str = include_str!("../../sql/activity.sql");
const SQL_FORCE_FLUSH: &str = include_str!("../../sql/force_flush.sql");
const SQL_BACKEND_PID: &str = include_str!("../../sql/backend_pid.sql");
const SQL_BACKEND_COUNT: &str = include_str!("../../sql/backend_count.sql");
const SQL_NEXT_XID: &str = include_str!("../../sql/next_xid.sql");
const SQL_DATABASES: &str = include_str!("../../sql/databases.sql");
const SQL_SERVER_STARTED: &str = include_str!("../../sql/server_started.sql");
const SQL_ROLES: &str = include_str!("../../sql/roles.sql");

/// Opens a connection, with TLS as `sslmode` asks, and drives it in the background.
pub async fn connect(target: &DbTarget) -> Result<Client> {
    let result = match crate::tls::client_config(&target.tls)? {
        None => target
            .config
            .connect(NoTls)
            .await
            .map(|(client, connection)| {
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                client
            }),
        Some(tls) => target
            .config
            .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
            .await
            .map(|(client, connection)| {
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                client
            }),
    };
    result.map_err(|e| {
        let (message, hint) = describe_pg(&e);
        let mut err = Error::database(format!(
            "cannot connect to {}: {message}",
            target.redacted()
        ));
        err.hint = hint.or_else(|| Some(connect_hint(&message)));
        err.with_source(e)
    })
}

fn connect_hint(message: &str) -> String {
    if message.contains("NotValidForName") || message.contains("certificate not valid for name") {
        "the server's certificate does not name this host: connect by a name it lists, or use \
         sslmode=verify-ca to check the chain only"
            .into()
    } else if message.contains("UnknownIssuer")
        || message.contains("unknown issuer")
        || message.contains("BadSignature")
    {
        "the server's certificate is not signed by sslrootcert: check the CA file".into()
    } else if message.contains("no encryption") {
        "the server accepts only TLS connections here: use sslmode=require or stronger".into()
    } else if message.contains("28P01") || message.contains("password") {
        "check the user and password (PGPASSWORD, or the password in --db)".into()
    } else if message.contains("3D000") {
        "check the database name in --db or PGDATABASE".into()
    } else {
        "check that the server runs and that --db (or DATABASE_URL / PGHOST, PGPORT) points at it"
            .into()
    }
}

/// Wraps a query error with the view or file that was being read.
pub fn query_error(what: &str, e: tokio_postgres::Error) -> Error {
    let (message, hint) = describe_pg(&e);
    let mut err = Error::database(format!("reading {what} failed: {message}"));
    err.hint = hint;
    // A server shutting down either closes the connection or first sends this backend a
    // FATAL 57P01/57P02 (the race decides which): both are a lost connection.
    let shutdown = matches!(
        e.code(),
        Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CRASH_SHUTDOWN
    );
    if e.is_closed() || shutdown {
        err.kind = crate::error::Kind::ConnectionLost;
        err.message = format!("lost the database connection while reading {what}: {message}");
        err.hint =
            Some("the server restarted or closed the connection; run the audit again".into());
    }
    err.with_source(e)
}

/// Which columns `pg_stat_statements` has, decided by the installed extension version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub enum StatementsLayout {
    /// Up to 1.7: `total_time`, no `toplevel`.
    V1_7,
    /// 1.8: `total_exec_time`, no `toplevel`.
    V1_8,
    /// 1.9 to 1.12: `total_exec_time`, `toplevel` and `pg_stat_statements_info`.
    V1_9,
}

impl StatementsLayout {
    /// Maps an `extversion` such as `1.10` to its column layout.
    pub fn for_version(extversion: &str) -> Option<StatementsLayout> {
        let mut parts = extversion.trim().split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next().unwrap_or("0").parse().ok()?;
        Some(match (major, minor) {
            (1, 0..=7) | (0, _) => StatementsLayout::V1_7,
            (1, 8) => StatementsLayout::V1_8,
            _ => StatementsLayout::V1_9,
        })
    }

    /// The snapshot's query: the columns every version has, and this version's own.
    fn sql(self) -> String {
        let columns = match self {
            StatementsLayout::V1_7 => SQL_STATEMENTS_V1_7,
            StatementsLayout::V1_8 => SQL_STATEMENTS_V1_8,
            StatementsLayout::V1_9 => SQL_STATEMENTS_V1_9,
        };
        with_version_columns(SQL_STATEMENTS, columns)
    }

    /// The texts' query: before 1.9 it has no `toplevel` to read.
    fn texts_sql(self) -> &'static str {
        match self {
            StatementsLayout::V1_7 | StatementsLayout::V1_8 => SQL_STATEMENT_TEXTS_V1_7,
            StatementsLayout::V1_9 => SQL_STATEMENT_TEXTS,
        }
    }

    /// `total_plan_time` exists from 1.8 (PG 13).
    pub fn has_plan_time(self) -> bool {
        self != StatementsLayout::V1_7
    }

    pub fn has_info(self) -> bool {
        self == StatementsLayout::V1_9
    }
}

/// What the server is, as seen from the connection that reads the cluster-wide views.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub version_num: i32,
    pub version: String,
    pub target_oid: Option<u32>,
    /// pg_stat_statements is loaded through shared_preload_libraries.
    pub preloads_statements: bool,
    pub read_all_stats: bool,
    pub max_connections: i32,
    pub track_counts: bool,
    pub compute_query_id: String,
    pub role: String,
    /// pg_stat_statements records utility statements (BEGIN, COMMIT, SET), so that every
    /// transaction holds at least one statement it counts.
    pub tracks_utility: bool,
    /// pg_stat_statements.track_planning is on: plan time is counted per statement.
    pub track_planning: bool,
}

impl ServerInfo {
    pub fn has_sessions(&self) -> bool {
        self.version_num >= 140000
    }
    /// PG 15 moved statistics to shared memory, with the 1 s / 10 s flush rules.
    pub fn shared_memory_stats(&self) -> bool {
        self.version_num >= 150000
    }
}

pub async fn server_info(client: &Client, target_dbname: &str) -> Result<ServerInfo> {
    let row = client
        .query_one(SQL_SERVER, &[&target_dbname])
        .await
        .map_err(|e| query_error("server settings (sql/server.sql)", e))?;
    Ok(ServerInfo {
        version_num: row.get("version_num"),
        version: row.get("version"),
        target_oid: row.get("target_oid"),
        preloads_statements: row.get("preloads_statements"),
        read_all_stats: row
            .get::<_, Option<bool>>("read_all_stats")
            .unwrap_or(false),
        max_connections: row.get("max_connections"),
        track_counts: row.get("track_counts"),
        compute_query_id: row.get("compute_query_id"),
        role: row.get("role"),
        tracks_utility: row
            .get::<_, Option<bool>>("tracks_utility")
            .unwrap_or(false),
        track_planning: row.get("track_planning"),
    })
}

/// The `pg_stat_statements` version installed in the connected database, if any.
pub async fn statements_extension(client: &Client) -> Result<Option<String>> {
    let row = client
        .query_opt(SQL_EXTENSION, &[])
        .await
        .map_err(|e| query_error("pg_extension", e))?;
    Ok(row.map(|r| r.get(0)))
}

/// A row of a statistics view, read by the core's counter sets: the counter columns of the
/// views are named as the fields of the counter sets.
struct ViewRow<'a>(&'a Row);

impl Columns for ViewRow<'_> {
    fn counter(&self, column: &str) -> i64 {
        self.0.get(column)
    }

    fn optional_counter(&self, column: &str) -> Option<i64> {
        self.0.get(column)
    }

    fn time(&self, column: &str) -> f64 {
        self.0.get(column)
    }

    fn optional_time(&self, column: &str) -> Option<f64> {
        self.0.get(column)
    }
}

pub async fn read_database(
    client: &Client,
    server: &ServerInfo,
    oid: u32,
) -> Result<DatabaseStats> {
    let row = client
        .query_one(&database_sql(server.has_sessions()), &[&oid])
        .await
        .map_err(|e| query_error("pg_stat_database", e))?;
    Ok(DatabaseStats {
        counters: DatabaseCounters::read(&ViewRow(&row)),
        stats_reset: row.get("stats_reset"),
    })
}

/// The query of `pg_stat_database`: the columns every version has, and `sessions` where
/// the server has it.
fn database_sql(has_sessions: bool) -> String {
    let columns = if has_sessions {
        SQL_DATABASE_V14
    } else {
        SQL_DATABASE_V12
    };
    with_version_columns(SQL_DATABASE, columns)
}

/// `query` with a version's own columns (a select list from `sql/*_columns_*.sql`) in
/// place of `{version_columns}`.
fn with_version_columns(query: &str, columns: &str) -> String {
    query.replace("{version_columns}", columns.trim_end())
}

/// Every database's transactions and rows read (`pg_stat_database`), by name.
pub async fn read_databases(client: &Client) -> Result<BTreeMap<String, DatabaseTraffic>> {
    let rows = client
        .query(SQL_DATABASES, &[])
        .await
        .map_err(|e| query_error("pg_stat_database (sql/databases.sql)", e))?;
    Ok(rows
        .iter()
        .map(|row| {
            let traffic = DatabaseTraffic {
                transactions: row.get("transactions"),
                tup_returned: row.get("tup_returned"),
            };
            (row.get("name"), traffic)
        })
        .collect())
}

/// Reads the target's `pg_stat_statements` rows. Rows whose identity is hidden (no
/// `pg_read_all_stats`) are summed into one entry per role, so totals stay exact.
pub async fn read_statements(
    client: &Client,
    layout: StatementsLayout,
    oid: u32,
    with_texts: bool,
) -> Result<BTreeMap<StatementKey, StatementStats>> {
    let rows = client
        .query(&layout.sql(), &[&oid, &with_texts])
        .await
        .map_err(|e| query_error("pg_stat_statements", e))?;
    let mut out: BTreeMap<StatementKey, StatementStats> = BTreeMap::new();
    for row in rows {
        let queryid: Option<i64> = row.get("queryid");
        let key = statement_key(&row);
        let stats = StatementStats {
            key: key.clone(),
            // Without texts (admin mode) the text is read later, for changed entries only;
            // hidden entries have none to read.
            query: row.get::<_, Option<String>>("query").unwrap_or_else(|| {
                if queryid.is_none() {
                    HIDDEN_TEXT.to_string()
                } else {
                    String::new()
                }
            }),
            ..StatementStats::read(&ViewRow(&row))
        };
        match out.get_mut(&key) {
            Some(sum) => *sum = sum.plus(&stats),
            None => {
                out.insert(key, stats);
            }
        }
    }
    Ok(out)
}

/// The entry a `pg_stat_statements` row belongs to; a hidden entry's NULL query id is 0.
fn statement_key(row: &Row) -> StatementKey {
    StatementKey {
        userid: row.get("userid"),
        queryid: row.get::<_, Option<i64>>("queryid").unwrap_or(0),
        toplevel: row.get("toplevel"),
    }
}

/// The query texts of these entries of database `oid`, by entry: `toplevel` is part of the
/// key, or pgcost's EXPLAIN of an app statement (nested, same queryid) would lend the app's
/// entry pgcost's text, and the app's calls would be taken for pgcost's own.
pub async fn read_statement_texts(
    client: &Client,
    layout: StatementsLayout,
    oid: u32,
    queryids: &[i64],
) -> Result<BTreeMap<StatementKey, String>> {
    let rows = client
        .query(layout.texts_sql(), &[&oid, &queryids])
        .await
        .map_err(|e| query_error("pg_stat_statements", e))?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let text: Option<String> = row.get("query");
            Some((statement_key(&row), text?))
        })
        .collect())
}

pub async fn read_statements_info(client: &Client) -> Result<StatementsInfo> {
    let row = client
        .query_one(SQL_STATEMENTS_INFO, &[])
        .await
        .map_err(|e| query_error("pg_stat_statements_info", e))?;
    Ok(StatementsInfo {
        dealloc: row.get("dealloc"),
        stats_reset: row.get("stats_reset"),
    })
}

/// Reads `pg_stat_user_tables`; `client` must be connected to the target database.
pub async fn read_tables(client: &Client) -> Result<BTreeMap<String, TableStats>> {
    let rows = client
        .query(SQL_TABLES, &[])
        .await
        .map_err(|e| query_error("pg_stat_user_tables", e))?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let name: String = row.get("name");
            let stats = TableStats {
                counters: TableCounters::read(&ViewRow(&row)),
                relpages: row.get("relpages"),
                n_live_tup: row.get("n_live_tup"),
            };
            (name, stats)
        })
        .collect())
}

/// The scans of each system catalog relation of the connected database that has any, by
/// oid (`sql/catalog_scans.sql`).
pub async fn read_catalog_scans(client: &Client) -> Result<BTreeMap<u32, i64>> {
    let rows = client
        .query(SQL_CATALOG_SCANS, &[])
        .await
        .map_err(|e| query_error("pg_stat_get_numscans() of the system catalogs", e))?;
    Ok(rows
        .into_iter()
        .map(|row| (row.get::<_, i32>("oid") as u32, row.get::<_, i64>("scans")))
        .collect())
}

/// The names of the system catalog relations, by oid (`sql/catalog_names.sql`).
pub async fn read_catalog_names(client: &Client) -> Result<BTreeMap<u32, String>> {
    let rows = client
        .query(SQL_CATALOG_NAMES, &[])
        .await
        .map_err(|e| query_error("pg_class", e))?;
    Ok(rows
        .into_iter()
        .map(|row| {
            (
                row.get::<_, i32>("oid") as u32,
                row.get::<_, String>("name"),
            )
        })
        .collect())
}

/// One backend connected to the target database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Backend {
    pub pid: i32,
    pub backend_type: String,
    pub state: String,
    /// Seconds since its last state change, by the server's wall clock.
    pub idle_seconds: f64,
    /// Its role (`usename`), visible even where its state is hidden; empty for none.
    pub role: String,
    /// Its `application_name`, visible even where its state is hidden.
    pub application: String,
}

impl Backend {
    /// `role app, application "cron"` (the application only when it has one).
    pub fn who(&self) -> String {
        match self.application.is_empty() {
            true => format!("role {}", self.role),
            false => format!("role {}, application {:?}", self.role, self.application),
        }
    }
}

/// One read of `pg_stat_activity`: the target's backends, and the server's wall clock
/// (seconds since the Unix epoch) when it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub server_now: f64,
    pub backends: Vec<Backend>,
}

pub async fn read_activity(client: &Client, oid: u32, own_pid: i32) -> Result<Activity> {
    let rows = client
        .query(SQL_ACTIVITY, &[&oid, &own_pid])
        .await
        .map_err(|e| query_error("pg_stat_activity", e))?;
    let server_now = rows.first().map_or(0.0, |row| row.get("now"));
    let backends = rows
        .into_iter()
        .filter_map(|row| {
            Some(Backend {
                pid: row.get::<_, Option<i32>>("pid")?,
                backend_type: row.get("backend_type"),
                state: row.get("state"),
                idle_seconds: row.get("idle_seconds"),
                role: row.get("role"),
                application: row.get("application"),
            })
        })
        .collect();
    Ok(Activity {
        server_now,
        backends,
    })
}

/// Every role's name, by oid (pg_stat_statements names a statement's role by oid).
pub async fn read_roles(client: &Client) -> Result<BTreeMap<u32, String>> {
    let rows = client
        .query(SQL_ROLES, &[])
        .await
        .map_err(|e| query_error("pg_roles (sql/roles.sql)", e))?;
    Ok(rows
        .iter()
        .map(|row| (row.get("oid"), row.get("name")))
        .collect())
}

pub async fn count_client_backends(client: &Client, oid: u32, own_pid: i32) -> Result<i64> {
    let row = client
        .query_one(SQL_BACKEND_COUNT, &[&oid, &own_pid])
        .await
        .map_err(|e| query_error("pg_stat_activity", e))?;
    Ok(row.get(0))
}

/// The next transaction id, with its epoch (sql/next_xid.sql).
pub async fn next_xid(client: &Client) -> Result<i64> {
    let row = client
        .query_one(SQL_NEXT_XID, &[])
        .await
        .map_err(|e| query_error("txid_current_snapshot (sql/next_xid.sql)", e))?;
    Ok(row.get(0))
}

/// Asks this connection's own backend to flush its counters when it next goes idle (PG 15+).
pub async fn force_own_flush(client: &Client) -> Result<()> {
    client
        .execute(SQL_FORCE_FLUSH, &[])
        .await
        .map_err(|e| query_error("pg_stat_force_next_flush()", e))?;
    Ok(())
}

/// Makes this connection's own backend publish every counter it holds before the call
/// returns (PG 15+): the flush runs when the backend goes idle after the statement, and
/// the simple-query protocol used here returns only on the ReadyForQuery that follows it.
pub async fn flush_own_counters_now(client: &Client) -> Result<()> {
    client
        .batch_execute(SQL_FORCE_FLUSH)
        .await
        .map_err(|e| query_error("pg_stat_force_next_flush()", e))
}

pub async fn server_started(client: &Client) -> Result<String> {
    let row = client
        .query_one(SQL_SERVER_STARTED, &[])
        .await
        .map_err(|e| query_error("pg_postmaster_start_time()", e))?;
    Ok(row.get(0))
}

pub async fn backend_pid(client: &Client) -> Result<i32> {
    let row = client
        .query_one(SQL_BACKEND_PID, &[])
        .await
        .map_err(|e| query_error("pg_backend_pid()", e))?;
    Ok(row.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the columns a counter set asks for.
    #[derive(Default)]
    struct Asked(std::cell::RefCell<Vec<String>>);

    impl Asked {
        fn ask<T: Default>(&self, column: &str) -> T {
            self.0.borrow_mut().push(column.to_string());
            T::default()
        }
    }

    impl Columns for Asked {
        fn counter(&self, column: &str) -> i64 {
            self.ask(column)
        }
        fn optional_counter(&self, column: &str) -> Option<i64> {
            self.ask(column)
        }
        fn time(&self, column: &str) -> f64 {
            self.ask(column)
        }
        fn optional_time(&self, column: &str) -> Option<f64> {
            self.ask(column)
        }
    }

    /// The names of a query's output columns.
    fn output_columns(sql: &str) -> Vec<String> {
        use sqlparser::ast::{Expr, SelectItem, SetExpr, Statement};
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let parsed = sqlparser::parser::Parser::parse_sql(&dialect, sql).unwrap();
        let [Statement::Query(query)] = &parsed[..] else {
            panic!("one query: {sql}")
        };
        let SetExpr::Select(select) = &*query.body else {
            panic!("a SELECT: {sql}")
        };
        (select.projection.iter())
            .map(|item| match item {
                SelectItem::UnnamedExpr(Expr::Identifier(name)) => name.value.clone(),
                SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                other => panic!("an unnamed column {other}"),
            })
            .collect()
    }

    #[test]
    fn every_version_reads_each_counter_under_its_name() {
        let statements = Asked::default();
        StatementStats::read(&statements);
        let mut asked = statements.0.take();
        asked.extend(["userid", "queryid", "toplevel", "query"].map(String::from));
        for layout in [
            StatementsLayout::V1_7,
            StatementsLayout::V1_8,
            StatementsLayout::V1_9,
        ] {
            let mut columns = output_columns(&layout.sql());
            columns.sort();
            let mut expected = asked.clone();
            expected.sort();
            assert_eq!(columns, expected, "{layout:?}");
        }
        let database = Asked::default();
        DatabaseCounters::read(&database);
        let mut asked = database.0.take();
        asked.push("stats_reset".to_string());
        asked.sort();
        for has_sessions in [false, true] {
            let mut columns = output_columns(&database_sql(has_sessions));
            columns.sort();
            assert_eq!(columns, asked, "sessions: {has_sessions}");
        }
    }

    #[test]
    fn layout_follows_extension_version() {
        assert_eq!(
            StatementsLayout::for_version("1.6"),
            Some(StatementsLayout::V1_7)
        );
        assert_eq!(
            StatementsLayout::for_version("1.7"),
            Some(StatementsLayout::V1_7)
        );
        assert_eq!(
            StatementsLayout::for_version("1.8"),
            Some(StatementsLayout::V1_8)
        );
        assert_eq!(
            StatementsLayout::for_version("1.9"),
            Some(StatementsLayout::V1_9)
        );
        assert_eq!(
            StatementsLayout::for_version("1.10"),
            Some(StatementsLayout::V1_9)
        );
        assert_eq!(
            StatementsLayout::for_version("1.12"),
            Some(StatementsLayout::V1_9)
        );
        assert_eq!(StatementsLayout::for_version("x"), None);
        assert!(StatementsLayout::V1_9.has_info());
        assert!(!StatementsLayout::V1_8.has_info());
    }

    /// What each major from 13 to 18 ships (checked on real servers by tests/pg_matrix.rs).
    #[test]
    fn every_shipped_extension_version_has_a_layout() {
        for (major, extversion, layout) in [
            (13, "1.8", StatementsLayout::V1_8),
            (14, "1.9", StatementsLayout::V1_9),
            (15, "1.10", StatementsLayout::V1_9),
            (16, "1.10", StatementsLayout::V1_9),
            (17, "1.11", StatementsLayout::V1_9),
            (18, "1.12", StatementsLayout::V1_9),
        ] {
            assert_eq!(
                StatementsLayout::for_version(extversion),
                Some(layout),
                "PG {major} ships pg_stat_statements {extversion}"
            );
        }
        // A later version keeps the newest layout's columns rather than failing.
        assert_eq!(
            StatementsLayout::for_version("1.13"),
            Some(StatementsLayout::V1_9)
        );
    }

    #[test]
    fn every_statements_layout_names_its_time_column() {
        assert!(
            StatementsLayout::V1_7
                .sql()
                .contains("total_time AS exec_time_ms")
        );
        assert!(
            StatementsLayout::V1_8
                .sql()
                .contains("total_exec_time AS exec_time_ms")
        );
        assert!(StatementsLayout::V1_9.sql().contains("toplevel,"));
    }
}
