//! Validated configuration: raw flags turned into typed values, or one clear error.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};

use crate::auth::{self, AuthConfig, Prompt, Redactor};
use crate::cli::AuditArgs;
use crate::conninfo::{self, DbTarget, EnvLookup};
use crate::error::{Error, Result};
use crate::findings::Thresholds;
use crate::load::RequestSpec;
use crate::render::Format;

/// Everything `audit::run` needs, already checked.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    pub db: DbTarget,
    pub admin_db: String,
    pub request: RequestSpec,
    pub requests: u64,
    pub concurrency: u32,
    pub warmup: u64,
    pub settle_timeout: Duration,
    pub format: Format,
    pub output: Option<PathBuf>,
    pub insecure: bool,
    /// PEM of extra CA certificates for an https:// target (`--cacert`).
    pub cacert: Option<Vec<u8>>,
    pub quiet: bool,
    /// `None` with `--no-findings`.
    pub findings: Option<Thresholds>,
    /// Credentials, accepted statuses and the secrets to keep out of the output.
    pub auth: AuthConfig,
}

/// Checks `--allow-status` codes; allowing 401 or 403 earns a warning.
pub fn parse_allowed_statuses(codes: &[u16]) -> Result<(Vec<u16>, Vec<String>)> {
    let mut allowed = Vec::new();
    let mut warnings = Vec::new();
    for &code in codes {
        if !(100..=599).contains(&code) {
            return Err(
                Error::usage(format!("--allow-status {code} is not an HTTP status code"))
                    .with_hint("status codes run from 100 to 599, e.g. --allow-status 404"),
            );
        }
        if allowed.contains(&code) {
            continue;
        }
        allowed.push(code);
        if matches!(code, 401 | 403) {
            warnings.push(format!(
                "--allow-status {code}: rejected requests do not make this report invalid, so \
                 its numbers may measure the rejection path rather than the endpoint"
            ));
        }
    }
    allowed.sort_unstable();
    Ok((allowed, warnings))
}

/// Applies `NAME=VALUE` overrides to the default finding thresholds.
pub fn parse_thresholds(overrides: &[String]) -> Result<Thresholds> {
    let mut value = serde_json::to_value(Thresholds::default()).expect("thresholds serialize");
    let map = value.as_object_mut().expect("thresholds are a struct");
    for text in overrides {
        let (name, number) = text.split_once('=').ok_or_else(|| {
            Error::usage(format!("--threshold {text:?} is not NAME=VALUE"))
                .with_hint("e.g. --threshold collection_min_rows_per_call=20")
        })?;
        let name = name.trim();
        let Some(slot) = map.get_mut(name) else {
            let names: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(Error::usage(format!("--threshold: unknown name {name:?}"))
                .with_hint(format!("known names: {}", names.join(", "))));
        };
        let parsed: f64 = number
            .trim()
            .parse()
            .map_err(|_| Error::usage(format!("--threshold {name}: {number:?} is not a number")))?;
        *slot = if slot.is_i64() || slot.is_u64() {
            serde_json::Value::from(parsed.round() as i64)
        } else {
            serde_json::Value::from(parsed)
        };
    }
    serde_json::from_value(value).map_err(|e| Error::usage(format!("--threshold: {e}")))
}

/// Parses `10s`, `500ms`, `1m`, or a bare number of seconds.
pub fn parse_duration(flag: &str, text: &str) -> Result<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|_| {
            Error::usage(format!("{flag} is not a usable duration: {text:?}"))
                .with_hint("give a non-negative number of seconds, or 500ms, 10s, 2m")
        });
    }
    humantime::parse_duration(text).map_err(|e| {
        Error::usage(format!("{flag} is not a duration: {text:?} ({e})"))
            .with_hint("write it like 500ms, 10s or 2m")
    })
}

/// Parses one `Name: value` header.
pub fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue)> {
    let (name, value) = text.split_once(':').ok_or_else(|| {
        Error::usage(format!("header {:?} has no colon", redact_header(text)))
            .with_hint("write headers as -H 'Name: value'")
    })?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| Error::usage(format!("header name {:?} is not valid", name.trim())))?;
    let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
        Error::usage(format!(
            "the value of header {name} has characters HTTP does not allow"
        ))
    })?;
    if is_secret_header(&name) {
        value.set_sensitive(true);
    }
    Ok((name, value))
}

/// Headers whose values are credentials and never printed.
pub fn is_secret_header(name: &HeaderName) -> bool {
    let n = name.as_str();
    matches!(
        n,
        "authorization" | "cookie" | "set-cookie" | "proxy-authorization"
    ) || n.contains("token")
        || n.contains("api-key")
        || n.contains("apikey")
        || n.contains("secret")
}

/// A header for an error message: the name only, when it might carry a secret.
fn redact_header(text: &str) -> String {
    match text.split_once([':', ' ']) {
        Some((name, _)) => format!("{name}: <redacted>"),
        None if text.len() > 40 => "<redacted>".into(),
        None => text.to_string(),
    }
}

/// Checks the target URL: absolute, http or https.
pub fn parse_url(text: &str) -> Result<Url> {
    let url = Url::parse(text).map_err(|e| {
        Error::usage(format!("--url {text:?} is not a valid URL ({e})"))
            .with_hint("write it like http://127.0.0.1:3000/api/v1/projects")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::usage(format!(
            "--url must be http or https, not {}",
            url.scheme()
        )));
    }
    Ok(url)
}

pub fn parse_method(text: &str) -> Result<Method> {
    Method::from_bytes(text.to_ascii_uppercase().as_bytes())
        .map_err(|_| Error::usage(format!("-X {text:?} is not an HTTP method")))
}

/// Checks the request count and concurrency together.
pub fn check_counts(requests: u64, concurrency: u32) -> Result<()> {
    if requests == 0 {
        return Err(Error::usage(
            "--requests must be at least 1: every figure is divided by it",
        ));
    }
    if concurrency == 0 {
        return Err(Error::usage("--concurrency must be at least 1"));
    }
    if u64::from(concurrency) > requests {
        return Err(Error::usage(format!(
            "--concurrency {concurrency} is greater than --requests {requests}"
        ))
        .with_hint("lower -c or raise -n, so that every worker sends at least one request"));
    }
    Ok(())
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
        check_counts(args.requests, args.concurrency)?;
        let url = parse_url(&args.url)?;
        let method = parse_method(&args.method)?;
        let mut headers = HeaderMap::new();
        for text in &args.headers {
            let (name, value) = parse_header(text)?;
            headers.append(name, value);
        }
        let body = match (&args.body, &args.body_file) {
            (Some(text), _) => Some(Bytes::from(text.clone())),
            (None, Some(path)) => Some(Bytes::from(std::fs::read(path).map_err(|e| {
                Error::usage(format!("cannot read --body-file {}: {e}", path.display()))
            })?)),
            (None, None) => None,
        };
        let timeout = parse_duration("--timeout", &args.timeout)?;
        if timeout.is_zero() {
            return Err(Error::usage("--timeout must be greater than zero"));
        }
        let settle_timeout = parse_duration("--settle-timeout", &args.settle_timeout)?;
        let db = conninfo::resolve(args.db.as_deref(), env)?;
        let redactor = Redactor::default();
        if let Some(password) = db.config.get_password() {
            redactor.add_bytes(password);
        }
        let credentials = auth::resolve(
            &args.auth,
            &headers,
            timeout,
            env,
            prompt,
            &redactor,
            std::time::SystemTime::now(),
        )?;
        if args.auth.compare_unauthenticated
            && credentials.login.is_none()
            && auth::without_credentials(&headers).len() == headers.len()
            && credentials.headers.is_empty()
        {
            return Err(Error::usage(
                "--compare-unauthenticated needs credentials to compare against",
            )
            .with_hint("add --bearer-file, --cookie, --basic, a --jwt-* key, --login-url or -H"));
        }
        for (name, value) in &credentials.headers {
            headers.insert(name, value.clone());
        }
        let (allowed_statuses, warnings) = parse_allowed_statuses(&args.allow_status)?;
        Ok(AuditConfig {
            db,
            admin_db: args.admin_db.clone(),
            request: RequestSpec {
                url,
                method,
                headers,
                body,
                timeout,
            },
            requests: args.requests,
            concurrency: args.concurrency,
            warmup: args.warmup,
            settle_timeout,
            format: args.format,
            output: args.output.clone(),
            insecure: args.insecure,
            cacert: match &args.cacert {
                Some(path) => {
                    let pem = std::fs::read(path).map_err(|e| {
                        Error::usage(format!("cannot read --cacert {}: {e}", path.display()))
                    })?;
                    reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                        Error::usage(format!(
                            "--cacert {} is not a PEM certificate: {e}",
                            path.display()
                        ))
                    })?;
                    Some(pem)
                }
                None => None,
            },
            quiet: args.quiet,
            findings: if args.no_findings {
                None
            } else {
                Some(parse_thresholds(&args.thresholds)?)
            },
            auth: AuthConfig {
                described: credentials.described,
                login: credentials.login,
                allowed_statuses,
                compare_unauthenticated: args.auth.compare_unauthenticated,
                redactor,
                warnings,
            },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("--t", "10s").unwrap(),
            Duration::from_secs(10)
        );
        assert_eq!(
            parse_duration("--t", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(parse_duration("--t", "2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("--t", "soon").is_err());
        assert!(parse_duration("--t", "-1").is_err());
    }

    #[test]
    fn headers() {
        let (n, v) = parse_header("X-Api-Key:  abc ").unwrap();
        assert_eq!(n.as_str(), "x-api-key");
        assert_eq!(v.to_str().unwrap(), "abc");
        assert!(v.is_sensitive());
        let err = parse_header("Authorization Bearer xyz").unwrap_err();
        assert!(err.message.contains("no colon"));
        assert!(!err.message.contains("xyz"));
        assert!(parse_header("Bad Name: v").is_err());
        assert!(parse_header("X-A: line\nbreak").is_err());
    }

    #[test]
    fn counts() {
        assert!(
            check_counts(0, 1)
                .unwrap_err()
                .message
                .contains("at least 1")
        );
        assert!(
            check_counts(4, 8)
                .unwrap_err()
                .message
                .contains("greater than")
        );
        assert!(check_counts(8, 8).is_ok());
    }

    #[test]
    fn threshold_overrides() {
        let t = parse_thresholds(&[
            "collection_min_rows_per_call=20".into(),
            "seq_scan_min_pages=2".into(),
        ])
        .unwrap();
        assert_eq!(t.collection_min_rows_per_call, 20.0);
        assert_eq!(t.seq_scan_min_pages, 2);
        assert!(
            parse_thresholds(&["nope=1".into()])
                .unwrap_err()
                .message
                .contains("unknown name")
        );
        assert!(parse_thresholds(&["collection_min_rows_per_call".into()]).is_err());
        assert!(parse_thresholds(&["seq_scan_min_pages=x".into()]).is_err());
    }

    #[test]
    fn allowed_statuses() {
        let (allowed, warnings) = parse_allowed_statuses(&[404, 401, 404]).unwrap();
        assert_eq!(allowed, vec![401, 404]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("--allow-status 401: rejected requests"));
        assert!(parse_allowed_statuses(&[99]).is_err());
        assert!(parse_allowed_statuses(&[600]).is_err());
    }

    fn config(extra: &[&str], env: &[(&str, &str)]) -> Result<AuditConfig> {
        let mut argv = vec!["pgcost", "audit", "--url", "http://127.0.0.1:1/x"];
        argv.extend(["--db", "postgres://app:db-pw-123456@127.0.0.1:1/shop"]);
        argv.extend(extra);
        let crate::cli::Command::Audit(args) =
            <crate::cli::Cli as clap::Parser>::parse_from(argv).command
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
    fn a_baseline_needs_credentials() {
        let err = config(&["--compare-unauthenticated"], &[]).unwrap_err();
        assert!(err.message.contains("needs credentials"), "{}", err.message);
    }

    #[test]
    fn urls_and_methods() {
        assert!(parse_url("http://127.0.0.1:3000/x").is_ok());
        assert!(parse_url("127.0.0.1:3000/x").is_err());
        assert!(parse_url("ftp://h/x").is_err());
        assert_eq!(parse_method("post").unwrap(), Method::POST);
        assert!(parse_method("GE T").is_err());
    }
}
