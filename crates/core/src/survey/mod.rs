//! `pgcost survey`'s model: the traffic record parsed (`input`, `openapi`, GraphQL
//! operations in `graphql`), grouped into routes (`routes`), screened and chosen for exact
//! windows (`screen`), ranked by their share of the database's work (`rank`, `shares`), held to
//! `[survey.budget]` (`budget`), each replay held to its logged statuses and credential
//! (`replay`), and production's statements mapped onto them (`production`). No I/O: the
//! command reads the files and measures.

pub mod budget;
pub mod graphql;
pub mod input;
pub mod openapi;
pub mod production;
pub mod rank;
pub mod replay;
pub mod routes;
pub mod screen;
pub mod shares;

pub use rank::{
    BudgetFailure, Measured, Measurement, RouteInput, RouteResult, SurveyReport, SurveyTraffic,
};
pub use shares::Shares;
