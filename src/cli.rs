//! The command-line definition, and nothing else: raw flags as the user typed them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::render::format::{CHECK_FORMATS, DEMO_FORMATS, Format, Formats, REPORT_FORMATS};

const EXIT_CODES: &str = "\
Exit codes:
  0    the report is valid (and, for check, within budget)
  1    a budget was exceeded
  2    usage or setup error: nothing was measured
  3    a report was produced, but its numbers are not trustworthy
  130  interrupted";

// The defaults of `pgcost audit`, which `pgcost check` applies to what pgcost.toml leaves out.
pub const DEFAULT_ADMIN_DB: &str = "postgres";
pub const DEFAULT_REQUESTS: u64 = 200;
pub const DEFAULT_CONCURRENCY: u32 = 8;
pub const DEFAULT_WARMUP: u64 = 20;
pub const DEFAULT_METHOD: &str = "GET";
pub const DEFAULT_TIMEOUT: &str = "30s";
pub const DEFAULT_SETTLE_TIMEOUT: &str = "30s";
pub const DEFAULT_JWT_TTL: &str = "1h";
pub const DEFAULT_RETRIES: u32 = 2;

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
    /// Measure the load your own tool makes (Locust, k6, autocannon, oha, a test suite):
    /// settle, snapshot, run the command after `--`, settle, snapshot, and divide by its
    /// request count.
    Measure(MeasureArgs),
    /// Raise the load step by step, find the knee where throughput stops growing, and say
    /// whether the wall is the app, its connection pool or the database (docs/ramp.md).
    Ramp(RampArgs),
    /// Print a shell completion script, e.g. `pgcost completions bash >
    /// ~/.local/share/bash-completion/completions/pgcost`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), covering every subcommand, e.g. `pgcost man >
    /// /usr/local/share/man/man1/pgcost.1`.
    Man,
    /// Print the full advice for one kind of finding: when it fires, the fix and what the
    /// fix saves.
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The finding kind, as pgcost prints it, e.g. collection_to_boolean.
    #[arg(value_enum, value_name = "KIND")]
    pub kind: crate::cost::findings::FindingKind,
}

#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct MeasureArgs {
    /// The command that makes the load, after `--`, e.g. `-- locust -f scenario.py
    /// --headless --csv run`. Its stdout and stderr pass through; Ctrl-C is forwarded.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// The number of requests the command sends; every figure is divided by it.
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "count_from")]
    pub requests: Option<u64>,

    /// Read the request count (and the failed requests) from the tool's result file,
    /// KIND:PATH, after the command ends. KIND: autocannon (`--json` output), locust
    /// (`--csv` PREFIX_stats.csv), k6 (`--summary-export`), oha (`--output-format json`).
    #[arg(long, value_name = "KIND:PATH")]
    pub count_from: Option<String>,

    /// Target database: a postgres:// URL or a libpq key=value string. Defaults to
    /// DATABASE_URL, then the PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE variables.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,

    /// PgBouncer's admin console, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer, when
    /// the load reaches --db through PgBouncer (docs/pgbouncer.md).
    #[arg(long, value_name = "URL")]
    pub pgbouncer: Option<String>,
    /// A hot standby the app reads from (repeatable): measured in the same window as a
    /// node of its own (role replica), and added to the sum. Only read, never written.
    #[arg(long, value_name = "URL")]
    pub replica: Vec<String>,

    /// Another database of the same cluster, used to read cluster-wide views so the tool's
    /// own queries stay out of the target's counters.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_ADMIN_DB)]
    pub admin_db: String,

    /// Longest wait for Postgres to publish the app's counters; past it, the report is not
    /// valid.
    #[arg(long, default_value = DEFAULT_SETTLE_TIMEOUT, value_name = "DURATION")]
    pub settle_timeout: String,

    /// Output format.
    #[arg(long, value_parser = Formats(REPORT_FORMATS), default_value = "table")]
    pub format: Format,

    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Skip the analysis that names waste (collection-to-boolean, N+1, ...).
    #[arg(long)]
    pub no_findings: bool,

    /// Do not fetch the plans (EXPLAIN, never run) of the findings' and the top statements
    /// after the measured window.
    #[arg(long)]
    pub no_plans: bool,

    /// Change a finding threshold, NAME=VALUE (repeatable); names are in docs/findings.md.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub thresholds: Vec<String>,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub background: BackgroundArgs,
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
    #[arg(long, value_parser = Formats(CHECK_FORMATS), default_value = "table")]
    pub format: Format,

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

    /// Do not fetch the plans (EXPLAIN, never run) of the findings' and the top statements
    /// after the last endpoint; overrides `plans` under [defaults] in the file.
    #[arg(long)]
    pub no_plans: bool,

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

    /// After the audits, ramp the naive and the cached pipelines (pgcost ramp, steps 1 to
    /// 8 of 1 s each) and show where each one's wall is.
    #[arg(long, conflicts_with = "serve")]
    pub ramp: bool,

    /// Requests per pipeline.
    #[arg(short = 'n', long, default_value_t = 200)]
    pub requests: u64,

    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 8)]
    pub concurrency: u32,

    /// Time to live of the cached pipeline's per-process cache.
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub cache_ttl: String,

    /// Output format; json is shaped as {"pipelines": {"naive": REPORT, ...}}.
    #[arg(long, value_parser = Formats(DEMO_FORMATS), default_value = "table")]
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
    /// Repeat it for every database the request touches: each is measured in the same
    /// window, and the figures are their sum.
    #[arg(long, value_name = "URL")]
    pub db: Vec<String>,

    /// PgBouncer's admin console, e.g. postgres://pgbouncer@127.0.0.1:6432/pgbouncer, when
    /// the app reaches --db through PgBouncer: its transactions, queries, wait time and
    /// waiting clients are reported beside Postgres's, and its own statements left out
    /// (docs/pgbouncer.md). --db stays a direct connection to Postgres.
    #[arg(long, value_name = "URL")]
    pub pgbouncer: Option<String>,
    /// A hot standby the app reads from (repeatable): measured in the same window as a
    /// node of its own (role replica), and added to the sum. Only read, never written.
    #[arg(long, value_name = "URL")]
    pub replica: Vec<String>,

    /// Another database of the same cluster, used to read cluster-wide views so the tool's
    /// own queries stay out of the target's counters.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_ADMIN_DB)]
    pub admin_db: String,

    /// Requests in the measured burst; every figure is divided by this number.
    #[arg(short = 'n', long, default_value_t = DEFAULT_REQUESTS)]
    pub requests: u64,

    /// Requests in flight at once (closed loop, keep-alive).
    #[arg(short = 'c', long, default_value_t = DEFAULT_CONCURRENCY)]
    pub concurrency: u32,

    /// Unmeasured requests sent first, to open the app's pool and prime its caches.
    #[arg(long, default_value_t = DEFAULT_WARMUP)]
    pub warmup: u64,

    /// HTTP method.
    #[arg(short = 'X', long, default_value = DEFAULT_METHOD)]
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
    #[arg(long, default_value = DEFAULT_TIMEOUT, value_name = "DURATION")]
    pub timeout: String,

    /// Longest wait for Postgres to publish the app's counters; past it, the report is not
    /// valid.
    #[arg(long, default_value = DEFAULT_SETTLE_TIMEOUT, value_name = "DURATION")]
    pub settle_timeout: String,

    /// Output format.
    #[arg(long, value_parser = Formats(REPORT_FORMATS), default_value = "table")]
    pub format: Format,

    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Accept self-signed TLS certificates from the target (the report says so).
    #[arg(long)]
    pub insecure: bool,

    /// Trust this CA certificate (PEM) for an https:// target, besides the built-in roots.
    #[arg(long, value_name = "PATH")]
    pub cacert: Option<PathBuf>,

    /// Skip the analysis that names waste (collection-to-boolean, N+1, ...).
    #[arg(long)]
    pub no_findings: bool,

    /// Do not fetch the plans (EXPLAIN, never run) of the findings' and the top statements
    /// after the measured window.
    #[arg(long)]
    pub no_plans: bool,

    /// Change a finding threshold, NAME=VALUE (repeatable), e.g.
    /// collection_min_rows_per_call=20. Names are listed in docs/findings.md.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub thresholds: Vec<String>,

    /// Accept responses with this HTTP status (repeatable), e.g. 404 for an endpoint that
    /// answers not-found on purpose. Other statuses outside 2xx and 3xx make the report not
    /// valid; allowing 401 or 403 is possible, and the report warns about it.
    #[arg(long = "allow-status", value_name = "CODE")]
    pub allow_status: Vec<u16>,

    /// Measure a window again, up to N times, when an app connection opened or closed in
    /// it (a connection age limit, idle reaping, a pool growing): the report is the clean
    /// window, and says how many were discarded. A connection per request is a cost, not
    /// churn, and is never retried.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RETRIES)]
    pub retries: u32,

    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub auth: AuthArgs,

    #[command(flatten)]
    pub background: BackgroundArgs,
}

/// Other traffic on the audited database (docs/background.md).
#[derive(Debug, Args)]
#[command(next_help_heading = "Background traffic")]
pub struct BackgroundArgs {
    /// Count only this role's statements (repeatable): other roles' statements are shown as
    /// background, and the settle waits do not wait for their backends.
    #[arg(long = "app-role", value_name = "NAME")]
    pub app_roles: Vec<String>,

    /// Measure a quiet window this long first (before the warm-up, or the command), with no
    /// request from pgcost: its rates (transactions, rows read, statements per second) are
    /// the background, subtracted from the measured window, with their uncertainty. E.g. 10s.
    #[arg(long, value_name = "DURATION")]
    pub control: Option<String>,

    /// With --control: the report is not valid when the background subtracted is more
    /// than this share of the signal, in any figure.
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "5%",
        requires = "control"
    )]
    pub max_background: String,
}

/// `pgcost ramp`: every flag of `audit` (-n and -c aside, which the steps replace; the
/// warm-up before the first settle uses --warmup), and the steps.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct RampArgs {
    #[command(flatten)]
    pub audit: AuditArgs,

    /// Closed-loop concurrency of each step, e.g. 1,2,4,8,16. By default it doubles from
    /// 1 until two steps past the knee, or up to 256.
    #[arg(long, value_name = "LIST")]
    pub steps: Option<String>,

    /// An open model instead of --steps: constant arrival rates in requests per second,
    /// e.g. 100,200,400. Latency runs from each request's scheduled send time; requests
    /// that start over 5 ms late are counted.
    #[arg(long = "rate", value_name = "LIST", conflicts_with = "steps")]
    pub rates: Option<String>,

    /// How long each step's measured load lasts, after a short unmeasured warm-up.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5s",
        conflicts_with = "step_requests"
    )]
    pub step_duration: String,

    /// Measure each step over exactly N requests instead of a duration.
    #[arg(long, value_name = "N")]
    pub step_requests: Option<u64>,

    /// Stop the ramp after a step whose error rate passes this, e.g. 1%.
    #[arg(long, value_name = "PERCENT", default_value = "1%")]
    pub max_errors: String,

    /// Stop the ramp after a step whose p99 latency passes this, e.g. 500ms.
    #[arg(long, value_name = "DURATION")]
    pub max_p99: Option<String>,

    /// How often pg_stat_activity is sampled (over the admin database) during a step.
    #[arg(long, value_name = "DURATION", default_value = "20ms")]
    pub sample_interval: String,

    /// An app server process on this host (repeatable): the CPU of its threads and of its
    /// child processes is read from /proc at every step.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<i32>,
}

/// How each measured request authenticates. Every value read here is a secret: none is
/// ever printed.
#[derive(Debug, Args)]
#[command(next_help_heading = "Authentication")]
pub struct AuthArgs {
    /// Send 'Authorization: Bearer TOKEN'. A value on the command line is visible to other
    /// users of this machine in `ps`: prefer --bearer-file or the PGCOST_BEARER variable.
    #[arg(long, value_name = "TOKEN", conflicts_with = "bearer_file")]
    pub bearer: Option<String>,

    /// Read the bearer token from a file (surrounding whitespace is ignored). Without
    /// --bearer or --bearer-file, the PGCOST_BEARER variable is used when set.
    #[arg(long, value_name = "PATH")]
    pub bearer_file: Option<PathBuf>,

    /// Send a cookie, 'name=value'. Repeatable; all go in one Cookie header.
    #[arg(long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,

    /// HTTP Basic authentication as USER. The password comes from PGCOST_BASIC_PASSWORD,
    /// or from a prompt when standard input is a terminal.
    #[arg(long, value_name = "USER")]
    pub basic: Option<String>,

    /// Mint a JWT signed with the secret in this environment variable (HS256/384/512).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["jwt_secret_file", "jwt_key_file"])]
    pub jwt_secret_env: Option<String>,

    /// Mint a JWT signed with the secret in this file (trailing newline ignored).
    #[arg(long, value_name = "PATH", conflicts_with = "jwt_key_file")]
    pub jwt_secret_file: Option<PathBuf>,

    /// Mint a JWT signed with this PEM private key (RS256: RSA; ES256: P-256 in PKCS#8).
    #[arg(long, value_name = "PEM")]
    pub jwt_key_file: Option<PathBuf>,

    /// Signing algorithm of the minted JWT: HS256, HS384, HS512, RS256 or ES256. Defaults
    /// to HS256 with a secret, and to the key's own type with --jwt-key-file.
    #[arg(long, value_name = "ALG")]
    pub jwt_alg: Option<String>,

    /// The minted JWT's `sub` claim.
    #[arg(long, value_name = "SUBJECT")]
    pub jwt_sub: Option<String>,

    /// The minted JWT's `iss` claim (overrides the one from --env-file).
    #[arg(long, value_name = "ISSUER")]
    pub jwt_iss: Option<String>,

    /// The minted JWT's `aud` claim (overrides the one from --env-file).
    #[arg(long, value_name = "AUDIENCE")]
    pub jwt_aud: Option<String>,

    /// Another claim, KEY=VALUE (repeatable). A value that parses as JSON is used as JSON
    /// (42, true, ["admin"]); anything else is a string.
    #[arg(long = "jwt-claim", value_name = "KEY=VALUE")]
    pub jwt_claims: Vec<String>,

    /// Lifetime of the minted JWT (`exp` = now + TTL).
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_JWT_TTL)]
    pub jwt_ttl: String,

    /// Read the JWT secret, issuer and audience from this dotenv file, as the app does.
    #[arg(long, value_name = "PATH")]
    pub env_file: Option<PathBuf>,

    /// Name of the secret in --env-file [default: JWT_SECRET].
    #[arg(long, value_name = "NAME", requires = "env_file")]
    pub env_secret_var: Option<String>,

    /// Name of the issuer in --env-file [default: JWT_ISSUER].
    #[arg(long, value_name = "NAME", requires = "env_file")]
    pub env_issuer_var: Option<String>,

    /// Name of the audience in --env-file [default: JWT_AUDIENCE].
    #[arg(long, value_name = "NAME", requires = "env_file")]
    pub env_audience_var: Option<String>,

    /// Log in once before the warm-up by POSTing --login-body to this URL.
    #[arg(long, value_name = "URL", requires = "login_body")]
    pub login_url: Option<String>,

    /// The login request's JSON body, or @PATH to read it from a file. A password on the
    /// command line is visible to other users in `ps`: prefer @PATH.
    #[arg(long, value_name = "JSON", requires = "login_url")]
    pub login_body: Option<String>,

    /// Where the token is in the login response, as a JSON pointer (/user/token); it is
    /// then sent as a bearer token. Without it, the session cookies the login sets are
    /// kept instead.
    #[arg(long, value_name = "POINTER", requires = "login_url")]
    pub login_token_pointer: Option<String>,

    /// Run the same burst without any credentials first, and report what everything after
    /// authentication costs: the difference between the two runs.
    #[arg(long)]
    pub compare_unauthenticated: bool,

    /// Accept an endpoint that answers the same without the credentials (the same 2xx or
    /// 3xx status, an identical body). Without this flag such a run is not valid (exit 3): an app that
    /// serves an unknown key as anonymous would be measured on its anonymous path. Before
    /// the warm-up, one request is sent with the credentials and one without.
    #[arg(long)]
    pub allow_anonymous_equal: bool,
}
