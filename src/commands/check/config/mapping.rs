//! The parsed file mapped onto the raw groups of `pgcost audit`'s flags, one set per
//! endpoint, then checked by the same [`AuditConfig::from_raw`] as the flags: what the
//! file leaves out keeps the flag's default, and the errors name the file's keys.

use std::path::Path;

use toml::Spanned;

use super::credentials::{self, auth_args};
use super::files::body;
use super::schema::{CommandLoad, Database, Defaults, Endpoint, EndpointTable, File, Overrides};
use super::spanned::Source;
use super::vars::{expand_vars, read_secret_var, scrub};
use crate::auth::{self, CredentialOptions, Redactor};
use crate::commands::scale;
use crate::config::{AuditConfig, findings_from_args, settle_timeout};
use crate::error::{Error, Result};
use crate::flags::{
    AuditArgs, AuthArgs, FindingsArgs, LoadArgs, OutputArgs, Spelling, TargetArgs, defaults,
};
use crate::postgres::conninfo::EnvLookup;
use crate::values::{header, parse_url};
use pgcost_core::external_load::{self, CountSource};

/// What every endpoint of the file shares, read once: the target and auth groups, the
/// thresholds, and how their values are named.
pub(super) struct Shared<'a> {
    file: &'a File,
    base_url: String,
    base_dir: &'a Path,
    target: TargetArgs,
    auth: AuthArgs,
    /// `[thresholds]`, as `--threshold NAME=VALUE`.
    thresholds: Vec<String>,
    /// `--source`, else the file's `source` under its directory.
    source: Option<std::path::PathBuf>,
    spelling: Spelling,
    /// Values read from variables: never printed.
    secrets: Vec<String>,
}

impl<'a> Shared<'a> {
    /// Reads what every endpoint shares: the base URL, the databases, the credentials,
    /// the settle timeout and the thresholds. Their values are checked here once, by the
    /// flags' own checks, so that an error names the file rather than each endpoint.
    pub(super) fn new(
        file: &'a File,
        source: &Source<'_>,
        base_dir: &'a Path,
        overrides: &Overrides,
        env: EnvLookup<'_>,
    ) -> Result<Shared<'a>> {
        let base_url = base_url(file, source, overrides)?;
        let mut secrets = Vec::new();
        let mut target: TargetArgs = defaults();
        target.db = match &file.database.urls {
            Some(urls) => database_urls(&file.database, urls, source)?,
            None => (database(&file.database, source, env, &mut secrets)?)
                .into_iter()
                .collect(),
        };
        let auth = auth_args(&file.auth, &base_url, base_dir, env, &mut secrets)
            .map_err(|e| source.in_file(e))?;
        target.replica = database_replicas(&file.database, source)?;
        if let Some(name) = &file.database.admin_db {
            target.admin_db = name.clone();
        }
        if let Some(text) = &file.defaults.settle_timeout {
            target.settle_timeout = text.clone();
        }
        let mut spelling = Spelling::flags();
        spelling.set("settle_timeout", "[defaults] settle_timeout");
        spelling.set("thresholds", "[thresholds]");
        if overrides.source.is_none() {
            spelling.set("source", "source");
        }
        credentials::spelling(&mut spelling);
        let shared = Shared {
            file,
            base_dir,
            target,
            auth,
            source: (overrides.source.clone())
                .or_else(|| file.source.as_ref().map(|dir| base_dir.join(dir))),
            thresholds: (file.thresholds.iter())
                .map(|(name, value)| format!("{name}={value}"))
                .collect(),
            spelling,
            base_url,
            secrets,
        };
        shared.check().map_err(|e| source.in_file(e))?;
        Ok(shared)
    }

    /// The shared values through the checks [`AuditConfig::from_raw`] applies to them.
    fn check(&self) -> Result<()> {
        CredentialOptions::from_groups(&self.auth, &[], &self.spelling)?;
        settle_timeout(&self.target, &self.spelling)?;
        findings_from_args(&self.findings(true), &self.spelling)?;
        Ok(())
    }

    /// The findings group: `[thresholds]`, and `plans` under `[defaults]`.
    fn findings(&self, plans: bool) -> FindingsArgs {
        let mut findings: FindingsArgs = defaults();
        findings.thresholds = self.thresholds.clone();
        findings.plans.no_plans = !plans;
        findings.source.source = self.source.clone();
        findings
    }
}

/// Refuses an `--endpoint` the file does not have.
pub(super) fn check_selection(file: &File, origin: &str, overrides: &Overrides) -> Result<()> {
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

/// `[database] urls`, as `--db` repeated: alone in `[database]`, never empty, and without
/// passwords.
fn database_urls(
    database: &Database,
    urls: &Spanned<Vec<String>>,
    source: &Source<'_>,
) -> Result<Vec<String>> {
    if database.url.is_some() || database.url_env.is_some() {
        return Err(source.at(
            Some(urls.span()),
            "[database] has urls beside url or url_env; keep one",
        ));
    }
    let urls_ref = urls.get_ref();
    if urls_ref.is_empty() {
        return Err(source.at(Some(urls.span()), "[database] urls is empty"));
    }
    if urls_ref.iter().any(|url| with_password(url)) {
        return Err(source
            .at(Some(urls.span()), "[database] urls contains a password")
            .with_hint("use PGPASSWORD, or a .pgpass file"));
    }
    Ok(urls_ref.clone())
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

/// One endpoint, checked by the same function as the flags of `pgcost audit`. Its
/// errors name the file and the endpoint, and never show a secret.
pub(super) fn endpoint(
    shared: &Shared<'_>,
    table: &EndpointTable,
    origin: &str,
    env: EnvLookup<'_>,
) -> Result<Endpoint> {
    let name = table.name.get_ref();
    let in_endpoint = |e: Error| Error {
        message: format!("{origin}: endpoint {name:?}: {}", e.message),
        ..e
    };
    // A command endpoint's request is never sent: the command makes the load.
    let path = table.path.as_ref().map_or("/", |p| p.get_ref().as_str());
    let scale = table.scale.as_ref().map(|s| {
        let mut values = s.get_ref().values.clone();
        values.sort_unstable();
        (s.get_ref().param(), values)
    });
    // A scaled endpoint's own audit is its largest value's, the values are checked.
    let audit_path = match &scale {
        Some((param, values)) => scale::substitute(path, param, *values.last().unwrap_or(&0)),
        None => path.to_string(),
    };
    let mut secrets = shared.secrets.clone();
    let redactor = Redactor::default();
    let audit =
        audit_args(shared, table, &audit_path, env, &mut secrets).and_then(|(args, spelling)| {
            secrets.iter().for_each(|secret| redactor.add(secret));
            let prompt = &auth::prompt_on_terminal;
            AuditConfig::from_raw(&args, &spelling, redactor.clone(), env, prompt)
        });
    let audit = audit.map_err(|e| Error {
        message: format!(
            "{origin}: endpoint {name:?}: {}",
            scrub(&redactor.scrub(&e.message), &secrets)
        ),
        ..e
    })?;
    let command = command_load(shared, table).map_err(in_endpoint)?;
    let mut budget = table.budget.clone();
    budget.fail_on_plan_change =
        (budget.fail_on_plan_change).or(shared.file.defaults.fail_on_plan_change);
    let scale = scale
        .map(|(param, values)| {
            let template = format!("{}{path}", shared.base_url.trim_end_matches('/'));
            scale::plan(&audit, &template, param, &values)
        })
        .transpose()
        .map_err(in_endpoint)?;
    Ok(Endpoint {
        name: name.clone(),
        budget,
        audit,
        command,
        acks: table.acks.clone(),
        scale,
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

/// An endpoint's table over `[defaults]` and the file's shared values, as the groups of
/// one audit's flags, and the names of the values the endpoint set.
fn audit_args(
    shared: &Shared<'_>,
    table: &EndpointTable,
    path: &str,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<(AuditArgs, Spelling)> {
    let d = &shared.file.defaults;
    let mut spelling = shared.spelling.clone();
    let mut load: LoadArgs = defaults();
    load.burst.count.requests = table.requests.or(d.requests);
    if let Some(n) = table.concurrency.or(d.concurrency) {
        load.burst.concurrency = n;
    }
    load.warmup = table.warmup.or(d.warmup).unwrap_or(load.warmup);
    load.method = table.method.clone().unwrap_or(load.method);
    load.allow_writes = table.allow_writes;
    spelling.set("allow_writes", "allow_writes");
    load.headers = headers(d, table, env, secrets)?;
    (load.body, load.body_file) = body(table, shared.base_dir)?;
    spelling.set("body_file", "body_file");
    load.data = (table.data.as_ref()).map(|path| shared.base_dir.join(path));
    spelling.set("data", "data");
    load.content_type = table.content_type.clone();
    spelling.set("content_type", "content_type");
    let timeout = match (&table.timeout, &d.timeout) {
        (Some(text), _) => Some(("timeout", text)),
        (None, Some(text)) => Some(("[defaults] timeout", text)),
        (None, None) => None,
    };
    if let Some((key, text)) = timeout {
        load.timeout = text.clone();
        spelling.set("timeout", key);
    }
    load.insecure = d.insecure;
    load.cacert = d.cacert.as_ref().map(|path| shared.base_dir.join(path));
    spelling.set("cacert", "[defaults] cacert");
    load.allow_status = table.allow_status.clone();
    load.error_headers = (d.error_headers.iter())
        .chain(&table.error_headers)
        .cloned()
        .collect();
    spelling.set("error_headers", "error_headers");
    load.error_body_pointer = (table.error_body_pointer.clone()).or(d.error_body_pointer.clone());
    spelling.set("error_body_pointer", "error_body_pointer");
    load.retries = d.retries.unwrap_or(load.retries);
    let mut auth = shared.auth.clone();
    auth.allow_anonymous_equal = (table.allow_anonymous_equal)
        .or(d.allow_anonymous_equal)
        .unwrap_or(false);
    // check prints its own progress: the audits of its endpoints are quiet.
    let output = OutputArgs {
        quiet: true,
        ..defaults()
    };
    let args = AuditArgs {
        url: format!("{}{}", shared.base_url.trim_end_matches('/'), path),
        target: shared.target.clone(),
        load,
        findings: shared.findings(d.plans.unwrap_or(true)),
        output,
        auth,
        background: defaults(),
    };
    Ok((args, spelling))
}

/// `[defaults]` headers, those the endpoint names itself replaced, then the endpoint's,
/// with `${VAR}` expanded, as `-H 'Name: value'`.
fn headers(
    defaults: &Defaults,
    table: &EndpointTable,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<Vec<String>> {
    let inherited = defaults.headers.iter().filter(|(name, _)| {
        !table
            .headers
            .keys()
            .any(|own| own.eq_ignore_ascii_case(name))
    });
    let mut headers = Vec::new();
    for (name, value) in inherited.chain(&table.headers) {
        let value = expand_vars(value, &format!("header {name}"), env, secrets)?;
        // Checked as a pair first: a name with a colon would not survive `Name: value`.
        header(name, &value)?;
        headers.push(format!("{name}: {value}"));
    }
    Ok(headers)
}
