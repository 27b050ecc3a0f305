//! `[[survey.auth]]` of pgcost.toml: a credential per path prefix, its `${VAR}`s expanded
//! as `check` expands its headers (every value joins the redactor), and how a route's
//! audit flags take it: the first entry whose prefix matches the route's path replaces the
//! command line's credentials for that route; no match keeps them.

use std::collections::BTreeMap;

use reqwest::header::HeaderName;
use serde::Deserialize;

use crate::auth::{BEARER_VAR, Redactor};
use crate::commands::check::config::expand_vars;
use crate::error::{Error, Result};
use crate::flags::{AuditArgs, AuthArgs, defaults};
use crate::postgres::conninfo::EnvLookup;
use crate::values::is_secret_header;
use pgcost_core::survey::replay::CredentialUsed;

/// One `[[survey.auth]]`, as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AuthTable {
    /// Path prefixes, each starting with `/`.
    pub paths: Vec<String>,
    /// Name → value, `${VAR}` expanded; sent as `-H 'Name: value'`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `NAME=VALUE`, `${VAR}` expanded; sent as `--cookie`.
    #[serde(default)]
    pub cookies: Vec<String>,
}

/// An entry with its variables expanded: what a matching route sends instead of the
/// command line's credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteAuth {
    pub used: CredentialUsed,
    headers: Vec<(String, String)>,
    cookies: Vec<String>,
}

/// Refuses an entry without paths, with a path that does not start with `/`, or with a
/// Cookie header besides its cookies.
pub fn check(tables: &[AuthTable], origin: &str) -> Result<()> {
    for (index, table) in tables.iter().enumerate() {
        let bad = table.paths.iter().find(|p| !p.starts_with('/'));
        if table.paths.is_empty() || bad.is_some() {
            return Err(Error::usage(format!(
                "{origin}: [[survey.auth]] #{index}: paths must list prefixes that start with \
                 / (found {:?})",
                bad.map_or("none", String::as_str)
            ))
            .with_hint("e.g. paths = [\"/api/\"]; the first entry that matches a route wins"));
        }
        let cookie_header = (table.headers.keys()).any(|n| n.eq_ignore_ascii_case("cookie"));
        if cookie_header && !table.cookies.is_empty() {
            return Err(Error::usage(format!(
                "{origin}: [[survey.auth]] #{index} sets the Cookie header twice: in headers \
                 and in cookies"
            ))
            .with_hint("list each cookie in cookies = [\"NAME=VALUE\"]"));
        }
    }
    Ok(())
}

/// Every entry with its `${VAR}`s replaced; a missing variable is a usage error that names
/// it. The values (whole, and each variable's) join `redactor`.
pub fn expand(
    tables: &[AuthTable],
    env: EnvLookup<'_>,
    redactor: &Redactor,
) -> Result<Vec<RouteAuth>> {
    let mut secrets = Vec::new();
    let mut entries = Vec::with_capacity(tables.len());
    for (index, table) in tables.iter().enumerate() {
        let what = |key: &str| format!("[[survey.auth]] #{index} {key}");
        let mut headers = Vec::new();
        for (name, value) in &table.headers {
            let value = expand_vars(value, &what(&format!("header {name}")), env, &mut secrets)?;
            secrets.push(value.clone());
            headers.push((name.clone(), value));
        }
        let mut cookies = Vec::new();
        for cookie in &table.cookies {
            cookies.push(expand_vars(cookie, &what("cookie"), env, &mut secrets)?);
        }
        entries.push(RouteAuth {
            used: CredentialUsed {
                index,
                paths: table.paths.clone(),
            },
            headers,
            cookies,
        });
    }
    secrets.iter().for_each(|s| redactor.add(s));
    Ok(entries)
}

/// The first entry one of whose prefixes starts the route's path (its template without
/// the query).
pub fn pick<'a>(entries: &'a [RouteAuth], template: &str) -> Option<&'a RouteAuth> {
    let path = template.split('?').next().unwrap_or_default();
    (entries.iter()).find(|e| e.used.paths.iter().any(|p| path.starts_with(p.as_str())))
}

/// The route's audit flags with the entry's credential in place of the command line's:
/// its secret `-H` headers, and those the entry names, are dropped, and every credential
/// flag is cleared (the checks `--compare-unauthenticated` and `--allow-anonymous-equal`
/// stay).
pub fn apply(entry: &RouteAuth, audit: &mut AuditArgs) {
    let name_of = |header: &str| {
        header
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    audit.load.headers.retain(|h| {
        let name = name_of(h);
        let secret = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
            .is_ok_and(|n| is_secret_header(&n));
        !secret
            && !entry
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(&name))
    });
    (audit.load.headers).extend(entry.headers.iter().map(|(n, v)| format!("{n}: {v}")));
    let given = &audit.auth;
    audit.auth = AuthArgs {
        cookies: entry.cookies.clone(),
        compare_unauthenticated: given.compare_unauthenticated,
        allow_anonymous_equal: given.allow_anonymous_equal,
        jwt_ttl: given.jwt_ttl.clone(),
        ..defaults()
    };
}

/// The environment a route with an entry reads: without [`BEARER_VAR`], which would add
/// the command line's default token to the entry's credential.
pub fn without_default_token(env: EnvLookup<'_>, name: &str) -> Option<String> {
    if name == BEARER_VAR { None } else { env(name) }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::flags::{Cli, Command};

    fn tables() -> Vec<AuthTable> {
        let text = r#"
[[survey.auth]]
paths = ["/api/", "/graphql/"]
headers = { Authorization = "Token ${API_TOKEN}" }

[[survey.auth]]
paths = ["/"]
cookies = ["sessionid=${SESSION_ID}"]
"#;
        #[derive(Deserialize)]
        struct File {
            survey: Survey,
        }
        #[derive(Deserialize)]
        struct Survey {
            auth: Vec<AuthTable>,
        }
        toml::from_str::<File>(text).unwrap().survey.auth
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "API_TOKEN" => Some("tok-0123456789".into()),
            "SESSION_ID" => Some("sess-abcdefgh".into()),
            BEARER_VAR => Some("bearer-from-env".into()),
            _ => None,
        }
    }

    #[test]
    fn the_first_matching_prefix_wins() {
        let redactor = Redactor::default();
        let entries = expand(&tables(), &env, &redactor).unwrap();
        let index = |template: &str| pick(&entries, template).map(|e| e.used.index);
        assert_eq!(index("/api/items/{id}?page={page}"), Some(0));
        assert_eq!(index("/graphql/"), Some(0));
        assert_eq!(index("/apiary"), Some(1));
        assert_eq!(index("/ui/devices/"), Some(1));
        assert_eq!(pick(&entries[..1], "/ui/"), None);
        assert_eq!(
            entries[0].headers,
            [("Authorization".into(), "Token tok-0123456789".into())]
        );
        assert_eq!(entries[1].cookies, ["sessionid=sess-abcdefgh"]);
        let scrubbed = redactor.scrub("Token tok-0123456789 and sess-abcdefgh");
        assert_eq!(scrubbed, "<redacted> and <redacted>");
        assert_eq!(redactor.scrub("tok-0123456789"), "<redacted>");
    }

    #[test]
    fn a_missing_variable_is_named_and_a_bad_path_refused() {
        let error = expand(&tables(), &|_: &str| None, &Redactor::default()).unwrap_err();
        assert!(
            error
                .message
                .contains("[[survey.auth]] #0 header Authorization names the variable API_TOKEN"),
            "{}",
            error.message
        );
        let bad = vec![AuthTable {
            paths: vec!["api/".into()],
            ..AuthTable::default()
        }];
        let error = check(&bad, "p.toml").unwrap_err();
        assert!(error.message.contains("#0: paths"), "{}", error.message);
        assert!(check(&[AuthTable::default()], "p.toml").is_err());
        let twice = vec![AuthTable {
            paths: vec!["/".into()],
            headers: [("cookie".into(), "a=b".into())].into(),
            cookies: vec!["c=d".into()],
        }];
        let error = check(&twice, "p.toml").unwrap_err();
        assert!(
            error.message.contains("Cookie header twice"),
            "{}",
            error.message
        );
        assert!(check(&tables(), "p.toml").is_ok());
    }

    #[test]
    fn an_entry_replaces_the_command_lines_credentials() {
        let cli = Cli::try_parse_from([
            "pgcost",
            "audit",
            "--url",
            "http://h/x",
            "-H",
            "Authorization: Token cli",
            "-H",
            "Accept: text/html",
            "-H",
            "X-Api-Key: k",
            "--cookie",
            "a=b",
            "--allow-anonymous-equal",
        ])
        .unwrap();
        let Command::Audit(mut audit) = cli.command else {
            panic!()
        };
        let entries = expand(&tables(), &env, &Redactor::default()).unwrap();
        apply(&entries[0], &mut audit);
        assert_eq!(
            audit.load.headers,
            ["Accept: text/html", "Authorization: Token tok-0123456789"]
        );
        assert!(audit.auth.cookies.is_empty() && audit.auth.allow_anonymous_equal);
        apply(&entries[1], &mut audit);
        assert_eq!(audit.load.headers, ["Accept: text/html"]);
        assert_eq!(audit.auth.cookies, ["sessionid=sess-abcdefgh"]);
        assert_eq!(without_default_token(&env, BEARER_VAR), None);
        assert_eq!(
            without_default_token(&env, "API_TOKEN").as_deref(),
            Some("tok-0123456789")
        );
    }
}
