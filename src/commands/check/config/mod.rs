//! pgcost.toml and the flags of `pgcost check`, validated into one `CheckConfig`: each
//! endpoint becomes the options of one `pgcost audit` run, parsed by the same functions
//! (`values`, `auth::configure`) and checked by the same `AuditConfig::from_options` as
//! the flags, so every key means the same here as its flag does on the command line.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use toml::Spanned;

use super::acks::{Ack, parse_date};
use super::budget::Budget;
use super::previous_run::PreviousRun;
use crate::auth::{self, CredentialOptions, JwtOptions, Redactor};
use crate::config::{AuditConfig, AuditOptions};
use crate::cost::external_load::{self, CountSource};
use crate::cost::findings::{FindingKind, Thresholds};
use crate::error::{Error, Result};
use crate::flags::{
    CheckArgs, DEFAULT_ADMIN_DB, DEFAULT_CONCURRENCY, DEFAULT_JWT_TTL, DEFAULT_METHOD,
    DEFAULT_REQUESTS, DEFAULT_SETTLE_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_WARMUP,
};
use crate::http::request::RequestSpec;
use crate::postgres::conninfo::EnvLookup;
use crate::render::format::{CHECK_FORMATS, Format, Outputs};
use crate::values::{
    header, parse_duration, parse_method, parse_percent, parse_positive_duration, parse_url,
    read_body_file, read_cacert,
};

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// Prefix of every endpoint's path, e.g. `http://127.0.0.1:3000`.
    pub base_url: Option<Spanned<String>>,
    #[serde(default)]
    pub database: Database,
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub auth: Auth,
    /// Finding thresholds, as `--threshold NAME=VALUE`.
    #[serde(default)]
    pub thresholds: BTreeMap<String, f64>,
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointTable>,
}

/// `[database]`: where the counters are read. Without `url` and `url_env`, DATABASE_URL
/// and the libpq variables apply, as for `pgcost audit`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    /// A URL or key=value string without a password.
    pub url: Option<Spanned<String>>,
    /// The variable that holds the URL.
    pub url_env: Option<Spanned<String>>,
    /// Every database the requests touch, as `--db` repeated: measured in the same
    /// windows; budgets apply to their sum, `[endpoint.budget.nodes.NAME]` to one.
    pub urls: Option<Spanned<Vec<String>>>,
    /// Hot standbys the app reads from, as `--replica` repeated: each one a node (role
    /// replica) of every endpoint's window, added to the sum.
    pub replicas: Option<Spanned<Vec<String>>>,
    pub admin_db: Option<String>,
}

/// `[defaults]`: what every endpoint gets unless it says otherwise.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub requests: Option<u64>,
    pub concurrency: Option<u32>,
    pub warmup: Option<u64>,
    /// Per-request timeout, e.g. "10s".
    pub timeout: Option<String>,
    /// One value for the whole run: the settle waits are shared.
    pub settle_timeout: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub insecure: bool,
    /// A CA certificate (PEM) to trust for an https base URL.
    pub cacert: Option<PathBuf>,
    /// Fetch the plans of the findings' and the top statements after the last endpoint
    /// (default true).
    pub plans: Option<bool>,
    /// Times a window with connection churn is measured again (`--retries`).
    pub retries: Option<u32>,
    /// Accept endpoints that answer the same without the credentials
    /// (`--allow-anonymous-equal`).
    pub allow_anonymous_equal: Option<bool>,
}

/// `[auth]`: credentials, by variable name or file, never inline. See
/// [`credential_options`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    pub bearer_env: Option<String>,
    pub bearer_file: Option<PathBuf>,
    /// Cookie name → the variable that holds its value.
    #[serde(default)]
    pub cookies_env: BTreeMap<String, String>,
    pub basic_user: Option<String>,
    pub basic_password_env: Option<String>,
    pub jwt_secret_env: Option<String>,
    pub jwt_secret_file: Option<PathBuf>,
    pub jwt_key_file: Option<PathBuf>,
    pub jwt_alg: Option<String>,
    pub jwt_sub: Option<String>,
    pub jwt_iss: Option<String>,
    pub jwt_aud: Option<String>,
    #[serde(default)]
    pub jwt_claims: BTreeMap<String, toml::Value>,
    pub jwt_ttl: Option<String>,
    pub env_file: Option<PathBuf>,
    pub env_secret_var: Option<String>,
    pub env_issuer_var: Option<String>,
    pub env_audience_var: Option<String>,
    /// Absolute, or a path under `base_url`.
    pub login_url: Option<String>,
    pub login_body_file: Option<PathBuf>,
    pub login_token_pointer: Option<String>,
}

/// One `[[endpoint]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointTable {
    pub name: Spanned<String>,
    pub method: Option<String>,
    /// Starts with `/`; appended to `base_url`. An endpoint has a path or a `command`.
    pub path: Option<Spanned<String>>,
    /// Instead of `path`: the load command of `pgcost measure`, program and arguments,
    /// run in the file's directory; its count comes from `count_from` or `requests`.
    pub command: Option<Vec<String>>,
    /// `KIND:PATH`, as `pgcost measure --count-from` takes it (PATH under the file's
    /// directory).
    pub count_from: Option<String>,
    /// Name → value; `${VAR}` in a value is replaced by that variable.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    pub body_file: Option<PathBuf>,
    pub requests: Option<u64>,
    pub concurrency: Option<u32>,
    pub warmup: Option<u64>,
    pub timeout: Option<String>,
    /// Statuses this endpoint answers on purpose (`--allow-status`).
    #[serde(default)]
    pub allow_status: Vec<u16>,
    /// This endpoint is public: the same answer without credentials is accepted
    /// (`--allow-anonymous-equal`).
    pub allow_anonymous_equal: Option<bool>,
    #[serde(default)]
    pub budget: Budget,
    /// `[[endpoint.ack]]`: findings acknowledged with a reason.
    #[serde(default)]
    pub ack: Vec<AckTable>,
}

/// One `[[endpoint.ack]]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckTable {
    pub kind: Spanned<FindingKind>,
    /// A finding fingerprint, or a substring of its normalized statement (or table).
    pub statement: Option<Spanned<String>>,
    pub reason: Spanned<String>,
    /// `YYYY-MM-DD`.
    pub expires: Option<Spanned<String>>,
}

/// An endpoint ready to measure.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub name: String,
    pub budget: Budget,
    pub audit: AuditConfig,
    /// For `command = [...]`: the command that makes the load, measured as `pgcost
    /// measure` does; `None` for a path that pgcost loads itself.
    pub command: Option<CommandLoad>,
    pub acks: Vec<Ack>,
}

/// The load command of a `command = [...]` endpoint.
#[derive(Debug, Clone)]
pub struct CommandLoad {
    pub command: Vec<String>,
    pub count: CountSource,
    /// Where it runs: the directory of pgcost.toml.
    pub dir: PathBuf,
}

/// The `--baseline` run, read before measuring.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The path as given, for the report.
    pub origin: String,
    pub run: PreviousRun,
}

impl Baseline {
    /// Refuses the baseline of another endpoint set: one in which none of the endpoints
    /// to check is found (by name, or by method, path and query for an audit report).
    /// Some missing is normal (an endpoint added on the branch); all missing is the wrong
    /// file.
    pub fn check_endpoints(&self, endpoints: &[Endpoint]) -> Result<()> {
        let found = endpoints.iter().any(|e| {
            let request = &e.audit.request;
            (self.run)
                .find(&e.name, request.method.as_str(), request.url.as_str())
                .is_some()
        });
        if found || endpoints.is_empty() {
            return Ok(());
        }
        let names = |names: Vec<String>| names.join(", ");
        let theirs: Vec<String> = (self.run.entries.iter())
            .map(|e| {
                e.name
                    .clone()
                    .unwrap_or_else(|| format!("{} {}", e.method, e.path))
            })
            .collect();
        Err(Error::usage(format!(
            "--baseline {} is the baseline of another endpoint set: it has {}, none of {}",
            self.origin,
            names(theirs),
            names(endpoints.iter().map(|e| e.name.clone()).collect())
        ))
        .with_hint(
            "pass the baseline written by pgcost check --write-baseline with this pgcost.toml",
        ))
    }
}

/// Everything `check::run` needs, already checked: the endpoints of the file and the
/// flags of the command.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub path: PathBuf,
    pub endpoints: Vec<Endpoint>,
    /// `--format` and `-o`, and every `--export`.
    pub outputs: Outputs,
    pub baseline: Option<Baseline>,
    /// `--max-regression`, in percent.
    pub max_regression_percent: Option<f64>,
    pub write_baseline: Option<PathBuf>,
    pub quiet: bool,
}

impl CheckConfig {
    /// Validates the flags, loads pgcost.toml and the baseline: every usage error comes
    /// out here, before anything is measured.
    pub fn from_args(args: &CheckArgs, env: EnvLookup<'_>) -> Result<CheckConfig> {
        let max_regression_percent = args
            .max_regression
            .as_deref()
            .map(parse_percent)
            .transpose()?;
        let overrides = Overrides {
            base_url: args.base_url.clone(),
            only: args.endpoints.clone(),
        };
        let mut endpoints = load(&args.config, &overrides, env)?;
        if args.plans.no_plans {
            for endpoint in &mut endpoints {
                endpoint.audit.plans = false;
            }
        }
        // Read before measuring: a bad baseline should not cost a minute of waiting.
        let baseline = match &args.baseline {
            Some(path) => {
                let baseline = Baseline {
                    origin: path.display().to_string(),
                    run: PreviousRun::load(path)?,
                };
                baseline.check_endpoints(&endpoints)?;
                Some(baseline)
            }
            None => None,
        };
        Ok(CheckConfig {
            path: args.config.clone(),
            endpoints,
            outputs: crate::config::outputs_from_args(&args.output, CHECK_FORMATS)?,
            baseline,
            max_regression_percent,
            write_baseline: args.write_baseline.clone(),
            quiet: args.output.quiet,
        })
    }
}

/// What the command line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub base_url: Option<String>,
    /// Measure only these endpoints, in the file's order; all when empty.
    pub only: Vec<String>,
}

/// The file's text and name, to turn byte offsets into `file:line:column`.
struct Source<'a> {
    origin: String,
    text: &'a str,
}

impl Source<'_> {
    fn position(&self, offset: usize) -> (usize, usize) {
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    }

    fn at(&self, span: Option<Range<usize>>, message: impl std::fmt::Display) -> Error {
        match span {
            Some(span) => {
                let (line, column) = self.position(span.start);
                Error::usage(format!("{}:{line}:{column}: {message}", self.origin))
            }
            None => Error::usage(format!("{}: {message}", self.origin)),
        }
    }

    /// An error found in the file, without a position.
    fn in_file(&self, e: Error) -> Error {
        Error {
            message: format!("{}: {}", self.origin, e.message),
            ..e
        }
    }
}

/// Parses the text of a pgcost.toml; errors carry `origin:line:column`.
pub fn parse(text: &str, origin: &str) -> Result<File> {
    let source = Source {
        origin: origin.to_string(),
        text,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end().replace('\n', "; ");
        let hint = if message.contains("unknown field") && message.contains("bearer_env") {
            "[auth] takes secrets only by variable name or file (bearer_env, bearer_file, \
             basic_password_env, jwt_secret_env, ...), never inline"
        } else {
            "the keys are described in docs/ci.md"
        };
        source.at(e.span(), message).with_hint(hint)
    })?;
    if file.endpoints.is_empty() {
        return Err(source
            .at(None, "there is no [[endpoint]] to check")
            .with_hint("add [[endpoint]] tables with name, method and path"));
    }
    let mut seen = BTreeMap::new();
    for endpoint in &file.endpoints {
        check_endpoint(&source, endpoint, &mut seen)?;
    }
    if let Some(url) = &file.database.url
        && url
            .get_ref()
            .parse::<tokio_postgres::Config>()
            .is_ok_and(|c| c.get_password().is_some())
    {
        return Err(source
            .at(Some(url.span()), "[database] url contains a password")
            .with_hint("name a variable that holds the URL (url_env), or use PGPASSWORD"));
    }
    Ok(file)
}

/// One endpoint's name (set, and not seen before), path and budget; `seen` holds the
/// names before it, with where each is defined.
fn check_endpoint<'a>(
    source: &Source<'_>,
    endpoint: &'a EndpointTable,
    seen: &mut BTreeMap<&'a str, usize>,
) -> Result<()> {
    let name = endpoint.name.get_ref();
    if name.trim().is_empty() {
        return Err(source.at(Some(endpoint.name.span()), "an endpoint name is empty"));
    }
    if let Some(first) = seen.insert(name, endpoint.name.span().start) {
        let (line, _) = source.position(first);
        return Err(source.at(
            Some(endpoint.name.span()),
            format!("duplicate endpoint name {name:?} (first defined on line {line})"),
        ));
    }
    check_load(source, endpoint)?;
    acks(source, endpoint)?;
    for metric in super::budget::Metric::ALL {
        if metric.limit(&endpoint.budget).is_some_and(|v| v < 0.0) {
            return Err(source.at(
                Some(endpoint.name.span()),
                format!(
                    "endpoint {name:?}: budget.{} must not be negative",
                    metric.name()
                ),
            ));
        }
    }
    Ok(())
}

/// An endpoint's load: a path under `base_url`, or a command with its count.
fn check_load(source: &Source<'_>, endpoint: &EndpointTable) -> Result<()> {
    let name = endpoint.name.get_ref();
    let at_name = |message: String| source.at(Some(endpoint.name.span()), message);
    match (&endpoint.path, &endpoint.command) {
        (Some(path), None) if !path.get_ref().starts_with('/') => Err(source
            .at(
                Some(path.span()),
                format!("path {:?} must start with /", path.get_ref()),
            )
            .with_hint("paths are appended to base_url, e.g. path = \"/api/v1/projects\"")),
        (Some(_), None) => Ok(()),
        (None, Some(command)) if command.is_empty() => Err(at_name(format!(
            "endpoint {name:?}: command is empty"
        ))),
        (None, Some(_)) if endpoint.count_from.is_none() && endpoint.requests.is_none() => {
            Err(at_name(format!(
                "endpoint {name:?}: a command needs its request count"
            ))
            .with_hint("add count_from = \"locust:run_stats.csv\" (or autocannon:, k6:, oha:), or requests = N"))
        }
        (None, Some(_)) => Ok(()),
        (Some(_), Some(_)) => Err(at_name(format!(
            "endpoint {name:?} has both path and command"
        ))
        .with_hint("an endpoint is either a path that pgcost loads, or a command that makes the load")),
        (None, None) => Err(at_name(format!("endpoint {name:?} has no path"))
            .with_hint("add path = \"/api/v1/...\" (or command = [...] for your own load tool)")),
    }
}

/// An endpoint's `[[endpoint.ack]]` tables, validated: a reason, a real date.
fn acks(source: &Source<'_>, endpoint: &EndpointTable) -> Result<Vec<Ack>> {
    let name = endpoint.name.get_ref();
    endpoint
        .ack
        .iter()
        .map(|table| {
            if table.reason.get_ref().trim().is_empty() {
                return Err(source
                    .at(Some(table.reason.span()), format!("endpoint {name:?}: an ack's reason is empty"))
                    .with_hint("say why the finding is accepted for now, e.g. reason = \"fixed in #123\""));
            }
            let expires = (table.expires.as_ref())
                .map(|date| {
                    parse_date(date.get_ref()).map_err(|e| {
                        source
                            .at(Some(date.span()), format!("endpoint {name:?}: ack expires {e}"))
                            .with_hint("write the date as expires = \"2027-03-01\"")
                    })
                })
                .transpose()?;
            if let Some(statement) = &table.statement
                && statement.get_ref().trim().is_empty()
            {
                return Err(source.at(
                    Some(statement.span()),
                    format!("endpoint {name:?}: an ack's statement is empty; leave it out to acknowledge every finding of the kind"),
                ));
            }
            let span = (table.statement.as_ref()).map_or(table.kind.span(), |s| s.span());
            let (line, column) = source.position(span.start);
            Ok(Ack {
                kind: *table.kind.get_ref(),
                statement: table.statement.as_ref().map(|s| s.get_ref().clone()),
                reason: table.reason.get_ref().clone(),
                expires,
                at: format!("{}:{line}:{column}", source.origin),
            })
        })
        .collect()
}

/// Reads a variable that must be set.
fn read_var(key: &str, name: &str, env: EnvLookup<'_>) -> Result<String> {
    env(name).filter(|v| !v.is_empty()).ok_or_else(|| {
        Error::usage(format!("{key} names the variable {name}, which is not set"))
            .with_hint(format!("export {name}=... before running pgcost check"))
    })
}

/// Reads a variable that must be set and holds a secret; the value joins `secrets`.
fn read_secret_var(
    key: &str,
    name: &str,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<String> {
    let value = read_var(key, name, env)?;
    secrets.push(value.clone());
    Ok(value)
}

/// Replaces each `${NAME}` with the variable's value; the values are recorded as secrets.
fn expand_vars(
    text: &str,
    what: &str,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| {
            Error::usage(format!("{what}: `${{` without a closing `}}`"))
                .with_hint("write variables as ${NAME}")
        })?;
        let value = read_secret_var(what, &after[..end], env, secrets)?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `[auth]` keys that need another and have no flag of their own (the flags' rules are
/// in [`crate::flags::auth`], shared with clap).
const TOML_ONLY_DEPENDENT_AUTH_KEYS: [(&str, &str); 1] = [("basic_password_env", "basic_user")];

/// Refuses `[auth]` keys that exclude each other, or that miss the key they need.
fn check_auth_keys(auth: &Auth) -> Result<()> {
    let given: BTreeMap<&str, bool> = [
        ("bearer_env", auth.bearer_env.is_some()),
        ("bearer_file", auth.bearer_file.is_some()),
        ("basic_user", auth.basic_user.is_some()),
        ("basic_password_env", auth.basic_password_env.is_some()),
        ("jwt_secret_env", auth.jwt_secret_env.is_some()),
        ("jwt_secret_file", auth.jwt_secret_file.is_some()),
        ("jwt_key_file", auth.jwt_key_file.is_some()),
        ("env_file", auth.env_file.is_some()),
        ("env_secret_var", auth.env_secret_var.is_some()),
        ("env_issuer_var", auth.env_issuer_var.is_some()),
        ("env_audience_var", auth.env_audience_var.is_some()),
        ("login_url", auth.login_url.is_some()),
        ("login_body_file", auth.login_body_file.is_some()),
        ("login_token_pointer", auth.login_token_pointer.is_some()),
    ]
    .into();
    use crate::flags::auth::{CONFLICTS, REQUIRES, toml_key};
    for (a, b) in CONFLICTS.iter().map(|(a, b)| (toml_key(a), toml_key(b))) {
        if given[a] && given[b] {
            return Err(Error::usage(format!(
                "[auth] has both {a} and {b}; keep one"
            )));
        }
    }
    let flag_rules = REQUIRES.iter().map(|(a, b)| (toml_key(a), toml_key(b)));
    for (key, needed) in TOML_ONLY_DEPENDENT_AUTH_KEYS.into_iter().chain(flag_rules) {
        if given[key] && !given[needed] {
            return Err(Error::usage(format!(
                "[auth] {key} is set without {needed}"
            )));
        }
    }
    Ok(())
}

/// `[auth] jwt_claims` as `KEY=VALUE` claims: a string as it is, anything else as JSON.
fn jwt_claims(claims: &BTreeMap<String, toml::Value>) -> Result<Vec<String>> {
    claims
        .iter()
        .map(|(claim, value)| {
            let text = match value {
                toml::Value::String(s) => s.clone(),
                other => serde_json::to_string(other).map_err(|e| {
                    Error::usage(format!("[auth] jwt_claims.{claim} cannot be a claim: {e}"))
                })?,
            };
            Ok(format!("{claim}={text}"))
        })
        .collect()
}

/// `[auth]` as the credential options of `pgcost audit`: the one place to adjust when
/// those options change. Secrets named by variable are read here (and added to
/// `secrets`); relative paths are taken from `base_dir`, relative URLs from `base_url`.
pub fn credential_options(
    auth: &Auth,
    base_url: &str,
    base_dir: &Path,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<CredentialOptions> {
    check_auth_keys(auth)?;
    let bearer = (auth.bearer_env.as_ref())
        .map(|name| read_secret_var("[auth] bearer_env", name, env, secrets))
        .transpose()?;
    let mut cookies = Vec::new();
    for (cookie, name) in &auth.cookies_env {
        let value = read_secret_var("[auth] cookies_env", name, env, secrets)?;
        cookies.push(format!("{cookie}={value}"));
    }
    if let Some(name) = &auth.basic_password_env {
        read_secret_var("[auth] basic_password_env", name, env, secrets)?;
    }
    if let Some(name) = &auth.jwt_secret_env {
        read_var("[auth] jwt_secret_env", name, env)?;
    }
    let ttl = auth.jwt_ttl.as_deref().unwrap_or(DEFAULT_JWT_TTL);
    let in_dir = |path: &Option<PathBuf>| path.as_deref().map(|p| base_dir.join(p));
    Ok(CredentialOptions {
        bearer,
        bearer_file: in_dir(&auth.bearer_file),
        cookies,
        basic: auth.basic_user.clone(),
        basic_password_var: auth.basic_password_env.clone(),
        jwt: JwtOptions {
            secret_env: auth.jwt_secret_env.clone(),
            secret_file: in_dir(&auth.jwt_secret_file),
            key_file: in_dir(&auth.jwt_key_file),
            alg: auth.jwt_alg.clone(),
            sub: auth.jwt_sub.clone(),
            iss: auth.jwt_iss.clone(),
            aud: auth.jwt_aud.clone(),
            claims: jwt_claims(&auth.jwt_claims)?,
            ttl: parse_positive_duration("[auth] jwt_ttl", ttl)?,
            env_file: in_dir(&auth.env_file),
            env_secret_var: auth.env_secret_var.clone(),
            env_issuer_var: auth.env_issuer_var.clone(),
            env_audience_var: auth.env_audience_var.clone(),
        },
        login_url: auth.login_url.as_ref().map(|url| {
            if url.starts_with('/') {
                format!("{}{url}", base_url.trim_end_matches('/'))
            } else {
                url.clone()
            }
        }),
        login_body: in_dir(&auth.login_body_file).map(|p| format!("@{}", p.display())),
        login_token_pointer: auth.login_token_pointer.clone(),
        allow_status: Vec::new(),
        compare_unauthenticated: false,
        allow_anonymous_equal: false,
    })
}

/// Replaces every secret in `text`.
fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| s.len() >= 4)
        .fold(text.to_string(), |text, secret| {
            text.replace(secret.as_str(), "<redacted>")
        })
}

/// Loads and validates the file at `path`, and builds the selected endpoints.
pub fn load(path: &Path, overrides: &Overrides, env: EnvLookup<'_>) -> Result<Vec<Endpoint>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", path.display()))
            .with_hint("pass --config PATH, or run pgcost check where pgcost.toml is")
    })?;
    let origin = path.display().to_string();
    let file = parse(&text, &origin)?;
    let base_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    build(&file, &text, &origin, base_dir, overrides, env)
}

/// What every endpoint of the file shares, read once.
struct Shared<'a> {
    file: &'a File,
    base_url: String,
    base_dir: &'a Path,
    db: Option<String>,
    /// The databases after the first of `[database] urls`.
    more_dbs: Vec<String>,
    /// `[database] replicas`.
    replicas: Vec<String>,
    settle_timeout: Duration,
    findings: Thresholds,
    credentials: CredentialOptions,
    /// Values read from variables: never printed.
    secrets: Vec<String>,
}

/// Builds one `AuditConfig` per selected endpoint of a parsed file. Relative file paths
/// are taken from `base_dir`, the file's directory.
pub fn build(
    file: &File,
    text: &str,
    origin: &str,
    base_dir: &Path,
    overrides: &Overrides,
    env: EnvLookup<'_>,
) -> Result<Vec<Endpoint>> {
    let source = Source {
        origin: origin.to_string(),
        text,
    };
    check_selection(file, origin, overrides)?;
    let base_url = base_url(file, &source, overrides)?;
    let mut secrets = Vec::new();
    let (db, more_dbs) = match &file.database.urls {
        Some(urls) => database_urls(&file.database, urls, &source)?,
        None => (
            database(&file.database, &source, env, &mut secrets)?,
            Vec::new(),
        ),
    };
    let credentials = credential_options(&file.auth, &base_url, base_dir, env, &mut secrets)
        .map_err(|e| source.in_file(e))?;
    let settle_timeout =
        (file.defaults.settle_timeout.as_deref()).unwrap_or(DEFAULT_SETTLE_TIMEOUT);
    let shared = Shared {
        file,
        base_dir,
        db,
        more_dbs,
        replicas: database_replicas(&file.database, &source)?,
        settle_timeout: parse_duration("[defaults] settle_timeout", settle_timeout)
            .map_err(|e| source.in_file(e))?,
        findings: findings(&file.thresholds).map_err(|e| source.in_file(e))?,
        credentials,
        base_url,
        secrets,
    };
    file.endpoints
        .iter()
        .filter(|t| overrides.only.is_empty() || overrides.only.contains(t.name.get_ref()))
        .map(|table| {
            let mut endpoint = endpoint(&shared, table, origin, env)?;
            endpoint.acks = acks(&source, table)?;
            Ok(endpoint)
        })
        .collect()
}

/// Refuses an `--endpoint` the file does not have.
fn check_selection(file: &File, origin: &str, overrides: &Overrides) -> Result<()> {
    for wanted in &overrides.only {
        if !file.endpoints.iter().any(|e| e.name.get_ref() == wanted) {
            let names: Vec<&str> = file
                .endpoints
                .iter()
                .map(|e| e.name.get_ref().as_str())
                .collect();
            return Err(
                Error::usage(format!("--endpoint {wanted:?} is not in {origin}"))
                    .with_hint(format!("its endpoints are: {}", names.join(", "))),
            );
        }
    }
    Ok(())
}

/// `--base-url`, else the file's `base_url`: an http(s) URL.
fn base_url(file: &File, source: &Source<'_>, overrides: &Overrides) -> Result<String> {
    let base_url = match (&overrides.base_url, &file.base_url) {
        (Some(url), _) => url.clone(),
        (None, Some(url)) => url.get_ref().clone(),
        (None, None) => {
            return Err(source
                .at(None, "base_url is not set")
                .with_hint("add base_url = \"http://127.0.0.1:3000\", or pass --base-url"));
        }
    };
    if let Err(e) = parse_url(&base_url) {
        let span = match (&overrides.base_url, &file.base_url) {
            (None, Some(url)) => Some(url.span()),
            _ => None,
        };
        return Err(source
            .at(
                span,
                format!("base_url {base_url:?} is not a valid http(s) URL"),
            )
            .with_hint(e.hint.unwrap_or_default()));
    }
    Ok(base_url)
}

/// `[database]`: the connection string, if the file gives one (a secret when it comes
/// from a variable).
fn database(
    database: &Database,
    source: &Source<'_>,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<Option<String>> {
    match (&database.url, &database.url_env) {
        (Some(_), Some(env_name)) => Err(source.at(
            Some(env_name.span()),
            "[database] has both url and url_env; keep one",
        )),
        (Some(url), None) => Ok(Some(url.get_ref().clone())),
        (None, Some(name)) => read_secret_var("[database] url_env", name.get_ref(), env, secrets)
            .map(Some)
            .map_err(|e| source.in_file(e)),
        (None, None) => Ok(None),
    }
}

/// `[database] urls`: the first database, then the others; alone in `[database]`, never
/// empty, and without passwords.
fn database_urls(
    database: &Database,
    urls: &Spanned<Vec<String>>,
    source: &Source<'_>,
) -> Result<(Option<String>, Vec<String>)> {
    if database.url.is_some() || database.url_env.is_some() {
        return Err(source.at(
            Some(urls.span()),
            "[database] has urls beside url or url_env; keep one",
        ));
    }
    match urls.get_ref().split_first() {
        None => Err(source.at(Some(urls.span()), "[database] urls is empty")),
        Some(_) if urls.get_ref().iter().any(|url| with_password(url)) => Err(source
            .at(Some(urls.span()), "[database] urls contains a password")
            .with_hint("use PGPASSWORD, or a .pgpass file")),
        Some((first, more)) => Ok((Some(first.clone()), more.to_vec())),
    }
}

/// True for a URL or key=value string that holds a password.
fn with_password(url: &str) -> bool {
    (url.parse::<tokio_postgres::Config>()).is_ok_and(|c| c.get_password().is_some())
}

/// `[database] replicas`, without passwords; none when absent.
fn database_replicas(database: &Database, source: &Source<'_>) -> Result<Vec<String>> {
    match &database.replicas {
        None => Ok(Vec::new()),
        Some(urls) if urls.get_ref().iter().any(|url| with_password(url)) => Err(source
            .at(Some(urls.span()), "[database] replicas contains a password")
            .with_hint("use PGPASSWORD, or a .pgpass file")),
        Some(urls) => Ok(urls.get_ref().clone()),
    }
}

/// `[thresholds]` over the default finding thresholds.
fn findings(thresholds: &BTreeMap<String, f64>) -> Result<Thresholds> {
    let pairs: Vec<(&str, f64)> = thresholds
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect();
    crate::values::thresholds("[thresholds]", &pairs)
}

/// One endpoint, checked by the same constructor as the flags of `pgcost audit`. Its
/// errors name the file and the endpoint, and never show a secret.
fn endpoint(
    shared: &Shared<'_>,
    table: &EndpointTable,
    origin: &str,
    env: EnvLookup<'_>,
) -> Result<Endpoint> {
    let name = table.name.get_ref();
    let mut secrets = shared.secrets.clone();
    let redactor = Redactor::default();
    let audit = audit_options(shared, table, env, &mut secrets).and_then(|options| {
        secrets.iter().for_each(|secret| redactor.add(secret));
        AuditConfig::from_options(options, redactor.clone(), env, &auth::prompt_on_terminal)
    });
    let audit = audit.map_err(|e| Error {
        message: format!(
            "{origin}: endpoint {name:?}: {}",
            scrub(&redactor.scrub(&e.message), &secrets)
        ),
        ..e
    })?;
    let command = command_load(shared, table).map_err(|e| Error {
        message: format!("{origin}: endpoint {name:?}: {}", e.message),
        ..e
    })?;
    Ok(Endpoint {
        name: name.clone(),
        budget: table.budget.clone(),
        audit,
        command,
        acks: Vec::new(),
    })
}

/// A command endpoint's command, count and directory.
fn command_load(shared: &Shared<'_>, table: &EndpointTable) -> Result<Option<CommandLoad>> {
    let Some(command) = &table.command else {
        return Ok(None);
    };
    let count = match (&table.count_from, table.requests) {
        (Some(text), _) => {
            let (tool, path) = external_load::parse_count_from(text).map_err(Error::usage)?;
            CountSource::Tool(tool, shared.base_dir.join(path))
        }
        (None, Some(0)) => return Err(Error::usage("requests must be at least 1")),
        (None, Some(n)) => CountSource::Given(n),
        (None, None) => return Err(Error::usage("a command needs count_from or requests")),
    };
    Ok(Some(CommandLoad {
        command: command.clone(),
        count,
        dir: shared.base_dir.to_path_buf(),
    }))
}

/// An endpoint's table over `[defaults]` and the file's shared values, as the options of
/// one audit; what the file leaves out takes the default of the flag.
fn audit_options(
    shared: &Shared<'_>,
    table: &EndpointTable,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<AuditOptions> {
    let d = &shared.file.defaults;
    // A command endpoint's request is never sent: the command makes the load.
    let path = table.path.as_ref().map_or("/", |p| p.get_ref().as_str());
    let url = format!("{}{}", shared.base_url.trim_end_matches('/'), path);
    let (timeout_key, timeout) = match (&table.timeout, &d.timeout) {
        (Some(t), _) => ("timeout", t.as_str()),
        (None, Some(t)) => ("[defaults] timeout", t.as_str()),
        (None, None) => ("--timeout", DEFAULT_TIMEOUT),
    };
    let request = RequestSpec {
        url: parse_url(&url)?,
        method: parse_method(table.method.as_deref().unwrap_or(DEFAULT_METHOD))?,
        headers: headers(d, table, env, secrets)?,
        body: body(table, shared.base_dir)?,
        timeout: parse_positive_duration(timeout_key, timeout)?,
    };
    Ok(AuditOptions {
        pgbouncer: None,
        db: shared.db.clone(),
        more_dbs: shared.more_dbs.clone(),
        replicas: shared.replicas.clone(),
        admin_db: (shared.file.database.admin_db.clone()).unwrap_or(DEFAULT_ADMIN_DB.into()),
        request,
        requests: table.requests.or(d.requests).unwrap_or(DEFAULT_REQUESTS),
        concurrency: (table.concurrency.or(d.concurrency)).unwrap_or(DEFAULT_CONCURRENCY),
        warmup: table.warmup.or(d.warmup).unwrap_or(DEFAULT_WARMUP),
        settle_timeout: shared.settle_timeout,
        outputs: Outputs {
            format: Format::Table,
            output: None,
            exports: Vec::new(),
        },
        insecure: d.insecure,
        cacert: (d.cacert.as_deref())
            .map(|path| read_cacert("[defaults] cacert", &shared.base_dir.join(path)))
            .transpose()?,
        quiet: true,
        findings: Some(shared.findings.clone()),
        plans: d.plans.unwrap_or(true),
        credentials: CredentialOptions {
            allow_status: table.allow_status.clone(),
            allow_anonymous_equal: (table.allow_anonymous_equal)
                .or(d.allow_anonymous_equal)
                .unwrap_or(false),
            ..shared.credentials.clone()
        },
        retries: d.retries.unwrap_or(crate::flags::DEFAULT_RETRIES),
        background: Default::default(),
    })
}

/// `[defaults]` headers, those the endpoint names itself replaced, then the endpoint's,
/// with `${VAR}` expanded.
fn headers(
    defaults: &Defaults,
    table: &EndpointTable,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<HeaderMap> {
    let inherited = defaults.headers.iter().filter(|(name, _)| {
        !table
            .headers
            .keys()
            .any(|own| own.eq_ignore_ascii_case(name))
    });
    let mut headers = HeaderMap::new();
    for (name, value) in inherited.chain(&table.headers) {
        let value = expand_vars(value, &format!("header {name}"), env, secrets)?;
        let (name, value) = header(name, &value)?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// The request body: `body`, or the contents of `body_file`.
fn body(table: &EndpointTable, base_dir: &Path) -> Result<Option<Bytes>> {
    match (&table.body, &table.body_file) {
        (Some(_), Some(_)) => Err(Error::usage("has both body and body_file; keep one")),
        (Some(text), None) => Ok(Some(Bytes::from(text.clone()))),
        (None, Some(path)) => read_body_file("body_file", &base_dir.join(path)).map(Some),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
base_url = "http://127.0.0.1:3000/"

[database]
url = "postgres://auditor@127.0.0.1:5432/app"

[defaults]
requests = 100
concurrency = 4
warmup = 40
headers = { Accept = "application/json", Authorization = "Bearer ${API_TOKEN}" }

[thresholds]
collection_min_rows_per_call = 20

[[endpoint]]
name = "list projects"
path = "/api/v1/projects?limit=20"

[endpoint.budget]
transactions = 3
statements = 3
rows_read = 100
rows_returned = 25.5
p95_ms = 50
forbid = ["collection_to_boolean", "n_plus_one"]

[[endpoint]]
name = "create project"
method = "post"
path = "/api/v1/projects"
requests = 20
body = '{"name": "x"}'
headers = { "content-type" = "application/json", authorization = "Token ${OTHER}" }
"#;

    fn env(name: &str) -> Option<String> {
        match name {
            "API_TOKEN" => Some("tok-123456".into()),
            "OTHER" => Some("other-secret".into()),
            "DB_URL" => Some("postgres://u:pw@h/d".into()),
            "JWT_SECRET" => Some("a-test-secret-of-more-than-32-bytes-0123456789".into()),
            _ => None,
        }
    }

    fn built(text: &str, only: &[&str]) -> Result<Vec<Endpoint>> {
        let file = parse(text, "pgcost.toml")?;
        let overrides = Overrides {
            base_url: None,
            only: only.iter().map(|s| s.to_string()).collect(),
        };
        build(
            &file,
            text,
            "pgcost.toml",
            Path::new("/repo"),
            &overrides,
            &env,
        )
    }

    fn error(text: &str) -> Error {
        built(text, &[]).expect_err("the file is invalid")
    }

    #[test]
    fn a_complete_file_becomes_one_audit_config_per_endpoint() {
        let endpoints = built(GOOD, &[]).unwrap();
        assert_eq!(endpoints.len(), 2);
        let list = &endpoints[0];
        assert_eq!(list.name, "list projects");
        assert_eq!(
            list.audit.request.url.as_str(),
            "http://127.0.0.1:3000/api/v1/projects?limit=20"
        );
        assert_eq!(list.audit.request.method, reqwest::Method::GET);
        assert_eq!(
            (
                list.audit.requests,
                list.audit.concurrency,
                list.audit.warmup
            ),
            (100, 4, 40)
        );
        assert_eq!(
            list.audit.db.redacted(),
            "postgres://auditor@127.0.0.1:5432/app"
        );
        assert_eq!(list.budget.rows_returned, Some(25.5));
        assert_eq!(list.budget.transactions, Some(3.0));
        assert_eq!(list.budget.forbid.len(), 2);
        let h = &list.audit.request.headers;
        assert_eq!(h["authorization"], "Bearer tok-123456");
        assert!(h["authorization"].is_sensitive());
        assert_eq!(
            list.audit
                .findings
                .as_ref()
                .unwrap()
                .collection_min_rows_per_call,
            20.0
        );

        let create = &endpoints[1];
        assert_eq!(create.audit.request.method, reqwest::Method::POST);
        assert_eq!(create.audit.requests, 20);
        assert_eq!(
            create.audit.request.body.as_deref(),
            Some(&b"{\"name\": \"x\"}"[..])
        );
        // The endpoint's own header replaces the default of the same name.
        let h = &create.audit.request.headers;
        assert_eq!(h.get_all("authorization").iter().count(), 1);
        assert_eq!(h["authorization"], "Token other-secret");
        assert_eq!(h["accept"], "application/json");
        assert_eq!(create.budget, Budget::default());

        let only = built(GOOD, &["create project"]).unwrap();
        assert_eq!(only.len(), 1);
        let e = built(GOOD, &["nope"]).unwrap_err();
        assert!(e.message.contains("--endpoint \"nope\""), "{}", e.message);
        assert!(e.hint.unwrap().contains("list projects, create project"));
    }

    #[test]
    fn replicas_join_every_endpoint_without_passwords() {
        let file = |replicas: &str| {
            format!(
                "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h:5432/app\"\n\
                 replicas = [{replicas}]\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n"
            )
        };
        let endpoints = built(
            &file("\"postgres://u@r1:5432/app\", \"host=r2 user=v dbname=app\""),
            &[],
        );
        let replicas: Vec<String> = (endpoints.unwrap()[0].audit.replicas.iter())
            .map(|r| r.redacted())
            .collect();
        assert_eq!(
            replicas,
            ["postgres://u@r1:5432/app", "postgres://v@r2:5432/app"]
        );
        let e = error(&file("\"postgres://u:pw@r1/app\""));
        assert!(
            e.message.contains("replicas contains a password"),
            "{}",
            e.message
        );
        // The primary again: one node, counted once.
        let e = error(&file("\"postgres://u@h:5432/app\""));
        assert!(
            e.message.contains("named twice (--db, --replica)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_keys_name_the_key_with_file_line_and_column() {
        let text =
            "base_url = \"http://h\"\n\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nrequets = 5\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:6:1: "), "{}", e.message);
        assert!(
            e.message.contains("unknown field `requets`"),
            "{}",
            e.message
        );

        let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nrows = 5\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:6:1: "), "{}", e.message);
        assert!(e.message.contains("unknown field `rows`"), "{}", e.message);

        let text = "[auth]\nbearer = \"abc\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:2:1: "), "{}", e.message);
        assert!(e.hint.unwrap().contains("never inline"));

        let text = "base_url = \"http://h\"\nverbose = true\n";
        assert!(
            error(text)
                .message
                .starts_with("pgcost.toml:2:1: unknown field `verbose`")
        );
    }

    #[test]
    fn wrong_types_and_values_carry_their_position() {
        let text = "[defaults]\nrequests = \"many\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:2:12: "), "{}", e.message);
        assert!(e.message.contains("invalid type"), "{}", e.message);

        let text = "[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nforbid = [\"n_plus_one\", \"slow\"]\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:5:25: "), "{}", e.message);
        assert!(e.message.contains("slow"), "{}", e.message);

        let text =
            "[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nstatements = -1\n";
        assert!(error(text).message.contains("must not be negative"));
    }

    #[test]
    fn a_command_endpoint_needs_its_count_and_no_path() {
        let head = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/app\"\n\
                    [[endpoint]]\nname = \"c\"\n";
        let text = format!("{head}command = [\"k6\", \"run\"]\ncount_from = \"k6:out/s.json\"\n");
        let endpoints = built(&text, &[]).unwrap();
        let load = endpoints[0].command.as_ref().unwrap();
        assert_eq!(load.command, ["k6", "run"]);
        assert_eq!(
            load.count,
            CountSource::Tool(external_load::Tool::K6, "/repo/out/s.json".into())
        );
        assert_eq!(load.dir, Path::new("/repo"));
        let text = format!("{head}command = [\"./load.sh\"]\nrequests = 40\n");
        let endpoints = built(&text, &[]).unwrap();
        assert_eq!(
            endpoints[0].command.as_ref().unwrap().count,
            CountSource::Given(40)
        );

        let cases = [
            ("command = [\"k6\"]\n", "a command needs its request count"),
            ("command = []\nrequests = 1\n", "command is empty"),
            (
                "command = [\"k6\"]\npath = \"/a\"\nrequests = 1\n",
                "has both path and command",
            ),
            ("requests = 1\n", "has no path"),
            (
                "command = [\"k6\"]\ncount_from = \"wrk:x\"\n",
                "unknown load tool",
            ),
        ];
        for (rest, expected) in cases {
            let e = error(&format!("{head}{rest}"));
            assert!(e.message.contains(expected), "{rest}: {}", e.message);
        }
    }

    #[test]
    fn paths_must_start_with_a_slash_and_names_must_be_unique() {
        let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"api/a\"\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:4:8: "), "{}", e.message);
        assert!(e.message.contains("must start with /"), "{}", e.message);

        let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n\n[[endpoint]]\nname = \"a\"\npath = \"/b\"\n";
        let e = error(text);
        assert_eq!(
            e.message,
            "pgcost.toml:7:8: duplicate endpoint name \"a\" (first defined on line 3)"
        );
    }

    #[test]
    fn secrets_come_from_variables_and_never_show_in_errors() {
        let text = "base_url = \"http://h\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nheaders = { X-Key = \"${MISSING}\" }\n";
        let e = error(text);
        assert!(
            e.message.contains("MISSING, which is not set"),
            "{}",
            e.message
        );
        assert!(e.message.starts_with("pgcost.toml: "), "{}", e.message);

        let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u:hunter2@h/d\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let e = error(text);
        assert!(e.message.starts_with("pgcost.toml:3:7: "), "{}", e.message);
        assert!(!e.message.contains("hunter2"));

        let text = "base_url = \"http://h\"\n[database]\nurl_env = \"DB_URL\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let endpoints = built(text, &[]).unwrap();
        assert_eq!(endpoints[0].audit.db.redacted(), "postgres://u@h:5432/d");

        // A header value HTTP forbids: the error names the header, not the secret.
        let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nheaders = { X-Key = \"${API_TOKEN}\\u0001x\" }\n";
        let e = error(text);
        assert!(e.message.contains("endpoint \"a\""), "{}", e.message);
        assert!(!e.message.contains("tok-123456"), "{}", e.message);
    }

    #[test]
    fn auth_maps_to_the_credential_options_of_audit() {
        let auth = Auth {
            bearer_env: Some("API_TOKEN".into()),
            cookies_env: [("sid".to_string(), "OTHER".to_string())].into(),
            basic_user: Some("ann".into()),
            jwt_secret_env: Some("JWT_SECRET".into()),
            jwt_key_file: Some("keys/app.pem".into()),
            jwt_claims: [
                ("org_id".to_string(), toml::Value::Integer(1)),
                ("role".to_string(), toml::Value::String("admin".into())),
            ]
            .into(),
            login_url: Some("/login".into()),
            login_body_file: Some("/etc/login.json".into()),
            ..Auth::default()
        };
        let mut secrets = Vec::new();
        let options =
            credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets);
        // jwt_secret_env and jwt_key_file exclude each other, as their flags do.
        let err = options.err().unwrap();
        assert_eq!(
            err.message,
            "[auth] has both jwt_secret_env and jwt_key_file; keep one"
        );

        let auth = Auth {
            jwt_secret_env: None,
            ..auth
        };
        let mut secrets = Vec::new();
        let o = credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets)
            .unwrap();
        assert_eq!(o.bearer.as_deref(), Some("tok-123456"));
        assert_eq!(o.cookies, vec!["sid=other-secret"]);
        assert_eq!(o.basic.as_deref(), Some("ann"));
        assert_eq!(o.jwt.key_file, Some(PathBuf::from("/repo/keys/app.pem")));
        assert_eq!(o.login_body.as_deref(), Some("@/etc/login.json"));
        assert_eq!(o.jwt.claims, vec!["org_id=1", "role=admin"]);
        assert_eq!(o.login_url.as_deref(), Some("http://h:1/login"));
        assert_eq!(o.jwt.ttl, Duration::from_secs(3600));
        assert_eq!(secrets, vec!["tok-123456", "other-secret"]);

        let auth = Auth {
            jwt_secret_env: Some("JWT_SECRET".into()),
            ..Auth::default()
        };
        let o = credential_options(&auth, "http://h:1/", Path::new("/repo"), &env, &mut secrets)
            .unwrap();
        assert_eq!(o.jwt.secret_env.as_deref(), Some("JWT_SECRET"));
    }

    #[test]
    fn auth_keys_become_credentials_through_the_audit_flags() {
        let endpoint = |auth: &str| {
            let text = format!(
                "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n[auth]\n{auth}\n\
                 [[endpoint]]\nname = \"a\"\npath = \"/a\"\nallow_status = [404]\n"
            );
            built(&text, &[]).map(|mut e| e.remove(0))
        };
        let e = endpoint("bearer_env = \"API_TOKEN\"").unwrap();
        let headers = &e.audit.request.headers;
        assert_eq!(headers["authorization"], "Bearer tok-123456");
        assert!(headers["authorization"].is_sensitive());
        assert_eq!(e.audit.auth.allowed_statuses, vec![404]);
        assert_eq!(
            e.audit.auth.redactor.scrub("token tok-123456"),
            "token <redacted>"
        );

        let e = endpoint("cookies_env = { sid = \"OTHER\" }").unwrap();
        assert_eq!(e.audit.request.headers["cookie"], "sid=other-secret");

        let e = endpoint("basic_user = \"ann\"\nbasic_password_env = \"OTHER\"").unwrap();
        // base64("ann:other-secret")
        assert_eq!(
            e.audit.request.headers["authorization"],
            "Basic YW5uOm90aGVyLXNlY3JldA=="
        );

        let e = endpoint(
            "jwt_secret_env = \"JWT_SECRET\"\njwt_sub = \"42\"\njwt_claims = { org_id = 1 }",
        )
        .unwrap();
        let bearer = e.audit.request.headers["authorization"].to_str().unwrap();
        assert!(bearer.starts_with("Bearer ey"), "{bearer}");

        // Two sources of one header: the audit's own error, in the file's terms.
        let err = endpoint("bearer_env = \"API_TOKEN\"\nbasic_user = \"ann\"").unwrap_err();
        assert!(
            err.message.starts_with("pgcost.toml: endpoint \"a\": "),
            "{}",
            err.message
        );
        assert!(!err.message.contains("tok-123456"), "{}", err.message);

        let err = endpoint("bearer_env = \"NOT_SET\"").unwrap_err();
        assert!(
            err.message.contains("NOT_SET, which is not set"),
            "{}",
            err.message
        );
    }

    #[test]
    fn left_out_keys_take_the_defaults_of_the_flags() {
        let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                    [[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let from_file = built(text, &[]).unwrap().remove(0).audit;
        let argv = [
            "pgcost",
            "audit",
            "--url",
            "http://h/a",
            "--db",
            "postgres://u@h/d",
        ];
        let crate::flags::Command::Audit(args) =
            <crate::flags::Cli as clap::Parser>::parse_from(argv).command
        else {
            unreachable!("an audit command line")
        };
        let from_flags = AuditConfig::from_args_with_prompt(&args, &env, &|_| None).unwrap();
        assert_eq!(
            (from_file.requests, from_file.concurrency, from_file.warmup),
            (
                from_flags.requests,
                from_flags.concurrency,
                from_flags.warmup
            )
        );
        assert_eq!(from_file.admin_db, from_flags.admin_db);
        assert_eq!(from_file.request.method, from_flags.request.method);
        assert_eq!(from_file.request.timeout, from_flags.request.timeout);
        assert_eq!(from_file.settle_timeout, from_flags.settle_timeout);
        assert_eq!(from_file.retries, from_flags.retries);
        assert_eq!(
            from_file.auth.allow_anonymous_equal,
            from_flags.auth.allow_anonymous_equal
        );
    }

    #[test]
    fn retries_and_public_endpoints_come_from_defaults_or_the_endpoint() {
        let text = "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                    [defaults]\nretries = 5\nallow_anonymous_equal = true\n\
                    [[endpoint]]\nname = \"a\"\npath = \"/a\"\n\
                    [[endpoint]]\nname = \"b\"\npath = \"/b\"\nallow_anonymous_equal = false\n";
        let endpoints = built(text, &[]).unwrap();
        let seen: Vec<(u32, bool)> = endpoints
            .iter()
            .map(|e| (e.audit.retries, e.audit.auth.allow_anonymous_equal))
            .collect();
        assert_eq!(seen, [(5, true), (5, false)]);
    }

    #[test]
    fn bad_values_name_their_key() {
        let file = |extra: &str, endpoint: &str| {
            format!(
                "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n{extra}\n\
                 [[endpoint]]\nname = \"a\"\npath = \"/a\"\n{endpoint}\n"
            )
        };
        let e = error(&file("[defaults]\ntimeout = \"0s\"", ""));
        assert_eq!(
            e.message,
            "pgcost.toml: endpoint \"a\": [defaults] timeout must be greater than zero"
        );
        let e = error(&file("", "timeout = \"soon\""));
        assert!(
            e.message
                .starts_with("pgcost.toml: endpoint \"a\": timeout is not a duration"),
            "{}",
            e.message
        );
        let e = error(&file("[defaults]\nsettle_timeout = \"soon\"", ""));
        assert!(
            e.message
                .starts_with("pgcost.toml: [defaults] settle_timeout is not a duration"),
            "{}",
            e.message
        );
        let e = error(&file("[thresholds]\nnope = 1", ""));
        assert_eq!(
            e.message,
            "pgcost.toml: [thresholds]: unknown name \"nope\""
        );
        let e = error(&file("", "body = \"{}\"\nbody_file = \"b.json\""));
        assert_eq!(
            e.message,
            "pgcost.toml: endpoint \"a\": has both body and body_file; keep one"
        );
        let e = error(&file("[auth]\nlogin_url = \"/login\"", ""));
        assert_eq!(
            e.message,
            "pgcost.toml: [auth] login_url is set without login_body_file"
        );
        let e = error(&file("[auth]\njwt_secret_env = \"NOT_SET\"", ""));
        assert!(
            e.message
                .starts_with("pgcost.toml: [auth] jwt_secret_env names the variable NOT_SET"),
            "{}",
            e.message
        );
    }

    #[test]
    fn file_paths_are_read_from_the_directory_of_the_file() {
        let text = "base_url = \"https://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
                    [defaults]\ncacert = \"ci/missing-ca.pem\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n";
        let e = error(text);
        assert!(
            e.message.starts_with("pgcost.toml: endpoint \"a\": "),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("/repo/ci/missing-ca.pem"),
            "{}",
            e.message
        );
    }

    #[test]
    fn the_demo_example_is_valid() {
        let text = include_str!("../../../examples/pgcost.toml");
        let file = parse(text, "examples/pgcost.toml").unwrap();
        let env = |name: &str| match name {
            "DATABASE_URL" => Some("postgres://postgres@127.0.0.1:5432/demo".to_string()),
            "DEMO_TOKEN" => Some("eyJ.demo.token".to_string()),
            _ => None,
        };
        let overrides = Overrides {
            base_url: Some("http://127.0.0.1:4000".into()),
            only: vec![],
        };
        let endpoints = build(
            &file,
            text,
            "examples/pgcost.toml",
            Path::new("examples"),
            &overrides,
            &env,
        )
        .unwrap();
        let names: Vec<&str> = endpoints.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, vec!["naive", "exists", "cached"]);
        assert_eq!(
            endpoints[0].audit.request.url.as_str(),
            "http://127.0.0.1:4000/naive/api/v1/projects?limit=20"
        );
        assert_eq!(
            endpoints[2].audit.request.headers["authorization"],
            "Bearer eyJ.demo.token"
        );
        assert_eq!(endpoints[1].budget.statements, Some(6.0));
    }

    #[test]
    fn no_plans_turns_the_plans_off_for_every_endpoint() {
        let env = |name: &str| match name {
            "DATABASE_URL" => Some("postgres://postgres@127.0.0.1:5432/demo".to_string()),
            "DEMO_TOKEN" => Some("eyJ.demo.token".to_string()),
            _ => None,
        };
        let plans = |extra: &[&str]| {
            let mut argv = vec!["pgcost", "check", "--config", "examples/pgcost.toml"];
            argv.extend(extra);
            let crate::flags::Command::Check(args) =
                <crate::flags::Cli as clap::Parser>::parse_from(argv).command
            else {
                unreachable!("argv starts with check")
            };
            let config = CheckConfig::from_args(&args, &env).unwrap();
            assert_eq!(config.endpoints.len(), 3);
            (config.endpoints.iter())
                .map(|e| e.audit.plans)
                .collect::<Vec<_>>()
        };
        assert_eq!(plans(&[]), vec![true; 3]);
        assert_eq!(plans(&["--no-plans"]), vec![false; 3]);
    }
}

#[cfg(test)]
mod ack_tests {
    use super::*;

    fn file(acks: &str) -> String {
        format!(
            "base_url = \"http://h\"\n[database]\nurl = \"postgres://u@h/d\"\n\
             [[endpoint]]\nname = \"a\"\npath = \"/a\"\n{acks}"
        )
    }

    fn built(text: &str) -> Result<Vec<Endpoint>> {
        let file = parse(text, "pgcost.toml")?;
        build(
            &file,
            text,
            "pgcost.toml",
            Path::new("/repo"),
            &Overrides::default(),
            &|_| None,
        )
    }

    #[test]
    fn acks_are_read_with_where_they_are_written() {
        let text = file(
            "[[endpoint.ack]]\nkind = \"collection_to_boolean\"\nstatement = \"group_grants\"\n\
             reason = \"fixed in #123\"\nexpires = \"2027-03-01\"\n\
             [[endpoint.ack]]\nkind = \"round_trips\"\nreason = \"one round trip per check\"\n",
        );
        let acks = built(&text).unwrap().remove(0).acks;
        assert_eq!(acks.len(), 2);
        assert_eq!(acks[0].kind, FindingKind::CollectionToBoolean);
        assert_eq!(acks[0].statement.as_deref(), Some("group_grants"));
        assert_eq!(acks[0].expires.unwrap().to_string(), "2027-03-01");
        assert_eq!(acks[0].at, "pgcost.toml:9:13");
        assert_eq!(acks[1].statement, None);
        assert_eq!(acks[1].at, "pgcost.toml:13:8");
    }

    #[test]
    fn bad_acks_are_usage_errors_with_file_line_and_column() {
        let cases = [
            (
                "[[endpoint.ack]]\nstatement = \"x\"\nreason = \"r\"\n",
                "pgcost.toml:7:1: missing field `kind`",
            ),
            (
                "[[endpoint.ack]]\nkind = \"slow\"\nreason = \"r\"\n",
                "pgcost.toml:8:8: unknown variant `slow`",
            ),
            (
                "[[endpoint.ack]]\nkind = \"n_plus_one\"\n",
                "pgcost.toml:7:1: missing field `reason`",
            ),
            (
                "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \" \"\n",
                "pgcost.toml:9:10: endpoint \"a\": an ack's reason is empty",
            ),
            (
                "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = \"next march\"\n",
                "pgcost.toml:10:11: endpoint \"a\": ack expires \"next march\" is not a date in the form YYYY-MM-DD",
            ),
            (
                "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = \"2027-02-30\"\n",
                "pgcost.toml:10:11: endpoint \"a\": ack expires \"2027-02-30\" is not a calendar day",
            ),
            (
                "[[endpoint.ack]]\nkind = \"n_plus_one\"\nreason = \"r\"\nexpires = 2027-03-01\n",
                "pgcost.toml:10:11: invalid type",
            ),
        ];
        for (acks, message) in cases {
            let e = built(&file(acks)).unwrap_err();
            assert!(e.message.starts_with(message), "{acks}: {}", e.message);
            assert_eq!(e.exit_code(), 2);
        }
    }

    #[test]
    fn a_baseline_of_another_endpoint_set_is_a_usage_error() {
        let endpoints = built(&file("")).unwrap();
        let doc = |names: &[&str]| {
            let endpoints: Vec<String> = names
                .iter()
                .map(|n| {
                    format!(
                        r#"{{"name": "{n}", "report": {{"valid": true, "target": {{"method": "GET", "url": "http://h/{n}"}},
                        "per_request": {{"transactions": 1, "statements": 1, "rows_read": 1, "rows_returned": 1}},
                        "load": {{"latency_ms": {{"p95": 1}}}}}}}}"#
                    )
                })
                .collect();
            format!(
                r#"{{"schema_version": 1, "endpoints": [{}]}}"#,
                endpoints.join(",")
            )
        };
        let baseline = |names: &[&str]| Baseline {
            origin: "main.json".into(),
            run: PreviousRun::parse(&doc(names), "main.json").unwrap(),
        };
        // One endpoint in common is enough: the others were added or removed.
        baseline(&["a", "b"]).check_endpoints(&endpoints).unwrap();
        let e = baseline(&["x", "y"])
            .check_endpoints(&endpoints)
            .unwrap_err();
        assert_eq!(
            e.message,
            "--baseline main.json is the baseline of another endpoint set: it has x, y, none of a"
        );
        assert_eq!(e.exit_code(), 2);
    }
}
