//! `pgcost survey --graphql-operations`: the operations of persisted-query files (Apollo's
//! manifest, Relay's map) as requests to replay, each a POST of its document to the app's
//! GraphQL endpoint, which the grouping then sorts by operation like a HAR's
//! (`cost/survey/graphql`).

use std::collections::BTreeMap;

use serde_json::json;

use crate::error::{Error, Result};
use crate::flags::SurveyArgs;
use pgcost_core::survey::graphql::{self, NO_BODY};
use pgcost_core::survey::input::Hit;
use pgcost_core::survey::routes::Grouping;

/// Where the operations are posted when neither `--graphql-path` nor the log names it.
pub const DEFAULT_PATH: &str = "/graphql";

/// The warning of a survey with an operations file: its operations have no counts.
pub const COUNTS: &str = "a --graphql-operations operation counts 1 request: its shares are \
    per request, not at a traffic mix";

/// One request per operation of each file: `{"query", "operationName"}` (the name the
/// manifest gives, else the document's only operation's) POSTed to `--graphql-path`, or
/// to the path of the logged GraphQL POSTs (`logged`, the most logged), or
/// [`DEFAULT_PATH`].
/// `files` holds each file's name and text.
pub fn hits(args: &SurveyArgs, files: &[(String, String)], logged: &[Hit]) -> Result<Vec<Hit>> {
    let path = match &args.graphql_path {
        Some(path) if path.starts_with('/') => path.clone(),
        Some(path) => {
            return Err(Error::usage(format!(
                "--graphql-path {path:?} must start with /"
            )));
        }
        None => logged_endpoint(logged).unwrap_or_else(|| DEFAULT_PATH.to_string()),
    };
    let mut hits = Vec::new();
    for (name, text) in files {
        for (given, document) in graphql::persisted(name, text).map_err(Error::usage)? {
            let own = (graphql::operations(&document).ok())
                .filter(|ops| ops.len() == 1)
                .and_then(|ops| ops[0].name.clone());
            let body = match given.or(own) {
                Some(name) => json!({"query": document, "operationName": name}),
                None => json!({"query": document}),
            };
            hits.push(Hit {
                method: "POST".into(),
                target: path.clone(),
                body: Some(body.to_string()),
                status: None,
            });
        }
    }
    Ok(hits)
}

/// The most logged path of the GraphQL POSTs that came without a body (ties: the first
/// in path order).
fn logged_endpoint(logged: &[Hit]) -> Option<String> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for hit in logged {
        if hit.method == "POST" && hit.body.is_none() && graphql::is_endpoint(&hit.target) {
            *counts
                .entry(hit.target.split('?').next().unwrap_or_default())
                .or_default() += 1;
        }
    }
    let most = counts.values().copied().max()?;
    (counts.into_iter())
        .find(|(_, n)| *n == most)
        .map(|(path, _)| path.to_string())
}

/// With operations given, the log's bodyless GraphQL POSTs are not missing anything: their
/// reason says that the operations stand for them.
pub fn explain_skipped(args: &SurveyArgs, grouping: &mut Grouping) {
    if args.graphql_operations.is_empty() {
        return;
    }
    for skipped in grouping.skipped.iter_mut().filter(|s| s.reason == NO_BODY) {
        skipped.reason = "a GraphQL POST without its body: the operations of \
            --graphql-operations are replayed instead, 1 request each"
            .to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(target: &str, body: Option<&str>) -> Hit {
        Hit {
            method: "POST".into(),
            target: target.into(),
            body: body.map(str::to_string),
            status: None,
        }
    }

    #[test]
    fn the_endpoint_is_the_most_logged_bodyless_graphql_post() {
        let logged = [
            post("/api/graphql/", None),
            post("/graphql", None),
            post("/api/graphql/", None),
            post("/graphql", Some("{}")),
            post("/items", None),
        ];
        assert_eq!(logged_endpoint(&logged).as_deref(), Some("/api/graphql/"));
        assert_eq!(logged_endpoint(&logged[3..]), None);
    }
}
