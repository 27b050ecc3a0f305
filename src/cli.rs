//! The command-line definition, and nothing else: raw flags as the user typed them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::check::render::CheckFormat;
use crate::render::Format;

const EXIT_CODES: &str = "\
Exit codes:
  0    the report is valid (and, for check, within budget)
  1    a budget was exceeded
  2    usage or setup error: nothing was measured
  3    a report was produced, but its numbers are not trustworthy
  130  interrupted";

/// What one HTTP request costs the Postgres behind it, measured exactly.
#[derive(Debug, Parser)]
#[command(name = "pgcost", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per run: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one endpoint: transactions, statements and rows per request.
    Audit(AuditArgs),
    /// Start a throwaway cluster and the bundled demo API, and audit its three permission
    /// pipelines side by side. Needs the PostgreSQL server binaries, nothing else.
    Demo(DemoArgs),
    /// Measure every endpoint of pgcost.toml and hold each to its budget (and to a
    /// baseline): the pre-merge check for CI.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct CheckArgs {
    /// The file that lists the endpoints and their budgets.
    #[arg(long, value_name = "PATH", default_value = "pgcost.toml")]
    pub config: PathBuf,

    /// Check only the endpoint of this name (repeatable); all by default.
    #[arg(long = "endpoint", value_name = "NAME")]
    pub endpoints: Vec<String>,

    /// Use this base URL instead of the file's base_url, e.g. for an app on another port.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Table)]
    pub format: CheckFormat,

    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// A previous JSON report of pgcost check (or pgcost audit): show the change of every
    /// figure per endpoint.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Fail (exit 1) when statements, rows read or rows returned per request grew by more
    /// than this against --baseline, even within budget, e.g. 10%.
    #[arg(long, value_name = "PERCENT", requires = "baseline")]
    pub max_regression: Option<String>,

    /// Save this run as JSON, for the next --baseline. Skipped when a measurement is not
    /// valid.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct DemoArgs {
    /// Set up the cluster and the API, print how to reach them, and stay up until Ctrl-C.
    #[arg(long)]
    pub serve: bool,

    /// Requests per pipeline.
    #[arg(short = 'n', long, default_value_t = 200)]
    pub requests: u64,

    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 8)]
    pub concurrency: u32,

    /// Time to live of the cached pipeline's per-process cache.
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub cache_ttl: String,

    /// Output format: table, or json shaped as {"pipelines": {"naive": REPORT, ...}}.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct AuditArgs {
    /// The endpoint to measure, e.g. http://127.0.0.1:3000/api/v1/projects
    #[arg(long)]
    pub url: String,

    /// Target database: a postgres:// URL or a libpq key=value string. Defaults to
    /// DATABASE_URL, then the PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE variables.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,

    /// Another database of the same cluster, used to read cluster-wide views so the tool's
    /// own queries stay out of the target's counters.
    #[arg(long, value_name = "NAME", default_value = "postgres")]
    pub admin_db: String,

    /// Requests in the measured burst; every figure is divided by this number.
    #[arg(short = 'n', long, default_value_t = 200)]
    pub requests: u64,

    /// Requests in flight at once (closed loop, keep-alive).
    #[arg(short = 'c', long, default_value_t = 8)]
    pub concurrency: u32,

    /// Unmeasured requests sent first, to open the app's pool and prime its caches.
    #[arg(long, default_value_t = 20)]
    pub warmup: u64,

    /// HTTP method.
    #[arg(short = 'X', long, default_value = "GET")]
    pub method: String,

    /// A request header, 'Name: value'. Repeatable.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Read the request body from a file.
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,

    /// Per-request timeout, e.g. 500ms, 10s; timed-out requests count as errors.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub timeout: String,

    /// Longest wait for Postgres to publish the app's counters; past it, the report is not
    /// valid.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub settle_timeout: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Accept self-signed TLS certificates from the target (the report says so).
    #[arg(long)]
    pub insecure: bool,

    /// Skip the analysis that names waste (collection-to-boolean, N+1, ...).
    #[arg(long)]
    pub no_findings: bool,

    /// Change a finding threshold, NAME=VALUE (repeatable), e.g.
    /// collection_min_rows_per_call=20. Names are listed in docs/findings.md.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub thresholds: Vec<String>,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}
