//! GraphQL requests in traffic: which operation a request runs (its `operationName`, or the
//! first field of an anonymous query), whether it reads or writes, and the operations of a
//! persisted-query file (Apollo's manifest, Relay's map). Only as much of the GraphQL
//! syntax is read as telling the operations apart needs: names, punctuation and nesting;
//! strings and comments are skipped whole. Pure.

use serde_json::Value;

/// The three kinds of GraphQL operation, named by their keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum Kind {
    Query,
    Mutation,
    Subscription,
}

/// One operation of a document: its kind, its name (none for an anonymous one) and the
/// first field of its selection set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub kind: Kind,
    pub name: Option<String>,
    pub first_field: Option<String>,
}

impl Operation {
    /// How the survey names its route: the operation's name, or `{field}` for an
    /// anonymous query (`{projects}`).
    pub fn label(&self) -> String {
        match (&self.name, &self.first_field) {
            (Some(name), _) => name.clone(),
            (None, Some(field)) => format!("{{{field}}}"),
            (None, None) => "{}".to_string(),
        }
    }
}

/// A lexical token: a name, a punctuator, or anything else (a number, a string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Name(&'a str),
    Punct(u8),
    Spread,
    Value,
}

/// The document's tokens; commas, whitespace and `#` comments are skipped, a string or a
/// block string is one [`Token::Value`]. An unterminated string is an error.
fn tokens(text: &str) -> Result<Vec<Token<'_>>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i = string_end(bytes, i).ok_or("a string is not terminated")?;
                out.push(Token::Value);
                continue;
            }
            b'.' if bytes[i..].starts_with(b"...") => {
                out.push(Token::Spread);
                i += 3;
                continue;
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => {
                let start = i;
                while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                out.push(Token::Name(&text[start..i]));
                continue;
            }
            b'-' | b'0'..=b'9' => {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || b"-+.".contains(&bytes[i]))
                {
                    i += 1;
                }
                out.push(Token::Value);
                continue;
            }
            b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|'
            | b'}' => out.push(Token::Punct(b)),
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// The index just past the string that opens at `start`: a block string `"""..."""` (in
/// which `\"""` is escaped) or a one-line string with `\` escapes.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    if bytes[start..].starts_with(b"\"\"\"") {
        let mut i = start + 3;
        while i < bytes.len() {
            if bytes[i..].starts_with(b"\\\"\"\"") {
                i += 4;
            } else if bytes[i..].starts_with(b"\"\"\"") {
                return Some(i + 3);
            } else {
                i += 1;
            }
        }
        return None;
    }
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' | b'\r' => return None,
            _ => i += 1,
        }
    }
    None
}

/// The operations of an executable document, in order; fragments are passed over. A
/// document with anything else at its top level (a schema definition, plain text), or
/// with unbalanced braces, is an error.
pub fn operations(document: &str) -> Result<Vec<Operation>, String> {
    let tokens = tokens(document)?;
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (kind, name) = match tokens[i] {
            Token::Punct(b'{') => (Kind::Query, None),
            Token::Name("fragment") => {
                i = selection_end(&tokens, i + 1)?.1;
                continue;
            }
            Token::Name(keyword) => {
                let kind: Kind = (keyword.parse())
                    .map_err(|_| format!("{keyword:?} does not open an operation"))?;
                let name = match tokens.get(i + 1) {
                    Some(Token::Name(name)) => Some(name.to_string()),
                    _ => None,
                };
                (kind, name)
            }
            _ => return Err("the document does not open with an operation".into()),
        };
        let (first_field, end) = selection_end(&tokens, i)?;
        found.push(Operation {
            kind,
            name,
            first_field,
        });
        i = end;
    }
    if found.is_empty() {
        return Err("the document has no operation".into());
    }
    Ok(found)
}

/// From `start`, the selection set that follows (past variables, whose default values
/// may hold braces, and directives): the first field it selects (by its name, not its
/// alias; fragment spreads passed over) and the index past its closing brace.
fn selection_end(tokens: &[Token<'_>], start: usize) -> Result<(Option<String>, usize), String> {
    let mut i = start;
    let mut parens = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct(b'(') => parens += 1,
            Token::Punct(b')') => parens = parens.saturating_sub(1),
            Token::Punct(b'{') if parens == 0 => break,
            _ => {}
        }
        i += 1;
    }
    if i == tokens.len() {
        return Err("an operation has no selection set".into());
    }
    let mut first = None;
    let mut depth = 0usize;
    let mut parens = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct(b'{') => depth += 1,
            Token::Punct(b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Ok((first, i + 1));
                }
            }
            Token::Punct(b'(') => parens += 1,
            Token::Punct(b')') => parens = parens.saturating_sub(1),
            Token::Name(name) if depth == 1 && parens == 0 && first.is_none() => {
                // `...Fragment`, `... on Type` and a directive's `@name`: no field.
                let after = |back: usize, token: Token<'_>| i >= back && tokens[i - back] == token;
                let not_a_field = after(1, Token::Spread)
                    || after(1, Token::Punct(b'@'))
                    || (after(1, Token::Name("on")) && after(2, Token::Spread));
                let alias = tokens.get(i + 1) == Some(&Token::Punct(b':'));
                first = match (not_a_field, alias, tokens.get(i + 2)) {
                    (true, _, _) => None,
                    (false, true, Some(Token::Name(field))) => Some(field.to_string()),
                    (false, _, _) => Some(name.to_string()),
                };
            }
            _ => {}
        }
        i += 1;
    }
    Err("a selection set is not closed".into())
}

/// The operation a request runs: the one `operation_name` names, or the only one.
pub fn chosen(document: &str, operation_name: Option<&str>) -> Result<Operation, String> {
    let all = operations(document)?;
    match operation_name.filter(|n| !n.is_empty()) {
        Some(wanted) => (all.into_iter())
            .find(|o| o.name.as_deref() == Some(wanted))
            .ok_or_else(|| format!("operationName {wanted:?} is not in the document")),
        None if all.len() == 1 => Ok(all.into_iter().next().expect("one operation")),
        None => Err(format!(
            "{} operations and no operationName to choose one",
            all.len()
        )),
    }
}

/// The operations of a persisted-query file, each with its name and document: Apollo's
/// manifest (`{"format": "apollo-persisted-query-manifest", "operations": [{"id",
/// "name", "type", "body"}]}`) or Relay's map (`{"<id>": "<document>"}`).
pub fn persisted(file: &str, text: &str) -> Result<Vec<(Option<String>, String)>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{file} is not JSON: {e}"))?;
    let object = value
        .as_object()
        .ok_or_else(|| format!("{file} is neither an Apollo manifest nor a Relay map"))?;
    if let Some(operations) = object.get("operations").and_then(Value::as_array) {
        return (operations.iter().enumerate())
            .map(|(i, op)| {
                let body = (op.get("body").and_then(Value::as_str))
                    .ok_or_else(|| format!("{file}: /operations/{i} has no body"))?;
                let name = op.get("name").and_then(Value::as_str).map(str::to_string);
                Ok((name, body.to_string()))
            })
            .collect();
    }
    (object.iter())
        .map(|(id, document)| match document.as_str() {
            Some(document) => Ok((None, document.to_string())),
            None => Err(format!(
                "{file}: {id:?} is not a document: a Relay map holds id → document strings"
            )),
        })
        .collect()
}

/// What a logged request is to the survey, as GraphQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Not a GraphQL request: grouped as any other.
    Not,
    /// A read, replayed under this label (its operation's).
    Read(String),
    /// Not replayed: under this label, if known, for this reason.
    Skipped(Option<String>, String),
}

/// The reason an access log's GraphQL POST is skipped: what would let it be measured.
pub const NO_BODY: &str = "a GraphQL POST without its body (an access log has none): give \
    the requests as a HAR (--har), or the operations as --graphql-operations FILE (Apollo's \
    or Relay's persisted-query JSON)";

/// Whether the path's last segment is `graphql`: the endpoint of most servers.
pub fn is_endpoint(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    (path.split('/').rev().find(|s| !s.is_empty()))
        .is_some_and(|s| s.eq_ignore_ascii_case("graphql"))
}

/// How the reason of a skipped mutation or subscription ends.
const CHANGES: &str = "changes the app's data";

impl Request {
    /// A mutation or a subscription: an operation that may change the app's data.
    pub fn changes_data(&self) -> bool {
        matches!(self, Request::Skipped(_, reason) if reason.ends_with(CHANGES))
    }
}

/// A logged request as GraphQL: a POST whose JSON body has a `query` string, or a GET
/// whose query string has a `query` document or a persisted query's `extensions` (or an
/// `operationName` sent to a `graphql` path). A query is a read; a mutation or a
/// subscription is skipped, and so is a POST to a `graphql` path without a body.
pub fn classify(method: &str, target: &str, body: Option<&str>) -> Request {
    let endpoint = is_endpoint(target);
    match method {
        "POST" => post(endpoint, body.filter(|b| !b.trim().is_empty())),
        "GET" | "HEAD" => get(endpoint, target),
        _ => Request::Not,
    }
}

fn post(endpoint: bool, body: Option<&str>) -> Request {
    let Some(body) = body else {
        return if endpoint {
            Request::Skipped(None, NO_BODY.to_string())
        } else {
            Request::Not
        };
    };
    let value: Value = match serde_json::from_str(body) {
        Ok(value) => value,
        Err(_) => return Request::Not,
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    match (text("query"), value.get("extensions")) {
        (Some(query), _) => read(query, text("operationName"), endpoint),
        (None, Some(_)) if endpoint || text("operationName").is_some() => Request::Skipped(
            text("operationName").map(str::to_string),
            "a persisted GraphQL query sent by its hash: give the documents as \
             --graphql-operations FILE"
                .to_string(),
        ),
        _ if endpoint && value.is_array() => Request::Skipped(
            None,
            "a batch of GraphQL operations in one POST: not replayed".to_string(),
        ),
        _ => Request::Not,
    }
}

fn get(endpoint: bool, target: &str) -> Request {
    let query = target.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let mut params = std::collections::BTreeMap::new();
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        params.entry(key.into_owned()).or_insert(value.into_owned());
    }
    let name = params.get("operationName").filter(|n| !n.is_empty());
    if let Some(document) = params.get("query") {
        return read(document, name.map(String::as_str), endpoint);
    }
    let hash = (params.get("extensions"))
        .and_then(|e| serde_json::from_str::<Value>(e).ok())
        .and_then(|e| {
            e.pointer("/persistedQuery/sha256Hash")?
                .as_str()
                .map(str::to_string)
        });
    match (name, hash) {
        (Some(name), _) if endpoint || params.contains_key("extensions") => {
            Request::Read(name.clone())
        }
        (None, Some(hash)) => Request::Read(format!(
            "persisted:{}",
            hash.chars().take(12).collect::<String>()
        )),
        _ => Request::Not,
    }
}

/// A document and its `operationName`: a query is a read, the rest is skipped. A `query`
/// that is no GraphQL document (a search API's `{"query": "shoes"}`) is not GraphQL,
/// unless it was sent to a `graphql` path (`endpoint`).
fn read(document: &str, operation_name: Option<&str>, endpoint: bool) -> Request {
    match chosen(document, operation_name) {
        Ok(op) if op.kind == Kind::Query => Request::Read(op.label()),
        Ok(op) => Request::Skipped(Some(op.label()), format!("a GraphQL {} {CHANGES}", op.kind)),
        Err(_) if !endpoint => Request::Not,
        Err(e) => Request::Skipped(
            operation_name.map(str::to_string),
            format!("a GraphQL request that cannot be read: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(document: &str, name: Option<&str>) -> (Kind, String) {
        let op = chosen(document, name).unwrap();
        (op.kind, op.label())
    }

    #[test]
    fn named_and_anonymous_operations_are_labelled() {
        let list = "query ProjectList($first: Int = 10) { projects(first: $first) { id } }";
        assert_eq!(label(list, None), (Kind::Query, "ProjectList".into()));
        assert_eq!(
            label("{ projects { id } }", None),
            (Kind::Query, "{projects}".into())
        );
        // An alias names the result, the field is what runs; a spread is no field.
        let aliased = "query { ...Top @include(if: $all) ... on Query { x } mine: projects(owner: \"me\") { id } }";
        assert_eq!(label(aliased, None), (Kind::Query, "{projects}".into()));
        let create = "mutation CreateProject { createProject(name: \"x\") { id } }";
        assert_eq!(
            label(create, None),
            (Kind::Mutation, "CreateProject".into())
        );
        let watch = "subscription { projectAdded { id } }";
        assert_eq!(
            label(watch, None),
            (Kind::Subscription, "{projectAdded}".into())
        );
    }

    #[test]
    fn comments_and_strings_never_make_a_mutation() {
        let document = "# mutation Evil { drop }\n\
            query Search($q: String = \"mutation { x }\") {\n\
              search(q: \"} mutation {\", note: \"\"\"a \\\"\"\" mutation { } \"\"\") { id }\n\
            }";
        assert_eq!(label(document, None), (Kind::Query, "Search".into()));
        // A default value's braces are not the selection set.
        let object = "query Q($f: Filter = {status: OPEN}) { items(filter: $f) { id } }";
        assert_eq!(label(object, None), (Kind::Query, "Q".into()));
        assert!(chosen("query Q { a(s: \"open", None).is_err());
        assert!(chosen("type Query { a: Int }", None).is_err());
        assert!(chosen("shoes", None).is_err());
        assert!(chosen("{ a { b }", None).is_err());
    }

    #[test]
    fn operation_name_chooses_among_several_and_fragments_are_passed_over() {
        let document = "fragment F on Project { id }\n\
            query List { projects { ...F } }\n\
            mutation Rename { rename(id: 1) { ...F } }";
        let ops = operations(document).unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(label(document, Some("List")), (Kind::Query, "List".into()));
        assert_eq!(
            label(document, Some("Rename")),
            (Kind::Mutation, "Rename".into())
        );
        let none = chosen(document, None).unwrap_err();
        assert_eq!(none, "2 operations and no operationName to choose one");
        let missing = chosen(document, Some("Gone")).unwrap_err();
        assert_eq!(missing, "operationName \"Gone\" is not in the document");
    }

    #[test]
    fn apollo_manifests_and_relay_maps_give_their_operations() {
        let apollo = r#"{"format":"apollo-persisted-query-manifest","version":1,"operations":[
            {"id":"a1","name":"ProjectList","type":"query","body":"query ProjectList { projects { id } }"},
            {"id":"b2","name":"Rename","type":"mutation","body":"mutation Rename { rename { id } }"}]}"#;
        let ops = persisted("m.json", apollo).unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].0.as_deref(), Some("ProjectList"));
        assert_eq!(ops[1].1, "mutation Rename { rename { id } }");
        let relay = r#"{"4f9a": "query Labels { labels { id } }", "77c1": "{ me { id } }"}"#;
        let ops = persisted("r.json", relay).unwrap();
        assert_eq!(
            ops,
            [
                (None, "query Labels { labels { id } }".to_string()),
                (None, "{ me { id } }".to_string())
            ]
        );
        assert!(persisted("x.json", "[]").unwrap_err().contains("neither"));
        assert!(
            persisted("x.json", r#"{"a": 1}"#)
                .unwrap_err()
                .contains("Relay map")
        );
    }

    #[test]
    fn requests_are_classified_by_their_operation() {
        let body = |query: &str, name: &str| {
            serde_json::json!({"query": query, "operationName": name, "variables": {}}).to_string()
        };
        let list = body("query ProjectList { projects { id } }", "ProjectList");
        let read = Request::Read("ProjectList".into());
        assert_eq!(classify("POST", "/graphql/", Some(&list)), read);
        // The body decides, whatever the path.
        assert_eq!(classify("POST", "/api/gql", Some(&list)), read);
        let create = body("mutation Create { create { id } }", "");
        assert_eq!(
            classify("POST", "/graphql", Some(&create)),
            Request::Skipped(
                Some("Create".into()),
                "a GraphQL mutation changes the app's data".into()
            )
        );
        assert_eq!(
            classify("POST", "/graphql/", None),
            Request::Skipped(None, NO_BODY.into())
        );
        assert_eq!(classify("POST", "/api/items", None), Request::Not);
        assert_eq!(
            classify("POST", "/api/items", Some(r#"{"name":"x"}"#)),
            Request::Not
        );
        let get = "/graphql?query=%7B%20projects%20%7B%20id%20%7D%20%7D&variables=%7B%7D";
        assert_eq!(
            classify("GET", get, None),
            Request::Read("{projects}".into())
        );
        let persisted = "/graphql?operationName=Labels&extensions=%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%22ab12%22%7D%7D";
        assert_eq!(
            classify("GET", persisted, None),
            Request::Read("Labels".into())
        );
        let hash_only = "/api?extensions=%7B%22persistedQuery%22%3A%7B%22sha256Hash%22%3A%22ab12cd34ef56aa77%22%7D%7D";
        assert_eq!(
            classify("GET", hash_only, None),
            Request::Read("persisted:ab12cd34ef56".into())
        );
        // A search box's `query=` is not a GraphQL document; a mutation is, anywhere.
        assert_eq!(classify("GET", "/search?query=shoes", None), Request::Not);
        let search = Some(r#"{"query":"shoes"}"#);
        assert_eq!(classify("POST", "/api/search", search), Request::Not);
        assert!(matches!(
            classify("POST", "/graphql", search),
            Request::Skipped(None, reason) if reason.starts_with("a GraphQL request that cannot be read")
        ));
        let write = "/api?query=mutation%20%7B%20drop%20%7D";
        assert!(matches!(
            classify("GET", write, None),
            Request::Skipped(_, _)
        ));
        assert_eq!(classify("GET", "/graphql/", None), Request::Not);
    }
}
