//! The pure core, with no I/O: snapshots of the statistics views, their deltas, the
//! per-request `Report`, the unauthenticated comparison, and the findings.

pub mod delta;
pub mod findings;
pub mod load;
pub mod report;
pub mod snapshot;
pub mod text;
pub mod unauthenticated;
