//! The comments apps put on their SQL, read: sqlcommenter (`/*key='value',…*/`, keys and
//! values URL-encoded) and marginalia (`/*key:value,…*/`); what is left of a statement's
//! text once they are taken out; and the folded text that matches a sampled query to its
//! pg_stat_statements entry when there is no query id.

use std::sync::LazyLock;

use percent_encoding::percent_decode_str;
use regex::Regex;

/// `key='value'`, the value's quotes escaped with a backslash.
static SQLCOMMENTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([A-Za-z0-9_.%\-]+)\s*=\s*'((?:[^'\\]|\\.)*)'\s*$").expect("valid regex")
});

/// `key:value`, the key a word (dots allowed: `code.lineno`).
static MARGINALIA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*:\s*(\S.*?)\s*$").expect("valid regex")
});

/// A `/* … */` block of `text`: its byte range, comment marks included, and its content.
struct Block<'a> {
    start: usize,
    end: usize,
    content: &'a str,
}

/// Every `/* … */` block of `text` outside string literals, in order.
fn blocks(text: &str) -> Vec<Block<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = text[i + 2..].find("*/") else {
                    break;
                };
                let end = i + 2 + close + 2;
                out.push(Block {
                    start: i,
                    end,
                    content: &text[i + 2..i + 2 + close],
                });
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A value's URL encoding undone. sqlcommenter for Python doubles each `%` for the
/// driver's parameter substitution (psycopg's `%%`), which a statement sent without
/// parameters keeps: `%%3A` is read as `%3A`. No well-encoded value holds `%%`.
fn decode(text: &str) -> String {
    let text = text.replace("%%", "%");
    percent_decode_str(&text).decode_utf8_lossy().into_owned()
}

/// The pairs of one comment's content, when every comma-separated part is a tag of one
/// form; `None` for any other comment (`/* ping */`, `/* pgcost */`).
fn pairs(content: &str) -> Option<Vec<(String, String)>> {
    let parts: Vec<&str> = content
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    let sqlcommenter: Option<Vec<(String, String)>> = (parts.iter())
        .map(|part| {
            let caps = SQLCOMMENTER.captures(part)?;
            let value = caps[2].replace("\\'", "'");
            Some((decode(&caps[1]), decode(&value)))
        })
        .collect();
    if sqlcommenter.is_some() {
        return sqlcommenter;
    }
    // Marginalia's values are not escaped: a value with a comma in it (rare) joins the
    // part before.
    let mut out: Vec<(String, String)> = Vec::new();
    for part in parts {
        match MARGINALIA.captures(part) {
            Some(caps) => out.push((caps[1].to_string(), caps[2].to_string())),
            None => out.last_mut()?.1.push_str(&format!(",{part}")),
        }
    }
    Some(out)
}

/// The key-value pairs of every tag comment in `text`, in order; empty when it has none.
pub fn tag_pairs(text: &str) -> Vec<(String, String)> {
    blocks(text)
        .iter()
        .filter_map(|b| pairs(b.content))
        .flatten()
        .collect()
}

/// `text` without its tag comments (and the spaces before each); other comments stay.
pub fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for block in blocks(text) {
        if pairs(block.content).is_none() {
            continue;
        }
        out.push_str(text[from..block.start].trim_end());
        from = block.end;
    }
    if from == 0 {
        return text.to_string();
    }
    let rest = &text[from..];
    if !out.is_empty() && !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        out.push(' ');
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// A query's text folded so that a sampled query (with its constants and comment) and its
/// pg_stat_statements entry (with `$n` in place of the constants) fold alike: comments
/// out, constants and parameters as `?`, a list of them as one `?`, white space collapsed,
/// lower case.
pub fn fold(text: &str) -> String {
    static CONSTANT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"'(?:[^']|'')*'|\$\d+|\b\d+(?:\.\d+)?\b").expect("valid regex")
    });
    static LIST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\?(?:\s*,\s*\?)+").expect("valid regex"));
    let mut bare = String::with_capacity(text.len());
    let mut from = 0;
    for block in blocks(text) {
        bare.push_str(&text[from..block.start]);
        bare.push(' ');
        from = block.end;
    }
    bare.push_str(&text[from..]);
    let constants = CONSTANT.replace_all(&bare, "?");
    let listed = LIST.replace_all(&constants, "?");
    listed
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn reads_sqlcommenter_url_encoded() {
        let text = "SELECT * FROM issues WHERE id = $1 /*controller='issues%3Ashow',\
                    framework='django%3A5.2',route='%2Fissues%2F%3Cint%3Aid%3E',\
                    traceparent='00-5bd66ef5095369c7b0d1f8f4bd33716a-c532cb4098ac3dd2-01'*/";
        let pairs = tag_pairs(text);
        assert_eq!(pairs[0], pair("controller", "issues:show"));
        assert_eq!(pairs[1], pair("framework", "django:5.2"));
        assert_eq!(pairs[2], pair("route", "/issues/<int:id>"));
        assert_eq!(pairs.len(), 4);
    }

    #[test]
    fn reads_the_doubled_percent_of_a_statement_sent_without_parameters() {
        let pairs = tag_pairs("SELECT 1 /*route='shelves%%2F%%3Cint%%3Aid%%3E%%2F'*/");
        assert_eq!(pairs, vec![pair("route", "shelves/<int:id>/")]);
    }

    #[test]
    fn reads_an_escaped_quote_in_a_value() {
        let pairs = tag_pairs("SELECT 1 /*action='it\\'s'*/");
        assert_eq!(pairs, vec![pair("action", "it's")]);
    }

    #[test]
    fn reads_marginalia_with_colons_in_values() {
        let text = "/*application:Redmine,controller:issues,action:index,\
                    line:/app/controllers/issues_controller.rb:42:in `index'*/ SELECT 1";
        let pairs = tag_pairs(text);
        assert_eq!(pairs[1], pair("controller", "issues"));
        assert_eq!(
            pairs[3],
            pair(
                "line",
                "/app/controllers/issues_controller.rb:42:in `index'"
            )
        );
    }

    #[test]
    fn other_comments_are_no_tags_and_stay() {
        assert!(tag_pairs("/* ping */ SELECT 1").is_empty());
        assert!(tag_pairs("/* pgcost */ SELECT 1").is_empty());
        assert!(tag_pairs("SELECT '/*route=''x''*/'").is_empty());
        assert_eq!(strip_tags("/* ping */ SELECT 1"), "/* ping */ SELECT 1");
    }

    #[test]
    fn strips_tag_comments_only() {
        assert_eq!(
            strip_tags("SELECT a FROM t WHERE id = $1 /*route='%2Fx',line='3'*/"),
            "SELECT a FROM t WHERE id = $1"
        );
        assert_eq!(
            strip_tags("/*controller:issues,action:index*/ SELECT 1"),
            "SELECT 1"
        );
        assert_eq!(
            strip_tags("SELECT /*route='a'*/1"),
            "SELECT 1",
            "a comment between two tokens leaves one space"
        );
    }

    #[test]
    fn folds_a_sample_and_its_entry_alike() {
        let sampled = "SELECT \"issues\".* FROM \"issues\" WHERE \"issues\".\"id\" IN (1, 2, 3) \
                       AND name = 'it''s' LIMIT 25 /*route='x'*/";
        let entry = "SELECT \"issues\".* FROM \"issues\"   WHERE \"issues\".\"id\" IN ($1, $2) \
                     AND name = $3 LIMIT $4";
        assert_eq!(fold(sampled), fold(entry));
        assert_ne!(fold("SELECT a FROM t1"), fold("SELECT a FROM t2"));
    }
}
