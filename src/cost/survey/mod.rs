//! `pgcost survey`'s model: the traffic record parsed (`input`), grouped into routes
//! (`routes`), and the measured routes ranked by their share of the database's work
//! (`rank`). No I/O: the command reads the files and measures.

pub mod input;
pub mod rank;
pub mod routes;

pub use rank::{Measured, RouteInput, RouteResult, Shares, SurveyReport, Traffic};
