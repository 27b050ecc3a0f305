//! pgcost.toml: what `pgcost check` measures, and its translation into one `AuditConfig`
//! per endpoint. Each endpoint becomes the argument vector of a `pgcost audit` run, parsed
//! by the same clap definition and validated by `AuditConfig::from_args`, so every audit
//! flag (authentication included) means the same here as on the command line.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::budget::Budget;
use crate::cli::{Cli, Command};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::postgres::conninfo::EnvLookup;

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
}

/// `[auth]`: credentials, by variable name or file, never inline. See [`auth_flags`].
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
    /// Starts with `/`; appended to `base_url`.
    pub path: Spanned<String>,
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
    #[serde(default)]
    pub budget: Budget,
}

/// An endpoint ready to measure.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub name: String,
    pub budget: Budget,
    pub audit: AuditConfig,
}

/// The validated file.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub path: PathBuf,
    pub endpoints: Vec<Endpoint>,
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
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    if file.endpoints.is_empty() {
        return Err(source
            .at(None, "there is no [[endpoint]] to check")
            .with_hint("add [[endpoint]] tables with name, method and path"));
    }
    for endpoint in &file.endpoints {
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
        let path = endpoint.path.get_ref();
        if !path.starts_with('/') {
            return Err(source
                .at(
                    Some(endpoint.path.span()),
                    format!("path {path:?} must start with /"),
                )
                .with_hint("paths are appended to base_url, e.g. path = \"/api/v1/projects\""));
        }
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

/// Reads a variable that must be set.
fn read_var(key: &str, name: &str, env: EnvLookup<'_>) -> Result<String> {
    env(name).filter(|v| !v.is_empty()).ok_or_else(|| {
        Error::usage(format!("{key} names the variable {name}, which is not set"))
            .with_hint(format!("export {name}=... before running pgcost check"))
    })
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
        let value = read_var(what, &after[..end], env)?;
        secrets.push(value.clone());
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// One `pgcost audit` flag that a key of `[auth]` stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthFlag {
    pub key: &'static str,
    pub flag: &'static str,
    pub value: String,
}

/// `[auth]` as `pgcost audit` flags: the one place to adjust when those flags change.
/// Secrets named by variable are read here and travel only in the internal argument
/// vector, never on a command line that `ps` shows; they are added to `secrets`.
pub fn auth_flags(
    auth: &Auth,
    base_url: &str,
    file_path: &dyn Fn(&Path) -> String,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<Vec<AuthFlag>> {
    let mut flags = Vec::new();
    let mut push = |key: &'static str, flag: &'static str, value: String| {
        flags.push(AuthFlag { key, flag, value })
    };
    if let Some(name) = &auth.bearer_env {
        let token = read_var("[auth] bearer_env", name, env)?;
        secrets.push(token.clone());
        push("bearer_env", "--bearer", token);
    }
    if let Some(path) = &auth.bearer_file {
        push("bearer_file", "--bearer-file", file_path(path));
    }
    for (cookie, name) in &auth.cookies_env {
        let value = read_var("[auth] cookies_env", name, env)?;
        secrets.push(value.clone());
        push("cookies_env", "--cookie", format!("{cookie}={value}"));
    }
    match (&auth.basic_user, &auth.basic_password_env) {
        // The password reaches `pgcost audit` as PGCOST_BASIC_PASSWORD (see `lookup`).
        (Some(user), _) => push("basic_user", "--basic", user.clone()),
        (None, Some(_)) => {
            return Err(Error::usage(
                "[auth] basic_password_env is set without basic_user",
            ));
        }
        (None, None) => {}
    }
    let plain: [(&'static str, &'static str, &Option<String>); 9] = [
        ("jwt_secret_env", "--jwt-secret-env", &auth.jwt_secret_env),
        ("jwt_alg", "--jwt-alg", &auth.jwt_alg),
        ("jwt_sub", "--jwt-sub", &auth.jwt_sub),
        ("jwt_iss", "--jwt-iss", &auth.jwt_iss),
        ("jwt_aud", "--jwt-aud", &auth.jwt_aud),
        ("jwt_ttl", "--jwt-ttl", &auth.jwt_ttl),
        ("env_secret_var", "--env-secret-var", &auth.env_secret_var),
        ("env_issuer_var", "--env-issuer-var", &auth.env_issuer_var),
        (
            "env_audience_var",
            "--env-audience-var",
            &auth.env_audience_var,
        ),
    ];
    for (key, flag, value) in plain {
        if let Some(value) = value {
            push(key, flag, value.clone());
        }
    }
    let files: [(&'static str, &'static str, &Option<PathBuf>); 4] = [
        (
            "jwt_secret_file",
            "--jwt-secret-file",
            &auth.jwt_secret_file,
        ),
        ("jwt_key_file", "--jwt-key-file", &auth.jwt_key_file),
        ("env_file", "--env-file", &auth.env_file),
        ("login_body_file", "--login-body", &auth.login_body_file),
    ];
    for (key, flag, path) in files {
        if let Some(path) = path {
            let path = file_path(path);
            let value = if key == "login_body_file" {
                format!("@{path}")
            } else {
                path
            };
            push(key, flag, value);
        }
    }
    for (claim, value) in &auth.jwt_claims {
        let text = match value {
            toml::Value::String(s) => s.clone(),
            other => serde_json::to_string(other).map_err(|e| {
                Error::usage(format!("[auth] jwt_claims.{claim} cannot be a claim: {e}"))
            })?,
        };
        push("jwt_claims", "--jwt-claim", format!("{claim}={text}"));
    }
    if let Some(url) = &auth.login_url {
        let url = if url.starts_with('/') {
            format!("{}{url}", base_url.trim_end_matches('/'))
        } else {
            url.clone()
        };
        push("login_url", "--login-url", url);
    }
    if let Some(pointer) = &auth.login_token_pointer {
        push(
            "login_token_pointer",
            "--login-token-pointer",
            pointer.clone(),
        );
    }
    Ok(flags)
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

/// A clap error about the internal argument vector, in pgcost.toml's terms.
fn clap_error(
    err: clap::Error,
    origin: &str,
    endpoint: &str,
    keys: &BTreeMap<&str, String>,
    secrets: &[String],
) -> Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() == ErrorKind::UnknownArgument
        && let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg)
        && let Some(key) = keys.get(arg.split('=').next().unwrap_or(arg))
    {
        return Error::usage(format!(
            "{origin}: {key} needs `pgcost audit {arg}`, which this build of pgcost does not \
             have"
        ))
        .with_hint("remove the key, or use a pgcost that has the flag");
    }
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or("invalid settings");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    Error::usage(format!(
        "{origin}: endpoint {endpoint:?}: {}",
        scrub(first, secrets)
    ))
}

fn header_name_eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Loads and validates the file at `path`, and builds the selected endpoints.
pub fn load(path: &Path, overrides: &Overrides, env: EnvLookup<'_>) -> Result<CheckConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", path.display()))
            .with_hint("pass --config PATH, or run pgcost check where pgcost.toml is")
    })?;
    let origin = path.display().to_string();
    let file = parse(&text, &origin)?;
    let base_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let endpoints = build(&file, &text, &origin, &base_dir, overrides, env)?;
    Ok(CheckConfig {
        path: path.to_path_buf(),
        endpoints,
    })
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
    let base_url = match (&overrides.base_url, &file.base_url) {
        (Some(url), _) => url.clone(),
        (None, Some(url)) => url.get_ref().clone(),
        (None, None) => {
            return Err(source
                .at(None, "base_url is not set")
                .with_hint("add base_url = \"http://127.0.0.1:3000\", or pass --base-url"));
        }
    };
    if let Err(e) = crate::values::parse_url(&base_url) {
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

    let mut secrets = Vec::new();
    let db = match (&file.database.url, &file.database.url_env) {
        (Some(_), Some(env_name)) => {
            return Err(source.at(
                Some(env_name.span()),
                "[database] has both url and url_env; keep one",
            ));
        }
        (Some(url), None) => Some(url.get_ref().clone()),
        (None, Some(name)) => {
            let value = read_var("[database] url_env", name.get_ref(), env).map_err(|e| Error {
                message: format!("{origin}: {}", e.message),
                ..e
            })?;
            secrets.push(value.clone());
            Some(value)
        }
        (None, None) => None,
    };
    let file_path = |p: &Path| -> String {
        if p.is_absolute() {
            p.display().to_string()
        } else {
            base_dir.join(p).display().to_string()
        }
    };
    let in_file = |e: Error| Error {
        message: format!("{origin}: {}", e.message),
        ..e
    };
    let auth = auth_flags(&file.auth, &base_url, &file_path, env, &mut secrets).map_err(in_file)?;
    let basic_password = match &file.auth.basic_password_env {
        Some(name) => {
            let value = read_var("[auth] basic_password_env", name, env).map_err(in_file)?;
            secrets.push(value.clone());
            Some(value)
        }
        None => None,
    };
    // What `pgcost audit` reads from the environment, with [auth]'s password variable
    // standing in for its own.
    let lookup = |name: &str| -> Option<String> {
        if name == "PGCOST_BASIC_PASSWORD" && basic_password.is_some() {
            return basic_password.clone();
        }
        env(name)
    };
    let mut keys: BTreeMap<&str, String> = auth
        .iter()
        .map(|f| (f.flag, format!("[auth] {}", f.key)))
        .collect();

    let d = &file.defaults;
    let mut endpoints = Vec::new();
    for table in &file.endpoints {
        let name = table.name.get_ref();
        if !overrides.only.is_empty() && !overrides.only.contains(name) {
            continue;
        }
        let mut argv: Vec<String> = vec!["pgcost".into(), "audit".into(), "--quiet".into()];
        let mut arg = |flag: &str, value: String| {
            argv.push(flag.to_string());
            argv.push(value);
        };
        arg(
            "--url",
            format!("{}{}", base_url.trim_end_matches('/'), table.path.get_ref()),
        );
        if let Some(db) = &db {
            arg("--db", db.clone());
        }
        if let Some(admin_db) = &file.database.admin_db {
            arg("--admin-db", admin_db.clone());
        }
        if let Some(n) = table.requests.or(d.requests) {
            arg("--requests", n.to_string());
        }
        if let Some(c) = table.concurrency.or(d.concurrency) {
            arg("--concurrency", c.to_string());
        }
        if let Some(w) = table.warmup.or(d.warmup) {
            arg("--warmup", w.to_string());
        }
        if let Some(method) = &table.method {
            arg("--method", method.clone());
        }
        if let Some(t) = table.timeout.as_ref().or(d.timeout.as_ref()) {
            arg("--timeout", t.clone());
        }
        if let Some(t) = &d.settle_timeout {
            arg("--settle-timeout", t.clone());
        }
        let inherited = d
            .headers
            .iter()
            .filter(|(k, _)| !table.headers.keys().any(|own| header_name_eq(own, k)));
        for (header, value) in inherited.chain(&table.headers) {
            let what = format!("endpoint {name:?}: header {header}");
            let value = expand_vars(value, &what, env, &mut secrets).map_err(in_file)?;
            arg("--header", format!("{header}: {value}"));
        }
        if let Some(body) = &table.body {
            arg("--body", body.clone());
        }
        if let Some(path) = &table.body_file {
            arg("--body-file", file_path(path));
        }
        for (threshold, value) in &file.thresholds {
            arg("--threshold", format!("{threshold}={value}"));
        }
        for code in &table.allow_status {
            arg("--allow-status", code.to_string());
            keys.insert("--allow-status", format!("endpoint {name:?}: allow_status"));
        }
        for flag in &auth {
            arg(flag.flag, flag.value.clone());
        }
        if let Some(path) = &d.cacert {
            arg("--cacert", file_path(path));
        }
        if d.insecure {
            argv.push("--insecure".into());
        }
        let cli = <Cli as clap::Parser>::try_parse_from(&argv)
            .map_err(|e| clap_error(e, origin, name, &keys, &secrets))?;
        let Command::Audit(args) = cli.command else {
            unreachable!("the argument vector names the audit subcommand");
        };
        let audit = AuditConfig::from_args(&args, &lookup).map_err(|e| Error {
            message: format!(
                "{origin}: endpoint {name:?}: {}",
                scrub(&e.message, &secrets)
            ),
            ..e
        })?;
        for secret in &secrets {
            audit.auth.redactor.add(secret);
        }
        endpoints.push(Endpoint {
            name: name.clone(),
            budget: table.budget.clone(),
            audit,
        });
    }
    Ok(endpoints)
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
    fn auth_maps_to_audit_flags() {
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
        let path = |p: &Path| Path::new("/repo").join(p).display().to_string();
        let flags = auth_flags(&auth, "http://h:1/", &path, &env, &mut secrets).unwrap();
        let got: Vec<(&str, &str)> = flags.iter().map(|f| (f.flag, f.value.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("--bearer", "tok-123456"),
                ("--cookie", "sid=other-secret"),
                ("--basic", "ann"),
                ("--jwt-secret-env", "JWT_SECRET"),
                ("--jwt-key-file", "/repo/keys/app.pem"),
                ("--login-body", "@/etc/login.json"),
                ("--jwt-claim", "org_id=1"),
                ("--jwt-claim", "role=admin"),
                ("--login-url", "http://h:1/login"),
            ]
        );
        assert_eq!(secrets, vec!["tok-123456", "other-secret"]);
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
}
