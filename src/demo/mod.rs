//! `pgcost demo`: a throwaway cluster, the bundled demo API, and an audit of each of its
//! three permission pipelines, compared side by side. Everything is removed afterwards.

pub mod api;

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Config as PoolConfig, Runtime};
use jsonwebtoken::{EncodingKey, Header};
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use tokio_postgres::NoTls;

use crate::cluster::Cluster;
use crate::config::AuditConfig;
use crate::conninfo;
use crate::error::{Error, Result};
use crate::findings::Thresholds;
use crate::load::RequestSpec;
use crate::progress::Progress;
use crate::render::{self, Format};
use crate::report::Report;
use api::{Api, Claims, Pipeline};

const SCHEMA: &str = include_str!("../../sql/demo_schema.sql");
const SEED: &str = include_str!("../../sql/demo_seed.sql");
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
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(|e| {
        setup_error(
            "connecting to the throwaway cluster",
            crate::error::describe_pg(&e).0,
        )
    })?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
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
    crate::progress::status(&format!("cluster: {}", cluster.dir().display()));
    spinner.set_message("loading the demo schema");
    let admin = connect(&cluster.url("postgres")).await?;
    admin
        .batch_execute("CREATE EXTENSION pg_stat_statements")
        .await
        .map_err(sql_error("creating pg_stat_statements"))?;
    admin
        .batch_execute(&format!("CREATE DATABASE {DB}"))
        .await
        .map_err(sql_error("creating the demo database"))?;
    let db_url = cluster.url(DB);
    let db = connect(&db_url).await?;
    db.batch_execute("CREATE EXTENSION pg_stat_statements")
        .await
        .map_err(sql_error("creating pg_stat_statements"))?;
    db.batch_execute(SCHEMA)
        .await
        .map_err(sql_error("sql/demo_schema.sql"))?;
    db.batch_execute(SEED)
        .await
        .map_err(sql_error("sql/demo_seed.sql"))?;

    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
    .into_bytes();
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
        EncodingKey::from_secret(&secret).map_err(|e| setup_error("the demo signing key", e))?;
    let token = jsonwebtoken::encode(&Header::default(), &claims, &key)
        .map_err(|e| setup_error("minting the demo token", e))?;

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

/// The audit configuration for one pipeline of a running demo.
pub fn audit_config(
    env: &Environment,
    pipeline: Pipeline,
    requests: u64,
    concurrency: u32,
) -> Result<AuditConfig> {
    let mut headers = HeaderMap::new();
    let mut value = HeaderValue::from_str(&format!("Bearer {}", env.token))
        .map_err(|e| setup_error("token", e))?;
    value.set_sensitive(true);
    headers.insert("authorization", value);
    let url = crate::config::parse_url(&env.api.url(pipeline))?;
    Ok(AuditConfig {
        db: conninfo::resolve(Some(&env.db_url), &|_: &str| None)?,
        admin_db: "postgres".into(),
        request: RequestSpec {
            url,
            method: reqwest::Method::GET,
            headers,
            body: None,
            timeout: Duration::from_secs(30),
        },
        requests,
        concurrency,
        // Ten requests per pooled connection: past the five executions after which Postgres
        // may switch a prepared statement to its generic plan, so no plan change falls
        // inside the measured window.
        warmup: 80,
        settle_timeout: Duration::from_secs(30),
        format: Format::Table,
        output: None,
        insecure: false,
        cacert: None,
        quiet: true,
        findings: Some(Thresholds::default()),
        auth: Default::default(),
    })
}

/// The demo's reports, one per pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct Pipelines {
    pub naive: Report,
    pub exists: Report,
    pub cached: Report,
}

/// `pgcost demo --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct DemoReport {
    pub pipelines: Pipelines,
}

impl DemoReport {
    pub fn all(&self) -> [(Pipeline, &Report); 3] {
        [
            (Pipeline::Naive, &self.pipelines.naive),
            (Pipeline::Exists, &self.pipelines.exists),
            (Pipeline::Cached, &self.pipelines.cached),
        ]
    }

    pub fn valid(&self) -> bool {
        self.all().iter().all(|(_, r)| r.valid)
    }
}

/// Audits the three pipelines of a running demo, one after another.
pub async fn audit_all(
    env: &Environment,
    requests: u64,
    concurrency: u32,
    progress: &Progress,
) -> Result<DemoReport> {
    let mut reports = Vec::new();
    for pipeline in Pipeline::ALL {
        crate::progress::status(&format!(
            "auditing the {} pipeline: {}",
            pipeline.name(),
            env.api.url(pipeline)
        ));
        let config = audit_config(env, pipeline, requests, concurrency)?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        reports.push(crate::audit::run(&config, progress, stop).await?);
    }
    let cached = reports.pop().expect("three reports");
    let exists = reports.pop().expect("three reports");
    let naive = reports.pop().expect("three reports");
    Ok(DemoReport {
        pipelines: Pipelines {
            naive,
            exists,
            cached,
        },
    })
}

/// A row of the comparison table: its label and how to read it off a report.
type Metric = (&'static str, Box<dyn Fn(&Report) -> String>);

/// The before/after table, then the naive run's findings.
pub fn render_comparison(demo: &DemoReport) -> String {
    let rows: Vec<Metric> = vec![
        (
            "transactions / request",
            Box::new(|r: &Report| format!("{:.2}", r.per_request.transactions)),
        ),
        (
            "statements / request",
            Box::new(|r: &Report| render::figure(r.per_request.statements)),
        ),
        (
            "rows read / request",
            Box::new(|r: &Report| format!("{:.2}", r.per_request.rows_read)),
        ),
        (
            "rows returned / request",
            Box::new(|r: &Report| render::figure(r.per_request.rows_returned)),
        ),
        (
            "p50 latency ms",
            Box::new(|r: &Report| format!("{:.2}", r.load.latency_ms.p50)),
        ),
        (
            "requests / second",
            Box::new(|r: &Report| format!("{:.0}", r.load.rps)),
        ),
        (
            "valid",
            Box::new(|r: &Report| if r.valid { "yes".into() } else { "NO".into() }),
        ),
    ];
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(
        ["GET /api/v1/projects?limit=20", "naive", "exists", "cached"].map(String::from),
    );
    for (label, value) in &rows {
        let mut record = vec![label.to_string()];
        record.extend(demo.all().iter().map(|(_, r)| value(r)));
        builder.push_record(record);
    }
    let mut table = builder.build();
    table.with(tabled::settings::Style::sharp());
    table.with(
        tabled::settings::Modify::new(tabled::settings::object::Columns::new(1..4))
            .with(tabled::settings::Alignment::right()),
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "What one request costs Postgres, per permission pipeline\n{table}\n"
    );
    for (pipeline, report) in demo.all() {
        for reason in &report.invalid_reasons {
            let _ = writeln!(out, "NOT VALID ({}): {reason}", pipeline.name());
        }
    }
    let naive = &demo.pipelines.naive;
    if naive.findings.is_empty() {
        let _ = writeln!(out, "The naive pipeline produced no findings.");
    } else {
        let _ = writeln!(
            out,
            "Findings of the naive run (most avoidable rows first)\n"
        );
        out.push_str(&render::findings_text(naive, 98));
    }
    out
}
