//! One HTTP request, as the burst sends it N times.

use std::time::Duration;

use bytes::Bytes;
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
}
