//! Proving the credentials count: before the warm-up, one request with the credentials and
//! one without, outside every window; the comparison itself is `pgcost_core::credentials`.

use crate::auth::{self, login};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::request::RequestSpec;
use pgcost_core::credentials::{self, Answer, Note};

/// Sends the request with and without its credentials, when it carries any (after the
/// login, whose session is then among its headers), and compares the answers. A request
/// that fails is left to the warm-up, which names the failure.
pub async fn probe(config: &AuditConfig) -> Result<Note> {
    let anonymous = auth::without_credentials(&config.request.headers);
    if anonymous.len() == config.request.headers.len() {
        return Ok(Note::default());
    }
    let client = login::client(config.insecure, config.cacert.as_deref()).map_err(|e| {
        Error::target(format!(
            "cannot build the HTTP client: {}",
            login::describe_reqwest(e)
        ))
    })?;
    let with = send(&client, &config.request, config.request.headers.clone()).await;
    let without = send(&client, &config.request, anonymous).await;
    Ok(match (with, without) {
        (Some(with), Some(without)) => {
            credentials::judge(&with, &without, config.auth.allow_anonymous_equal)
        }
        _ => Note::default(),
    })
}

/// One request with `headers` instead of the request's own; `None` when it failed.
async fn send(
    client: &reqwest::Client,
    request: &RequestSpec,
    headers: reqwest::header::HeaderMap,
) -> Option<Answer> {
    let (url, headers, body) = request.next(&headers);
    let mut builder = client
        .request(request.method.clone(), url)
        .headers(headers)
        .timeout(request.timeout);
    if let Some(body) = body {
        builder = builder.body(body);
    }
    let response = builder.send().await.ok()?;
    let status = response.status().as_u16();
    let body = response.bytes().await.ok()?;
    Some(Answer {
        status,
        body: body.to_vec(),
    })
}
