//! The read of `pg_stat_activity` that tags come from: each of the target's client
//! backends, with the statement it runs or ran last (its comment holds the tags) and that
//! statement's query id where the server computes one.

use tokio_postgres::Client;

use crate::error::Result;
use crate::postgres::views::query_error;
use pgcost_core::tags::Sample;

const SQL_TAG_ACTIVITY: &str = include_str!("../../sql/tag_activity.sql");
const SQL_TAG_ACTIVITY_V13: &str = include_str!("../../sql/tag_activity_v13.sql");

/// One read of the target's (`oid`) backends, pgcost's own table reader (`own_pid`) left
/// out; `version_num` picks the layout (no `query_id` before PG 14).
pub async fn read(
    client: &Client,
    version_num: i32,
    oid: u32,
    own_pid: i32,
) -> Result<Vec<Sample>> {
    let sql = if version_num >= 140000 {
        SQL_TAG_ACTIVITY
    } else {
        SQL_TAG_ACTIVITY_V13
    };
    let rows = client
        .query(sql, &[&oid, &own_pid])
        .await
        .map_err(|e| query_error("pg_stat_activity (sql/tag_activity.sql)", e))?;
    Ok((rows.iter())
        .map(|row| Sample {
            pid: row.get("pid"),
            query_start: row.get("query_start"),
            query_id: row.get("query_id"),
            query: row.get("query"),
        })
        .collect())
}
