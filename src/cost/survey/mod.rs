//! `pgcost survey`'s model: the traffic record parsed (`input`, `openapi`), grouped into
//! routes (`routes`), the measured routes ranked by their share of the database's work
//! (`rank`) and held to `[survey.budget]` (`budget`). No I/O: the command reads the files
//! and measures.

pub mod budget;
pub mod input;
pub mod openapi;
pub mod rank;
pub mod routes;

pub use rank::{BudgetFailure, Measured, RouteInput, RouteResult, Shares, SurveyReport, Traffic};
