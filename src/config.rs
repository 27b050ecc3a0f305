//! Validated configuration: options turned into typed values, or one clear error. The
//! flags of `pgcost audit` and each endpoint of pgcost.toml become the same
//! [`AuditOptions`], which one constructor checks into an [`AuditConfig`].

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;

use crate::auth::{self, AuthConfig, CredentialOptions, Prompt, Redactor};
use crate::cost::background;
use crate::cost::findings::Thresholds;
use crate::error::{Error, Result};
use crate::flags::{AuditArgs, BackgroundArgs, FindingsArgs, LoadArgs, OutputArgs, TargetArgs};
use crate::http::request::RequestSpec;
use crate::postgres::conninfo::{self, DbTarget, EnvLookup};
use crate::render::format::{Export, Format, Outputs, REPORT_FORMATS};
use crate::values::{
    check_counts, findings_from_flags, parse_duration, parse_header, parse_method, parse_percent,
    parse_positive_duration, parse_url, read_body_file, read_cacert,
};

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
}

/// One audit's options, each value parsed on its own (and named, in its errors, as its
/// source spells it), but not yet checked together: what [`AuditConfig::from_options`]
/// takes, from the flags or from pgcost.toml.
pub struct AuditOptions {
    /// A URL or key=value string; `None` for DATABASE_URL and the libpq variables.
    pub db: Option<String>,
    /// The other databases the request touches, each a URL or key=value string.
    pub more_dbs: Vec<String>,
    /// The hot standbys the app reads from, each a URL or key=value string.
    pub replicas: Vec<String>,
    pub admin_db: String,
    /// The request, with the `-H` headers only: credentials are added from `credentials`.
    pub request: RequestSpec,
    pub requests: u64,
    pub concurrency: u32,
    pub warmup: u64,
    pub settle_timeout: Duration,
    /// `--format` and `-o`, and every `--export`.
    pub outputs: Outputs,
    pub insecure: bool,
    pub cacert: Option<Vec<u8>>,
    pub quiet: bool,
    pub findings: Option<Thresholds>,
    pub plans: bool,
    pub credentials: CredentialOptions,
    pub retries: u32,
    pub background: background::Options,
    /// PgBouncer's admin console, a URL or key=value string.
    pub pgbouncer: Option<String>,
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
        let target = target_options(&args.target)?;
        let options = AuditOptions {
            request: request_from_args(&args.url, &args.load)?,
            requests: args.requests(),
            concurrency: args.load.burst.concurrency,
            warmup: args.load.warmup,
            outputs: outputs_from_args(&args.output, REPORT_FORMATS)?,
            insecure: args.load.insecure,
            cacert: (args.load.cacert.as_deref())
                .map(|path| read_cacert("--cacert", path))
                .transpose()?,
            quiet: args.output.quiet,
            findings: findings_from_args(&args.findings)?,
            plans: !args.findings.plans.no_plans,
            credentials: CredentialOptions::from_args(args)?,
            retries: args.load.retries,
            background: background_from_args(&args.background)?,
            ..target
        };
        Self::from_options(options, Redactor::default(), env, prompt)
    }

    /// Checks the options together: the counts, the database target and the credentials,
    /// which join the request's headers. `redactor` holds the secrets known so far.
    pub fn from_options(
        options: AuditOptions,
        redactor: Redactor,
        env: EnvLookup<'_>,
        prompt: Prompt<'_>,
    ) -> Result<AuditConfig> {
        check_counts(options.requests, options.concurrency)?;
        let db = conninfo::resolve(options.db.as_deref(), env)?;
        let mut more_dbs = Vec::with_capacity(options.more_dbs.len());
        for text in &options.more_dbs {
            more_dbs.push(conninfo::resolve(Some(text), env)?);
        }
        let replicas = (options.replicas.iter())
            .map(|text| conninfo::resolve(Some(text), env))
            .collect::<Result<Vec<_>>>()?;
        for target in std::iter::once(&db).chain(&more_dbs).chain(&replicas) {
            if let Some(password) = target.config.get_password() {
                redactor.add_bytes(password);
            }
        }
        conninfo::check_distinct(&db, &[more_dbs.as_slice(), &replicas].concat())?;
        if options.background.control.is_some() && !(more_dbs.is_empty() && replicas.is_empty()) {
            return Err(Error::usage(
                "--control measures one database's background: it cannot be combined with \
                 several --db or --replica yet",
            ));
        }
        let pgbouncer =
            crate::postgres::pgbouncer::admin_target(options.pgbouncer.as_deref(), env)?;
        if let Some(password) = pgbouncer.as_ref().and_then(|t| t.config.get_password()) {
            redactor.add_bytes(password);
        }
        let mut request = options.request;
        let auth = auth::configure(
            &options.credentials,
            &mut request.headers,
            request.timeout,
            env,
            prompt,
            redactor,
        )?;
        Ok(AuditConfig {
            db,
            more_dbs,
            replicas,
            admin_db: options.admin_db,
            request,
            requests: options.requests,
            concurrency: options.concurrency,
            warmup: options.warmup,
            settle_timeout: options.settle_timeout,
            outputs: options.outputs,
            insecure: options.insecure,
            cacert: options.cacert,
            quiet: options.quiet,
            findings: options.findings,
            plans: options.plans,
            auth,
            retries: options.retries,
            background: options.background,
            pgbouncer,
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

/// `--app-role`, `--control` and `--max-background`, checked.
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
    Ok(background::Options {
        app_roles,
        control,
        max_share: max_share / 100.0,
    })
}

/// The target group as the database part of [`AuditOptions`]; every other field holds a
/// placeholder for the caller to replace (`AuditOptions { .., ..target }`).
pub fn target_options(args: &TargetArgs) -> Result<AuditOptions> {
    Ok(AuditOptions {
        db: args.db.first().cloned(),
        more_dbs: args.db.iter().skip(1).cloned().collect(),
        replicas: args.replica.clone(),
        admin_db: args.admin_db.clone(),
        settle_timeout: parse_duration("--settle-timeout", &args.settle_timeout)?,
        pgbouncer: args.pgbouncer.clone(),
        request: placeholder_request(),
        requests: 1,
        concurrency: 1,
        warmup: 0,
        outputs: Outputs::default(),
        insecure: false,
        cacert: None,
        quiet: false,
        findings: None,
        plans: true,
        credentials: CredentialOptions::default(),
        retries: 0,
        background: Default::default(),
    })
}

/// A request that nothing sends: `measure`'s, whose command makes the load.
pub fn placeholder_request() -> RequestSpec {
    RequestSpec {
        url: url::Url::parse("http://command.invalid/").expect("a static URL"),
        method: reqwest::Method::GET,
        headers: Default::default(),
        body: None,
        timeout: Duration::from_secs(30),
    }
}

/// `--no-findings` and `--threshold`, checked.
pub fn findings_from_args(args: &FindingsArgs) -> Result<Option<Thresholds>> {
    findings_from_flags(args.no_findings, &args.thresholds)
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

/// The request of the flags: URL, method, `-H` headers, body and timeout.
fn request_from_args(url: &str, args: &LoadArgs) -> Result<RequestSpec> {
    let url = parse_url(url)?;
    let method = parse_method(&args.method)?;
    let mut headers = HeaderMap::new();
    for text in &args.headers {
        let (name, value) = parse_header(text)?;
        headers.append(name, value);
    }
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => Some(Bytes::from(text.clone())),
        (None, Some(path)) => Some(read_body_file("--body-file", path)?),
        (None, None) => None,
    };
    Ok(RequestSpec {
        url,
        method,
        headers,
        body,
        timeout: parse_positive_duration("--timeout", &args.timeout)?,
    })
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
        let c = config(&["--control", "5s", "--max-background", "12.5%"], &[]);
        assert_eq!(c.unwrap().background.max_share, 0.125);
        for (extra, message) in [
            (&["--control", "0s"][..], "--control"),
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
    fn a_baseline_needs_credentials() {
        let err = config(&["--compare-unauthenticated"], &[]).unwrap_err();
        assert!(err.message.contains("needs credentials"), "{}", err.message);
    }
}
