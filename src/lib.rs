//! pgcost: what one HTTP request costs the Postgres behind it.
//!
//! Data flows one way: `flags` → a validated config → `measure` → `pgcost_core::report::Report` →
//! `render` → exit code. `commands` holds one module per command, each of that shape.
//! See docs/architecture.md for the tree.

pub mod auth;
pub mod commands;
pub mod config;
pub mod error;
pub mod flags;
pub mod http;
pub mod measure;
pub mod output;
pub mod postgres;
pub mod progress;
pub mod render;
pub mod tls;
pub mod values;
