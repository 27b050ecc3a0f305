//! PgBouncer's side: its admin console (`--pgbouncer`), which speaks only the simple query
//! protocol, read with `simple_query`; and the probe that refuses a `--db` that reaches
//! Postgres through a pooler.

use tokio_postgres::{Client, SimpleQueryMessage, SimpleQueryRow};

use crate::error::{Error, Result, describe_pg};
use crate::postgres::conninfo::{self, DbTarget, EnvLookup};
use crate::postgres::views;
use pgcost_core::pgbouncer::{DatabaseEntry, PoolsRow, Reading, Settings, StatsRow};

const SQL_STATS: &str = include_str!("../../sql/pgbouncer_stats.sql");
const SQL_POOLS: &str = include_str!("../../sql/pgbouncer_pools.sql");
const SQL_CONFIG: &str = include_str!("../../sql/pgbouncer_config.sql");
const SQL_DATABASES: &str = include_str!("../../sql/pgbouncer_databases.sql");
const SQL_VERSION: &str = include_str!("../../sql/pgbouncer_version.sql");
const SQL_POOLER_PROBE: &str = include_str!("../../sql/pooler_probe.sql");

/// A connection to PgBouncer's admin console.
pub struct Console {
    client: Client,
    /// `SHOW VERSION`, e.g. "PgBouncer 1.18.0".
    pub version: String,
}

impl Console {
    /// Connects to the admin console at `target` and checks it is one. tokio-postgres
    /// sends only user, database, client_encoding and application_name at start-up, which
    /// PgBouncer accepts (it refuses `options`).
    pub async fn open(target: &DbTarget) -> Result<Console> {
        let client = views::connect(target).await.map_err(|e| Error {
            message: format!("--pgbouncer: {}", e.message),
            ..e
        })?;
        let rows = query(&client, SQL_VERSION)
            .await
            .map_err(|_| not_console(target))?;
        let version = (rows.first())
            .and_then(|r| r.get(0))
            .unwrap_or_default()
            .to_string();
        if !version.starts_with("PgBouncer") {
            return Err(not_console(target));
        }
        Ok(Console { client, version })
    }

    /// `SHOW STATS` and `SHOW POOLS`, one after the other.
    pub async fn read(&self) -> Result<Reading> {
        Ok(Reading {
            stats: self.stats().await?,
            pools: self.pools().await?,
        })
    }

    async fn stats(&self) -> Result<Vec<StatsRow>> {
        let rows = query(&self.client, SQL_STATS).await?;
        (rows.iter())
            .map(|r| {
                Ok(StatsRow {
                    database: text(r, "database")?,
                    xact_count: number(r, "total_xact_count")?,
                    query_count: number(r, "total_query_count")?,
                    wait_time_us: number(r, "total_wait_time")?,
                })
            })
            .collect()
    }

    /// `SHOW POOLS`: also what the samplers read during a burst.
    pub async fn pools(&self) -> Result<Vec<PoolsRow>> {
        let rows = query(&self.client, SQL_POOLS).await?;
        let servers = ["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"];
        (rows.iter())
            .map(|r| {
                let mut total = 0;
                for column in servers {
                    total += number(r, column)?;
                }
                Ok(PoolsRow {
                    database: text(r, "database")?,
                    user: text(r, "user")?,
                    cl_waiting: number(r, "cl_waiting")?,
                    servers: total,
                })
            })
            .collect()
    }

    /// `SHOW DATABASES`: each database's name in PgBouncer and on the server.
    pub async fn databases(&self) -> Result<Vec<DatabaseEntry>> {
        let rows = query(&self.client, SQL_DATABASES).await?;
        (rows.iter())
            .map(|r| {
                Ok(DatabaseEntry {
                    name: text(r, "name")?,
                    database: text(r, "database")?,
                })
            })
            .collect()
    }

    /// What `SHOW CONFIG` says of PgBouncer's own statements.
    pub async fn settings(&self) -> Result<Settings> {
        let rows = query(&self.client, SQL_CONFIG).await?;
        let mut settings = Settings::default();
        for row in &rows {
            let value = text(row, "value")?;
            match text(row, "key")?.as_str() {
                "server_check_query" => settings.check_query = value,
                "server_check_delay" => {
                    settings.check_delay_seconds = value.parse().unwrap_or(30.0)
                }
                "server_reset_query" => settings.reset_query = value,
                "server_reset_query_always" => settings.reset_query_always = value == "1",
                "pool_mode" => settings.pool_mode = value,
                _ => {}
            }
        }
        Ok(settings)
    }
}

fn not_console(target: &DbTarget) -> Error {
    Error::usage(format!(
        "--pgbouncer {} is not PgBouncer's admin console: SHOW VERSION did not name PgBouncer",
        target.redacted()
    ))
    .with_hint(
        "give the admin console's URL, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer, as \
         a user listed in admin_users or stats_users",
    )
}

async fn query(client: &Client, sql: &str) -> Result<Vec<SimpleQueryRow>> {
    let messages = client.simple_query(sql).await.map_err(|e| {
        let (message, hint) = describe_pg(&e);
        Error {
            hint,
            ..Error::database(format!("PgBouncer's {}: {message}", sql.trim()))
        }
    })?;
    Ok((messages.into_iter())
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .collect())
}

fn text(row: &SimpleQueryRow, column: &str) -> Result<String> {
    let value = (row.try_get(column)).map_err(|e| {
        Error::database(format!(
            "PgBouncer's admin console has no column {column}: {e}"
        ))
    })?;
    Ok(value.unwrap_or_default().to_string())
}

fn number(row: &SimpleQueryRow, column: &str) -> Result<i64> {
    let value = text(row, column)?;
    value
        .parse()
        .map_err(|_| Error::database(format!("PgBouncer's {column} is not a number: {value:?}")))
}

/// Refuses a `--db` that reaches Postgres through PgBouncer (or another pooler): pgcost
/// would read the statistics over the app's own server connections. The probe connects
/// with the `options` start-up parameter, which PgBouncer refuses, setting a placeholder
/// setting that a pooler which drops `options` would lose.
pub async fn refuse_pooler(target: &DbTarget) -> Result<()> {
    let token = format!("p{}", std::process::id());
    let mut probe = target.clone();
    probe.config.options(format!("-c pgcost.probe={token}"));
    let client = match views::connect(&probe).await {
        Ok(client) => client,
        Err(e) if e.message.contains("unsupported startup parameter") => {
            return Err(through_pooler(
                target,
                "PgBouncer refused the options start-up parameter",
            ));
        }
        // Anything else is the ordinary connection's to report.
        Err(_) => return Ok(()),
    };
    let rows = query(&client, SQL_POOLER_PROBE).await.unwrap_or_default();
    let seen = rows.first().and_then(|r| r.get(0)).unwrap_or_default();
    if seen != token {
        return Err(through_pooler(
            target,
            "the options start-up parameter did not reach the server",
        ));
    }
    Ok(())
}

fn through_pooler(target: &DbTarget, evidence: &str) -> Error {
    Error::usage(format!(
        "--db {} reaches Postgres through PgBouncer or another pooler ({evidence}): pgcost \
         would measure itself on the app's server connections",
        target.redacted()
    ))
    .with_hint(
        "give --db a direct connection to Postgres (its own host and port), and PgBouncer's \
         admin console to --pgbouncer, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer",
    )
}

/// The admin console of `--pgbouncer` (a URL or key=value string); `None` without it.
pub fn admin_target(text: Option<&str>, env: EnvLookup<'_>) -> Result<Option<DbTarget>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let target = conninfo::resolve(Some(text), env).map_err(|e| Error {
        message: format!("--pgbouncer: {}", e.message),
        ..e
    })?;
    Ok(Some(target))
}
