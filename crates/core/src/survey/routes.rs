//! Concrete URLs grouped into route templates (`/admin/auth/user/{id}/change/`) and GraphQL
//! requests by operation (`/graphql/ ProjectList`), what is replayed and what is skipped
//! (methods that write, GraphQL writes, static files), and each route's
//! replay sample in proportion to its URLs' counts. Pure.

use std::collections::BTreeMap;

use serde::Serialize;

use super::graphql::{self, Request};
use super::input::Hit;

/// Methods replayed without `--allow-method`: they do not change the app's data.
pub const SAFE_METHODS: &[&str] = &["GET", "HEAD"];

/// File extensions served as static files: counted, never replayed or ranked.
pub const STATIC_EXTENSIONS: &[&str] = &[
    "css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "woff",
    "woff2", "ttf", "otf", "eot", "txt", "xml", "pdf", "mp4", "webm", "mp3", "wasm",
];

/// A segment at least this long, of letters and digits with a digit, is a token.
const TOKEN_CHARS: usize = 16;

/// One concrete URL of a route and how often it was logged (or sampled).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UrlCount {
    pub url: String,
    pub requests: u64,
    /// The request body sent with the URL (a GraphQL operation's JSON, from a HAR or
    /// `--graphql-operations`); absent for a request without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The status the log has most often for this URL (the lowest code on a tie); null
    /// when the record has no status.
    pub logged_status: Option<u16>,
}

/// Statuses that refuse a request for its credential.
pub const REJECTIONS: [u16; 2] = [401, 403];

/// A route to replay: its method, its template, its concrete URLs, most logged first, and
/// the statuses its requests were logged with (those without one left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub method: String,
    pub template: String,
    pub urls: Vec<UrlCount>,
    pub statuses: BTreeMap<u16, u64>,
}

impl Route {
    pub fn requests(&self) -> u64 {
        self.urls.iter().map(|u| u.requests).sum()
    }

    /// `403 x2, 401 x1` when every logged request of the route was a rejection (401 or
    /// 403): the log's own truth, nothing a replay would measure. None otherwise, and when
    /// any request has no logged status.
    pub fn rejected_in_log(&self) -> Option<String> {
        let logged: u64 = self.statuses.values().sum();
        let all = logged == self.requests() && logged > 0;
        (all && self.statuses.keys().all(|s| REJECTIONS.contains(s)))
            .then(|| statuses_text(&self.statuses))
    }
}

/// `403 x2, 401 x1`: statuses most frequent first (then by code).
pub fn statuses_text(statuses: &BTreeMap<u16, u64>) -> String {
    let mut list: Vec<(&u16, &u64)> = statuses.iter().collect();
    list.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = list.iter().map(|(s, n)| format!("{s} x{n}")).collect();
    parts.join(", ")
}

/// The most logged status of `statuses` (the lowest code on a tie).
fn most_logged(statuses: &BTreeMap<u16, u64>) -> Option<u16> {
    let top = statuses.values().max()?;
    statuses.iter().find(|(_, n)| *n == top).map(|(s, _)| *s)
}

/// Logged requests that are not replayed, by method and route, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    pub method: String,
    pub route: String,
    pub requests: u64,
    pub reason: String,
}

/// The traffic grouped: routes to replay, the skipped ones, and the static files, counted
/// and listed by folder and extension.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grouping {
    pub routes: Vec<Route>,
    pub skipped: Vec<Skipped>,
    pub static_requests: u64,
    pub static_files: Vec<Skipped>,
}

/// The reason every static file is listed with.
pub const STATIC_REASON: &str = "static file, by its extension: counted, never replayed";

/// A `--route` template, split into segments; `{name}` matches any one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub template: String,
    segments: Vec<String>,
}

impl Override {
    /// A template as the user wrote it, e.g. `/api/v1/projects/{id}`.
    pub fn parse(text: &str) -> Result<Override, String> {
        let path = text.split('?').next().unwrap_or_default();
        if !path.starts_with('/') {
            return Err(format!("--route {text:?} must start with /"));
        }
        Ok(Override {
            template: path.to_string(),
            segments: path.split('/').map(str::to_string).collect(),
        })
    }

    fn matches(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        parts.len() == self.segments.len()
            && (parts.iter().zip(&self.segments)).all(|(part, want)| {
                if want.starts_with('{') && want.ends_with('}') {
                    !part.is_empty()
                } else {
                    part == want
                }
            })
    }
}

/// Whether a path segment is a value rather than a name: a number, a UUID, a hex string
/// of 8 characters or more, a slug with a digit (`post-2024`, `order_17`), or a long token
/// of letters and digits.
pub fn is_parameter(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let digit = bytes.iter().any(u8::is_ascii_digit);
    if segment.is_empty() || !digit {
        return false;
    }
    let all = |f: fn(&u8) -> bool| bytes.iter().all(f);
    let slug_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
    all(u8::is_ascii_digit)
        || uuid::Uuid::try_parse(segment).is_ok()
        || (bytes.len() >= 8 && all(u8::is_ascii_hexdigit))
        || (all(slug_byte) && bytes.iter().any(|b| matches!(b, b'-' | b'_')))
        || (bytes.len() >= TOKEN_CHARS && all(u8::is_ascii_alphanumeric))
}

/// The template of a concrete target: its path with each parameter segment as `{id}`
/// (or as the first matching `--route`), and its query's parameter names, sorted, with
/// their values left out.
pub fn template(target: &str, overrides: &[Override]) -> String {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let path_template = match overrides.iter().find(|o| o.matches(path)) {
        Some(o) => o.template.clone(),
        None => (path.split('/'))
            .map(|s| if is_parameter(s) { "{id}" } else { s })
            .collect::<Vec<_>>()
            .join("/"),
    };
    let mut names: Vec<&str> = (query.unwrap_or_default().split('&'))
        .filter(|p| !p.is_empty())
        .map(|p| p.split('=').next().unwrap_or_default())
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return path_template;
    }
    let params: Vec<String> = names.iter().map(|n| format!("{n}={{{n}}}")).collect();
    format!("{path_template}?{}", params.join("&"))
}

/// A static file's place in the list: its folder, templated as a route's path is, and
/// `*.` its extension, lower-cased: `/static/js/main.3f2c.js` is `/static/js/*.js`.
fn static_template(target: &str) -> String {
    let path = target.split('?').next().unwrap_or_default();
    let (folder, file) = path.rsplit_once('/').unwrap_or(("", path));
    let extension = file.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    format!(
        "{}/*.{}",
        template(folder, &[]),
        extension.to_ascii_lowercase()
    )
}

/// Whether the path names a static file, by its extension.
pub fn is_static(target: &str) -> bool {
    let path = target.split('?').next().unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.')
        .is_some_and(|(_, ext)| STATIC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Where one request goes: a route to replay (by its template), or the skipped ones (by
/// route, with the reason).
enum Place {
    Replay(String),
    Skip(String, String),
}

/// A request's place: a GraphQL request by its operation (`graphql::classify`), a read
/// replayed whatever its method, as `path operation`; any other by its template, replayed
/// when its method is safe or `allowed`.
fn place(hit: &Hit, overrides: &[Override], allowed: &[String]) -> Place {
    let path = hit.target.split('?').next().unwrap_or_default();
    let labelled = |label: Option<String>| match label {
        Some(label) => format!("{} {label}", template(path, overrides)),
        None => template(path, overrides),
    };
    match graphql::classify(&hit.method, &hit.target, hit.body.as_deref()) {
        Request::Read(label) => return Place::Replay(labelled(Some(label))),
        Request::Skipped(label, reason) => return Place::Skip(labelled(label), reason),
        Request::Not => {}
    }
    let template = template(&hit.target, overrides);
    if SAFE_METHODS.contains(&hit.method.as_str()) || allowed.contains(&hit.method) {
        return Place::Replay(template);
    }
    let method = &hit.method;
    Place::Skip(
        template,
        format!("{method} may change the app's data; --allow-method {method} replays it"),
    )
}

/// Groups `hits` into routes by method and template, a GraphQL read by its operation
/// (the concrete requests of a route are its URLs with their bodies). Static files are
/// only counted; methods outside [`SAFE_METHODS`] and `allowed`, and GraphQL writes, are
/// skipped with the reason. Routes come most logged first, then by template.
pub fn group(hits: &[Hit], overrides: &[Override], allowed: &[String]) -> Grouping {
    let mut grouping = Grouping::default();
    let mut routes: BTreeMap<(String, String), Urls> = BTreeMap::new();
    let mut skipped: BTreeMap<(String, String), (u64, String)> = BTreeMap::new();
    let mut statics: BTreeMap<(String, String), u64> = BTreeMap::new();
    for hit in hits {
        if is_static(&hit.target) {
            grouping.static_requests += 1;
            let key = (hit.method.clone(), static_template(&hit.target));
            *statics.entry(key).or_default() += 1;
            continue;
        }
        match place(hit, overrides, allowed) {
            Place::Replay(template) => {
                let concrete = (hit.target.clone(), hit.body.clone());
                let urls = routes.entry((hit.method.clone(), template)).or_default();
                let (requests, statuses) = urls.entry(concrete).or_default();
                *requests += 1;
                if let Some(status) = hit.status {
                    *statuses.entry(status).or_default() += 1;
                }
            }
            Place::Skip(route, reason) => {
                let entry = skipped.entry((hit.method.clone(), route));
                entry.or_insert((0, reason)).0 += 1;
            }
        }
    }
    grouping.routes = (routes.into_iter())
        .map(|((method, template), urls)| route(method, template, urls))
        .collect();
    (grouping.routes).sort_by(|a, b| {
        b.requests()
            .cmp(&a.requests())
            .then(a.template.cmp(&b.template))
    });
    grouping.static_files = (statics.into_iter())
        .map(|((method, route), requests)| Skipped {
            method,
            route,
            requests,
            reason: STATIC_REASON.into(),
        })
        .collect();
    (grouping.static_files).sort_by(|a, b| b.requests.cmp(&a.requests).then(a.route.cmp(&b.route)));
    grouping.skipped = (skipped.into_iter())
        .map(|((method, route), (requests, reason))| Skipped {
            reason,
            method,
            route,
            requests,
        })
        .collect();
    grouping
}

/// Per route, per concrete request (URL and body): its requests and their logged statuses.
type Urls = BTreeMap<(String, Option<String>), (u64, BTreeMap<u16, u64>)>;

/// One route of [`group`]: its URLs most logged first, and the statuses logged for any.
fn route(method: String, template: String, urls: Urls) -> Route {
    let mut statuses = BTreeMap::new();
    for (status, n) in urls.values().flat_map(|(_, s)| s) {
        *statuses.entry(*status).or_default() += n;
    }
    let mut urls: Vec<UrlCount> = (urls.into_iter())
        .map(|((url, body), (requests, statuses))| UrlCount {
            url,
            requests,
            body,
            logged_status: most_logged(&statuses),
        })
        .collect();
    urls.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.url.cmp(&b.url)));
    Route {
        method,
        template,
        urls,
        statuses,
    }
}

/// `n` requests shared among `urls` in proportion to their counts (largest remainder:
/// each gets the floor of its quota, the rest go to the largest fractions, ties to the
/// more logged). Deterministic; URLs that get none are left out.
pub fn apportion(urls: &[UrlCount], n: u64) -> Vec<UrlCount> {
    let total: u64 = urls.iter().map(|u| u.requests).sum();
    if total == 0 {
        return Vec::new();
    }
    let quota = |u: &UrlCount| u128::from(u.requests) * u128::from(n);
    let mut shares: Vec<u64> = urls
        .iter()
        .map(|u| (quota(u) / u128::from(total)) as u64)
        .collect();
    let given: u64 = shares.iter().sum();
    let mut order: Vec<usize> = (0..urls.len()).collect();
    order.sort_by(|&a, &b| {
        let rem = |i: usize| quota(&urls[i]) % u128::from(total);
        rem(b)
            .cmp(&rem(a))
            .then(urls[b].requests.cmp(&urls[a].requests))
            .then(a.cmp(&b))
    });
    for &i in order.iter().take((n - given) as usize) {
        shares[i] += 1;
    }
    (urls.iter().zip(shares))
        .filter(|(_, s)| *s > 0)
        .map(|(u, requests)| UrlCount {
            requests,
            ..u.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(method: &str, target: &str) -> Hit {
        Hit {
            method: method.into(),
            target: target.into(),
            body: None,
            status: None,
        }
    }

    fn counts(pairs: &[(&str, u64)]) -> Vec<UrlCount> {
        (pairs.iter())
            .map(|(url, requests)| UrlCount {
                url: url.to_string(),
                requests: *requests,
                body: None,
                logged_status: None,
            })
            .collect()
    }

    #[test]
    fn each_url_keeps_its_most_logged_status_and_the_route_all_of_them() {
        let logged = |target: &str, status: Option<u16>| Hit {
            status,
            ..hit("GET", target)
        };
        let hits = [
            logged("/items/1", Some(200)),
            logged("/items/1", Some(404)),
            logged("/items/1", Some(404)),
            logged("/items/2", Some(403)),
            logged("/items/2", Some(200)),
            logged("/items/3", None),
            logged("/denied", Some(403)),
            logged("/denied", Some(401)),
            logged("/denied", Some(403)),
            logged("/maybe", Some(403)),
            logged("/maybe", None),
        ];
        let g = group(&hits, &[], &[]);
        let items = &g.routes[0];
        let statuses: Vec<(&str, Option<u16>)> = (items.urls.iter())
            .map(|u| (u.url.as_str(), u.logged_status))
            .collect();
        // A tie (200 and 403 once each) goes to the lower code.
        assert_eq!(
            statuses,
            [
                ("/items/1", Some(404)),
                ("/items/2", Some(200)),
                ("/items/3", None)
            ]
        );
        assert_eq!(statuses_text(&items.statuses), "200 x2, 404 x2, 403 x1");
        assert_eq!(items.rejected_in_log(), None);
        let denied = g.routes.iter().find(|r| r.template == "/denied").unwrap();
        assert_eq!(denied.rejected_in_log().as_deref(), Some("403 x2, 401 x1"));
        // A request without a status might have been a success.
        let maybe = g.routes.iter().find(|r| r.template == "/maybe").unwrap();
        assert_eq!(maybe.rejected_in_log(), None);
        // The sample keeps each URL's status.
        assert_eq!(apportion(&items.urls, 4)[0].logged_status, Some(404));
    }

    #[test]
    fn parameter_segments_become_id() {
        let cases = [
            (
                "/admin/auth/user/42/change/",
                "/admin/auth/user/{id}/change/",
            ),
            (
                "/api/v1/items/3f2c1a9b-77de-4c1e-9a5b-0d4e2f6a8b1c",
                "/api/v1/items/{id}",
            ),
            ("/commits/deadbeef12", "/commits/{id}"),
            ("/blog/my-post-2024", "/blog/{id}"),
            ("/t/abcdefghij0123456789", "/t/{id}"),
            ("/api/v2/users", "/api/v2/users"),
            ("/oauth2/authorize", "/oauth2/authorize"),
            ("/search?q=x&page=2&q=y", "/search?page={page}&q={q}"),
            ("/", "/"),
        ];
        for (target, want) in cases {
            assert_eq!(template(target, &[]), want, "{target}");
        }
    }

    #[test]
    fn a_route_override_wins() {
        let o = [Override::parse("/api/v1/projects/{slug}").unwrap()];
        assert_eq!(
            template("/api/v1/projects/billing", &o),
            "/api/v1/projects/{slug}"
        );
        assert_eq!(
            template("/api/v1/projects/billing/x", &o),
            "/api/v1/projects/billing/x"
        );
        assert!(Override::parse("api").is_err());
    }

    #[test]
    fn grouping_counts_skips_writes_and_statics() {
        let hits = [
            hit("GET", "/items/1"),
            hit("GET", "/items/2"),
            hit("GET", "/items/1"),
            hit("HEAD", "/scan"),
            hit("POST", "/items/3"),
            hit("GET", "/static/app.CSS"),
            hit("GET", "/favicon.ico"),
        ];
        let g = group(&hits, &[], &[]);
        assert_eq!(g.static_requests, 2);
        let statics: Vec<(&str, u64)> = (g.static_files.iter())
            .map(|s| (s.route.as_str(), s.requests))
            .collect();
        assert_eq!(statics, [("/*.ico", 1), ("/static/*.css", 1)]);
        assert_eq!(
            static_template("/assets/42/main.3f2c.JS?v=1"),
            "/assets/{id}/*.js"
        );
        assert_eq!(g.routes.len(), 2);
        assert_eq!(g.routes[0].template, "/items/{id}");
        assert_eq!(
            g.routes[0].urls,
            counts(&[("/items/1", 2), ("/items/2", 1)])
        );
        assert_eq!(
            (g.routes[1].method.as_str(), g.routes[1].requests()),
            ("HEAD", 1)
        );
        assert_eq!(g.skipped.len(), 1);
        assert_eq!(
            (g.skipped[0].route.as_str(), g.skipped[0].requests),
            ("/items/{id}", 1)
        );
        let allowed = group(&hits, &[], &["POST".into()]);
        assert!(allowed.skipped.is_empty());
        assert_eq!(allowed.routes.len(), 3);
    }

    #[test]
    fn graphql_reads_group_by_operation_with_their_bodies() {
        let post = |body: serde_json::Value| Hit {
            body: Some(body.to_string()),
            ..hit("POST", "/graphql/")
        };
        let list = "query ProjectList($n: Int) { projects(first: $n) { id } }";
        let first = post(serde_json::json!({"query": list, "variables": {"n": 5}}));
        let second = post(serde_json::json!({"query": list, "variables": {"n": 9}}));
        let hits = [
            first.clone(),
            second.clone(),
            first.clone(),
            post(serde_json::json!({"query": "{ labels { id } }"})),
            post(serde_json::json!({"query": "mutation Rename { rename { id } }"})),
            hit("POST", "/graphql/"),
            hit("POST", "/graphql/"),
            hit(
                "GET",
                "/graphql/?query=%7B%20labels%20%7B%20name%20%7D%20%7D",
            ),
        ];
        // --allow-method POST changes nothing: the reads need none, the rest stay skipped.
        for allowed in [vec![], vec!["POST".to_string()]] {
            let g = group(&hits, &[], &allowed);
            let routes: Vec<(&str, &str, u64)> = (g.routes.iter())
                .map(|r| (r.method.as_str(), r.template.as_str(), r.requests()))
                .collect();
            assert_eq!(
                routes,
                [
                    ("POST", "/graphql/ ProjectList", 3),
                    ("GET", "/graphql/ {labels}", 1),
                    ("POST", "/graphql/ {labels}", 1)
                ]
            );
            // One concrete request per body, most logged first.
            let urls = &g.routes[0].urls;
            assert_eq!(urls.len(), 2);
            assert_eq!((urls[0].requests, &urls[0].body), (2, &first.body));
            assert_eq!((urls[1].requests, &urls[1].body), (1, &second.body));
            let skipped: Vec<(&str, u64, &str)> = (g.skipped.iter())
                .map(|s| (s.route.as_str(), s.requests, s.reason.as_str()))
                .collect();
            assert_eq!(
                skipped,
                [
                    ("/graphql/", 2, graphql::NO_BODY),
                    (
                        "/graphql/ Rename",
                        1,
                        "a GraphQL mutation changes the app's data"
                    )
                ]
            );
        }
    }

    #[test]
    fn the_sample_follows_the_counts_and_sums_to_n() {
        let urls = counts(&[("/a", 5), ("/b", 3), ("/c", 2)]);
        assert_eq!(
            apportion(&urls, 10),
            counts(&[("/a", 5), ("/b", 3), ("/c", 2)])
        );
        // Quotas 3.5, 2.1, 1.4: floors 3, 2, 1 and the one left to the largest remainder.
        assert_eq!(
            apportion(&urls, 7),
            counts(&[("/a", 4), ("/b", 2), ("/c", 1)])
        );
        let sample = apportion(&urls, 1);
        assert_eq!(sample, counts(&[("/a", 1)]));
        assert!(apportion(&[], 5).is_empty());
        let many = counts(&[("/x", 1), ("/y", 1), ("/z", 1)]);
        let third: u64 = apportion(&many, 200).iter().map(|u| u.requests).sum();
        assert_eq!(third, 200);
    }
}
