//! Errors served with a success status: private wikis, GraphQL and JSON-RPC APIs answer a
//! missing or rejected credential with 200 and an error in the body or a header. Pure:
//! what one response's headers and body say, judged by an [`ErrorRule`].

use serde_json::Value;

/// The header MediaWiki's API sets on every error it answers with 200.
pub const MEDIAWIKI_ERROR_HEADER: &str = "mediawiki-api-error";

/// How a 2xx response is recognised as an error: the documented headers, the JSON shapes
/// of GraphQL, JSON-RPC and `{"error": ...}` APIs, and what the user names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRule {
    /// Lower-case header names whose presence makes the response an error
    /// (`MediaWiki-API-Error`, and each `--error-header`).
    pub headers: Vec<String>,
    /// `--error-body-pointer`: a JSON pointer whose value, when present and not null,
    /// false, 0 or empty, makes the response an error. It replaces the built-in body rule.
    pub body_pointer: Option<String>,
}

impl Default for ErrorRule {
    fn default() -> Self {
        ErrorRule {
            headers: vec![MEDIAWIKI_ERROR_HEADER.to_string()],
            body_pointer: None,
        }
    }
}

/// What made one 2xx response an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// Where, in words that do not change from one response to the next: `header
    /// mediawiki-api-error`, `body "errors"`, `body /status/failed`. Responses are counted
    /// by it.
    pub seen: String,
    /// The value found there, compact and cut at 80 characters.
    pub value: String,
}

impl std::fmt::Display for ErrorAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.seen, self.value)
    }
}

impl ErrorRule {
    /// The built-in rule plus the user's headers and pointer.
    pub fn with(headers: &[String], body_pointer: Option<String>) -> ErrorRule {
        let mut rule = ErrorRule {
            body_pointer,
            ..ErrorRule::default()
        };
        for header in headers {
            let name = header.trim().to_ascii_lowercase();
            if !rule.headers.contains(&name) {
                rule.headers.push(name);
            }
        }
        rule
    }

    /// Whether a response can be an error answer at all: a 2xx (other statuses are
    /// counted by their code already).
    pub fn applies_to(status: u16) -> bool {
        (200..300).contains(&status)
    }

    /// The index of the rule's header named `name` (any case), if it is one. Cheap for the
    /// usual header: names of another length are passed over at once.
    pub fn header_index(&self, name: &[u8]) -> Option<usize> {
        (self.headers.iter())
            .position(|h| h.len() == name.len() && name.eq_ignore_ascii_case(h.as_bytes()))
    }

    /// The answer of the rule's `index`th header, whose value is `value`.
    pub fn header_answer(&self, index: usize, value: &[u8]) -> ErrorAnswer {
        ErrorAnswer {
            seen: format!("header {}", self.headers[index]),
            value: excerpt(&Value::String(String::from_utf8_lossy(value).into_owned())),
        }
    }

    /// What makes this body of a 2xx response an error, or `None` when it is a real
    /// answer.
    pub fn judge_body(&self, body: &[u8]) -> Option<ErrorAnswer> {
        match &self.body_pointer {
            Some(pointer) => pointer_error(body, pointer),
            None => builtin_body_error(body),
        }
    }

    /// Whether a body that starts with `first` (its first byte that is not white space)
    /// can be judged at all: a JSON object, or an array for a pointer into one.
    pub fn may_judge(&self, first: u8) -> bool {
        first == b'{' || (first == b'[' && self.body_pointer.is_some())
    }

    /// What makes this 2xx response an error: the rule's headers first (`header` looks one
    /// up by its lower-case name), then its body.
    pub fn judge<'h>(
        &self,
        header: impl Fn(&str) -> Option<&'h str>,
        body: &[u8],
    ) -> Option<ErrorAnswer> {
        for (index, name) in self.headers.iter().enumerate() {
            if let Some(value) = header(name) {
                return Some(self.header_answer(index, value.as_bytes()));
            }
        }
        self.judge_body(body)
    }
}

/// The top level of a JSON object body holds `error` or `errors` and no data: `{"error":
/// ...}`, JSON-RPC's `{"jsonrpc": "2.0", "error": {...}}`, GraphQL's `{"data": null,
/// "errors": [...]}`. A GraphQL answer with data and errors (a partial result) is an
/// answer. Cheap for the usual body: nothing is parsed unless it is an object that
/// mentions `"error`.
fn builtin_body_error(body: &[u8]) -> Option<ErrorAnswer> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    // memchr's substring search: the driver asks this of every 2xx JSON body it reads.
    if body[start] != b'{' || memchr::memmem::find(body, b"\"error").is_none() {
        return None;
    }
    let Ok(Value::Object(top)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    let has_data = ["data", "result"]
        .iter()
        .any(|key| top.get(*key).is_some_and(|v| !v.is_null()));
    if has_data {
        return None;
    }
    ["error", "errors"].into_iter().find_map(|key| {
        let value = top.get(key)?;
        is_set(value).then(|| ErrorAnswer {
            seen: format!("body \"{key}\""),
            value: excerpt(value),
        })
    })
}

/// The value at `pointer` is set: the user's own rule.
fn pointer_error(body: &[u8], pointer: &str) -> Option<ErrorAnswer> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let found = value.pointer(pointer)?;
    is_set(found).then(|| ErrorAnswer {
        seen: format!("body {pointer}"),
        value: excerpt(found),
    })
}

/// Not null, false, 0, "" or an empty array or object.
fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A value as compact JSON, cut at 80 characters: enough to name the error.
fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(rule: &ErrorRule, headers: &[(&str, &str)], body: &str) -> Option<String> {
        let lookup = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };
        rule.judge(lookup, body.as_bytes()).map(|a| a.to_string())
    }

    #[test]
    fn error_shapes_of_common_apis_are_errors() {
        let rule = ErrorRule::default();
        let cases = [
            (
                r#"{"error": "not authenticated"}"#,
                "body \"error\": \"not authenticated\"",
            ),
            (
                r#"{"jsonrpc": "2.0", "error": {"code": -32001}, "id": 1}"#,
                "body \"error\": {\"code\":-32001}",
            ),
            (
                r#" {"data": null, "errors": [{"message": "forbidden"}]}"#,
                "body \"errors\": [{\"message\":\"forbidden\"}]",
            ),
        ];
        for (body, seen) in cases {
            assert_eq!(judge(&rule, &[], body).as_deref(), Some(seen), "{body}");
        }
        let wiki = judge(&rule, &[("MediaWiki-API-Error", "readapidenied")], "{}");
        assert_eq!(
            wiki.as_deref(),
            Some("header mediawiki-api-error: \"readapidenied\"")
        );
    }

    #[test]
    fn answers_partial_results_and_other_bodies_are_not_errors() {
        let rule = ErrorRule::default();
        for body in [
            r#"{"data": {"me": null}, "errors": [{"message": "partial"}]}"#,
            r#"{"jsonrpc": "2.0", "result": 4, "id": 1}"#,
            r#"{"error": null, "items": []}"#,
            r#"{"errors": [], "items": [1]}"#,
            r#"[{"error": "an item's own field"}]"#,
            r#"{"items": [{"error_count": 0}]}"#,
            "<html>error</html>",
            "",
        ] {
            assert_eq!(judge(&rule, &[], body), None, "{body}");
        }
    }

    #[test]
    fn the_users_header_and_pointer_decide_too() {
        let rule = ErrorRule::with(&["X-App-Error".into()], Some("/status/failed".into()));
        assert_eq!(
            judge(&rule, &[("x-app-error", "1")], "{}").as_deref(),
            Some("header x-app-error: \"1\"")
        );
        assert_eq!(
            judge(&rule, &[], r#"{"status": {"failed": true}}"#).as_deref(),
            Some("body /status/failed: true")
        );
        // The pointer replaces the built-in body rule.
        assert_eq!(judge(&rule, &[], r#"{"status": {"failed": false}}"#), None);
        assert_eq!(judge(&rule, &[], r#"{"error": "x"}"#), None);
        assert!(ErrorRule::applies_to(200) && !ErrorRule::applies_to(302));
        assert_eq!(rule.header_index(b"X-APP-ERROR"), Some(1));
        assert_eq!(rule.header_index(b"content-type"), None);
        assert!(rule.may_judge(b'[') && !ErrorRule::default().may_judge(b'['));
    }
}
