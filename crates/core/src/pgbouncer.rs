//! PgBouncer as its admin console shows it, as pure arithmetic: the pool's `SHOW STATS`
//! and `SHOW POOLS` rows and their deltas per request; PgBouncer's own statements are
//! `own`'s.

pub mod own;

use serde::{Deserialize, Serialize};

use crate::delta::per_request;
pub use crate::report::model::PgBouncerFigures;
pub use own::{Own, exclude, max_checks, pgbouncer_set, recognise, shape};

/// The admin database of PgBouncer itself, never the measured one.
pub const ADMIN_DATABASE: &str = "pgbouncer";

/// One database's row of `SHOW STATS` (totals since PgBouncer started).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsRow {
    pub database: String,
    pub xact_count: i64,
    pub query_count: i64,
    /// `total_wait_time`: microseconds clients waited for a server connection.
    pub wait_time_us: i64,
}

/// One pool's row of `SHOW POOLS`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolsRow {
    pub database: String,
    pub user: String,
    /// Clients queued for a server connection.
    pub cl_waiting: i64,
    /// Server connections of the pool: active, idle, used, tested and logging in.
    pub servers: i64,
}

/// `SHOW STATS` and `SHOW POOLS` read at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub stats: Vec<StatsRow>,
    pub pools: Vec<PoolsRow>,
}

impl Reading {
    pub fn stats_of(&self, database: &str) -> Option<&StatsRow> {
        self.stats.iter().find(|s| s.database == database)
    }

    /// Clients waiting in the pools of `database`, every user's.
    pub fn cl_waiting(&self, database: &str) -> i64 {
        (self.pools.iter().filter(|p| p.database == database))
            .map(|p| p.cl_waiting)
            .sum()
    }

    /// Server connections of the pools of `database`.
    pub fn servers(&self, database: &str) -> i64 {
        (self.pools.iter().filter(|p| p.database == database))
            .map(|p| p.servers)
            .sum()
    }
}

/// One entry of `SHOW DATABASES`: PgBouncer's name for it, and the server database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatabaseEntry {
    pub name: String,
    pub database: String,
}

/// The PgBouncer database that fronts the target database `dbname`: the one of that name,
/// else the only one that points at a database of that name, else the name itself under a
/// fallback `*` entry; `Err` says why not.
pub fn pool_database(entries: &[DatabaseEntry], dbname: &str) -> Result<String, String> {
    if entries.iter().any(|e| e.name == dbname) {
        return Ok(dbname.to_string());
    }
    let pointing: Vec<&str> = (entries.iter())
        .filter(|e| e.database == dbname && e.name != ADMIN_DATABASE)
        .map(|e| e.name.as_str())
        .collect();
    match pointing.as_slice() {
        [only] => Ok(only.to_string()),
        // The fallback `*` entry serves any database under its own name, once used.
        [] if entries.iter().any(|e| e.name == "*") => Ok(dbname.to_string()),
        [] => Err(format!("PgBouncer has no database for {dbname:?}")),
        several => Err(format!(
            "several PgBouncer databases point at {dbname:?} ({})",
            several.join(", ")
        )),
    }
}

/// What PgBouncer's settings say about its own statements (`SHOW CONFIG`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub check_query: String,
    /// `server_check_delay`, in seconds; 0 checks at every hand-out.
    pub check_delay_seconds: f64,
    pub reset_query: String,
    pub reset_query_always: bool,
    pub pool_mode: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            check_query: "select 1".into(),
            check_delay_seconds: 30.0,
            reset_query: "DISCARD ALL".into(),
            reset_query_always: false,
            pool_mode: "session".into(),
        }
    }
}

/// The figures of `database` between two readings; `None` when it has no stats row at the
/// end (a pool that did not exist at the start counts from zero).
pub fn figures(
    database: &str,
    (before, after): (&Reading, &Reading),
    max_cl_waiting: i64,
    requests: u64,
    own_statements: i64,
) -> Option<PgBouncerFigures> {
    let zero = StatsRow::default();
    let (b, a) = (
        before.stats_of(database).unwrap_or(&zero),
        after.stats_of(database)?,
    );
    let grown = |f: fn(&StatsRow) -> i64| (f(a) - f(b)).max(0);
    let wait_us = grown(|s| s.wait_time_us);
    Some(PgBouncerFigures {
        database: database.to_string(),
        transactions_per_request: per_request(grown(|s| s.xact_count), requests),
        queries_per_request: per_request(grown(|s| s.query_count), requests),
        wait_ms_per_request: per_request(wait_us, requests) / 1000.0,
        max_cl_waiting: max_cl_waiting
            .max(before.cl_waiting(database))
            .max(after.cl_waiting(database)),
        own_statements,
    })
}

/// PgBouncer over one ramp step: what the ramp's verdict reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepPgBouncer {
    pub wait_ms_per_request: f64,
    pub max_cl_waiting: i64,
}

impl From<&PgBouncerFigures> for StepPgBouncer {
    fn from(f: &PgBouncerFigures) -> StepPgBouncer {
        StepPgBouncer {
            wait_ms_per_request: f.wait_ms_per_request,
            max_cl_waiting: f.max_cl_waiting,
        }
    }
}

#[cfg(test)]
mod tests;
