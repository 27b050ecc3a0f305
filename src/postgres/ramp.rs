//! What `pgcost ramp` reads of the server besides the statistics snapshots: samples of
//! the target's client backends from `pg_stat_activity`, its statements' execution time
//! once a second, and the connection limits.

use std::collections::BTreeSet;

use tokio_postgres::Client;

use crate::error::Result;
use crate::postgres::views::query_error;
use pgcost_core::ramp::activity::{Sample, WaitCounts};

const SQL_RAMP_ACTIVITY: &str = include_str!("../../sql/ramp_activity.sql");
const SQL_RAMP_LIMITS: &str = include_str!("../../sql/ramp_limits.sql");
const SQL_RAMP_EXEC_TIME: &str = include_str!("../../sql/ramp_exec_time.sql");

/// One sample of the target's client backends (`oid`), pgcost's own (`own_pid`) left
/// out, and their pids.
pub async fn sample(client: &Client, oid: u32, own_pid: i32) -> Result<(Sample, BTreeSet<i32>)> {
    let rows = client
        .query(SQL_RAMP_ACTIVITY, &[&oid, &own_pid])
        .await
        .map_err(|e| query_error("pg_stat_activity", e))?;
    let mut sample = Sample {
        waits: WaitCounts::default(),
        ..Sample::default()
    };
    let mut pids = BTreeSet::new();
    for row in rows {
        pids.insert(row.get::<_, i32>("pid"));
        sample.connected += 1;
        match row.get::<_, Option<String>>("state").as_deref() {
            Some("active") => {
                sample.active += 1;
                let wait: Option<String> = row.get("wait_event_type");
                sample.waits.add(wait.as_deref());
            }
            Some(state) if state.starts_with("idle in transaction") => {
                sample.idle_in_transaction += 1
            }
            _ => {}
        }
    }
    Ok((sample, pids))
}

/// The execution time of the target's (`oid`) statements so far, in ms.
pub async fn exec_time_ms(client: &Client, oid: u32) -> Result<f64> {
    let row = client
        .query_one(SQL_RAMP_EXEC_TIME, &[&oid])
        .await
        .map_err(|e| query_error("pg_stat_statements (sql/ramp_exec_time.sql)", e))?;
    Ok(row.get("exec_time_ms"))
}

/// `max_connections` and the reserved slots.
pub async fn limits(client: &Client) -> Result<(i32, i32)> {
    let row = client
        .query_one(SQL_RAMP_LIMITS, &[])
        .await
        .map_err(|e| query_error("connection settings (sql/ramp_limits.sql)", e))?;
    Ok((row.get("max_connections"), row.get("reserved")))
}
