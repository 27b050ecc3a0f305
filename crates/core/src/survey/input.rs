//! The requests of a traffic record, parsed: access-log lines (nginx/Apache combined, or
//! JSON lines) and HAR files. Pure: the caller reads (and gunzips) the files.

use serde::Serialize;

/// One logged request: its method, its target (path and query, as sent), the status the
/// app answered it with, when the record has one, and, from a HAR, its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub method: String,
    pub target: String,
    pub body: Option<String>,
    pub status: Option<u16>,
}

/// A line that did not parse, with its place, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Unparsed {
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub text: String,
}

/// The requests of one or more inputs, and the lines that did not parse (all counted,
/// the first [`KEPT_UNPARSED`] kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub hits: Vec<Hit>,
    pub unparsed: usize,
    pub first_unparsed: Vec<Unparsed>,
}

/// How many unparsed lines the report shows.
pub const KEPT_UNPARSED: usize = 5;
/// A shown unparsed line is cut to this many characters.
const SHOWN_CHARS: usize = 120;

impl Parsed {
    fn reject(&mut self, file: &str, line: usize, text: &str) {
        self.unparsed += 1;
        if self.first_unparsed.len() < KEPT_UNPARSED {
            self.first_unparsed.push(Unparsed {
                file: file.to_string(),
                line,
                text: text.chars().take(SHOWN_CHARS).collect(),
            });
        }
    }

    /// Adds the requests of `other` after these.
    pub fn extend(&mut self, other: Parsed) {
        self.hits.extend(other.hits);
        self.unparsed += other.unparsed;
        let room = KEPT_UNPARSED.saturating_sub(self.first_unparsed.len());
        (self.first_unparsed).extend(other.first_unparsed.into_iter().take(room));
    }
}

/// An access log, line by line: a line that opens with `{` is read as JSON, any other as
/// the combined format; blank lines are skipped.
pub fn access_log(file: &str, text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let hit = if line.starts_with('{') {
            json_line(line)
        } else {
            combined_line(line)
        };
        match hit {
            Some(hit) => parsed.hits.push(hit),
            None => parsed.reject(file, i + 1, line),
        }
    }
    parsed
}

/// `host ident user [time] "METHOD TARGET PROTOCOL" status size ...`: the quoted request
/// line, and the status as the number after it.
fn combined_line(line: &str) -> Option<Hit> {
    let (_, rest) = line.split_once('"')?;
    let (request, after) = rest.split_once('"')?;
    let status = after.split_ascii_whitespace().next().and_then(status);
    Some(Hit {
        status,
        ..request_line(request)?
    })
}

/// An HTTP status as a log writes it: a number from 100 to 599 (`-` and 0, written for a
/// request that got no response, are none).
fn status(text: &str) -> Option<u16> {
    text.trim().parse::<u64>().ok().and_then(in_range)
}

fn in_range(code: u64) -> Option<u16> {
    (100..600).contains(&code).then_some(code as u16)
}

/// The status of a JSON value: a number, or a string holding one.
fn json_status(value: &serde_json::Value) -> Option<u16> {
    match value {
        serde_json::Value::Number(n) => n.as_u64().and_then(in_range),
        serde_json::Value::String(s) => status(s),
        _ => None,
    }
}

/// `METHOD TARGET [PROTOCOL]`.
fn request_line(request: &str) -> Option<Hit> {
    let mut words = request.split_ascii_whitespace();
    let method = words.next()?;
    let target = words.next()?;
    hit(method, target)
}

/// The keys read from a JSON line: the method from `method`, `request_method` or
/// `http_method`; the target from `uri`, `path`, `url`, `request_uri` (with `query`,
/// `args` or `query_string` appended when the target has none), or else from `request`,
/// the request line; the status from `status`, `status_code` or `response_status`; the
/// body from `request_body` (nginx's `$request_body`, `-` for none).
fn json_line(line: &str) -> Option<Hit> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let status = ["status", "status_code", "response_status"]
        .iter()
        .find_map(|k| value.get(*k).and_then(json_status));
    let body = (value.get("request_body").and_then(|v| v.as_str()))
        .filter(|b| !b.is_empty() && *b != "-")
        .map(str::to_string);
    Some(Hit {
        status,
        body,
        ..json_request(&value)?
    })
}

/// The method and target of a JSON line.
fn json_request(value: &serde_json::Value) -> Option<Hit> {
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| value.get(*k).and_then(|v| v.as_str()))
            .filter(|s| !s.is_empty())
    };
    let method = field(&["method", "request_method", "http_method"]);
    let target = field(&["uri", "path", "url", "request_uri"]);
    match (method, target) {
        (Some(method), Some(target)) => {
            let query = field(&["query", "args", "query_string"]);
            match query {
                Some(q) if !target.contains('?') => hit(method, &format!("{target}?{q}")),
                _ => hit(method, target),
            }
        }
        _ => request_line(field(&["request"])?),
    }
}

/// A HAR file: `log.entries[].request.method` and `.url`, the body, `.postData.text`,
/// when there is one, and `.response.status`.
pub fn har(file: &str, text: &str) -> Result<Parsed, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{file} is not JSON: {e}"))?;
    let entries = (value.pointer("/log/entries").and_then(|e| e.as_array()))
        .ok_or_else(|| format!("{file} has no log.entries: is it a HAR file?"))?;
    let mut parsed = Parsed::default();
    for (i, entry) in entries.iter().enumerate() {
        let text = |key: &str| (entry.pointer(&format!("/request/{key}"))).and_then(|v| v.as_str());
        let found = match (text("method"), text("url")) {
            (Some(method), Some(url)) => hit(method, url).map(|hit| Hit {
                body: text("postData/text").map(str::to_string),
                status: entry.pointer("/response/status").and_then(json_status),
                ..hit
            }),
            _ => None,
        };
        match found {
            Some(hit) => parsed.hits.push(hit),
            // Entries are numbered from 1, as lines are.
            None => parsed.reject(file, i + 1, &entry.to_string()),
        }
    }
    Ok(parsed)
}

/// A request of `method` to `target`: an origin-form target (`/path?query`) as it is, an
/// absolute URL reduced to its path and query; anything else does not parse.
fn hit(method: &str, target: &str) -> Option<Hit> {
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let target = if target.starts_with('/') {
        target.to_string()
    } else {
        let url = url::Url::parse(target).ok()?;
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        }
    };
    let target = target.split('#').next().unwrap_or_default().to_string();
    Some(Hit {
        method: method.to_ascii_uppercase(),
        target,
        body: None,
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(method: &str, target: &str) -> Hit {
        Hit {
            method: method.into(),
            target: target.into(),
            body: None,
            status: None,
        }
    }

    fn statuses(parsed: &Parsed) -> Vec<Option<u16>> {
        parsed.hits.iter().map(|h| h.status).collect()
    }

    #[test]
    fn combined_lines_give_method_and_target() {
        let log = "127.0.0.1 - - [10/Oct/2026:13:55:36 +0000] \"GET /admin/auth/user/42/change/?a=1 HTTP/1.1\" 200 2326 \"-\" \"curl/8\"\n\
                   \n\
                   10.0.0.2 - bob [10/Oct/2026:13:55:37 +0000] \"post http://shop.example/cart HTTP/2.0\" 302 0 \"-\" \"-\"\n";
        let parsed = access_log("a.log", log);
        let status = |hit: Hit, status| Hit { status, ..hit };
        assert_eq!(
            parsed.hits,
            [
                status(one("GET", "/admin/auth/user/42/change/?a=1"), Some(200)),
                status(one("POST", "/cart"), Some(302))
            ]
        );
        assert_eq!(parsed.unparsed, 0);
    }

    #[test]
    fn statuses_are_read_where_each_format_keeps_them() {
        let combined = "h - - [t] \"GET /a HTTP/1.1\" 404 0\n\
                        h - - [t] \"GET /b HTTP/1.1\" - 0\n\
                        h - - [t] \"GET /c HTTP/1.1\"\n\
                        h - - [t] \"GET /d HTTP/1.1\" 0 0\n";
        let parsed = access_log("c.log", combined);
        assert_eq!(statuses(&parsed), [Some(404), None, None, None]);
        let json = r#"{"method":"GET","uri":"/a","status_code":"410"}
{"method":"GET","uri":"/b","response_status":301}
{"method":"GET","uri":"/c","status":"ok","status_code":403}
{"method":"GET","uri":"/d","status":1000}
{"method":"GET","uri":"/e"}"#;
        let parsed = access_log("j.log", json);
        assert_eq!(
            statuses(&parsed),
            [Some(410), Some(301), Some(403), None, None]
        );
        let har_text = r#"{"log":{"entries":[
            {"request":{"method":"GET","url":"http://h/a"},"response":{"status":200}},
            {"request":{"method":"GET","url":"http://h/b"},"response":{"status":0}},
            {"request":{"method":"GET","url":"http://h/c"}}
        ]}}"#;
        let parsed = har("s.har", har_text).unwrap();
        assert_eq!(statuses(&parsed), [Some(200), None, None]);
    }

    #[test]
    fn json_lines_read_the_documented_keys() {
        let log = r#"{"method":"GET","uri":"/api/v1/projects/7","status":200}
{"request_method":"HEAD","path":"/search","args":"q=x"}
{"request":"DELETE /api/v1/projects/7 HTTP/1.1","status":"204"}
{"time":"now"}
{"method":"POST","uri":"/graphql/","request_body":"{\"query\":\"{ me { id } }\"}"}
{"method":"POST","uri":"/graphql/","request_body":"-"}"#;
        let parsed = access_log("j.log", log);
        let targets: Vec<(&str, &str)> = (parsed.hits.iter())
            .map(|h| (h.method.as_str(), h.target.as_str()))
            .collect();
        assert_eq!(
            targets,
            [
                ("GET", "/api/v1/projects/7"),
                ("HEAD", "/search?q=x"),
                ("DELETE", "/api/v1/projects/7"),
                ("POST", "/graphql/"),
                ("POST", "/graphql/")
            ]
        );
        assert_eq!(statuses(&parsed), [Some(200), None, Some(204), None, None]);
        let bodies: Vec<Option<&str>> = parsed.hits.iter().map(|h| h.body.as_deref()).collect();
        let query = r#"{"query":"{ me { id } }"}"#;
        assert_eq!(bodies, [None, None, None, Some(query), None]);
        assert_eq!(parsed.unparsed, 1);
        assert_eq!(parsed.first_unparsed[0].line, 4);
    }

    #[test]
    fn bad_lines_are_counted_and_the_first_five_kept_with_their_numbers() {
        let mut log = String::from("\"GET /ok HTTP/1.1\" 200\n");
        for i in 0..7 {
            log.push_str(&format!("garbage {i}\n"));
        }
        log.push_str("{not json\n");
        let parsed = access_log("bad.log", &log);
        assert_eq!(parsed.hits.len(), 1);
        assert_eq!(parsed.unparsed, 8);
        let lines: Vec<usize> = parsed.first_unparsed.iter().map(|u| u.line).collect();
        assert_eq!(lines, [2, 3, 4, 5, 6]);
        assert_eq!(parsed.first_unparsed[0].text, "garbage 0");
    }

    #[test]
    fn har_entries_give_method_and_path() {
        let har_text = r#"{"log":{"entries":[
            {"request":{"method":"GET","url":"https://app.example/api/items/9?x=1#top"}},
            {"request":{"method":"GET"}},
            {"request":{"method":"POST","url":"https://app.example/graphql/",
              "postData":{"mimeType":"application/json","text":"{\"query\":\"{ me { id } }\"}"}}}
        ]}}"#;
        let parsed = har("s.har", har_text).unwrap();
        let graphql = Hit {
            body: Some(r#"{"query":"{ me { id } }"}"#.into()),
            ..one("POST", "/graphql/")
        };
        assert_eq!(parsed.hits, [one("GET", "/api/items/9?x=1"), graphql]);
        assert_eq!(parsed.unparsed, 1);
        assert_eq!(parsed.first_unparsed[0].line, 2);
        assert!(har("x.har", "[]").unwrap_err().contains("no log.entries"));
    }
}
