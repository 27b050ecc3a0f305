//! One HTTP request, as the burst sends it N times, and the Content-Type a body is sent
//! with when nothing names one.

use std::time::Duration;

use bytes::Bytes;

use std::sync::Arc;

use crate::http::error_answer::ErrorRule;
use crate::http::template::{Context, DataSet, Template, Turn};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, Url};

/// One request, as it is sent N times.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub url: Url,
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    pub timeout: Duration,
    /// How a 2xx response is recognised as an error answer.
    pub error_rule: ErrorRule,
    /// `--data`: the rows whose columns `{{data.COLUMN}}` takes, one row a request.
    pub data: Option<Arc<DataSet>>,
}

impl RequestSpec {
    /// The next request of the run as the burst would send it, with `headers`: its
    /// placeholders filled (`http::template`), the URL, headers and body to send. What the
    /// configuration checked parses; a text that would not is sent as it is.
    pub fn next(&self, headers: &HeaderMap) -> (Url, HeaderMap, Option<Bytes>) {
        let turn = Turn::next();
        let data = self.data.as_deref();
        let render = |template: Result<Template, String>, text: &[u8]| match template {
            Ok(template) => {
                let mut out = Vec::new();
                template.render(turn, data, &mut out);
                out
            }
            Err(_) => text.to_vec(),
        };
        let target = &self.url[url::Position::BeforePath..];
        let rendered = render(Template::parse_target(target, data), target.as_bytes());
        let url = format!(
            "{}{}",
            &self.url[..url::Position::BeforePath],
            String::from_utf8_lossy(&rendered)
        );
        let url = Url::parse(&url).unwrap_or_else(|_| self.url.clone());
        let mut filled = HeaderMap::with_capacity(headers.len());
        for (name, value) in headers {
            let text = value.as_bytes();
            let bytes = render(Template::parse(text, Context::Header, data), text);
            filled.append(
                name,
                HeaderValue::from_bytes(&bytes).unwrap_or_else(|_| value.clone()),
            );
        }
        let body = (self.body.as_deref())
            .map(|body| Bytes::from(render(Template::parse(body, Context::Body, data), body)));
        (url, filled, body)
    }
}

/// The Content-Type guessed for `body`: `application/json` for a JSON object or array
/// (most frameworks answer a JSON body without it with a 400), none for anything else.
pub fn guessed_content_type(body: &[u8]) -> Option<HeaderValue> {
    let start = body.iter().find(|b| !b.is_ascii_whitespace())?;
    let json = matches!(start, b'{' | b'[')
        && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
    json.then(|| HeaderValue::from_static("application/json"))
}

/// Sets `headers`' Content-Type to the guess for `body` when they have none.
pub fn add_guessed_content_type(headers: &mut HeaderMap, body: &[u8]) {
    if headers.contains_key(CONTENT_TYPE) {
        return;
    }
    if let Some(value) = guessed_content_type(body) {
        headers.insert(CONTENT_TYPE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_object_or_array_is_json_and_nothing_else_is() {
        let json = Some(HeaderValue::from_static("application/json"));
        assert_eq!(guessed_content_type(br#" {"query":"{ a }"}"#), json);
        assert_eq!(guessed_content_type(b"[1, 2]\n"), json);
        for other in [
            &b"a=1&b=2"[..],
            b"42",
            b"\"text\"",
            b"{not json",
            b"",
            b"  ",
        ] {
            assert_eq!(guessed_content_type(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_content_type_already_set_stays() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        add_guessed_content_type(&mut headers, b"{}");
        assert_eq!(headers[CONTENT_TYPE], "text/plain");
        let mut empty = HeaderMap::new();
        add_guessed_content_type(&mut empty, b"{}");
        assert_eq!(empty[CONTENT_TYPE], "application/json");
    }
}
