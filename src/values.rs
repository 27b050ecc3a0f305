//! Option values parsed and validated one way, whether they come from a flag or from
//! pgcost.toml: durations, headers, URLs, methods, counts, statuses, thresholds,
//! percentages and the files a run reads (request body, CA certificate). Functions that
//! take a `name` say it in their errors: the flag, or the key of pgcost.toml.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Url};

use crate::error::{Error, Result};
use pgcost_core::findings::Thresholds;
use pgcost_core::report::model::notes::Note;

/// Checks `--allow-status` codes; allowing 401 or 403 earns a warning.
pub fn parse_allowed_statuses(codes: &[u16]) -> Result<(Vec<u16>, Vec<Note>)> {
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
            warnings.push(Note::AllowStatusRejection { status: code });
        }
    }
    allowed.sort_unstable();
    Ok((allowed, warnings))
}

/// Applies `--threshold NAME=VALUE` overrides to the default finding thresholds.
pub fn parse_thresholds(overrides: &[String]) -> Result<Thresholds> {
    parse_named_thresholds("--threshold", overrides)
}

/// Applies `NAME=VALUE` overrides to the default finding thresholds; `what` names where
/// they come from (`--threshold`, `[thresholds]`).
pub fn parse_named_thresholds(what: &str, overrides: &[String]) -> Result<Thresholds> {
    let mut pairs = Vec::new();
    for text in overrides {
        let (name, number) = text.split_once('=').ok_or_else(|| {
            Error::usage(format!("{what} {text:?} is not NAME=VALUE"))
                .with_hint("e.g. --threshold collection_min_rows_per_call=20")
        })?;
        let name = name.trim();
        let value: f64 = number
            .trim()
            .parse()
            .map_err(|_| Error::usage(format!("{what} {name}: {number:?} is not a number")))?;
        pairs.push((name, value));
    }
    thresholds(what, &pairs)
}

/// Applies `(name, value)` overrides to the default finding thresholds; `what` names
/// where they come from (`--threshold`, `[thresholds]`).
pub fn thresholds(what: &str, overrides: &[(&str, f64)]) -> Result<Thresholds> {
    let mut value = serde_json::to_value(Thresholds::default()).expect("thresholds serialize");
    let map = value.as_object_mut().expect("thresholds are a struct");
    for &(name, number) in overrides {
        let Some(slot) = map.get_mut(name) else {
            let names: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(Error::usage(format!("{what}: unknown name {name:?}"))
                .with_hint(format!("known names: {}", names.join(", "))));
        };
        *slot = if slot.is_i64() || slot.is_u64() {
            serde_json::Value::from(number.round() as i64)
        } else {
            serde_json::Value::from(number)
        };
    }
    serde_json::from_value(value).map_err(|e| Error::usage(format!("{what}: {e}")))
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

/// A duration that must not be zero: a timeout, a token's lifetime.
pub fn parse_positive_duration(name: &str, text: &str) -> Result<Duration> {
    let duration = parse_duration(name, text)?;
    if duration.is_zero() {
        return Err(Error::usage(format!("{name} must be greater than zero")));
    }
    Ok(duration)
}

/// Parses `--max-regression`: `10%`, `10` (both ten percent) or `0`.
pub fn parse_percent(text: &str) -> Result<f64> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(Error::usage(format!(
            "--max-regression {text:?} is not a percentage; write it like 10%"
        ))
        .with_hint("e.g. --max-regression 10%")),
    }
}

/// Reads a request body from a file.
pub fn read_body_file(name: &str, path: &Path) -> Result<Bytes> {
    std::fs::read(path)
        .map(Bytes::from)
        .map_err(|e| Error::usage(format!("cannot read {name} {}: {e}", path.display())))
}

/// Reads extra CA certificates (PEM) to trust for an https target.
pub fn read_cacert(name: &str, path: &Path) -> Result<Vec<u8>> {
    let pem = std::fs::read(path)
        .map_err(|e| Error::usage(format!("cannot read {name} {}: {e}", path.display())))?;
    reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
        Error::usage(format!(
            "{name} {} is not a PEM certificate: {e}",
            path.display()
        ))
    })?;
    Ok(pem)
}

/// Parses one `Name: value` header.
pub fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue)> {
    let (name, value) = text.split_once(':').ok_or_else(|| {
        Error::usage(format!("header {:?} has no colon", redact_header(text)))
            .with_hint("write headers as -H 'Name: value'")
    })?;
    header(name, value)
}

/// Checks a header name given alone (`--error-header`), named in errors as `what`.
pub fn parse_header_name(what: &str, text: &str) -> Result<HeaderName> {
    HeaderName::from_bytes(text.trim().as_bytes()).map_err(|_| {
        Error::usage(format!(
            "{what} {:?} is not a valid header name",
            text.trim()
        ))
        .with_hint("write the header's name only, e.g. --error-header X-App-Error")
    })
}

/// Checks a JSON pointer (RFC 6901), named in errors as `what`: empty (the whole body) or
/// starting with `/`.
pub fn parse_json_pointer(what: &str, text: &str) -> Result<String> {
    if text.is_empty() || text.starts_with('/') {
        Ok(text.to_string())
    } else {
        Err(
            Error::usage(format!("{what} {text:?} is not a JSON pointer"))
                .with_hint(format!("JSON pointers start with a slash: /{text}")),
        )
    }
}

/// Checks one header given as its name and value; a credential's value is marked
/// sensitive, so that it is never printed.
pub fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue)> {
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
        let err = thresholds("[thresholds]", &[("nope", 1.0)]).unwrap_err();
        assert_eq!(err.message, "[thresholds]: unknown name \"nope\"");
    }

    #[test]
    fn allowed_statuses() {
        let (allowed, warnings) = parse_allowed_statuses(&[404, 401, 404]).unwrap();
        assert_eq!(allowed, vec![401, 404]);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings, [Note::AllowStatusRejection { status: 401 }]);
        assert!(
            warnings[0]
                .message()
                .starts_with("--allow-status 401: rejected requests")
        );
        assert!(parse_allowed_statuses(&[99]).is_err());
        assert!(parse_allowed_statuses(&[600]).is_err());
    }

    #[test]
    fn positive_durations() {
        assert_eq!(
            parse_positive_duration("--timeout", "2s").unwrap(),
            Duration::from_secs(2)
        );
        let err = parse_positive_duration("[defaults] timeout", "0s").unwrap_err();
        assert_eq!(err.message, "[defaults] timeout must be greater than zero");
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("10%").unwrap(), 10.0);
        assert_eq!(parse_percent(" 2.5 % ").unwrap(), 2.5);
        assert_eq!(parse_percent("0").unwrap(), 0.0);
        assert!(parse_percent("-5%").is_err());
        assert!(parse_percent("ten").is_err());
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
