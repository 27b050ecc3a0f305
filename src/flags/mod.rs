//! The command-line definition, and nothing else: raw flags as the user typed them (the
//! lowargs of ripgrep). Each shared group of flags is declared once, in its own file, and
//! flattened into every command that takes it; pgcost.toml's endpoints are mapped onto
//! the same groups (`commands/check/config`), and `config.rs` turns the groups into a
//! validated config.

pub mod auth;
pub mod background;
pub mod base_url;
pub mod config_file;
pub mod findings;
pub mod load;
pub mod output;
pub mod source;
pub mod spelling;
pub mod survey;
pub mod target;

pub use auth::AuthArgs;
pub use background::BackgroundArgs;
pub use base_url::BaseUrlArgs;
pub use config_file::{ConfigFileArgs, DEFAULT_CONFIG};
pub use findings::{FindingsArgs, PlansArgs};
pub use load::{BurstArgs, CountArgs, LoadArgs};
pub use output::OutputArgs;
pub use source::SourceArgs;
pub use spelling::{Spelling, defaults};
pub use survey::SurveyArgs;
pub use target::TargetArgs;

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use pgcost_core::findings::FindingKind;

use crate::render::format::{
    CHECK_FORMATS, DEMO_FORMATS, RAMP_FORMATS, REPORT_FORMATS, SCALE_FORMATS,
};

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
/// [`DEFAULT_REQUESTS`] as clap takes a default (a test keeps them equal).
pub const DEFAULT_REQUESTS_TEXT: &str = "200";
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
    /// whether the wall is the app, its connection pool or the database (`pgcost docs ramp`).
    Ramp(RampArgs),
    /// Measure one URL template at several values of its parameter n (e.g. a page size),
    /// fit each statement's calls to a + b·n, and prove an N+1 by its slope (`pgcost docs
    /// scale`).
    Scale(ScaleArgs),
    /// Group an access log (or a HAR file) into routes, replay each in its own window, and
    /// rank the routes by their share of the database's work (`pgcost docs survey`).
    Survey(SurveyArgs),
    /// Print a shell completion script, e.g. `pgcost completions bash >
    /// ~/.local/share/bash-completion/completions/pgcost`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), covering every subcommand, e.g. `pgcost man >
    /// /usr/local/share/man/man1/pgcost.1`.
    Man,
    /// Print the full advice for one kind of finding: when it fires, the fix and what the
    /// fix saves.
    Explain(ExplainArgs),
    /// Print a page of the user documentation, built into the binary (`pgcost docs` lists
    /// them), e.g. `pgcost docs json` for every key of the JSON report.
    Docs(DocsArgs),
}

#[derive(Debug, Args)]
pub struct DocsArgs {
    /// The page, e.g. findings, json, ci, ramp; without it, the list of pages.
    #[arg(value_name = "TOPIC")]
    pub topic: Option<String>,
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
    #[arg(value_name = "KIND", value_parser = finding_kinds())]
    pub kind: FindingKind,
}

/// The finding kinds as the command line offers them: their names, each with its line.
fn finding_kinds() -> impl clap::builder::TypedValueParser<Value = FindingKind> {
    let kinds = FindingKind::ALL
        .map(|kind| PossibleValue::new(kind.as_str()).help(kind.one_line().trim_end_matches('.')));
    PossibleValuesParser::new(kinds).try_map(|name| name.parse::<FindingKind>())
}

#[derive(Debug, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(REPORT_FORMATS)),
    mut_arg("requests", |a| a
        .help("The number of requests the command sends; every figure is divided by it")
        .conflicts_with("count_from"))
)]
pub struct MeasureArgs {
    /// The command that makes the load, after `--`, e.g. `-- locust -f scenario.py
    /// --headless --csv run`. Its stdout and stderr pass through; Ctrl-C is forwarded.
    /// When the report goes to standard output (no -o), the command's own stdout is sent
    /// to standard error, so the report stays parseable.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    #[command(flatten)]
    pub count: CountArgs,

    /// Read the request count (and the failed requests) from the tool's result file,
    /// KIND:PATH, after the command ends. KIND: autocannon (`--json` output), locust
    /// (`--csv` PREFIX_stats.csv), k6 (`--summary-export`), oha (`--output-format json`).
    #[arg(long, value_name = "KIND:PATH")]
    pub count_from: Option<String>,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub findings: FindingsArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub background: BackgroundArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(CHECK_FORMATS)),
    mut_arg("no_plans", |a| a.help(
        "Do not fetch the plans (EXPLAIN, never run) of the findings' and the top \
         statements after the last endpoint (per_row_subquery, judged from the plans, then \
         says nothing); overrides `plans` under [defaults] in the file"
    )),
    mut_arg("config", |a| a
        .help("The file that lists the endpoints and their budgets")
        .default_value(DEFAULT_CONFIG))
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub file: ConfigFileArgs,

    /// Check only the endpoint of this name (repeatable); all by default.
    #[arg(long = "endpoint", value_name = "NAME")]
    pub endpoints: Vec<String>,

    #[command(flatten)]
    pub base: BaseUrlArgs,

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

    #[command(flatten)]
    pub plans: PlansArgs,

    #[command(flatten)]
    pub source: SourceArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", |a| output::narrowed(DEMO_FORMATS)(a)
        .help("Output format; json is shaped as {\"pipelines\": {\"naive\": REPORT, ...}}.")),
    mut_arg("requests", |a| a.help("Requests per pipeline").default_value(DEFAULT_REQUESTS_TEXT))
)]
pub struct DemoArgs {
    /// Set up the cluster and the API, print how to reach them, and stay up until Ctrl-C.
    #[arg(long)]
    pub serve: bool,

    /// After the audits, ramp the naive and the cached pipelines (pgcost ramp, steps 1 to
    /// 8 of 5 s each) and show where each one's wall is.
    #[arg(long, conflicts_with = "serve")]
    pub ramp: bool,

    #[command(flatten)]
    pub burst: BurstArgs,

    /// Time to live of the cached pipeline's per-process cache.
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub cache_ttl: String,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(REPORT_FORMATS)),
    mut_arg("requests", |a| a.default_value(DEFAULT_REQUESTS_TEXT))
)]
pub struct AuditArgs {
    /// The endpoint to measure, e.g. http://127.0.0.1:3000/api/v1/projects
    #[arg(long)]
    pub url: String,

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

impl AuditArgs {
    /// `-n`, with the default clap fills in.
    pub fn requests(&self) -> u64 {
        self.load.burst.count.requests.unwrap_or(DEFAULT_REQUESTS)
    }
}

/// `pgcost ramp`: every flag of `audit` (-n and -c aside, which the steps replace; the
/// warm-up before the first settle uses --warmup), and the steps.
#[derive(Debug, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(RAMP_FORMATS))
)]
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

    /// How long each step's measured load lasts, after a short unmeasured warm-up. The
    /// verdict judges each change against the spread of the steps' one-second samples, so
    /// a step needs five seconds at least; an inconclusive verdict says how long would
    /// decide it.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5s",
        conflicts_with = "step_requests"
    )]
    pub step_duration: String,

    /// Measure each step over exactly N requests instead of a duration (enough for five
    /// seconds at least, for the verdict to measure each step's noise).
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
    /// child processes is read from /proc at every step. Without it, the app's CPU counts
    /// as other work when the ramp judges whether this machine is saturated.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<i32>,
}

/// `pgcost scale`: every flag of `audit` (each point is measured as `audit` measures
/// its endpoint, -n requests after the warm-up), with `{n}` in --url, and the values.
#[derive(Debug, Args)]
#[command(
    after_help = EXIT_CODES,
    mut_arg("format", output::narrowed(SCALE_FORMATS)),
    // clap's help reads the letter n in braces as a line break: it is spelled out.
    mut_arg("url", |a| a.help(
        "The URL template: n in curly braces, exactly once, where the values go, in the \
         query (?limit=...) or the path (`pgcost docs scale`)"
    ))
)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub audit: AuditArgs,

    /// The values of n, at least two (three or more test the line), e.g. 5,25,50;
    /// distinct non-negative integers, measured in ascending order.
    #[arg(long, value_name = "LIST")]
    pub values: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_request_count_is_one_number() {
        assert_eq!(DEFAULT_REQUESTS_TEXT, DEFAULT_REQUESTS.to_string());
    }

    #[test]
    fn the_definition_is_consistent() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }
}
