//! The load group: the request pgcost sends and the burst it sends it in (`-n`, `-c`,
//! `--warmup`, `-X`, `-H`, `--body`, `--body-file`, `--content-type`, `--timeout`, `--insecure`, `--cacert`,
//! `--allow-status`, `--error-header`, `--error-body-pointer`, `--retries`).

use std::path::PathBuf;

use clap::Args;

use super::{
    DEFAULT_CONCURRENCY, DEFAULT_METHOD, DEFAULT_RETRIES, DEFAULT_TIMEOUT, DEFAULT_WARMUP,
};

/// `-n`, the request count every figure is divided by. Its own group because `measure`
/// takes it without the rest of the load (and without a default); `audit` and `demo` set
/// the default with `mut_arg` (see [`super::DEFAULT_REQUESTS_TEXT`]).
#[derive(Debug, Clone, Args)]
pub struct CountArgs {
    /// Requests in the measured burst; every figure is divided by this number.
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,
}

/// `-n` and `-c`: the size of a closed-loop burst (`audit`, `ramp`'s warm-up, `demo`).
#[derive(Debug, Clone, Args)]
pub struct BurstArgs {
    #[command(flatten)]
    pub count: CountArgs,

    /// Requests in flight at once (closed loop, keep-alive).
    #[arg(short = 'c', long, default_value_t = DEFAULT_CONCURRENCY)]
    pub concurrency: u32,
}

/// The request and the burst of `audit` and `ramp`.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub burst: BurstArgs,

    /// Unmeasured requests sent first, to open the app's pool and prime its caches; a floor:
    /// the warm-up goes on until every statement's figures are steady.
    #[arg(long, default_value_t = DEFAULT_WARMUP)]
    pub warmup: u64,

    /// HTTP method. A method other than GET, HEAD and OPTIONS, or a GraphQL mutation,
    /// needs --allow-writes.
    #[arg(short = 'X', long, default_value = DEFAULT_METHOD)]
    pub method: String,

    /// Let the requests write to the database: needed for a method other than GET, HEAD
    /// and OPTIONS (a read sent with POST too, except a GraphQL query) and for a GraphQL
    /// mutation. Every request writes, the probe and the warm-up included; the report names
    /// the rows written, and pgcost does not give them back: run it against a copy.
    #[arg(long)]
    pub allow_writes: bool,

    /// A request header, 'Name: value'. Repeatable.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Request body. A JSON object or array is sent with Content-Type: application/json
    /// unless -H or --content-type sets one. The URL, -H and the body take per-request
    /// values: {{seq}}, {{run}}, {{uuid}}, {{rand LO HI}}, {{now}}, {{data.COLUMN}}.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Rows for `{{data.COLUMN}}` in the URL, headers and body: a CSV file with a header, or
    /// JSON lines; each request takes the next row, cycling (docs/writes.md).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,

    /// Read the request body from a file.
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,

    /// The body's Content-Type, e.g. application/x-www-form-urlencoded; replaces the
    /// guess (application/json for a JSON body). With -H 'Content-Type: ...' it is a
    /// usage error.
    #[arg(long, value_name = "TYPE")]
    pub content_type: Option<String>,

    /// Per-request timeout, e.g. 500ms, 10s; timed-out requests count as errors.
    #[arg(long, default_value = DEFAULT_TIMEOUT, value_name = "DURATION")]
    pub timeout: String,

    /// Accept self-signed TLS certificates from the target (the report says so).
    #[arg(long)]
    pub insecure: bool,

    /// Trust this CA certificate (PEM) for an https:// target, besides the built-in roots.
    #[arg(long, value_name = "PATH")]
    pub cacert: Option<PathBuf>,

    /// Accept responses with this HTTP status (repeatable), e.g. 404 for an endpoint that
    /// answers not-found on purpose. Other statuses outside 2xx and 3xx make the report not
    /// valid; allowing 401 or 403 is possible, and the report warns about it.
    #[arg(long = "allow-status", value_name = "CODE")]
    pub allow_status: Vec<u16>,

    /// A response header that marks an error answered with a 2xx status (repeatable);
    /// MediaWiki-API-Error always does. Such responses count as errors: the report is not
    /// valid.
    #[arg(long = "error-header", value_name = "NAME")]
    pub error_headers: Vec<String>,

    /// A JSON pointer into 2xx response bodies, e.g. /status/error: when the value there
    /// is set (not null, false, 0 or empty), the response is an error. Replaces the
    /// built-in rule (a top-level "error" or "errors" with no "data" or "result").
    #[arg(long, value_name = "POINTER")]
    pub error_body_pointer: Option<String>,

    /// Measure a window again, up to N times, when an app connection opened or closed in
    /// it (a connection age limit, idle reaping, a pool growing): the report is the clean
    /// window, and says how many were discarded. A connection per request is a cost, not
    /// churn, and is never retried.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RETRIES)]
    pub retries: u32,
}
