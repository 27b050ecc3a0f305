//! The parsed file mapped onto the options of one `pgcost audit` per endpoint.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use reqwest::header::HeaderMap;
use toml::Spanned;

use super::credentials::credential_options;
use super::files::body;
use super::schema::{CommandLoad, Database, Defaults, Endpoint, EndpointTable, File, Overrides};
use super::spanned::Source;
use super::vars::{expand_vars, read_secret_var, scrub};
use crate::auth::{self, CredentialOptions, Redactor};
use crate::config::{AuditConfig, AuditOptions};
use crate::cost::external_load::{self, CountSource};
use crate::cost::findings::Thresholds;
use crate::error::{Error, Result};
use crate::flags::{
    DEFAULT_ADMIN_DB, DEFAULT_CONCURRENCY, DEFAULT_METHOD, DEFAULT_REQUESTS,
    DEFAULT_SETTLE_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_WARMUP,
};
use crate::http::request::RequestSpec;
use crate::postgres::conninfo::EnvLookup;
use crate::render::format::Outputs;
use crate::values::{
    header, parse_duration, parse_method, parse_positive_duration, parse_url, read_cacert,
};

/// What every endpoint of the file shares, read once.
pub(super) struct Shared<'a> {
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

impl<'a> Shared<'a> {
    /// Reads what every endpoint shares: the base URL, the databases, the credentials,
    /// the settle timeout and the thresholds.
    pub(super) fn new(
        file: &'a File,
        source: &Source<'_>,
        base_dir: &'a Path,
        overrides: &Overrides,
        env: EnvLookup<'_>,
    ) -> Result<Shared<'a>> {
        let base_url = base_url(file, source, overrides)?;
        let mut secrets = Vec::new();
        let (db, more_dbs) = match &file.database.urls {
            Some(urls) => database_urls(&file.database, urls, source)?,
            None => (
                database(&file.database, source, env, &mut secrets)?,
                Vec::new(),
            ),
        };
        let credentials = credential_options(&file.auth, &base_url, base_dir, env, &mut secrets)
            .map_err(|e| source.in_file(e))?;
        let settle_timeout =
            (file.defaults.settle_timeout.as_deref()).unwrap_or(DEFAULT_SETTLE_TIMEOUT);
        Ok(Shared {
            file,
            base_dir,
            db,
            more_dbs,
            replicas: database_replicas(&file.database, source)?,
            settle_timeout: parse_duration("[defaults] settle_timeout", settle_timeout)
                .map_err(|e| source.in_file(e))?,
            findings: findings(&file.thresholds).map_err(|e| source.in_file(e))?,
            credentials,
            base_url,
            secrets,
        })
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
pub(super) fn endpoint(
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
        acks: table.acks.clone(),
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
        outputs: Outputs::default(),
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
