//! What a secret looks like in output, and how it is hidden: known secret values are
//! scrubbed from everything pgcost prints, and token-shaped text from the bodies it quotes.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// What a hidden value is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Shorter known secrets are not scrubbed by value: replacing every "abc" in a report
/// would mangle it. They are still never written out; scrubbing is the second line.
const MIN_SCRUB_LEN: usize = 6;

/// Runs of token characters at least this long, with letters and digits, look like tokens.
const MIN_TOKEN_LEN: usize = 20;

/// The secret values known to this run. Clones share one list, so that a secret learned
/// at run time (a login's token) is scrubbed from every output, wherever it is printed.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Arc<Mutex<BTreeSet<String>>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.lock().len())
    }
}

impl Redactor {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        // A panic while holding the lock cannot leave the set half-written.
        self.secrets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers a secret value (and its surrounding-whitespace-free form).
    pub fn add(&self, secret: impl AsRef<str>) {
        let secret = secret.as_ref().trim();
        if secret.len() >= MIN_SCRUB_LEN {
            self.lock().insert(secret.to_string());
        }
    }

    /// Remembers a secret given as bytes; non-UTF-8 secrets cannot appear in text output.
    pub fn add_bytes(&self, secret: &[u8]) {
        if let Ok(text) = std::str::from_utf8(secret) {
            self.add(text);
        }
    }

    /// `text` with every known secret replaced by `<redacted>`, longest secrets first so
    /// that a secret containing another is hidden whole.
    pub fn scrub(&self, text: &str) -> String {
        let secrets = self.lock();
        let mut ordered: Vec<&String> = secrets.iter().collect();
        ordered.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let mut out = text.to_string();
        for secret in ordered {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }
}

/// True for JSON keys and header names that usually hold credentials.
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "pass",
        "session",
        "cookie",
        "authorization",
        "jwt",
        "key",
        "credential",
        "otp",
        "sid",
    ]
    .iter()
    .any(|part| name.contains(part))
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/' | '=' | '~' | '%')
}

/// A command line as a report shows it (`pgcost measure`): the arguments joined by spaces,
/// with the value after a secret-named header or option hidden, as in
/// `-H 'Authorization: <redacted>'`, `--token=<redacted>`, `PGPASSWORD=<redacted>`. The
/// value runs to the next quote, or, after `=`, to the next space.
pub fn command_line(args: &[String]) -> String {
    args.iter()
        .map(|arg| hide_named_values(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

fn hide_named_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find([':', '=']) {
        let (before, after) = rest.split_at(at + 1);
        out.push_str(before);
        let name = &before[..at];
        let name = &name[name
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(0, |i| i + 1)..];
        if name.is_empty() || !is_secret_name(name) {
            rest = after;
            continue;
        }
        // A header's value may hold spaces (`Bearer x`); an option's ends at one.
        let equals = before.ends_with('=');
        let ends = |c: char| c == '\'' || c == '"' || (equals && c == ' ');
        let value_start = after.len() - after.trim_start_matches(' ').len();
        let value_end = after[value_start..]
            .find(ends)
            .map_or(after.len(), |i| value_start + i);
        out.push_str(&after[..value_start]);
        if value_end > value_start {
            out.push_str(REDACTED);
        }
        rest = &after[value_end..];
    }
    out.push_str(rest);
    out
}

/// Hides runs that look like tokens: JWTs, session ids, long base64 or hex strings. Over-
/// eager on purpose (a long path with digits goes too): this is for quoting error bodies.
pub fn redact_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        let looks_like_token = run.starts_with("eyJ")
            || (run.len() >= MIN_TOKEN_LEN
                && run.chars().any(|c| c.is_ascii_digit())
                && run.chars().any(|c| c.is_ascii_alphabetic()));
        if looks_like_token {
            out.push_str(REDACTED);
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if is_token_char(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Hides the string values of secret-looking keys, and token-shaped strings anywhere.
pub fn redact_json(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if is_secret_name(key) && !item.is_object() && !item.is_array() && !item.is_null() {
                    *item = Value::String(REDACTED.into());
                } else {
                    redact_json(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::String(text) => *text = redact_tokens(text),
        _ => {}
    }
}

/// A URL fit to print: without its password, and with the values of secret-looking query
/// parameters (`?api_key=`, `?token=`) hidden.
pub fn url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        let _ = shown.set_password(None);
    }
    // The query is shown as it is sent: only the values of secret-looking parameters are
    // replaced, and nothing is re-encoded (`fields=*,name` keeps its comma).
    if let Some(query) = url.query() {
        let kept: Vec<String> = query.split('&').map(redact_query_pair).collect();
        shown.set_query(Some(&kept.join("&")));
    }
    shown.to_string()
}

/// One `name=value` pair of a raw query, with the value replaced when the name is secret.
fn redact_query_pair(pair: &str) -> String {
    let name = pair.split_once('=').map_or(pair, |(name, _)| name);
    let decoded: String = url::form_urlencoded::parse(name.as_bytes())
        .map(|(k, _)| k.into_owned())
        .collect();
    if is_secret_name(&decoded) {
        format!("{name}=redacted")
    } else {
        pair.to_string()
    }
}

/// At most `max` bytes of `text`, cut on a character boundary, marked when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A response body, safe to quote in an error: secrets and token-shaped text hidden first,
/// then cut to `max` bytes (cutting first could leave half a token to slip through).
pub fn quote_body(body: &[u8], redactor: &Redactor, max: usize) -> String {
    let text = String::from_utf8_lossy(body);
    let text = redactor.scrub(&text);
    let shown = match serde_json::from_str::<Value>(&text) {
        Ok(mut value) => {
            redact_json(&mut value);
            value.to_string()
        }
        Err(_) => redact_tokens(&text),
    };
    let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&flat, max)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_line_hides_secret_named_values() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&args(&[
                "oha",
                "-H",
                "Authorization: Bearer eyJabc.def",
                "http://h:80/x?a=1"
            ])),
            "oha -H Authorization: <redacted> http://h:80/x?a=1"
        );
        assert_eq!(
            command_line(&args(&[
                "sh",
                "-c",
                "PGPASSWORD=pw1 run --token=t0k --limit=5 -H 'X-Api-Key: k 1' -H 'Accept: */*'"
            ])),
            "sh -c PGPASSWORD=<redacted> run --token=<redacted> --limit=5 \
             -H 'X-Api-Key: <redacted>' -H 'Accept: */*'"
        );
        assert_eq!(
            command_line(&args(&["locust", "-f", "/tmp/a b.py"])),
            "locust -f /tmp/a b.py"
        );
    }

    use super::*;

    #[test]
    fn known_secrets_are_scrubbed_longest_first() {
        let r = Redactor::default();
        r.add("hunter2hunter2");
        r.add("hunter2");
        r.add("abc"); // too short to scrub by value
        let shared = r.clone();
        shared.add("late-secret");
        assert_eq!(
            r.scrub("pw hunter2hunter2, hunter2, abc, late-secret"),
            "pw <redacted>, <redacted>, abc, <redacted>"
        );
        assert_eq!(format!("{r:?}"), "Redactor(3 secrets)");
    }

    #[test]
    fn token_shaped_runs_are_hidden() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";
        assert_eq!(
            redact_tokens(&format!("bad token {jwt}, try again")),
            "bad token <redacted>, try again"
        );
        assert_eq!(
            redact_tokens("sid=3f2a9c1e-77aa-4c1b-9d0e-0123456789ab; Path=/"),
            "<redacted>; Path=/"
        );
        assert_eq!(
            redact_tokens("invalid credentials for alice"),
            "invalid credentials for alice"
        );
    }

    #[test]
    fn json_bodies_hide_secret_keys() {
        let r = Redactor::default();
        r.add("correct horse");
        let body = br#"{"error":"wrong password: correct horse","access_token":"abc",
            "user":{"name":"alice","session_id":42}}"#;
        let quoted = quote_body(body, &r, 200);
        assert_eq!(
            quoted,
            r#"{"access_token":"<redacted>","error":"wrong password: <redacted>","user":{"name":"alice","session_id":"<redacted>"}}"#
        );
    }

    #[test]
    fn urls_lose_passwords_and_secret_parameters() {
        let u =
            reqwest::Url::parse("https://bob:pw-123456@h.test/x?page=2&api_key=k-123456").unwrap();
        assert_eq!(url(&u), "https://bob@h.test/x?page=2&api_key=redacted");
        let plain = reqwest::Url::parse("http://h.test/x").unwrap();
        assert_eq!(url(&plain), "http://h.test/x");
    }

    #[test]
    fn urls_show_their_query_as_sent() {
        let text = "http://h.test/items?fields=*,category.name&sort=-published_on&q=a%20b";
        let u = reqwest::Url::parse(text).unwrap();
        assert_eq!(url(&u), text);
        let secret = reqwest::Url::parse("http://h.test/x?Access%5FToken=t-1&a=1,2").unwrap();
        assert_eq!(
            url(&secret),
            "http://h.test/x?Access%5FToken=redacted&a=1,2"
        );
    }

    #[test]
    fn bodies_are_cut_after_redaction() {
        let token = "tok_0123456789abcdefghijklmnopqrstuvwxyz";
        let body = format!("{}{token}", "x ".repeat(150));
        let quoted = quote_body(body.as_bytes(), &Redactor::default(), 200);
        assert!(!quoted.contains("tok_0123"), "{quoted}");
        assert!(quoted.ends_with('…'), "{quoted}");
        assert_eq!(truncate("héllo", 2), "h…");
    }
}
