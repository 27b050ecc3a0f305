//! Validated configuration: the raw groups of flags (`crate::flags`) turned into typed
//! values, or one clear error. The flags of `pgcost audit` and each endpoint of
//! pgcost.toml fill the same [`AuditArgs`], which one function,
//! [`AuditConfig::from_raw`], checks into an [`AuditConfig`]; a [`Spelling`] names each
//! value in the errors as its source spells it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::auth::{self, AuthConfig, CredentialOptions, Prompt, Redactor};
use crate::error::{Error, Result};
use crate::flags::{
    AuditArgs, BackgroundArgs, FindingsArgs, LoadArgs, OutputArgs, SourceArgs, Spelling, TargetArgs,
};
use crate::http::error_answer::ErrorRule;
use crate::http::request::{RequestSpec, add_guessed_content_type};
use crate::http::rotation::Target;
use crate::http::template::{self, DataSet, Template, Turn};
use crate::postgres::conninfo::{self, DbTarget, EnvLookup};
use crate::render::format::{Export, Format, Outputs, REPORT_FORMATS};
use crate::values::{
    check_counts, parse_duration, parse_header, parse_header_name, parse_json_pointer,
    parse_method, parse_named_thresholds, parse_percent, parse_positive_duration, parse_url,
    read_body_file, read_cacert,
};
use pgcost_core::background;
use pgcost_core::findings::Thresholds;
use pgcost_core::source::SourceMap;
use pgcost_core::survey::graphql;

/// Everything `audit::run` needs, already checked.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    pub db: DbTarget,
    /// The other databases the request touches (`--db` repeated), measured in the same
    /// window as `db`.
    pub more_dbs: Vec<DbTarget>,
    /// Hot standbys the app reads from (`--replica`), measured in the same window.
    pub replicas: Vec<DbTarget>,
    pub admin_db: String,
    pub request: RequestSpec,
    pub requests: u64,
    pub concurrency: u32,
    pub warmup: u64,
    pub settle_timeout: Duration,
    /// `--format` and `-o`, and every `--export`.
    pub outputs: Outputs,
    pub insecure: bool,
    /// PEM of extra CA certificates for an https:// target (`--cacert`).
    pub cacert: Option<Vec<u8>>,
    pub quiet: bool,
    /// `None` with `--no-findings`.
    pub findings: Option<Thresholds>,
    /// Fetch the plans of the findings' and the top statements after the last window
    /// (false with `--no-plans`).
    pub plans: bool,
    /// Credentials, accepted statuses and the secrets to keep out of the output.
    pub auth: AuthConfig,
    /// Times a window in which app connections opened or closed is measured again.
    pub retries: u32,
    /// Other traffic on the database: `--app-role`, `--control`, `--max-background`.
    pub background: background::Options,
    /// PgBouncer's admin console (`--pgbouncer`), read around every window.
    pub pgbouncer: Option<DbTarget>,
    /// URLs the burst rotates over, each its share of the requests, in place of
    /// `request.url`; empty for every command but `survey`.
    pub targets: Vec<Target>,
    /// The app's source tree (`--source`), read once: findings name the model of their
    /// tables and the line of their SQL.
    pub source: Option<Arc<SourceMap>>,
    /// Sample `pg_stat_activity` for the tags of the app's SQL comments during the warm-ups
    /// and the bursts (false with `--no-tags`).
    pub tags: bool,
    /// `--allow-writes`: the requests may write; the report names what they wrote.
    pub allow_writes: bool,
}

/// The databases of the target group, resolved and checked together.
struct Databases {
    db: DbTarget,
    more_dbs: Vec<DbTarget>,
    replicas: Vec<DbTarget>,
    pgbouncer: Option<DbTarget>,
}

impl AuditConfig {
    /// Validates the flags; a `--basic` password missing from the environment is asked
    /// for on the terminal.
    pub fn from_args(args: &AuditArgs, env: EnvLookup<'_>) -> Result<AuditConfig> {
        Self::from_args_with_prompt(args, env, &auth::prompt_on_terminal)
    }

    /// As [`AuditConfig::from_args`], with the password prompt injected.
    pub fn from_args_with_prompt(
        args: &AuditArgs,
        env: EnvLookup<'_>,
        prompt: Prompt<'_>,
    ) -> Result<AuditConfig> {
        Self::from_raw(args, &Spelling::flags(), Redactor::default(), env, prompt)
    }

    /// The one validation of an audit's options, whether the flags or an endpoint of
    /// pgcost.toml filled the groups: each value parsed (and named, in its errors, as
    /// `spelling` says), then the counts, the databases and the credentials checked
    /// together; the credentials join the request's headers. `redactor` holds the secrets
    /// known so far.
    pub fn from_raw(
        args: &AuditArgs,
        spelling: &Spelling,
        redactor: Redactor,
        env: EnvLookup<'_>,
        prompt: Prompt<'_>,
    ) -> Result<AuditConfig> {
        let settle_timeout = settle_timeout(&args.target, spelling)?;
        let mut request = request_from_args(&args.url, &args.load, spelling)?;
        consent(&request, args.load.allow_writes, spelling)?;
        let outputs = outputs_from_args(&args.output, REPORT_FORMATS)?;
        let cacert = (args.load.cacert.as_deref())
            .map(|path| read_cacert(&spelling.of("cacert"), path))
            .transpose()?;
        let findings = findings_from_args(&args.findings, spelling)?;
        let source = source_from_args(&args.findings.source, spelling)?;
        let credentials =
            CredentialOptions::from_groups(&args.auth, &args.load.allow_status, spelling)?;
        let background = background_from_args(&args.background)?;
        check_counts(args.requests(), args.load.burst.concurrency)?;
        let databases = databases(&args.target, &background, env, &redactor)?;
        let mut auth = auth::configure(
            &credentials,
            &mut request.headers,
            request.timeout,
            env,
            prompt,
            redactor,
        )?;
        if let Some(login) = auth.login.as_mut() {
            login.error_rule = request.error_rule.clone();
        }
        Ok(AuditConfig {
            db: databases.db,
            more_dbs: databases.more_dbs,
            replicas: databases.replicas,
            admin_db: args.target.admin_db.clone(),
            request,
            requests: args.requests(),
            concurrency: args.load.burst.concurrency,
            warmup: args.load.warmup,
            settle_timeout,
            outputs,
            insecure: args.load.insecure,
            cacert,
            quiet: args.output.quiet,
            findings,
            plans: !args.findings.plans.no_plans,
            auth,
            retries: args.load.retries,
            background,
            pgbouncer: databases.pgbouncer,
            targets: Vec::new(),
            source,
            tags: !args.findings.source.no_tags,
            allow_writes: args.load.allow_writes,
        })
    }

    /// The same burst as an anonymous client sends it: no credential headers, no login,
    /// and 401 and 403 expected rather than invalid. Used for the unauthenticated baseline.
    pub fn without_credentials(&self) -> AuditConfig {
        let mut anonymous = self.clone();
        anonymous.request.headers = auth::without_credentials(&self.request.headers);
        anonymous.findings = None;
        let mut allowed = self.auth.allowed_statuses.clone();
        for code in [401, 403] {
            if !allowed.contains(&code) {
                allowed.push(code);
            }
        }
        allowed.sort_unstable();
        anonymous.auth = AuthConfig {
            allowed_statuses: allowed,
            redactor: self.auth.redactor.clone(),
            ..AuthConfig::default()
        };
        anonymous
    }
}

/// `--app-role`, `--control`, `--max-background` and `--max-duration`, checked.
pub fn background_from_args(args: &BackgroundArgs) -> Result<background::Options> {
    let mut app_roles = Vec::new();
    for role in &args.app_roles {
        if role.trim().is_empty() {
            return Err(Error::usage("--app-role needs a role name"));
        }
        if !app_roles.contains(role) {
            app_roles.push(role.clone());
        }
    }
    let control = (args.control.as_deref())
        .map(|text| parse_positive_duration("--control", text))
        .transpose()?;
    let max_share = parse_percent(&args.max_background).map_err(|_| {
        Error::usage(format!(
            "--max-background {:?} is not a percentage",
            args.max_background
        ))
        .with_hint("e.g. --max-background 5%")
    })?;
    let max_duration = parse_positive_duration("--max-duration", &args.max_duration)?;
    Ok(background::Options {
        app_roles,
        control,
        max_share: max_share / 100.0,
        max_duration,
    })
}

/// `--settle-timeout` (or pgcost.toml's `[defaults] settle_timeout`), checked.
pub fn settle_timeout(args: &TargetArgs, spelling: &Spelling) -> Result<Duration> {
    parse_duration(&spelling.of("settle_timeout"), &args.settle_timeout)
}

/// The databases of the target group: each resolved (its password joins `redactor`), no
/// node named twice, and `--control` with one database only.
fn databases(
    args: &TargetArgs,
    background: &background::Options,
    env: EnvLookup<'_>,
    redactor: &Redactor,
) -> Result<Databases> {
    let db = conninfo::resolve(args.db.first().map(String::as_str), env)?;
    let more_dbs = (args.db.iter().skip(1))
        .map(|text| conninfo::resolve(Some(text), env))
        .collect::<Result<Vec<_>>>()?;
    let replicas = (args.replica.iter())
        .map(|text| conninfo::resolve(Some(text), env))
        .collect::<Result<Vec<_>>>()?;
    for target in std::iter::once(&db).chain(&more_dbs).chain(&replicas) {
        if let Some(password) = target.config.get_password() {
            redactor.add_bytes(password);
        }
    }
    conninfo::check_distinct(&db, &[more_dbs.as_slice(), &replicas].concat())?;
    if background.control.is_some() && !(more_dbs.is_empty() && replicas.is_empty()) {
        return Err(Error::usage(
            "--control measures one database's background: it cannot be combined with \
             several --db or --replica yet",
        ));
    }
    let pgbouncer = crate::postgres::pgbouncer::admin_target(args.pgbouncer.as_deref(), env)?;
    if let Some(password) = pgbouncer.as_ref().and_then(|t| t.config.get_password()) {
        redactor.add_bytes(password);
    }
    Ok(Databases {
        db,
        more_dbs,
        replicas,
        pgbouncer,
    })
}

/// `--no-findings` and `--threshold` (or pgcost.toml's `[thresholds]`), checked.
pub fn findings_from_args(args: &FindingsArgs, spelling: &Spelling) -> Result<Option<Thresholds>> {
    match args.no_findings {
        true => Ok(None),
        false => parse_named_thresholds(&spelling.of("thresholds"), &args.thresholds).map(Some),
    }
}

/// `--source`, read: every model and every line of SQL below the directory.
pub fn source_from_args(args: &SourceArgs, spelling: &Spelling) -> Result<Option<Arc<SourceMap>>> {
    let Some(dir) = &args.source else {
        return Ok(None);
    };
    let map = SourceMap::scan(dir).map_err(|e| {
        Error::usage(format!("{}: {e}", spelling.of("source")))
            .with_hint("name the directory of the app's code, e.g. --source . in its checkout")
    })?;
    Ok(Some(Arc::new(map)))
}

/// `--format`, `-o` and every `--export`, checked: each export's format is one `allowed`
/// (the command's subset), and no two renderings go to the same file.
pub fn outputs_from_args(args: &OutputArgs, allowed: &[Format]) -> Result<Outputs> {
    let names: Vec<&str> = allowed.iter().map(|f| f.name()).collect();
    let mut exports: Vec<Export> = Vec::with_capacity(args.exports.len());
    for text in &args.exports {
        let export = Export::parse(text, allowed).map_err(|message| {
            Error::usage(format!("--export: {message}")).with_hint(format!(
                "e.g. --export json=report.json; this command writes {}",
                names.join(", ")
            ))
        })?;
        let taken = args.output.as_ref() == Some(&export.path)
            || exports.iter().any(|e| e.path == export.path);
        if taken {
            return Err(Error::usage(format!(
                "--export {text:?} writes to {}, which another rendering already writes",
                export.path.display()
            ))
            .with_hint("give each --export and -o a file of its own"));
        }
        exports.push(export);
    }
    Ok(Outputs {
        format: args.format,
        output: args.output.clone(),
        exports,
    })
}

/// Refuses, before anything is sent, a request that may write without `--allow-writes`:
/// a method other than GET, HEAD and OPTIONS (a GraphQL query sent with POST aside), or a
/// GraphQL mutation whatever its method. Consent goes by the request, not by what it did.
fn consent(request: &RequestSpec, allowed: bool, spelling: &Spelling) -> Result<()> {
    let method = request.method.as_str();
    let target = &request.url[url::Position::BeforePath..];
    let body = (request.body.as_deref()).and_then(|b| std::str::from_utf8(b).ok());
    let safe = matches!(method, "GET" | "HEAD" | "OPTIONS");
    let writes = match graphql::classify(method, target, body) {
        graphql::Request::Read(_) => false,
        operation if operation.changes_data() => true,
        _ => !safe,
    };
    if !writes || allowed {
        return Ok(());
    }
    let what = match safe {
        true => "a GraphQL mutation or subscription".to_string(),
        false => format!("a {method} request"),
    };
    Err(Error::usage(format!(
        "{what} may write to the database, and every request of the run would: \
         it needs {}",
        spelling.of("allow_writes")
    ))
    .with_hint(
        "pass --allow-writes (allow_writes = true in pgcost.toml) against a database whose \
         rows you can lose: pgcost does not give them back (--restore is not built yet), and \
         the report names the rows written",
    ))
}

/// The request of the load group: URL, method, `-H` headers, body and timeout.
fn request_from_args(url: &str, args: &LoadArgs, spelling: &Spelling) -> Result<RequestSpec> {
    let url = parse_url(url)?;
    let method = parse_method(&args.method)?;
    let mut headers = HeaderMap::new();
    for text in &args.headers {
        let (name, value) = parse_header(text)?;
        headers.append(name, value);
    }
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => Some(Bytes::from(text.clone())),
        (None, Some(path)) => Some(read_body_file(&spelling.of("body_file"), path)?),
        (None, None) => None,
    };
    let data = (args.data.as_deref())
        .map(|path| {
            DataSet::read(path).map_err(|e| Error::usage(format!("{}: {e}", spelling.of("data"))))
        })
        .transpose()?;
    let sample = templates(&url, &headers, body.as_deref(), data.as_deref())?;
    content_type(
        &mut headers,
        args.content_type.as_deref(),
        sample.as_deref().or(body.as_deref()),
        spelling,
    )?;
    let pointer = (args.error_body_pointer.as_deref())
        .map(|text| parse_json_pointer(&spelling.of("error_body_pointer"), text))
        .transpose()?;
    for name in &args.error_headers {
        parse_header_name(&spelling.of("error_headers"), name)?;
    }
    Ok(RequestSpec {
        url,
        method,
        headers,
        body,
        timeout: parse_positive_duration(&spelling.of("timeout"), &args.timeout)?,
        error_rule: ErrorRule::with(&args.error_headers, pointer),
        data,
    })
}

/// Checks the placeholders of the URL, the headers and the body (exit 2 naming one that is
/// unknown, or a column `--data` lacks); the body as its first request sends it, when it
/// has any, for its Content-Type to be guessed from.
fn templates(
    url: &reqwest::Url,
    headers: &HeaderMap,
    body: Option<&[u8]>,
    data: Option<&DataSet>,
) -> Result<Option<Vec<u8>>> {
    let usage = |e: String| Error::usage(e).with_hint("docs/writes.md lists the placeholders");
    Template::parse_target(&url[url::Position::BeforePath..], data).map_err(usage)?;
    for value in headers.values() {
        Template::parse(value.as_bytes(), template::Context::Header, data).map_err(usage)?;
    }
    let Some(body) = body else {
        return Ok(None);
    };
    let body = Template::parse(body, template::Context::Body, data).map_err(usage)?;
    if body.is_fixed() {
        return Ok(None);
    }
    let mut sample = Vec::new();
    body.render(Turn { seq: 1 }, data, &mut sample);
    Ok(Some(sample))
}

/// The body's Content-Type: `--content-type` when given (a usage error beside a `-H`
/// Content-Type: two answers to one question), else the guess for the body when no header
/// names one (`http::request`).
fn content_type(
    headers: &mut HeaderMap,
    given: Option<&str>,
    body: Option<&[u8]>,
    spelling: &Spelling,
) -> Result<()> {
    let Some(text) = given else {
        add_guessed_content_type(headers, body.unwrap_or_default());
        return Ok(());
    };
    let what = spelling.of("content_type");
    if headers.contains_key(CONTENT_TYPE) {
        return Err(
            Error::usage(format!("{what} and a Content-Type header are both given"))
                .with_hint("keep one of them"),
        );
    }
    let value = HeaderValue::from_str(text.trim())
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::usage(format!("{what} {text:?} is not a header value"))
                .with_hint("e.g. application/x-www-form-urlencoded")
        })?;
    headers.insert(CONTENT_TYPE, value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &[&str], env: &[(&str, &str)]) -> Result<AuditConfig> {
        let mut argv = vec!["pgcost", "audit", "--url", "http://127.0.0.1:1/x"];
        argv.extend(["--db", "postgres://app:db-pw-123456@127.0.0.1:1/shop"]);
        argv.extend(extra);
        let crate::flags::Command::Audit(args) =
            <crate::flags::Cli as clap::Parser>::parse_from(argv).command
        else {
            unreachable!("an audit command line")
        };
        let vars: std::collections::HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |name: &str| vars.get(name).cloned();
        AuditConfig::from_args_with_prompt(&args, &lookup, &|_| None)
    }

    #[test]
    fn credentials_join_the_request_and_leave_it_for_the_baseline() {
        let c = config(
            &[
                "--cookie",
                "sid=cookie-123456",
                "-H",
                "X-Api-Key: key-123456",
                "-H",
                "Accept: */*",
                "--compare-unauthenticated",
                "--allow-status",
                "404",
            ],
            &[("PGCOST_BEARER", "bearer-123456")],
        )
        .unwrap();
        assert_eq!(c.request.headers["authorization"], "Bearer bearer-123456");
        assert_eq!(c.request.headers["cookie"], "sid=cookie-123456");
        assert_eq!(
            c.auth.described,
            [
                "x-api-key (-H)",
                "Authorization: Bearer (PGCOST_BEARER)",
                "Cookie: sid (--cookie)"
            ]
        );
        let shown = format!("{c:?}");
        for secret in [
            "bearer-123456",
            "cookie-123456",
            "key-123456",
            "db-pw-123456",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
            assert_eq!(c.auth.redactor.scrub(secret), "<redacted>");
        }

        let anonymous = c.without_credentials();
        let names: Vec<&str> = anonymous
            .request
            .headers
            .keys()
            .map(|n| n.as_str())
            .collect();
        assert_eq!(names, ["accept"]);
        assert_eq!(anonymous.auth.allowed_statuses, vec![401, 403, 404]);
        assert!(!anonymous.auth.compare_unauthenticated);
        assert!(anonymous.auth.described.is_empty());
        assert!(anonymous.findings.is_none());
    }

    #[test]
    fn background_options_are_checked() {
        let c = config(
            &["--app-role", "app", "--app-role", "app", "--control", "10s"],
            &[],
        );
        let options = c.unwrap().background;
        assert_eq!(options.app_roles, vec!["app".to_string()]);
        assert_eq!(options.control, Some(std::time::Duration::from_secs(10)));
        assert_eq!(options.max_share, 0.05);
        assert_eq!(options.max_duration, std::time::Duration::from_secs(180));
        let c = config(&["--control", "5s", "--max-background", "12.5%"], &[]);
        assert_eq!(c.unwrap().background.max_share, 0.125);
        let c = config(&["--control", "5s", "--max-duration", "90s"], &[]);
        assert_eq!(
            c.unwrap().background.max_duration,
            std::time::Duration::from_secs(90)
        );
        for (extra, message) in [
            (&["--control", "0s"][..], "--control"),
            (
                &["--control", "5s", "--max-duration", "0s"],
                "--max-duration",
            ),
            (
                &["--control", "5s", "--max-background", "lots"],
                "--max-background",
            ),
            (&["--app-role", " "], "--app-role needs a role name"),
            (
                &["--control", "5s", "--db", "postgres://app@127.0.0.1:1/auth"],
                "several --db",
            ),
        ] {
            let err = config(extra, &[]).unwrap_err();
            assert!(err.message.contains(message), "{extra:?}: {}", err.message);
        }
        assert_eq!(config(&[], &[]).unwrap().background, Default::default());
    }

    #[test]
    fn a_bad_value_names_its_flag() {
        let message = |extra: &[&str]| config(extra, &[]).unwrap_err().message;
        assert_eq!(
            message(&["--timeout", "0s"]),
            "--timeout must be greater than zero"
        );
        assert_eq!(
            message(&["--jwt-ttl", "0s"]),
            "--jwt-ttl must be greater than zero"
        );
        assert!(
            message(&["--settle-timeout", "soon"])
                .starts_with("--settle-timeout is not a duration")
        );
        assert_eq!(
            message(&["--threshold", "nope=1"]),
            "--threshold: unknown name \"nope\""
        );
    }

    #[test]
    fn a_baseline_needs_credentials() {
        let err = config(&["--compare-unauthenticated"], &[]).unwrap_err();
        assert!(err.message.contains("needs credentials"), "{}", err.message);
    }

    #[test]
    fn a_json_body_gets_its_content_type_unless_one_is_named() {
        let content_type = |extra: &[&str]| {
            let request = config(extra, &[]).unwrap().request;
            (request.headers.get(CONTENT_TYPE)).map(|v| v.to_str().unwrap().to_string())
        };
        let json = Some("application/json".to_string());
        assert_eq!(
            content_type(&["-X", "POST", "--allow-writes", "--body", r#"{"a":1}"#]),
            json
        );
        assert_eq!(
            content_type(&["-X", "POST", "--allow-writes", "--body", "a=1"]),
            None
        );
        assert_eq!(content_type(&[]), None);
        let form = ["--body", r#"{"a":1}"#, "--content-type", "text/plain"];
        assert_eq!(content_type(&form), Some("text/plain".into()));
        let header = [
            "--body",
            "{}",
            "-H",
            "Content-Type: application/vnd.api+json",
        ];
        assert_eq!(
            content_type(&header),
            Some("application/vnd.api+json".into())
        );
        let both = [
            "--content-type",
            "text/plain",
            "-H",
            "content-type: text/csv",
        ];
        assert_eq!(
            config(&both, &[]).unwrap_err().message,
            "--content-type and a Content-Type header are both given"
        );
    }
}
