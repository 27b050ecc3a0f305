//! pgcost: what one HTTP request costs the Postgres behind it.
//!
//! Data flows one way: `cli` → validated `config` → `audit` → `report` → `render`.
//! `check` runs that flow for every endpoint of a pgcost.toml and judges the reports.

pub mod app;
pub mod audit;
pub mod auth;
pub mod baseline;
pub mod check;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod conninfo;
pub mod delta;
pub mod demo;
pub mod error;
pub mod findings;
pub mod http1;
pub mod load;
pub mod pg;
pub mod progress;
pub mod render;
pub mod report;
pub mod settle;
pub mod snapshot;
pub mod source;
pub mod tls;
