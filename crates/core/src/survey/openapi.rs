//! OpenAPI 3.x documents (JSON or YAML) as a survey input: each operation becomes one
//! request to a URL built from the parameters' example values, grouped under the
//! document's own path template. Pure: the caller reads the file.

use serde_json::{Map, Value};

use super::input::{Hit, Parsed};
use super::routes::Skipped;

/// The operations of a path item, in the order they are read.
const OPERATIONS: &[&str] = &[
    "get", "head", "options", "put", "post", "delete", "patch", "trace",
];

/// What a document gives the survey: a request per operation that has every example it
/// needs (`parsed`), the templates its URLs are grouped under, and the operations that
/// cannot be replayed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenApi {
    pub parsed: Parsed,
    /// The server's path prefix and each path's template, e.g. `/v1/pets/{petId}`.
    pub templates: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// A document that is not an OpenAPI 3.x document, with the JSON pointer of the fault.
fn fault(file: &str, pointer: &str, message: &str) -> String {
    let at = if pointer.is_empty() { "/" } else { pointer };
    format!("{file}: {at}: {message}")
}

/// A JSON pointer's segment: `~` as `~0`, `/` as `~1`.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The document's text as JSON: JSON when it opens with `{`, YAML otherwise.
fn value(file: &str, text: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| format!("{file} is not valid JSON: {e}"));
    }
    let yaml: yaml_serde::Value =
        yaml_serde::from_str(text).map_err(|e| format!("{file} is not valid YAML: {e}"))?;
    serde_json::to_value(yaml).map_err(|e| format!("{file}: a YAML value JSON cannot hold: {e}"))
}

/// An OpenAPI 3.x document's operations.
pub fn document(file: &str, text: &str) -> Result<OpenApi, String> {
    let root = value(file, text)?;
    let version = root.get("openapi").and_then(Value::as_str);
    if !version.is_some_and(|v| v.starts_with("3.")) {
        return Err(fault(
            file,
            "/openapi",
            "expected \"3.x\": is this an OpenAPI 3 document?",
        ));
    }
    let prefix = server_prefix(&root);
    let paths = (root.get("paths").and_then(Value::as_object))
        .ok_or_else(|| fault(file, "/paths", "expected an object of paths"))?;
    let mut api = OpenApi::default();
    for (path, item) in paths {
        let pointer = format!("/paths/{}", escape(path));
        if !path.starts_with('/') {
            return Err(fault(file, &pointer, "a path must start with /"));
        }
        let item = resolve(&root, item, file, &pointer)?;
        let item = (item.as_object()).ok_or_else(|| fault(file, &pointer, "expected an object"))?;
        let template = format!("{prefix}{path}");
        let shared = parameters(&root, item, file, &pointer)?;
        for &name in OPERATIONS {
            let Some(operation) = item.get(name) else {
                continue;
            };
            let pointer = format!("{pointer}/{name}");
            let operation = (operation.as_object())
                .ok_or_else(|| fault(file, &pointer, "expected an operation object"))?;
            let mut params = shared.clone();
            for p in parameters(&root, operation, file, &pointer)? {
                params.retain(|q| (&q.name, &q.location) != (&p.name, &p.location));
                params.push(p);
            }
            let method = name.to_ascii_uppercase();
            match url(&prefix, path, &params) {
                Ok(target) => api.parsed.hits.push(Hit {
                    method,
                    target,
                    body: None,
                    status: None,
                }),
                Err(missing) => api.skipped.push(Skipped {
                    method,
                    route: template.clone(),
                    requests: 1,
                    reason: format!("no example value for required parameter {missing}"),
                }),
            }
        }
        api.templates.push(template);
    }
    // Literal segments first: `/items/new` must not be taken for `/items/{id}`.
    (api.templates).sort_by_key(|t| (t.matches('{').count(), t.clone()));
    Ok(api)
}

/// The path of `servers[0].url` (its variables at their defaults), without its trailing
/// `/`: empty when there is none.
fn server_prefix(root: &Value) -> String {
    let Some(server) = root.pointer("/servers/0") else {
        return String::new();
    };
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(variables) = server.get("variables").and_then(Value::as_object) {
        for (name, variable) in variables {
            let default = variable
                .get("default")
                .and_then(Value::as_str)
                .unwrap_or_default();
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    let path = if url.starts_with('/') {
        url.split(['?', '#']).next().unwrap_or_default().to_string()
    } else {
        url::Url::parse(&url).map_or(String::new(), |u| u.path().to_string())
    };
    path.trim_end_matches('/').to_string()
}

/// A `$ref` to a place in the same document, followed (a chain of them too); any other
/// value as it is.
fn resolve<'a>(
    root: &'a Value,
    value: &'a Value,
    file: &str,
    pointer: &str,
) -> Result<&'a Value, String> {
    let mut value = value;
    for _ in 0..16 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return Ok(value);
        };
        let local = reference
            .strip_prefix('#')
            .filter(|r| r.is_empty() || r.starts_with('/'));
        value = local.and_then(|r| root.pointer(r)).ok_or_else(|| {
            fault(
                file,
                pointer,
                &format!("$ref {reference:?} is not in this document"),
            )
        })?;
    }
    Err(fault(file, pointer, "$ref chain too long (a cycle?)"))
}

/// One parameter of the URL: its name, where it goes, and the value it is sent with.
#[derive(Debug, Clone)]
struct Parameter {
    name: String,
    location: String,
    required: bool,
    example: Option<Value>,
}

/// The `parameters` of a path item or an operation.
fn parameters(
    root: &Value,
    owner: &Map<String, Value>,
    file: &str,
    pointer: &str,
) -> Result<Vec<Parameter>, String> {
    let Some(list) = owner.get("parameters") else {
        return Ok(Vec::new());
    };
    let pointer = format!("{pointer}/parameters");
    let list = (list.as_array()).ok_or_else(|| fault(file, &pointer, "expected an array"))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, p) in list.iter().enumerate() {
        let pointer = format!("{pointer}/{i}");
        let p = resolve(root, p, file, &pointer)?;
        let text = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_string);
        let (Some(name), Some(location)) = (text("name"), text("in")) else {
            return Err(fault(file, &pointer, "a parameter needs a name and an in"));
        };
        let schema = match p.get("schema") {
            Some(s) => Some(resolve(root, s, file, &format!("{pointer}/schema"))?),
            None => None,
        };
        out.push(Parameter {
            required: location == "path" || p.get("required") == Some(&Value::Bool(true)),
            example: example(root, p, schema),
            name,
            location,
        });
    }
    Ok(out)
}

/// A parameter's example value: `example`, the first of `examples`, then its schema's
/// `example`, first of `examples`, `default` and first of `enum`.
fn example(root: &Value, parameter: &Value, schema: Option<&Value>) -> Option<Value> {
    let first_example = |examples: &Value| match examples {
        Value::Object(map) => map.values().find_map(|e| {
            let e = resolve(root, e, "", "").ok()?;
            e.get("value").cloned()
        }),
        Value::Array(list) => list.first().cloned(),
        _ => None,
    };
    let usable = |v: &Value| !v.is_null() && !v.is_object();
    let own = (parameter.get("example").cloned())
        .or_else(|| parameter.get("examples").and_then(first_example));
    let from_schema = || {
        let schema = schema?;
        (schema.get("example").cloned())
            .or_else(|| schema.get("examples").and_then(first_example))
            .or_else(|| schema.get("default").cloned())
            .or_else(|| schema.pointer("/enum/0").cloned())
    };
    own.filter(usable).or_else(|| from_schema().filter(usable))
}

/// A value as text in a URL: a string as it is, an array's items joined by commas.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// Everything but the unreserved characters percent-encoded.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The concrete URL of `path` under `prefix`: each `{name}` replaced by the path
/// parameter's example, and a query of every query parameter with an example; the name
/// of a required parameter without one when it cannot be built.
fn url(prefix: &str, path: &str, params: &[Parameter]) -> Result<String, String> {
    let in_url = |p: &&Parameter| matches!(p.location.as_str(), "path" | "query");
    if let Some(p) = (params.iter().filter(in_url)).find(|p| p.required && p.example.is_none()) {
        return Err(p.name.clone());
    }
    let mut target = format!("{prefix}{path}");
    let mut query = Vec::new();
    for p in params {
        let Some(example) = &p.example else { continue };
        match p.location.as_str() {
            "path" => target = target.replace(&format!("{{{}}}", p.name), &encode(&text(example))),
            "query" => match example {
                Value::Array(items) => query.extend(
                    items
                        .iter()
                        .map(|v| format!("{}={}", encode(&p.name), encode(&text(v)))),
                ),
                v => query.push(format!("{}={}", encode(&p.name), encode(&text(v)))),
            },
            _ => {}
        }
    }
    // A `{name}` left in the path has no parameter to fill it.
    if let Some(start) = target.find('{') {
        let name = target[start + 1..].split('}').next().unwrap_or_default();
        return Err(name.to_string());
    }
    if !query.is_empty() {
        target = format!("{target}?{}", query.join("&"));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each request as (method, target).
    fn requests(api: &OpenApi) -> Vec<(&str, &str)> {
        (api.parsed.hits.iter())
            .map(|h| (h.method.as_str(), h.target.as_str()))
            .collect()
    }

    const PETS: &str = r##"{
      "openapi": "3.0.3",
      "servers": [{"url": "https://api.example/{version}/", "variables": {"version": {"default": "v1"}}}],
      "components": {"parameters": {"Limit": {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 20}}}},
      "paths": {
        "/pets": {
          "get": {"parameters": [{"$ref": "#/components/parameters/Limit"},
                                 {"name": "tag", "in": "query", "schema": {"enum": ["cat dog", "fish"]}},
                                 {"name": "q", "in": "query"}]},
          "post": {}
        },
        "/pets/{petId}": {
          "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"example": 7}}],
          "get": {},
          "head": {"parameters": [{"name": "petId", "in": "path", "example": "a/b"}]}
        },
        "/owners/{ownerId}/pets": {
          "get": {"parameters": [{"name": "ownerId", "in": "path", "required": true, "schema": {"type": "integer"}}]}
        },
        "/search": {
          "get": {"parameters": [{"name": "term", "in": "query", "required": true,
                                  "examples": {"a": {"value": "red"}, "b": {"value": "blue"}}},
                                 {"name": "ids", "in": "query", "example": [1, 2]},
                                 {"name": "X-Trace", "in": "header", "required": true}]}
        }
      }
    }"##;

    #[test]
    fn operations_become_requests_from_the_examples() {
        let api = document("pets.json", PETS).unwrap();
        assert_eq!(
            requests(&api),
            [
                ("GET", "/v1/pets?limit=20&tag=cat%20dog"),
                ("POST", "/v1/pets"),
                ("GET", "/v1/pets/7"),
                ("HEAD", "/v1/pets/a%2Fb"),
                ("GET", "/v1/search?term=red&ids=1&ids=2"),
            ]
        );
        assert_eq!(
            api.templates,
            [
                "/v1/pets",
                "/v1/search",
                "/v1/owners/{ownerId}/pets",
                "/v1/pets/{petId}"
            ]
        );
        assert_eq!(
            api.skipped,
            [Skipped {
                method: "GET".into(),
                route: "/v1/owners/{ownerId}/pets".into(),
                requests: 1,
                reason: "no example value for required parameter ownerId".into(),
            }]
        );
    }

    #[test]
    fn yaml_reads_as_json_does() {
        let yaml = "openapi: 3.1.0\nservers:\n  - url: /api\npaths:\n  /items/{id}:\n    get:\n      parameters:\n        - name: id\n          in: path\n          required: true\n          example: 12\n      responses:\n        200:\n          description: ok\n";
        let api = document("a.yaml", yaml).unwrap();
        assert_eq!(requests(&api), [("GET", "/api/items/12")]);
        assert_eq!(api.templates, ["/api/items/{id}"]);
    }

    #[test]
    fn a_path_parameter_nobody_declares_skips_the_operation() {
        let doc = r#"{"openapi": "3.0.0", "paths": {"/a/{x}": {"get": {}}}}"#;
        let api = document("a.json", doc).unwrap();
        assert!(api.parsed.hits.is_empty());
        assert_eq!(
            api.skipped[0].reason,
            "no example value for required parameter x"
        );
    }

    #[test]
    fn malformed_documents_name_the_pointer_of_the_fault() {
        let cases = [
            (
                r#"{"swagger": "2.0", "paths": {}}"#,
                "d.json: /openapi: expected \"3.x\"",
            ),
            (
                r#"{"openapi": "3.0.0"}"#,
                "d.json: /paths: expected an object",
            ),
            (
                r#"{"openapi": "3.0.0", "paths": {"a/b": {}}}"#,
                "d.json: /paths/a~1b: a path must start",
            ),
            (
                r#"{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}}"#,
                "d.json: /paths/~1a/get/parameters/0: a parameter needs a name",
            ),
            (
                r##"{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/nowhere"}]}}}}"##,
                "d.json: /paths/~1a/get/parameters/0: $ref \"#/nowhere\" is not in this document",
            ),
            (
                r#"{"openapi": "3.0.0", "paths": {"/a": {"get": 3}}}"#,
                "d.json: /paths/~1a/get: expected an operation",
            ),
            ("{not json", "d.json is not valid JSON"),
        ];
        for (doc, message) in cases {
            let error = document("d.json", doc).unwrap_err();
            assert!(error.starts_with(message), "{error}");
        }
    }
}
