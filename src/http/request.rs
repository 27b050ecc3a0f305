//! One HTTP request, as the burst sends it N times.

use std::time::Duration;

use bytes::Bytes;

use crate::http::error_answer::ErrorRule;
use reqwest::header::HeaderMap;
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
}
