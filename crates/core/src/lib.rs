//! The pure model and its analyses: no I/O, and no prices (the name means what a request
//! costs Postgres, in rows, blocks and round trips). The measurement (`measure/`,
//! `postgres/`, `http/`) produces the inputs; the views (`render/`) read the `Report`.
//!
//! What it holds: the counter sets of the statistics views, snapshots of
//! them, their deltas, the per-request `Report` and its headline figures, the report's
//! typed notes (caveats with stable codes), the databases of one request (nodes) and its
//! read replicas, the unauthenticated comparison, window churn, whether credentials count,
//! background traffic and its subtraction, the set-up of new connections, PgBouncer's figures and own statements, the
//! findings, the tags apps put on their SQL (`tags/`: route, controller, file:line, sampled
//! from `pg_stat_activity`), what the statements' plans say, the reading of a ramp, check's verdict
//! (`check/`) and the demo's comparison (`demo.rs`).

pub mod background;
pub mod check;
pub mod churn;
pub mod credentials;
pub mod delta;
pub mod demo;
pub mod external_load;
pub mod findings;
pub mod load;
pub mod nodes;
pub mod one_off;
pub mod pgbouncer;
pub mod plan;
pub mod ramp;
pub mod replica;
pub mod report;
pub mod run_writes;
pub mod scale;
pub mod schema;
pub mod setup;
pub mod snapshot;
pub mod source;
pub mod spread;
pub mod steady;
pub mod survey;
pub mod tags;
pub mod text;
pub mod unauthenticated;
