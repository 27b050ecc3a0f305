//! Logging in once before the warm-up: POST the login body, then keep the token found at
//! a JSON pointer in the response, or the session cookies the response sets.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, SET_COOKIE};
use reqwest::{Client, Url};
use serde_json::Value;

use super::redact::{self, Redactor};
use crate::error::{Error, Result};
use crate::http::error_answer::ErrorRule;

/// How much of a failed login's body is quoted.
pub const QUOTED_BODY_BYTES: usize = 200;
/// How much of a login response is read at most.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The login request. `Debug` never shows the body: it holds a password.
#[derive(Clone)]
pub struct LoginSpec {
    pub url: Url,
    pub body: Bytes,
    /// Where the token is in the response; `None` keeps the session cookies instead.
    pub token_pointer: Option<String>,
    /// The `-H` headers other than Authorization and Cookie (a tenant or gateway header
    /// the login may need too).
    pub headers: HeaderMap,
    pub timeout: Duration,
    /// How a 2xx reply is recognised as an error (`--error-header`,
    /// `--error-body-pointer`): a login answered with an error is refused.
    pub error_rule: ErrorRule,
}

impl std::fmt::Debug for LoginSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginSpec")
            .field("url", &redact::url(&self.url))
            .field(
                "body",
                &format_args!("<{} bytes, redacted>", self.body.len()),
            )
            .field("token_pointer", &self.token_pointer)
            .finish_non_exhaustive()
    }
}

/// What a successful login hands over.
#[derive(Clone, PartialEq)]
pub enum Session {
    /// A token, sent as `Authorization: Bearer`.
    Token(String),
    /// Cookies (name, value) to send back.
    Cookies(Vec<(String, String)>),
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Session::Token(_) => f.write_str("Token(<redacted>)"),
            Session::Cookies(cookies) => {
                let names: Vec<&str> = cookies.iter().map(|(n, _)| n.as_str()).collect();
                write!(f, "Cookies({names:?}, values <redacted>)")
            }
        }
    }
}

/// Reads `--login-body`: JSON, or `@PATH` for a file holding JSON. The text is never
/// echoed, since it holds a password.
pub fn parse_body(text: &str) -> Result<(Bytes, Value)> {
    let (origin, bytes) = match text.strip_prefix('@') {
        Some(path) => (
            format!("--login-body @{path}"),
            std::fs::read(path)
                .map_err(|e| Error::usage(format!("cannot read --login-body @{path}: {e}")))?,
        ),
        None => ("--login-body".to_string(), text.as_bytes().to_vec()),
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::usage(format!(
            "{origin} is not JSON (line {}, column {})",
            e.line(),
            e.column()
        ))
        .with_hint(r#"write it like --login-body '{"email":"a@b.test","password":"..."}'"#)
    })?;
    Ok((Bytes::from(bytes), value))
}

/// The values in a login body that are secrets: strings under secret-looking keys.
pub fn body_secrets(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    fn walk(value: &Value, secret: bool, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    walk(item, secret || redact::is_secret_name(key), found);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, secret, found)),
            Value::String(text) if secret => found.push(text.clone()),
            _ => {}
        }
    }
    walk(value, false, &mut found);
    found
}

/// Checks `--login-token-pointer`: a JSON pointer starts with `/`.
pub fn parse_pointer(text: &str) -> Result<String> {
    if text.starts_with('/') {
        Ok(text.to_string())
    } else {
        Err(Error::usage(format!(
            "--login-token-pointer {text:?} is not a JSON pointer"
        ))
        .with_hint(format!("JSON pointers start with a slash: /{text}")))
    }
}

/// The HTTP client of the login request: redirects not followed, the target's TLS settings.
pub fn client(insecure: bool, ca_pem: Option<&[u8]>) -> reqwest::Result<Client> {
    let mut builder = Client::builder();
    if let Some(pem) = ca_pem {
        for certificate in reqwest::Certificate::from_pem_bundle(pem)? {
            builder = builder.add_root_certificate(certificate);
        }
    }
    builder
        .redirect(reqwest::redirect::Policy::none())
        .danger_accept_invalid_certs(insecure)
        .build()
}

/// The error and its causes on one line, without the URL's query string.
pub fn describe_reqwest(err: reqwest::Error) -> String {
    crate::error::chain(&err.without_url())
}

/// Posts the login and returns the session, or an error quoting the redacted response.
pub async fn login(client: &Client, spec: &LoginSpec, redactor: &Redactor) -> Result<Session> {
    let shown = redact::url(&spec.url);
    let response = client
        .post(spec.url.clone())
        .headers(spec.headers.clone())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .timeout(spec.timeout)
        .body(spec.body.clone())
        .send()
        .await
        .map_err(|e| {
            Error::target(format!(
                "cannot log in at {shown}: {}",
                redactor.scrub(&describe_reqwest(e))
            ))
            .with_hint("check --login-url, and that the app is running")
        })?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = read_body(response).await.map_err(|e| {
        Error::target(format!(
            "cannot read the login response from {shown}: {}",
            describe_reqwest(e)
        ))
    })?;
    // A form login often answers 302 to the start page, with the cookie set.
    let accepted = status.is_success() || (spec.token_pointer.is_none() && status.is_redirection());
    if !accepted {
        return Err(Error::target(format!(
            "login at {shown} failed: HTTP {status}; response body: {}",
            redact::quote_body(&body, redactor, QUOTED_BODY_BYTES)
        ))
        .with_hint(
            "check --login-url and --login-body (the body is quoted with anything that looks \
             like a token hidden)",
        ));
    }
    refuse_error_answer(spec, &shown, status, &headers, &body, redactor)?;
    let session = match &spec.token_pointer {
        Some(pointer) => Session::Token(token_at(&body, pointer)?),
        None => {
            let cookies = session_cookies(&headers);
            if cookies.is_empty() {
                return Err(Error::target(format!(
                    "the login at {shown} answered HTTP {status} but set no cookie"
                ))
                .with_hint(
                    "if the token is in the response body, name it with --login-token-pointer, \
                     e.g. /token",
                ));
            }
            Session::Cookies(cookies)
        }
    };
    match &session {
        Session::Token(token) => redactor.add(token),
        Session::Cookies(cookies) => cookies.iter().for_each(|(_, v)| redactor.add(v)),
    }
    Ok(session)
}

/// A login answered 2xx with an error in its body or headers did not log in: its cookies
/// or token would fail (or expire) in the middle of the measurement.
fn refuse_error_answer(
    spec: &LoginSpec,
    shown: &str,
    status: reqwest::StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    redactor: &Redactor,
) -> Result<()> {
    if !ErrorRule::applies_to(status.as_u16()) {
        return Ok(());
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match spec.error_rule.judge(header, body) {
        None => Ok(()),
        Some(seen) => Err(Error::target(format!(
            "the login at {shown} answered HTTP {status} with an error ({}): it did not log in",
            redactor.scrub(&seen.to_string())
        ))
        .with_hint(
            "check --login-body (user name, password, their JSON keys); an API that answers \
             errors with 200 is read by its body and by --error-header / --error-body-pointer",
        )),
    }
}

async fn read_body(mut response: reqwest::Response) -> reqwest::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_BODY_BYTES {
            break;
        }
    }
    Ok(body)
}

/// The string at `pointer` in a JSON response body.
pub fn token_at(body: &[u8], pointer: &str) -> Result<String> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        Error::target(format!(
            "the login response is not JSON, so --login-token-pointer {pointer} cannot be read"
        ))
        .with_hint("without --login-token-pointer, the session cookies the login sets are kept")
    })?;
    match value.pointer(pointer) {
        Some(Value::String(token)) if !token.trim().is_empty() => Ok(token.trim().to_string()),
        Some(Value::String(_)) => Err(Error::target(format!(
            "the login response has an empty string at {pointer}"
        ))),
        Some(other) => Err(Error::target(format!(
            "the login response has {} at {pointer}, not a string",
            json_kind(other)
        ))),
        None => {
            let keys = match &value {
                Value::Object(map) => map.keys().cloned().collect::<Vec<_>>().join(", "),
                other => format!("it is {}", json_kind(other)),
            };
            Err(
                Error::target(format!("the login response has nothing at {pointer}"))
                    .with_hint(format!("its top-level keys are: {keys}")),
            )
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The cookies a response sets, as (name, value); a later cookie of the same name
/// replaces an earlier one, and deletions (empty value, `Max-Age=0`) are dropped.
pub fn session_cookies(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut cookies: Vec<(String, String)> = Vec::new();
    for header in headers.get_all(SET_COOKIE) {
        let Ok(text) = header.to_str() else { continue };
        let mut parts = text.split(';');
        let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim().trim_matches('"'));
        let deleted = value.is_empty()
            || parts.any(|attr| {
                attr.split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("max-age") && v.trim().starts_with(['0', '-'])
                })
            });
        cookies.retain(|(n, _)| n != name);
        if !deleted && !name.is_empty() {
            cookies.push((name.to_string(), value.to_string()));
        }
    }
    cookies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_by_pointer() {
        let body = br#"{"user":{"id":1,"token":"abc.def.ghi"},"ok":true}"#;
        assert_eq!(token_at(body, "/user/token").unwrap(), "abc.def.ghi");
        let err = token_at(body, "/token").unwrap_err();
        assert!(err.message.contains("nothing at /token"));
        assert_eq!(
            err.hint.as_deref(),
            Some("its top-level keys are: ok, user")
        );
        assert!(
            token_at(body, "/user/id")
                .unwrap_err()
                .message
                .contains("a number")
        );
        assert!(
            token_at(b"<html>", "/token")
                .unwrap_err()
                .message
                .contains("not JSON")
        );
    }

    #[test]
    fn cookies_from_set_cookie() {
        let mut headers = HeaderMap::new();
        for value in [
            "sid=abc123; Path=/; HttpOnly",
            "csrf=\"x1\"; Path=/",
            "old=; Max-Age=0",
            "sid=def456; Path=/; Secure",
            "gone=1; Max-Age=0",
        ] {
            headers.append(SET_COOKIE, HeaderValue::from_static(value));
        }
        assert_eq!(
            session_cookies(&headers),
            vec![
                ("csrf".to_string(), "x1".to_string()),
                ("sid".to_string(), "def456".to_string())
            ]
        );
    }

    #[test]
    fn login_bodies_are_json_and_their_secrets_known() {
        let text = r#"{"email":"a@b.test","password":"pw-123456","mfa":{"otp":"991"}}"#;
        let (bytes, value) = parse_body(text).unwrap();
        assert_eq!(&bytes[..], text.as_bytes());
        assert_eq!(
            body_secrets(&value),
            vec!["991".to_string(), "pw-123456".to_string()]
        );
        let err = parse_body(r#"{"password": hunter22}"#).unwrap_err();
        assert!(err.message.contains("not JSON"));
        assert!(!err.message.contains("hunter22"));
        assert!(
            parse_body("@/no/such/file")
                .unwrap_err()
                .message
                .contains("cannot read")
        );
        assert!(parse_pointer("token").is_err());
        assert_eq!(parse_pointer("/token").unwrap(), "/token");
    }

    #[test]
    fn debug_hides_the_body_and_the_session() {
        let spec = LoginSpec {
            url: Url::parse("http://h/login?api_key=k-123456").unwrap(),
            body: Bytes::from_static(br#"{"password":"pw-123456"}"#),
            token_pointer: None,
            headers: HeaderMap::new(),
            timeout: Duration::from_secs(1),
            error_rule: Default::default(),
        };
        let shown = format!(
            "{spec:?} {:?} {:?}",
            Session::Token("tok-123456".into()),
            Session::Cookies(vec![("sid".into(), "sid-123456".into())])
        );
        for secret in ["pw-123456", "k-123456", "tok-123456", "sid-123456"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
