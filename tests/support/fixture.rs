//! The fixture app: axum over a persistent deadpool-postgres pool. Each endpoint's SQL is
//! written out here, so its cost per request is known by construction.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use deadpool_postgres::{Config, Pool, PoolConfig, Runtime};
use tokio_postgres::NoTls;

#[derive(Clone)]
struct App {
    pool: Pool,
    url: String,
    counter: Arc<AtomicU64>,
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
    Ok(labels.len().to_string())
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
        };
        let router = Router::new()
            .route("/scan", get(scan))
            .route("/tx", get(tx))
            .route("/vary", get(vary))
            .route("/denied", get(denied))
            .route("/write", post(write))
            .route("/fresh", get(fresh_connection))
            .route("/static", get(nothing))
            .route("/perms-naive", get(perms_naive))
            .route("/perms-exists", get(perms_exists))
            .route("/n-plus-one", get(n_plus_one))
            .with_state(app);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Fixture { addr, server }
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
