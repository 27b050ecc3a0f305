//! The survey fixture: the tracker of tests/fixtures/django_drf as a whole web app
//! (`tracker_site.survey_settings`), seeded, served by gunicorn with its own access log, and
//! driven with real traffic that becomes that log and a HAR of its GraphQL reads; with the
//! truth of each route, its statements per request, known by construction.
//!
//! The app is what a real Django app adds around its API (issue 41's app had all of it):
//!
//! - **UI pages** (`tracker_web.pages`), behind `login_required` and a database-backed
//!   session (a cookie). An anonymous caller, or one that sends only the API token, gets a
//!   302 to the login page: a survey that sends one credential to every route loses them.
//!   - `/ui/issues/`: the caller's issues: session, user, count, the newest 25 with their
//!     projects: 4 statements.
//!   - `/ui/projects/{id}/`: a project, its open issues' count, its milestones: 5
//!     statements; a missing id is a 404 after the session, the user and the lookup: 3.
//!   - `/ui/login/?next=/ui/issues/`: Django's LoginView form: no statement (a survey finds
//!     it static by statements). `POST /ui/login/` is the login itself, a write.
//! - **REST** (DRF), authenticated by session first, then by token (DRF's own order): the
//!   traffic sends the token, as API clients do. The token lookup is 1 statement.
//!   - `/api/issues/?status=open` (3), `/api/my/issues/` (4), `/api/milestones/{id}/issues/`
//!     (22: an N+1), `/api/projects/` (2): as tests/django_drf.rs measures them.
//!   - `/api/issues/{id}/`: 4 for another's issue (ModelBackend's two permission loads), 2
//!     for the caller's own.
//!   - `/api/my/issues/{id}/`: the lookup is filtered by assignee, so an issue of another
//!     user is a 404 (3 statements when found, with its labels; 2 when not): logged 404s
//!     that are real traffic with a real cost.
//!   - `/api/projects/{id}/` (2, found or not: 404 for id 42).
//!   - `/api/users/`: staff only: a 403 after the token lookup (1): rejected in the log too.
//! - **GraphQL** (`/graphql/`, graphene-django, token only, CSRF-exempt): the reads
//!   `ProjectList` (token, one aggregate: 2) and `IssueDetail(id)` (token, the issue with
//!   its project, its labels: 3), and the mutation `SetIssueStatus` (token, the issue, an
//!   UPDATE: 3), which sets an open issue open, so that no figure above moves. The access
//!   log has no bodies; the HAR has the reads, as a browser's sanitized export has them:
//!   without the `Authorization` and `Cookie` headers.
//! - **Static files** (`/static/tracker.css`, `/static/tracker.js`), served by Django: a
//!   survey counts them and never replays them.
//!
//! Sent as one credential for every route (the token), today's survey loses the UI
//! routes (the login redirect, "served as anonymous?"), the routes with logged 404s ("check
//! --url") and every GraphQL POST (skipped as writes): issue 41's failures, on this app.
//!
//! The statements per request are counted by construction from the views' code (the view
//! modules' docs say what each runs), each with the credential the route's row names.
//! tests/survey_drf.rs checks every one against pg_stat_statements, measured beside
//! ([`SurveyApp::measure`], which also gives the rows returned): one request at a time on
//! the workers' persistent connections, the connection set-up (`set_config` of the time
//! zone, once per new connection) left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::redirect::Policy;
use serde_json::{Value, json};

use super::TestDb;
use super::django::{Gunicorn, Site, require_packages};
use super::tracker::{self, TOKEN};

/// The Django project with the survey settings, and the database it uses on the test's
/// cluster (not tests/django_drf.rs's: the sessions table is only here).
pub const SITE: Site = Site {
    dir: "tests/fixtures/django_drf",
    settings: "tracker_site.survey_settings",
    wsgi: "tracker_site.wsgi:application",
    database: "survey_tracker",
};
/// User 1's password, for the login form (`user1`).
pub const PASSWORD: &str = "tracker-survey-password";
/// Django's PBKDF2 hash of [`PASSWORD`] with a fixed salt (`make_password`), seeded.
const PASSWORD_HASH: &str =
    "pbkdf2_sha256$1000000$surveyfixture1$9ItBgxH/XT8guMoZT3DpQ1q3Jb02LLbE07fn6Gm5oO8=";

/// The pgcost.toml credentials of issue 41, with the variables [`SurveyApp::auth_env`]
/// gives: the token for the API and GraphQL, the session cookie for the rest.
pub const AUTH_TOML: &str = r#"[[survey.auth]]
paths = ["/api/", "/graphql/"]
headers = { Authorization = "Token ${API_TOKEN}" }

[[survey.auth]]
paths = ["/"]
cookies = ["sessionid=${SESSION_ID}"]
"#;

/// Imports what the site needs, and prints Django's, DRF's and graphene-django's versions
/// (graphene_django itself cannot be imported without settings).
const IMPORTS: &str = "import django, psycopg2, gunicorn, rest_framework, graphene
import importlib.metadata as m
print(django.get_version(), rest_framework.VERSION, m.version('graphene-django'))";

/// The packages' versions, or a failing test that names `.ci/run`'s install step.
pub fn versions() -> String {
    require_packages(
        IMPORTS,
        "Django, psycopg2, gunicorn, djangorestframework and graphene-django",
        "Django==5.2.19 psycopg2-binary==2.9.13 gunicorn==23.0.0 \
         djangorestframework==3.16.1 graphene-django==3.2.3",
    )
}

/// What a request carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credential {
    /// `Cookie: sessionid=…` (a browser's requests).
    Session,
    /// `Authorization: Token …` (an API client's).
    Token,
    Anonymous,
}

/// What a route is, which says how a survey should treat it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A server-rendered page behind the login: anonymous, a 302 to the login page.
    Page,
    /// The login form (GET): no statement.
    LoginPage,
    /// The login itself (POST): a write, never replayed.
    LoginPost,
    Api,
    /// A GraphQL read, replayable with its body (from the HAR).
    GraphqlRead,
    /// A GraphQL mutation: a write, never replayed.
    GraphqlWrite,
    Static,
}

/// One concrete request of a route, as the log has it.
#[derive(Clone, Debug)]
pub struct Request {
    /// Path and query.
    pub target: String,
    /// The JSON body of a GraphQL POST.
    pub body: Option<String>,
    /// Its lines in the access log (and entries in the HAR, for a GraphQL read).
    pub logged: u32,
    /// Of those, the ones sent without a credential (the login flow's): a [`Kind::Page`]
    /// answered 302, a [`Kind::LoginPage`] 200.
    pub anonymous: u32,
    /// Its status with the route's credential: logged, and what a replay gets.
    pub status: u16,
    /// Statements per request with the route's credential, by construction; None for the
    /// login POST, a write not counted.
    pub statements: Option<u32>,
}

/// A route as a survey should group it, with the truth of each of its requests.
#[derive(Clone, Debug)]
pub struct Route {
    pub method: &'static str,
    /// The template the survey's grouping gives (`/ui/projects/{id}/`).
    pub template: &'static str,
    /// The GraphQL `operationName`.
    pub operation: Option<&'static str>,
    pub kind: Kind,
    /// The credential a survey must send it (the traffic sent it).
    pub credential: Credential,
    pub requests: Vec<Request>,
}

impl Route {
    /// Its lines in the access log.
    pub fn logged(&self) -> u32 {
        self.requests.iter().map(|r| r.logged).sum()
    }

    /// Statements per request at the logged mix of its requests.
    pub fn statements_per_request(&self) -> f64 {
        let sample: Vec<(&str, u64)> = (self.requests.iter())
            .map(|r| (r.target.as_str(), u64::from(r.logged)))
            .collect();
        self.statements_for_sample(&sample)
    }

    /// Statements per request of a replay that sent each target its count (a survey's
    /// `routes[].sample[]`: `url`, `requests`); a GraphQL route's targets are all
    /// `/graphql/`, with the same statements.
    pub fn statements_for_sample(&self, sample: &[(&str, u64)]) -> f64 {
        let (mut statements, mut requests) = (0, 0);
        for &(target, count) in sample {
            let request = (self.requests.iter())
                .find(|r| target.ends_with(&r.target))
                .unwrap_or_else(|| panic!("{target} is not a URL of {}", self.template));
            let per_request = request.statements.expect("a route that is replayed");
            statements += u64::from(per_request) * count;
            requests += count;
        }
        statements as f64 / requests as f64
    }
}

/// A request of the truth table: target, logged count, status, statements.
fn request(target: &str, logged: u32, status: u16, statements: u32) -> Request {
    Request {
        target: target.into(),
        body: None,
        logged,
        anonymous: 0,
        status,
        statements: Some(statements),
    }
}

fn route(
    method: &'static str,
    template: &'static str,
    kind: Kind,
    requests: Vec<Request>,
) -> Route {
    let credential = match kind {
        Kind::Api | Kind::GraphqlRead | Kind::GraphqlWrite => Credential::Token,
        _ => Credential::Session,
    };
    Route {
        method,
        template,
        operation: None,
        kind,
        credential,
        requests,
    }
}

/// The UI's routes. The login flow's anonymous requests come first in the log: a page
/// (302), the login form (200), the login (302).
fn ui_routes() -> Vec<Route> {
    let page = |target, logged, status, statements| Request {
        anonymous: u32::from(target == "/ui/issues/"),
        ..request(target, logged, status, statements)
    };
    let login_page = Request {
        anonymous: 1,
        ..request("/ui/login/?next=/ui/issues/", 1, 200, 0)
    };
    let login = Request {
        statements: None,
        ..request("/ui/login/", 1, 302, 0)
    };
    vec![
        route(
            "GET",
            "/ui/issues/",
            Kind::Page,
            vec![page("/ui/issues/", 12, 200, 4)],
        ),
        route(
            "GET",
            "/ui/projects/{id}/",
            Kind::Page,
            vec![
                page("/ui/projects/1/", 4, 200, 5),
                page("/ui/projects/2/", 2, 200, 5),
                page("/ui/projects/99/", 2, 404, 3),
            ],
        ),
        route(
            "GET",
            "/ui/login/?next={next}",
            Kind::LoginPage,
            vec![login_page],
        ),
        route("POST", "/ui/login/", Kind::LoginPost, vec![login]),
    ]
}

/// The REST API's routes, with the token.
fn api_routes() -> Vec<Route> {
    let api = |template, requests| route("GET", template, Kind::Api, requests);
    vec![
        api(
            "/api/issues/?status={status}",
            vec![request("/api/issues/?status=open", 10, 200, 3)],
        ),
        api(
            "/api/my/issues/",
            vec![request("/api/my/issues/", 6, 200, 4)],
        ),
        api(
            "/api/milestones/{id}/issues/",
            vec![
                request("/api/milestones/20/issues/", 2, 200, 22),
                request("/api/milestones/21/issues/", 1, 200, 22),
            ],
        ),
        api(
            "/api/issues/{id}/",
            vec![
                request("/api/issues/4242/", 2, 200, 4),
                request("/api/issues/19875/", 1, 200, 2),
            ],
        ),
        api(
            "/api/my/issues/{id}/",
            vec![
                request("/api/my/issues/19875/", 3, 200, 3),
                request("/api/my/issues/18000/", 1, 200, 3),
                request("/api/my/issues/4242/", 2, 404, 2),
                request("/api/my/issues/4243/", 1, 404, 2),
            ],
        ),
        api("/api/projects/", vec![request("/api/projects/", 4, 200, 2)]),
        api(
            "/api/projects/{id}/",
            vec![
                request("/api/projects/1/", 2, 200, 2),
                request("/api/projects/42/", 1, 404, 2),
            ],
        ),
        api("/api/users/", vec![request("/api/users/", 2, 403, 1)]),
    ]
}

/// The GraphQL documents.
pub const PROJECT_LIST: &str = "query ProjectList { projects { id key name openIssues } }";
pub const ISSUE_DETAIL: &str = "query IssueDetail($id: ID!) { issue(id: $id) { id title status \
                                project { key name } labels { name color } } }";
pub const SET_ISSUE_STATUS: &str = "mutation SetIssueStatus($id: ID!, $status: String!) { \
                                    setIssueStatus(id: $id, status: $status) { issue { id status } } }";

/// A GraphQL POST of `document` as `operation`, with `variables`.
fn graphql(
    operation: &str,
    document: &str,
    variables: Value,
    logged: u32,
    statements: u32,
) -> Request {
    let body = json!({"query": document, "operationName": operation, "variables": variables});
    Request {
        body: Some(body.to_string()),
        ..request("/graphql/", logged, 200, statements)
    }
}

fn graphql_routes() -> Vec<Route> {
    let operation = |name, kind, requests| Route {
        operation: Some(name),
        ..route("POST", "/graphql/", kind, requests)
    };
    vec![
        operation(
            "ProjectList",
            Kind::GraphqlRead,
            vec![graphql("ProjectList", PROJECT_LIST, json!({}), 3, 2)],
        ),
        operation(
            "IssueDetail",
            Kind::GraphqlRead,
            vec![
                graphql("IssueDetail", ISSUE_DETAIL, json!({"id": "4240"}), 1, 3),
                graphql("IssueDetail", ISSUE_DETAIL, json!({"id": "18000"}), 1, 3),
            ],
        ),
        operation(
            "SetIssueStatus",
            Kind::GraphqlWrite,
            vec![graphql(
                "SetIssueStatus",
                SET_ISSUE_STATUS,
                json!({"id": "4241", "status": "open"}),
                1,
                3,
            )],
        ),
    ]
}

/// Every route of the log, with its truth.
pub fn routes() -> Vec<Route> {
    let statics = ["/static/tracker.css", "/static/tracker.js"].map(|target| {
        route(
            "GET",
            target,
            Kind::Static,
            vec![request(target, 3, 200, 0)],
        )
    });
    let mut routes = ui_routes();
    routes.extend(api_routes());
    routes.extend(graphql_routes());
    routes.extend(statics);
    routes
}

/// The access log's lines by method, target and status, as the traffic writes them.
pub fn expected_log() -> BTreeMap<(String, String, u16), u32> {
    let mut lines = BTreeMap::new();
    for route in routes() {
        for request in &route.requests {
            let mut add = |status, count| {
                if count > 0 {
                    let key = (route.method.to_string(), request.target.clone(), status);
                    *lines.entry(key).or_default() += count;
                }
            };
            let anonymous_status = if route.kind == Kind::Page { 302 } else { 200 };
            add(anonymous_status, request.anonymous);
            add(request.status, request.logged - request.anonymous);
        }
    }
    lines
}

/// The app, seeded and served, after its traffic; its log and HAR written.
pub struct SurveyApp {
    pub server: Gunicorn,
    /// `http://127.0.0.1:PORT`, for `--base-url`.
    pub base_url: String,
    /// The site's database, for `--db`.
    pub db_url: String,
    /// User 1's API token.
    pub token: &'static str,
    /// User 1's session, from the login form (`Cookie: sessionid=…`).
    pub session_id: String,
    /// gunicorn's access log of the traffic.
    pub access_log: PathBuf,
    /// A HAR 1.2 of the traffic's GraphQL reads, with their bodies.
    pub har: PathBuf,
    /// Django's, DRF's and graphene-django's versions.
    pub versions: String,
}

impl SurveyApp {
    /// Checks the packages, seeds the site's database on `db` (with user 1's password),
    /// starts gunicorn with its access log in `dir`, drives the traffic of [`routes`]
    /// (failing on any status that is not the expected one) and writes the HAR in `dir`.
    pub async fn start(db: &TestDb, dir: &Path) -> SurveyApp {
        let versions = versions();
        let password = format!("UPDATE auth_user SET password = '{PASSWORD_HASH}' WHERE id = 1");
        tracker::seed(&SITE, db, &password).await;
        let access_log = dir.join("access.log");
        let errors = dir.join("gunicorn.log");
        let server =
            Gunicorn::start_logging(&SITE, db, errors, Some(&access_log), "/ui/login/", &[]).await;
        let mut app = SurveyApp {
            base_url: server.url(""),
            server,
            db_url: db.cluster.url(SITE.database),
            token: TOKEN,
            session_id: String::new(),
            access_log,
            har: dir.join("graphql.har"),
            versions,
        };
        let traffic = Traffic::new(&app.base_url);
        app.session_id = traffic.log_in().await;
        let har_entries = traffic.send_routes(&app).await;
        std::fs::write(&app.har, har(har_entries).to_string()).unwrap();
        app.wait_for_the_log().await;
        app
    }

    /// The headers of `credential` (none for [`Credential::Anonymous`]).
    pub fn headers(&self, credential: Credential) -> Vec<(&'static str, String)> {
        match credential {
            Credential::Session => vec![("Cookie", format!("sessionid={}", self.session_id))],
            Credential::Token => vec![("Authorization", format!("Token {}", self.token))],
            Credential::Anonymous => vec![],
        }
    }

    /// The environment [`AUTH_TOML`] expands: `API_TOKEN` and `SESSION_ID`.
    pub fn auth_env(&self) -> [(&'static str, String); 2] {
        [
            ("API_TOKEN", self.token.to_string()),
            ("SESSION_ID", self.session_id.clone()),
        ]
    }

    /// gunicorn writes a line after its response is sent: waits until the log has every
    /// line of the traffic.
    async fn wait_for_the_log(&self) {
        let expected: u32 = routes().iter().map(Route::logged).sum();
        for _ in 0..500 {
            let text = std::fs::read_to_string(&self.access_log).unwrap_or_default();
            if text.lines().count() >= expected as usize {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the access log lacks lines: {}", self.server.log());
    }

    /// What the app ran for one `request` of `route`, sent with the route's credential,
    /// measured beside it with pg_stat_statements (reset, the request, the sums of calls
    /// and rows), the connection set-up and the measure's own statements left out.
    pub async fn measure(&self, db: &TestDb, route: &Route, request: &Request) -> Beside {
        let site = db.connect(SITE.database).await;
        (site.batch_execute("SELECT pg_stat_statements_reset()"))
            .await
            .unwrap();
        let client = Traffic::new(&self.base_url);
        let status = (client.send(route, request, &self.headers(route.credential))).await;
        let what = format!("{} {}", route.method, request.target);
        assert_eq!(status, request.status, "{what}");
        let sums = "SELECT coalesce(sum(calls), 0)::bigint, coalesce(sum(rows), 0)::bigint
                    FROM pg_stat_statements
                    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND query NOT LIKE '%pg_stat_statements%'
                      AND query NOT LIKE 'SELECT set_config(%'";
        let row = site.query_one(sums, &[]).await.unwrap();
        Beside {
            statements: row.get(0),
            rows_returned: row.get(1),
        }
    }

    /// A route's statements and rows returned per request at the logged mix of its
    /// requests, each request measured beside once ([`SurveyApp::measure`]).
    pub async fn measure_route(&self, db: &TestDb, route: &Route) -> (f64, f64) {
        let (mut statements, mut rows, mut requests) = (0, 0, 0);
        for request in &route.requests {
            let beside = self.measure(db, route, request).await;
            let logged = i64::from(request.logged);
            statements += beside.statements * logged;
            rows += beside.rows_returned * logged;
            requests += logged;
        }
        let requests = requests as f64;
        (statements as f64 / requests, rows as f64 / requests)
    }
}

/// One request's cost, measured beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beside {
    pub statements: i64,
    pub rows_returned: i64,
}

/// The client that drives the traffic: no redirect followed, no cookie kept.
struct Traffic {
    client: reqwest::Client,
    base_url: String,
}

impl Traffic {
    fn new(base_url: &str) -> Traffic {
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .build()
            .unwrap();
        Traffic {
            client,
            base_url: base_url.into(),
        }
    }

    /// Sends `request` of `route` with `headers`; returns the status.
    async fn send(&self, route: &Route, request: &Request, headers: &[(&str, String)]) -> u16 {
        let url = format!("{}{}", self.base_url, request.target);
        let mut builder = match &request.body {
            Some(body) => (self.client.post(url))
                .header("Content-Type", "application/json")
                .body(body.clone()),
            None => self.client.request(route.method.parse().unwrap(), url),
        };
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        builder.send().await.unwrap().status().as_u16()
    }

    /// The login flow, as a browser goes through it: the page (302 to the login form),
    /// the form (200, its CSRF token and cookie), the POST (302 back, the session cookie).
    /// Returns the session id.
    async fn log_in(&self) -> String {
        let get = async |target: &str| {
            self.client
                .get(format!("{}{target}", self.base_url))
                .send()
                .await
                .unwrap()
        };
        let page = get("/ui/issues/").await;
        assert_eq!(page.status(), 302);
        let form_target = page.headers()["location"].to_str().unwrap().to_string();
        assert_eq!(form_target, "/ui/login/?next=/ui/issues/");
        let form = get(&form_target).await;
        assert_eq!(form.status(), 200);
        let csrf_cookie = cookie(&form, "csrftoken");
        let html = form.text().await.unwrap();
        let field = "name=\"csrfmiddlewaretoken\" value=\"";
        let start = html.find(field).expect("the form's CSRF token") + field.len();
        let token = &html[start..start + html[start..].find('"').unwrap()];
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("csrfmiddlewaretoken", token)
            .append_pair("username", "user1")
            .append_pair("password", PASSWORD)
            .append_pair("next", "/ui/issues/")
            .finish();
        let login = (self.client.post(format!("{}/ui/login/", self.base_url)))
            .header("Cookie", format!("csrftoken={csrf_cookie}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        assert_eq!(login.status(), 302, "the login form refused user1");
        cookie(&login, "sessionid")
    }

    /// Sends every route's logged requests but the login flow's, round-robin over the
    /// routes (each route's requests in turn), each with its route's credential; checks
    /// each status. Returns the HAR entries of the GraphQL reads.
    async fn send_routes(&self, app: &SurveyApp) -> Vec<Value> {
        let mut queues: Vec<Vec<(Route, Request)>> = routes()
            .into_iter()
            .filter(|route| route.kind != Kind::LoginPost)
            .map(|route| {
                let copies = (route.requests.iter()).flat_map(|r| {
                    std::iter::repeat_n(r.clone(), (r.logged - r.anonymous) as usize)
                });
                copies.map(|r| (route.clone(), r)).collect()
            })
            .collect();
        let mut entries = vec![];
        while queues.iter().any(|q| !q.is_empty()) {
            for queue in queues.iter_mut().filter(|q| !q.is_empty()) {
                let (route, request) = queue.remove(0);
                let status = self
                    .send(&route, &request, &app.headers(route.credential))
                    .await;
                assert_eq!(
                    status, request.status,
                    "{} {}",
                    route.method, request.target
                );
                if route.kind == Kind::GraphqlRead {
                    entries.push(har_entry(&self.base_url, &request));
                }
            }
        }
        entries
    }
}

/// The value of the cookie `name` that `response` sets.
fn cookie(response: &reqwest::Response, name: &str) -> String {
    let prefix = format!("{name}=");
    (response.headers().get_all("set-cookie").iter())
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix(&prefix))
        .map(|v| v.split(';').next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no {name} cookie: {response:?}"))
}

/// A HAR 1.2 entry of a GraphQL POST that was answered `request.status`.
fn har_entry(base_url: &str, request: &Request) -> Value {
    let body = request.body.clone().unwrap();
    let json_type = "application/json";
    let headers = json!([
        {"name": "Content-Type", "value": json_type},
        {"name": "Accept", "value": json_type},
    ]);
    json!({
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 0,
        "request": {
            "method": "POST", "url": format!("{base_url}{}", request.target),
            "httpVersion": "HTTP/1.1", "headers": headers, "queryString": [], "cookies": [],
            "headersSize": -1, "bodySize": body.len(),
            "postData": {"mimeType": json_type, "text": body},
        },
        "response": {
            "status": request.status, "statusText": "OK", "httpVersion": "HTTP/1.1",
            "headers": [], "cookies": [], "content": {"size": 0, "mimeType": json_type},
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
    })
}

fn har(entries: Vec<Value>) -> Value {
    let comment = "the GraphQL reads of tests/support/survey_app.rs's traffic";
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "pgcost tests", "version": "1"},
        "comment": comment,
        "entries": entries,
    }})
}
