//! The target group: the databases a request touches and how their counters are read
//! (`--db`, `--admin-db`, `--pgbouncer`, `--replica`, `--settle-timeout`).

use clap::Args;

use super::{DEFAULT_ADMIN_DB, DEFAULT_SETTLE_TIMEOUT};

/// Where the counters are read, for `audit`, `ramp` and `measure`.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Target database: a postgres:// URL or a libpq key=value string. Defaults to
    /// DATABASE_URL, then the PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE variables.
    /// Repeat it for every database the request touches: each is measured in the same
    /// window, and the figures are their sum.
    #[arg(long, value_name = "URL")]
    pub db: Vec<String>,

    /// PgBouncer's admin console, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer, when
    /// the app reaches --db through PgBouncer: its transactions, queries, wait time and
    /// waiting clients are reported beside Postgres's, and its own statements left out
    /// (`pgcost docs pgbouncer`). --db stays a direct connection to Postgres.
    #[arg(long, value_name = "URL")]
    pub pgbouncer: Option<String>,

    /// A hot standby the app reads from (repeatable): measured in the same window as a
    /// node of its own (role replica), and added to the sum. Only read, never written.
    #[arg(long, value_name = "URL")]
    pub replica: Vec<String>,

    /// Another database of the same cluster, used to read cluster-wide views so the tool's
    /// own queries stay out of the target's counters.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_ADMIN_DB)]
    pub admin_db: String,

    /// Longest wait for Postgres to publish the app's counters; past it, the report is not
    /// valid.
    #[arg(long, default_value = DEFAULT_SETTLE_TIMEOUT, value_name = "DURATION")]
    pub settle_timeout: String,
}
