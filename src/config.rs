//! Validated configuration: raw flags turned into typed values, or one clear error.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;

use crate::auth::{self, AuthConfig, Prompt, Redactor};
use crate::cli::AuditArgs;
use crate::cli::Format;
use crate::cost::findings::Thresholds;
use crate::error::{Error, Result};
use crate::http::request::RequestSpec;
use crate::postgres::conninfo::{self, DbTarget, EnvLookup};
use crate::values::{
    check_counts, parse_allowed_statuses, parse_duration, parse_header, parse_method,
    parse_thresholds, parse_url,
};

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
}
