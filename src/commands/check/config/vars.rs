//! Variables and secrets: `${VAR}` expansion, variables that must be set, scrubbing.

use crate::error::{Error, Result};
use crate::postgres::conninfo::EnvLookup;

/// Reads a variable that must be set.
pub(super) fn read_var(key: &str, name: &str, env: EnvLookup<'_>) -> Result<String> {
    env(name).filter(|v| !v.is_empty()).ok_or_else(|| {
        Error::usage(format!("{key} names the variable {name}, which is not set"))
            .with_hint(format!("export {name}=... before running pgcost"))
    })
}

/// Reads a variable that must be set and holds a secret; the value joins `secrets`.
pub(super) fn read_secret_var(
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
/// The survey's `[[survey.auth]]` expands its values with it too.
pub fn expand_vars(
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

/// Replaces every secret in `text`.
pub(super) fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| s.len() >= 4)
        .fold(text.to_string(), |text, secret| {
            text.replace(secret.as_str(), "<redacted>")
        })
}
