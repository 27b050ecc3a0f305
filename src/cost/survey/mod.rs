//! `pgcost survey`'s model: the traffic record parsed (`input`), grouped into routes
//! (`routes`), the measured routes ranked by their share of the database's work
//! (`rank`), and production's statements mapped onto them (`production`).
//! No I/O: the command reads the files and measures.

pub mod input;
pub mod production;
pub mod rank;
pub mod routes;

pub use rank::{Measured, RouteInput, RouteResult, Shares, SurveyReport, Traffic};
