//! `[auth]` mapped onto the auth group of the flags of `pgcost audit`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::schema::Auth;
use super::vars::{read_secret_var, read_var};
use crate::auth::CredentialOptions;
use crate::error::{Error, Result};
use crate::flags::{AuthArgs, Spelling, defaults};
use crate::postgres::conninfo::EnvLookup;

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

/// How the values of `[auth]` are named in their errors.
pub(super) fn spelling(spelling: &mut Spelling) {
    spelling.set("jwt_ttl", "[auth] jwt_ttl");
}

/// `[auth]` as the auth group of `pgcost audit`'s flags: the one place to adjust when
/// those flags change. The rules between its keys are checked, secrets named by variable
/// are read here (and added to `secrets`); relative paths are taken from `base_dir`,
/// relative URLs from `base_url`.
pub(super) fn auth_args(
    auth: &Auth,
    base_url: &str,
    base_dir: &Path,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<AuthArgs> {
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
    let in_dir = |path: &Option<PathBuf>| path.as_deref().map(|p| base_dir.join(p));
    let left_out: AuthArgs = defaults();
    Ok(AuthArgs {
        bearer,
        bearer_file: in_dir(&auth.bearer_file),
        cookies,
        basic: auth.basic_user.clone(),
        basic_password_var: auth.basic_password_env.clone(),
        jwt_secret_env: auth.jwt_secret_env.clone(),
        jwt_secret_file: in_dir(&auth.jwt_secret_file),
        jwt_key_file: in_dir(&auth.jwt_key_file),
        jwt_alg: auth.jwt_alg.clone(),
        jwt_sub: auth.jwt_sub.clone(),
        jwt_iss: auth.jwt_iss.clone(),
        jwt_aud: auth.jwt_aud.clone(),
        jwt_claims: jwt_claims(&auth.jwt_claims)?,
        jwt_ttl: auth.jwt_ttl.clone().unwrap_or(left_out.jwt_ttl),
        env_file: in_dir(&auth.env_file),
        env_secret_var: auth.env_secret_var.clone(),
        env_issuer_var: auth.env_issuer_var.clone(),
        env_audience_var: auth.env_audience_var.clone(),
        login_url: auth.login_url.as_ref().map(|url| {
            if url.starts_with('/') {
                format!("{}{url}", base_url.trim_end_matches('/'))
            } else {
                url.clone()
            }
        }),
        login_body: in_dir(&auth.login_body_file).map(|p| format!("@{}", p.display())),
        login_token_pointer: auth.login_token_pointer.clone(),
        ..left_out
    })
}

/// `[auth]` as the credential options it gives every endpoint: `auth_args`, then the
/// auth group's own checks, with the errors in the file's terms.
pub fn credential_options(
    auth: &Auth,
    base_url: &str,
    base_dir: &Path,
    env: EnvLookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<CredentialOptions> {
    let args = auth_args(auth, base_url, base_dir, env, secrets)?;
    let mut names = Spelling::flags();
    spelling(&mut names);
    CredentialOptions::from_groups(&args, &[], &names)
}
