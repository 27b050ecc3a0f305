//! A replica's recovery state (`pg_is_in_recovery()`, its replay behind what it received),
//! read on the standby itself with `sql/recovery.sql`.

use tokio_postgres::Client;

use crate::error::Result;
use crate::postgres::views::query_error;
use pgcost_core::replica::Recovery;

const SQL_RECOVERY: &str = include_str!("../../sql/recovery.sql");

/// Reads the recovery state of the server `client` is connected to.
pub async fn read(client: &Client) -> Result<Recovery> {
    let row = client
        .query_one(SQL_RECOVERY, &[])
        .await
        .map_err(|e| query_error("the recovery state (sql/recovery.sql)", e))?;
    Ok(Recovery {
        in_recovery: row.get("in_recovery"),
        replay_behind_bytes: row.get("replay_behind_bytes"),
        since_last_replay_seconds: row.get("since_last_replay_seconds"),
    })
}
