//! The demo's environment: a throwaway cluster, the seeded database, a token, the API,
//! and the audit configuration of each pipeline.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Config as PoolConfig, Runtime};
use jsonwebtoken::{EncodingKey, Header};
use tokio_postgres::NoTls;

use super::api::{Api, Claims, Pipeline};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::flags::spelling::defaults;
use crate::flags::{AuditArgs, BurstArgs, CountArgs, LoadArgs, OutputArgs, TargetArgs};
use crate::postgres::cluster::Cluster;
use crate::progress::Progress;

const SCHEMA: &str = include_str!("../../../sql/demo_schema.sql");
const SEED: &str = include_str!("../../../sql/demo_seed.sql");
/// The demo database's name.
pub const DB: &str = "demo";
/// The demo user: an administrator of tenant 1.
pub const USER_ID: i32 = 1;
pub const TENANT_ID: i32 = 1;

/// A running demo: cluster, seeded database, API and a valid token. Dropping it stops
/// the API and the server and deletes the cluster's directory.
pub struct Environment {
    pub api: Api,
    pub token: String,
    pub db_url: String,
    // Dropped last: the API's pool must close before the server stops.
    pub cluster: Cluster,
}

fn setup_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::usage(format!("demo setup: {what}: {e}"))
}

fn sql_error(what: &str) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
    move |e| setup_error(what, crate::error::describe_pg(&e).0)
}

async fn connect(url: &str) -> Result<tokio_postgres::Client> {
    let (client, connection) = (tokio_postgres::connect(url, NoTls).await)
        .map_err(sql_error("connecting to the throwaway cluster"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Installs pg_stat_statements in the database a client is connected to.
const EXTENSION: (&str, &str) = (
    "CREATE EXTENSION pg_stat_statements",
    "creating pg_stat_statements",
);

/// Runs each batch of statements on `client`; a failure says what the batch was doing.
async fn batches(client: &tokio_postgres::Client, batches: &[(&str, &str)]) -> Result<()> {
    for (sql, what) in batches {
        client.batch_execute(sql).await.map_err(sql_error(what))?;
    }
    Ok(())
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Starts the cluster, loads the schema and seed, mints a token and starts the API.
pub async fn setup(cache_ttl: Duration, progress: &Progress) -> Result<Environment> {
    let spinner = progress.spinner("starting a throwaway PostgreSQL cluster".into());
    let cluster = tokio::task::spawn_blocking(|| Cluster::start(&[]))
        .await
        .map_err(|e| setup_error("starting the cluster", e))??;
    progress.status(&format!("cluster: {}", cluster.dir().display()));
    spinner.set_message("loading the demo schema");
    let admin = connect(&cluster.url("postgres")).await?;
    let create = format!("CREATE DATABASE {DB}");
    let for_admin = [EXTENSION, (create.as_str(), "creating the demo database")];
    batches(&admin, &for_admin).await?;
    let db_url = cluster.url(DB);
    let db = connect(&db_url).await?;
    let for_db = [
        EXTENSION,
        (SCHEMA, "sql/demo_schema.sql"),
        (SEED, "sql/demo_seed.sql"),
    ];
    batches(&db, &for_db).await?;

    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
    .into_bytes();
    let token = mint_token(&db, &secret).await?;

    let mut pool_config = PoolConfig::new();
    pool_config.url = Some(db_url.clone());
    pool_config.pool = Some(deadpool_postgres::PoolConfig::new(8));
    let pool = pool_config
        .create_pool(Some(Runtime::Tokio1), NoTls)
        .map_err(|e| setup_error("creating the API's pool", e))?;
    spinner.set_message("starting the demo API");
    let api = Api::start(pool, secret, cache_ttl)
        .await
        .map_err(|e| setup_error("starting the demo API", e))?;
    spinner.finish_and_clear();
    Ok(Environment {
        api,
        token,
        db_url,
        cluster,
    })
}

/// A demo session for the demo user, and the JWT that names it, signed with `secret`.
async fn mint_token(db: &tokio_postgres::Client, secret: &[u8]) -> Result<String> {
    let jti = uuid::Uuid::new_v4().to_string();
    db.execute(
        "INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, $2, now() + interval '2 hours')",
        &[&jti, &USER_ID],
    )
    .await
    .map_err(sql_error("creating the demo session"))?;
    let now = now_seconds();
    let claims = Claims {
        sub: USER_ID.to_string(),
        org_id: TENANT_ID,
        jti,
        iat: now,
        exp: now + 7200,
    };
    let key =
        EncodingKey::from_secret(secret).map_err(|e| setup_error("the demo signing key", e))?;
    jsonwebtoken::encode(&Header::default(), &claims, &key)
        .map_err(|e| setup_error("minting the demo token", e))
}

/// The audit configuration for one pipeline of a running demo: the flags `pgcost audit`
/// would take for it, checked by the same function.
pub fn audit_config(
    env: &Environment,
    pipeline: Pipeline,
    requests: u64,
    concurrency: u32,
) -> Result<AuditConfig> {
    let args = AuditArgs {
        url: env.api.url(pipeline),
        target: TargetArgs {
            db: vec![env.db_url.clone()],
            settle_timeout: "30s".into(),
            ..defaults()
        },
        load: LoadArgs {
            burst: BurstArgs {
                count: CountArgs {
                    requests: Some(requests),
                },
                concurrency,
            },
            // Ten requests per pooled connection: past the five executions after which
            // Postgres may switch a prepared statement to its generic plan (the warm-up then
            // goes on to a steady state).
            warmup: 80,
            headers: vec![format!("Authorization: Bearer {}", env.token)],
            timeout: "30s".into(),
            ..defaults()
        },
        findings: defaults(),
        output: OutputArgs {
            quiet: true,
            ..defaults()
        },
        auth: defaults(),
        background: defaults(),
    };
    AuditConfig::from_args(&args, &|_: &str| None)
}
