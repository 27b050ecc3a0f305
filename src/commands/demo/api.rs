//! The demo API: a small multi-tenant service (axum over a deadpool-postgres pool) whose
//! `GET /api/v1/projects` sits behind a realistic per-request pipeline, in three variants.
//!
//! Pipeline: verify the JWT (no database), resolve the tenant, check the session, check
//! the module entitlement, check the permission gate (asked twice: by the middleware and
//! again by the handler, as real apps do), then list the projects.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use deadpool_postgres::{Object, Pool};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;

pub use pgcost_core::demo::Pipeline;

/// The action the endpoint's permission gate checks.
pub const ACTION: &str = "projects.read";
/// The module the endpoint's entitlement check needs.
pub const MODULE: &str = "projects";

pub const SQL_TENANT: &str = "SELECT id, status FROM tenants WHERE id = $1";
pub const SQL_SESSION: &str = "SELECT revoked_at IS NULL AND expires_at > now() AS live FROM sessions WHERE id = $1 AND user_id = $2";
pub const SQL_ENTITLEMENT: &str =
    "SELECT enabled FROM entitlements WHERE tenant_id = $1 AND module = $2";
pub const SQL_MEMBERSHIP: &str =
    "SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2";
pub const SQL_GROUP_GRANTS: &str = "SELECT g.action FROM group_grants g \
     JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1 AND g.tenant_id = $2";
pub const SQL_USER_GRANTS: &str =
    "SELECT action FROM user_grants WHERE user_id = $1 AND tenant_id = $2";
pub const SQL_CAN: &str = "SELECT EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $1 AND user_id = $2) \
     AND (EXISTS (SELECT 1 FROM group_grants g JOIN group_members m ON m.group_id = g.group_id \
                  WHERE m.user_id = $2 AND g.tenant_id = $1 AND g.action = $3) \
          OR EXISTS (SELECT 1 FROM user_grants WHERE tenant_id = $1 AND user_id = $2 AND action = $3))";
pub const SQL_PROJECTS: &str =
    "SELECT id, name FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT $2";

/// The route every statement is tagged with, as the router spells it.
pub const ROUTE: &str = "/{pipeline}/api/v1/projects";

/// Runs a statement tagged as sqlcommenter tags it: the route, and the call site from
/// `file!()` and `line!()`, so that `pgcost demo` names each statement's line.
macro_rules! query {
    ($client:expr, $sql:expr, $params:expr) => {
        tagged($client, $sql, (file!(), line!()), $params)
    };
}

/// JWT claims the demo API expects.
#[derive(Debug, Clone, serde::Serialize, Deserialize, schemars::JsonSchema)]
pub struct Claims {
    pub sub: String,
    pub org_id: i32,
    pub jti: String,
    pub exp: u64,
    pub iat: u64,
}

/// A per-process cache with a fixed time to live. The TTL is the real guarantee across
/// processes; a mutation only clears the local copy.
struct TtlCache<K, V> {
    ttl: Duration,
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: std::hash::Hash + Eq, V: Clone> TtlCache<K, V> {
    fn new(ttl: Duration) -> Self {
        TtlCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }
    fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().expect("cache lock");
        entries
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, v)| v.clone())
    }
    fn put(&self, key: K, value: V) {
        self.entries
            .lock()
            .expect("cache lock")
            .insert(key, (Instant::now(), value));
    }
}

#[derive(Clone)]
struct App {
    pool: Pool,
    secret: Arc<Vec<u8>>,
    /// Tenant routing: only active tenants are cached (the reachable path).
    tenants: Arc<TtlCache<i32, ()>>,
    /// Permission decisions, keyed tenant first; only grants are cached.
    decisions: Arc<TtlCache<(i32, i32, String), ()>>,
    actions: Arc<HashSet<String>>,
}

type Failure = (StatusCode, String);

fn internal(e: impl std::fmt::Display) -> Failure {
    (StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

/// `sql` with its sqlcommenter comment (keys sorted, values URL-encoded), run.
async fn tagged(
    client: &Object,
    sql: &str,
    (file, line): (&str, u32),
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<tokio_postgres::Row>, Failure> {
    let encode = |v: &str| utf8_percent_encode(v, NON_ALPHANUMERIC).to_string();
    let sql = format!(
        "{sql} /*code.filepath='{}',code.lineno='{line}',route='{}'*/",
        encode(file),
        encode(ROUTE)
    );
    let statement = client.prepare_cached(&sql).await.map_err(internal)?;
    client.query(&statement, params).await.map_err(internal)
}

fn verify(app: &App, headers: &HeaderMap) -> Result<Claims, Failure> {
    let unauthorized = |why: &str| (StatusCode::UNAUTHORIZED, why.to_string());
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| unauthorized("missing bearer token"))?;
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_required_spec_claims(&["exp", "sub"]);
    let key = DecodingKey::from_secret(&app.secret).map_err(|_| unauthorized("invalid key"))?;
    jsonwebtoken::decode::<Claims>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|_| unauthorized("invalid token"))
}

/// The per-request permission memo of the cached pipeline.
type Memo = HashMap<String, bool>;

async fn can(
    app: &App,
    client: &Object,
    pipeline: Pipeline,
    tenant: i32,
    user: i32,
    action: &str,
    memo: &mut Memo,
) -> Result<bool, Failure> {
    match pipeline {
        Pipeline::Naive => {
            let membership = query!(client, SQL_MEMBERSHIP, &[&tenant, &user]).await?;
            if membership.is_empty() {
                return Ok(false);
            }
            let mut set: HashSet<String> = query!(client, SQL_GROUP_GRANTS, &[&user, &tenant])
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            set.extend(
                query!(client, SQL_USER_GRANTS, &[&user, &tenant])
                    .await?
                    .iter()
                    .map(|r| r.get::<_, String>(0)),
            );
            Ok(set.contains(action))
        }
        Pipeline::Exists | Pipeline::Cached => {
            // Cheap in-memory gates first: an unknown action is never granted.
            if !app.actions.contains(action) {
                return Ok(false);
            }
            let key = (tenant, user, action.to_string());
            if pipeline == Pipeline::Cached {
                if let Some(answer) = memo.get(action) {
                    return Ok(*answer);
                }
                if app.decisions.get(&key).is_some() {
                    memo.insert(action.to_string(), true);
                    return Ok(true);
                }
            }
            let row = query!(client, SQL_CAN, &[&tenant, &user, &action]).await?;
            let allowed: bool = row.first().map(|r| r.get(0)).unwrap_or(false);
            if pipeline == Pipeline::Cached {
                memo.insert(action.to_string(), allowed);
                if allowed {
                    app.decisions.put(key, ());
                }
            }
            Ok(allowed)
        }
    }
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<i64>,
}

async fn projects(
    State(app): State<App>,
    Path(pipeline): Path<String>,
    Query(list): Query<ListQuery>,
    headers: HeaderMap,
) -> Result<String, Failure> {
    let pipeline = Pipeline::parse(&pipeline)
        .ok_or_else(|| (StatusCode::NOT_FOUND, format!("no pipeline {pipeline:?}")))?;
    let claims = verify(&app, &headers)?;
    let user: i32 = claims
        .sub
        .parse()
        .map_err(|_| (StatusCode::UNAUTHORIZED, "bad subject".to_string()))?;
    let tenant = claims.org_id;
    let client = app.pool.get().await.map_err(internal)?;

    let cached_tenant = pipeline == Pipeline::Cached && app.tenants.get(&tenant).is_some();
    if !cached_tenant {
        let rows = query!(&client, SQL_TENANT, &[&tenant]).await?;
        let active = rows
            .first()
            .map(|r| r.get::<_, String>("status") == "active")
            .unwrap_or(false);
        if !active {
            return Err((StatusCode::NOT_FOUND, "no such tenant".into()));
        }
        if pipeline == Pipeline::Cached {
            app.tenants.put(tenant, ());
        }
    }
    // Session revocation must cut access at once: never cached.
    let session = query!(&client, SQL_SESSION, &[&claims.jti, &user]).await?;
    if !session
        .first()
        .map(|r| r.get::<_, bool>("live"))
        .unwrap_or(false)
    {
        return Err((
            StatusCode::UNAUTHORIZED,
            "session revoked or expired".into(),
        ));
    }
    let entitled = query!(&client, SQL_ENTITLEMENT, &[&tenant, &MODULE]).await?;
    if !entitled
        .first()
        .map(|r| r.get::<_, bool>(0))
        .unwrap_or(false)
    {
        return Err((StatusCode::FORBIDDEN, "module not enabled".into()));
    }
    let mut memo = Memo::new();
    // The middleware's gate...
    if !can(&app, &client, pipeline, tenant, user, ACTION, &mut memo).await? {
        return Err((StatusCode::FORBIDDEN, "forbidden".into()));
    }
    // ...and the handler's own check of the same action.
    if !can(&app, &client, pipeline, tenant, user, ACTION, &mut memo).await? {
        return Err((StatusCode::FORBIDDEN, "forbidden".into()));
    }
    let limit = list.limit.unwrap_or(20).clamp(1, 100);
    let rows = query!(&client, SQL_PROJECTS, &[&tenant, &limit]).await?;
    let names: Vec<String> = rows.iter().map(|r| r.get::<_, String>("name")).collect();
    Ok(serde_json::json!({ "projects": names }).to_string())
}

/// A running demo API.
pub struct Api {
    pub addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Api {
    /// Serves the API on a free loopback port. `cache_ttl` is the cached pipeline's TTL.
    pub async fn start(pool: Pool, secret: Vec<u8>, cache_ttl: Duration) -> std::io::Result<Api> {
        let client = pool.get().await.map_err(std::io::Error::other)?;
        let actions = client
            .query("SELECT name FROM actions", &[])
            .await
            .map_err(std::io::Error::other)?
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect();
        drop(client);
        let app = App {
            pool,
            secret: Arc::new(secret),
            tenants: Arc::new(TtlCache::new(cache_ttl)),
            decisions: Arc::new(TtlCache::new(cache_ttl)),
            actions: Arc::new(actions),
        };
        let router = Router::new()
            .route("/{pipeline}/api/v1/projects", get(projects))
            .with_state(app);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(Api { addr, server })
    }

    pub fn url(&self, pipeline: Pipeline) -> String {
        format!(
            "http://{}/{}/api/v1/projects?limit=20",
            self.addr,
            pipeline.name()
        )
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        self.server.abort();
    }
}
