//! The Postgres side: connection settings, the statistics views, the statistics
//! connection and its own footprint, settling, a replica's recovery state, the statements'
//! plans, the samples of `pg_stat_activity` that tags are read from, and the throwaway cluster; and PgBouncer's admin console.

pub mod cluster;
pub mod conninfo;
pub mod pgbouncer;
pub mod plans;
pub mod ramp;
pub mod recovery;
pub mod settle;
pub mod stats_connection;
pub mod tags;
pub mod views;
