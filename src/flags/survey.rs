//! `pgcost survey`'s own flags: the traffic record (`--access-log`, `--har`, `--openapi`,
//! `--graphql-operations` and its `--graphql-path`),
//! the `[survey]` file (`--config`), the grouping (`--route`), the methods replayed
//! (`--allow-method`), the routes measured exactly (`--exact`) and production's statements (`--production-stats`); the rest are
//! `audit`'s groups.

use std::path::PathBuf;

use clap::Args;

use super::{
    AuthArgs, BackgroundArgs, BaseUrlArgs, ConfigFileArgs, DEFAULT_REQUESTS_TEXT, EXIT_CODES,
    FindingsArgs, LoadArgs, OutputArgs, TargetArgs, output,
};
use crate::render::format::SURVEY_FORMATS;
use pgcost_core::survey::screen::Exact;

/// Which routes of real traffic cost the database most: group a log into routes, replay
/// each in its own window, rank them by their share of the work.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(SURVEY_FORMATS)),
    mut_arg("requests", |a| a
        .help("Requests in each route's measured burst")
        .default_value(DEFAULT_REQUESTS_TEXT)),
    mut_arg("method", |a| a.hide(true)),
    // The survey replays only reads, with the logged requests' own values.
    mut_arg("allow_writes", |a| a.hide(true)),
    mut_arg("data", |a| a.hide(true)),
    mut_arg("base_url", |a| a
        .help("The app's origin the logged paths are replayed against, e.g. http://127.0.0.1:3000 \
               (or base_url under [survey])")),
    mut_arg("config", |a| a
        .help("The pgcost.toml whose [survey] section holds the inputs, the burst, top, \
               [survey.budget] and [[survey.auth]] (a credential per path prefix); ./pgcost.toml \
               when it has a [survey] section. Flags override it"))
)]
pub struct SurveyArgs {
    /// An access log (repeatable; .gz accepted): nginx/Apache combined format, or JSON
    /// lines (`pgcost docs survey` lists the keys read).
    #[arg(long = "access-log", value_name = "FILE")]
    pub access_logs: Vec<PathBuf>,

    /// A HAR file of recorded browser traffic (repeatable).
    #[arg(long = "har", value_name = "FILE")]
    pub hars: Vec<PathBuf>,

    /// An OpenAPI 3 document, JSON or YAML (repeatable): each operation replayed once at
    /// its parameters' example values, counted as 1 request.
    #[arg(long = "openapi", value_name = "FILE")]
    pub openapi: Vec<PathBuf>,

    /// A persisted-query file of GraphQL operations (repeatable): Apollo's manifest or
    /// Relay's map. Each query is replayed as a POST of its document, counted as 1
    /// request; mutations and subscriptions are skipped.
    #[arg(long = "graphql-operations", value_name = "FILE")]
    pub graphql_operations: Vec<PathBuf>,

    /// The GraphQL endpoint --graphql-operations posts to; by default the path of the
    /// log's GraphQL POSTs, else /graphql.
    #[arg(long = "graphql-path", value_name = "PATH")]
    pub graphql_path: Option<String>,

    #[command(flatten)]
    pub file: ConfigFileArgs,

    /// A route template that overrides the grouping, e.g. '/api/v1/projects/{id}'
    /// (repeatable); `{name}` matches any one path segment.
    #[arg(long = "route", value_name = "TEMPLATE")]
    pub routes: Vec<String>,

    /// Replay this method too (repeatable), e.g. POST. Only GET and HEAD are replayed by
    /// default: a replayed write changes the app's data.
    #[arg(long = "allow-method", value_name = "METHOD")]
    pub allow_methods: Vec<String>,

    /// Which routes are measured in exact windows after every route is screened:
    /// `auto` (the routes that make up 80% of the screened db time or blocks, at most 5),
    /// N (the top N by screened db time; 0 screens only) or `all` (no screening). Default
    /// `auto`, `all` with a [survey.budget] (its limits need every figure)
    #[arg(long = "exact", value_name = "N|auto|all")]
    pub exact: Option<Exact>,

    /// Production's pg_stat_statements to attribute to the routes: a CSV or JSON export
    /// (queryid, query, calls; rows, total_exec_time, shared_blks_hit optional) or a
    /// read-only postgres:// URL.
    #[arg(long = "production-stats", value_name = "SOURCE")]
    pub production_stats: Option<String>,

    #[command(flatten)]
    pub base: BaseUrlArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub findings: FindingsArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub auth: AuthArgs,

    #[command(flatten)]
    pub background: BackgroundArgs,
}

impl SurveyArgs {
    /// Whether any traffic record is named: a log, a HAR, an OpenAPI document or a file of
    /// GraphQL operations.
    pub fn has_inputs(&self) -> bool {
        let inputs = [
            &self.access_logs,
            &self.hars,
            &self.openapi,
            &self.graphql_operations,
        ];
        inputs.iter().any(|paths| !paths.is_empty())
    }
}
