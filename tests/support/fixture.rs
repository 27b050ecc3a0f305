//! The fixture app: axum over a persistent deadpool-postgres pool. Each endpoint's SQL is
//! written out here, so its cost per request is known by construction.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use deadpool_postgres::{Config, Pool, PoolConfig, Runtime};
use tokio_postgres::NoTls;

pub mod articles;
pub mod corpus;
pub mod error_answers;
pub mod graphql;
pub mod held_out;
pub mod kinds;
pub mod nodes;
pub mod orm_shapes;
pub mod periodic;
pub mod pgbouncer;
pub mod php_like;
pub mod plan_joins;
pub mod plan_switch;
pub mod planning;
pub mod rails_like;
pub mod rails_updated_on;
pub mod rare;
pub mod replica;
pub mod scale;
pub mod survey;

#[derive(Clone)]
struct App {
    pool: Pool,
    url: String,
    counter: Arc<AtomicU64>,
    recycle: Recycle,
}

/// When `/recycle` retires one pooled connection, as a connection age limit does: the
/// request whose number (counted from 1 by `served`) equals `at` closes its connection
/// after answering, and the next request opens a new one. `at` is 0 (never) by default.
#[derive(Clone, Default)]
pub struct Recycle {
    pub at: Arc<AtomicU64>,
    pub served: Arc<AtomicU64>,
}

impl Recycle {
    /// Retires a connection at the `n`th request from now.
    pub fn after(&self, n: u64) {
        self.served.store(0, Ordering::SeqCst);
        self.at.store(n, Ordering::SeqCst);
    }
}

type Reply = Result<String, (StatusCode, String)>;

fn fail(e: impl std::fmt::Display) -> (StatusCode, String) {
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

// Statements are prepared once per pooled connection (during the warm-up): an unprepared
// tokio-postgres query costs an extra round trip and an extra implicit transaction for its
// Parse/Sync, on every request.

/// One statement, one implicit transaction, a sequential scan of all `items` rows.
async fn scan(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id, owner, name FROM items")
        .await
        .map_err(fail)?;
    let rows = client.query(&stmt, &[]).await.map_err(fail)?;
    Ok(rows.len().to_string())
}

/// A scan like `/scan`'s, sent with static sqlcommenter tags (URL-encoded, as sqlcommenter
/// writes them): the route, the controller and the call site's file:line. Its columns come
/// in another order: `queryid` ignores comments, and the two must be two statements.
pub const TAGGED_SQL: &str = "SELECT id, name, owner FROM items /*code.filepath='app%2Fcontrollers%2Fitems.rb',code.lineno='12',controller='items',route='%2Ftagged'*/";

async fn tagged(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client.prepare_cached(TAGGED_SQL).await.map_err(fail)?;
    let rows = client.query(&stmt, &[]).await.map_err(fail)?;
    Ok(rows.len().to_string())
}

/// BEGIN; a scan of `items` returning one row; a scan of `small` returning all; COMMIT.
async fn tx(State(app): State<App>) -> Reply {
    let mut client = app.pool.get().await.map_err(fail)?;
    let tx = client.transaction().await.map_err(fail)?;
    let one = tx
        .query("SELECT name FROM items WHERE id = $1", &[&7i32])
        .await
        .map_err(fail)?;
    let all = tx
        .query("SELECT id, label FROM small", &[])
        .await
        .map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    Ok(format!("{} {}", one.len(), all.len()))
}

/// Request number i (counted by the app) scans `items` (i % 4) + 1 times: a mean of 2.5
/// over any run of a multiple of four requests.
async fn vary(State(app): State<App>) -> Reply {
    let i = app.counter.fetch_add(1, Ordering::SeqCst);
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id FROM items WHERE owner = $1")
        .await
        .map_err(fail)?;
    for _ in 0..(i % 4) + 1 {
        client.query(&stmt, &[&1i32]).await.map_err(fail)?;
    }
    Ok("ok".into())
}

/// A filter on the unindexed `customer_ref` of `plan_orders` (seeded by
/// `TestDb::seed_plan_orders`): a sequential scan of every row to return five.
async fn plans_filter(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id, total FROM plan_orders WHERE customer_ref = $1")
        .await
        .map_err(fail)?;
    let rows = client.query(&stmt, &[&"c42"]).await.map_err(fail)?;
    Ok(rows.len().to_string())
}

/// A page of the newest `plan_orders`, with no index on `created_at`: a top-N sort over
/// every row to return 25.
async fn plans_page(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id, total FROM plan_orders ORDER BY created_at DESC LIMIT 25")
        .await
        .map_err(fail)?;
    let rows = client.query(&stmt, &[]).await.map_err(fail)?;
    Ok(rows.len().to_string())
}

/// The scan of `/scan`; the request numbered `recycle.at` then closes its pooled
/// connection instead of returning it, so the pool opens a new one for a later request.
async fn recycle_scan(State(app): State<App>) -> Reply {
    let n = app.recycle.served.fetch_add(1, Ordering::SeqCst) + 1;
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id, owner, name FROM items")
        .await
        .map_err(fail)?;
    let rows = client.query(&stmt, &[]).await.map_err(fail)?;
    if n == app.recycle.at.load(Ordering::SeqCst) {
        drop(deadpool_postgres::Object::take(client));
    }
    Ok(rows.len().to_string())
}

/// Always rejects, before any database work.
async fn denied() -> (StatusCode, &'static str) {
    (StatusCode::UNAUTHORIZED, "no token")
}

/// The naive permission gate: fetch the user's whole permission set, then test one action.
async fn perms_naive(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached(
            "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id \
             WHERE m.user_id = $1",
        )
        .await
        .map_err(fail)?;
    let set: std::collections::HashSet<String> = client
        .query(&stmt, &[&1i32])
        .await
        .map_err(fail)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    Ok(set.contains("projects.read").to_string())
}

/// The same question asked as one EXISTS probe.
async fn perms_exists(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM group_grants g JOIN group_members m \
             ON m.group_id = g.group_id WHERE m.user_id = $1 AND g.action = $2)",
        )
        .await
        .map_err(fail)?;
    let row = client
        .query_one(&stmt, &[&1i32, &"projects.read"])
        .await
        .map_err(fail)?;
    Ok(row.get::<_, bool>(0).to_string())
}

/// N+1: list the ids of `small`, then fetch each label by id.
async fn n_plus_one(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    Ok(labels_one_by_one(&client).await?.to_string())
}

/// The N+1 of `/n-plus-one` on `client`: `SELECT id FROM small` (a sequential scan of its
/// [`SMALL`](super::SMALL) rows), then one `SELECT label FROM small WHERE id = $1` per id
/// (no index: each scans every row). Returns the labels fetched.
async fn labels_one_by_one(
    client: &deadpool_postgres::Client,
) -> Result<usize, (StatusCode, String)> {
    let list = client
        .prepare_cached("SELECT id FROM small")
        .await
        .map_err(fail)?;
    let one = client
        .prepare_cached("SELECT label FROM small WHERE id = $1")
        .await
        .map_err(fail)?;
    let mut labels = Vec::new();
    for row in client.query(&list, &[]).await.map_err(fail)? {
        let id: i32 = row.get(0);
        labels.push(
            client
                .query_one(&one, &[&id])
                .await
                .map_err(fail)?
                .get::<_, String>(0),
        );
    }
    Ok(labels.len())
}

/// A page whose statements change between versions, for the statement diff of
/// `check --baseline`. By default: one lookup in `small` and one in `items`. With `?v=2`:
/// the lookup in `items` twice, and a new count of `small`.
async fn evolve(State(app): State<App>, RawQuery(query): RawQuery) -> Reply {
    let v2 = query.as_deref() == Some("v=2");
    let client = app.pool.get().await.map_err(fail)?;
    let small = client
        .prepare_cached("SELECT label FROM small WHERE id = $1")
        .await
        .map_err(fail)?;
    let item = client
        .prepare_cached("SELECT name FROM items WHERE id = $1")
        .await
        .map_err(fail)?;
    client.query(&small, &[&1i32]).await.map_err(fail)?;
    for _ in 0..if v2 { 2 } else { 1 } {
        client.query(&item, &[&7i32]).await.map_err(fail)?;
    }
    if v2 {
        let count = client
            .prepare_cached("SELECT count(*) FROM small")
            .await
            .map_err(fail)?;
        client.query(&count, &[]).await.map_err(fail)?;
    }
    Ok("ok".into())
}

/// Answers after two seconds, without database work.
async fn slow() -> StatusCode {
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    StatusCode::NO_CONTENT
}

/// A statement of a different shape on every request (1 to 300 additions), to churn
/// pg_stat_statements entries.
async fn distinct(State(app): State<App>) -> Reply {
    let i = app.counter.fetch_add(1, Ordering::SeqCst);
    let client = app.pool.get().await.map_err(fail)?;
    let sum = vec!["1"; (i % 300) as usize + 1].join("+");
    client
        .simple_query(&format!("SELECT {sum}"))
        .await
        .map_err(fail)?;
    Ok("ok".into())
}

/// No database work at all: for load-driver benchmarks.
async fn nothing() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// One insert per request.
async fn write(State(app): State<App>) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("INSERT INTO hits DEFAULT VALUES")
        .await
        .map_err(fail)?;
    client.execute(&stmt, &[]).await.map_err(fail)?;
    Ok("ok".into())
}

/// A new connection per request, then one scan of `small`.
async fn fresh_connection(State(app): State<App>) -> Reply {
    let (client, conn) = tokio_postgres::connect(&app.url, NoTls)
        .await
        .map_err(fail)?;
    let driver = tokio::spawn(conn);
    let rows = client
        .query("SELECT id, label FROM small", &[])
        .await
        .map_err(fail)?;
    drop(client);
    let _ = driver.await;
    Ok(rows.len().to_string())
}

pub struct Fixture {
    pub addr: SocketAddr,
    /// The `/recycle` endpoint's knob.
    pub recycle: Recycle,
    server: tokio::task::JoinHandle<()>,
}

impl Fixture {
    /// Serves the fixture on a free loopback port with a pool of `pool_size` connections.
    pub async fn start(db_url: &str, pool_size: usize) -> Fixture {
        let mut cfg = Config::new();
        cfg.url = Some(db_url.to_string());
        cfg.pool = Some(PoolConfig::new(pool_size));
        let pool = cfg.create_pool(Some(Runtime::Tokio1), NoTls).unwrap();
        let app = App {
            pool,
            url: db_url.to_string(),
            counter: Arc::new(AtomicU64::new(0)),
            recycle: Recycle::default(),
        };
        let recycle = app.recycle.clone();
        let router = Router::new()
            .route("/scan", get(scan))
            .route("/tagged", get(tagged))
            .route("/tx", get(tx))
            .route("/vary", get(vary))
            .route("/denied", get(denied))
            .route("/write", post(write))
            .route("/fresh", get(fresh_connection))
            .route("/static", get(nothing).post(nothing))
            .route("/slow", get(slow))
            .route("/distinct", get(distinct))
            .route("/perms-naive", get(perms_naive))
            .route("/perms-exists", get(perms_exists))
            .route("/n-plus-one", get(n_plus_one))
            .route("/plans/filter", get(plans_filter))
            .route("/plans/page", get(plans_page))
            .route("/evolve", get(evolve))
            .route("/recycle", get(recycle_scan))
            .merge(auth_routes())
            .merge(articles::routes())
            .merge(corpus::routes())
            .merge(error_answers::routes())
            .merge(kinds::routes())
            .merge(held_out::routes())
            .merge(orm_shapes::routes())
            .merge(nodes::routes())
            .merge(pgbouncer::routes())
            .merge(php_like::routes())
            .merge(replica::routes())
            .merge(plan_switch::routes())
            .merge(rails_like::routes())
            .merge(rails_updated_on::routes())
            .merge(rare::routes())
            .merge(plan_joins::routes())
            .merge(planning::routes())
            .merge(scale::routes())
            .merge(survey::routes())
            .merge(graphql::routes())
            .with_state(app);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Fixture {
            addr,
            recycle,
            server,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.server.abort();
    }
}

// Authenticated endpoints. Each checks one kind of credential in memory and answers 401
// without touching the database when it is wrong; when it is right, it runs one known
// query, so an authenticated request costs exactly one statement.

/// Secrets the fixture app knows, and the tests authenticate with.
pub mod secrets {
    pub const JWT_SECRET: &str = "fixture-jwt-secret-5f1c2a9e";
    pub const JWT_ISSUER: &str = "https://fixture.pgcost.test";
    pub const JWT_AUDIENCE: &str = "pgcost-fixture";
    pub const RSA_PUBLIC_PEM: &str = include_str!("../keys/rsa-public.pem");
    pub const API_KEY: &str = "fixture-api-key-7d41e9b3";
    pub const BASIC_USER: &str = "alice";
    pub const BASIC_PASSWORD: &str = "fixture-basic-pw-93b7c1";
    pub const COOKIE_NAME: &str = "session";
    pub const COOKIE_VALUE: &str = "fixture-cookie-value-2c8e4d";
    pub const LOGIN_USER: &str = "bob";
    pub const LOGIN_PASSWORD: &str = "fixture-login-pw-61fa0d";
    /// The cookie the cookie login sets; its value is an HS256 JWT.
    pub const SESSION_COOKIE: &str = "sid";
}

type Unauthorized = (StatusCode, String);

fn unauthorized(why: &str) -> Unauthorized {
    (StatusCode::UNAUTHORIZED, why.to_string())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    header(headers, "authorization")?.strip_prefix("Bearer ")
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    header(headers, "cookie")?
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

/// What the app's own login issues: HS256 with issuer, audience and a 1 h expiry.
pub fn issue_token(subject: &str, ttl_seconds: u64) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = serde_json::json!({
        "sub": subject,
        "iss": secrets::JWT_ISSUER,
        "aud": secrets::JWT_AUDIENCE,
        "iat": now,
        "exp": now + ttl_seconds,
    });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secrets::JWT_SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// Verifies an HS256 token: signature, `iss`, `aud` and `exp`.
fn verify_hs256(token: &str) -> Result<(), Unauthorized> {
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.set_issuer(&[secrets::JWT_ISSUER]);
    validation.set_audience(&[secrets::JWT_AUDIENCE]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    let key = jsonwebtoken::DecodingKey::from_secret(secrets::JWT_SECRET.as_bytes()).unwrap();
    jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
        .map(|_| ())
        .map_err(|e| unauthorized(&format!("bad token: {e}")))
}

/// The one query of every authenticated endpoint.
async fn small_labels(app: &App) -> Reply {
    let client = app.pool.get().await.map_err(fail)?;
    let stmt = client
        .prepare_cached("SELECT id, label FROM small")
        .await
        .map_err(fail)?;
    Ok(client
        .query(&stmt, &[])
        .await
        .map_err(fail)?
        .len()
        .to_string())
}

async fn auth_hs256(State(app): State<App>, headers: HeaderMap) -> Reply {
    verify_hs256(bearer(&headers).ok_or_else(|| unauthorized("no bearer token"))?)?;
    small_labels(&app).await
}

async fn auth_rs256(State(app): State<App>, headers: HeaderMap) -> Reply {
    let token = bearer(&headers).ok_or_else(|| unauthorized("no bearer token"))?;
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(secrets::RSA_PUBLIC_PEM.as_bytes()).unwrap();
    let validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
        .map_err(|e| unauthorized(&format!("bad token: {e}")))?;
    small_labels(&app).await
}

async fn auth_cookie(State(app): State<App>, headers: HeaderMap) -> Reply {
    if cookie(&headers, secrets::COOKIE_NAME).as_deref() != Some(secrets::COOKIE_VALUE) {
        return Err(unauthorized("no session cookie"));
    }
    small_labels(&app).await
}

async fn auth_basic(State(app): State<App>, headers: HeaderMap) -> Reply {
    use base64::Engine;
    let expected = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        secrets::BASIC_USER,
        secrets::BASIC_PASSWORD
    ));
    let given = header(&headers, "authorization").and_then(|v| v.strip_prefix("Basic "));
    if given != Some(expected.as_str()) {
        return Err(unauthorized("bad basic credentials"));
    }
    small_labels(&app).await
}

async fn auth_api_key(State(app): State<App>, headers: HeaderMap) -> Reply {
    if header(&headers, "x-api-key") != Some(secrets::API_KEY) {
        return Err(unauthorized("bad api key"));
    }
    small_labels(&app).await
}

/// An API that serves an unknown or missing key as an anonymous user: 200 with an empty
/// list, without a query. The right key lists `small` with the one known query.
async fn auth_anonymous_fallback(State(app): State<App>, headers: HeaderMap) -> Reply {
    if header(&headers, "x-api-key") != Some(secrets::API_KEY) {
        return Ok("[]".into());
    }
    small_labels(&app).await
}

async fn auth_session(State(app): State<App>, headers: HeaderMap) -> Reply {
    let token = cookie(&headers, secrets::SESSION_COOKIE)
        .ok_or_else(|| unauthorized("no session cookie"))?;
    verify_hs256(&token)?;
    small_labels(&app).await
}

/// Checks the login body; a wrong password gets a 401 whose body, carelessly, echoes the
/// password and a token-shaped hint, so that the tests can prove pgcost hides both.
fn check_login(
    body: &serde_json::Value,
) -> Result<(), (StatusCode, axum::Json<serde_json::Value>)> {
    let user = body["user"].as_str().unwrap_or("");
    let password = body["password"].as_str().unwrap_or("");
    if user == secrets::LOGIN_USER && password == secrets::LOGIN_PASSWORD {
        return Ok(());
    }
    Err((
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({
            "error": format!("invalid credentials for {user}"),
            "password_received": password,
            "debug": format!("expected a token like {}", issue_token("nobody", 60)),
        })),
    ))
}

async fn login_json(
    axum::Json(body): axum::Json<serde_json::Value>,
) -> Result<axum::Json<serde_json::Value>, (StatusCode, axum::Json<serde_json::Value>)> {
    check_login(&body)?;
    Ok(axum::Json(serde_json::json!({
        "user": { "name": secrets::LOGIN_USER, "token": issue_token(secrets::LOGIN_USER, 3600) }
    })))
}

async fn login_cookie(
    axum::Json(body): axum::Json<serde_json::Value>,
) -> Result<(StatusCode, HeaderMap), (StatusCode, axum::Json<serde_json::Value>)> {
    check_login(&body)?;
    let mut headers = HeaderMap::new();
    let session = format!(
        "{}={}; Path=/; HttpOnly",
        secrets::SESSION_COOKIE,
        issue_token(secrets::LOGIN_USER, 3600)
    );
    headers.append("set-cookie", session.parse().unwrap());
    headers.append("set-cookie", "theme=dark; Path=/".parse().unwrap());
    headers.insert("location", "/".parse().unwrap());
    Ok((StatusCode::SEE_OTHER, headers))
}

fn auth_routes() -> Router<App> {
    Router::new()
        .route("/auth/hs256", get(auth_hs256))
        .route("/auth/rs256", get(auth_rs256))
        .route("/auth/cookie", get(auth_cookie))
        .route("/auth/basic", get(auth_basic))
        .route("/auth/api-key", get(auth_api_key))
        .route("/auth/session", get(auth_session))
        .route("/auth/anonymous-fallback", get(auth_anonymous_fallback))
        .route("/auth/login-json", post(login_json))
        .route("/auth/login-cookie", post(login_cookie))
}
