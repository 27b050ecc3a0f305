//! A connection-per-request app (two new connections per request, each with its set-up, as
//! a PHP app without persistent connections has) is measured exactly: pgcost's statements
//! per request, set-up and handler statements equal an independent count from the server's
//! statement log, and the findings read the set-up as the connections' cost.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use pgcost_core::findings::FindingKind;
use pgcost_core::report::Report;
use support::fixture::Fixture;
use support::fixture::php_like::{self, APP_NAME, PAGE_SIZE, SETUP_STATEMENTS};
use support::{ITEMS, TestDb, assert_valid, audit, table};

/// What the statement log says the endpoint ran: per backend (one per connection), the
/// statements in order.
struct Logged {
    by_backend: BTreeMap<String, Vec<(String, bool)>>,
}

impl Logged {
    /// Reads the lines `APP:PID:LOG:  statement: TEXT` (simple protocol) and `APP:PID:LOG:
    /// execute NAME: TEXT` (extended protocol) of the endpoint's connections.
    fn read(log: &str) -> Logged {
        let mut by_backend: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
        for line in log.lines() {
            let Some(rest) = line.strip_prefix(&format!("{APP_NAME}:")) else {
                continue;
            };
            let Some((pid, message)) = rest.split_once(':') else {
                continue;
            };
            let (text, extended) = if let Some(text) = message.strip_prefix("LOG:  statement: ") {
                (text, false)
            } else if let Some(named) = message.strip_prefix("LOG:  execute ") {
                (named.split_once(": ").map_or(named, |(_, text)| text), true)
            } else {
                continue;
            };
            by_backend
                .entry(pid.to_string())
                .or_default()
                .push((text.to_string(), extended));
        }
        Logged { by_backend }
    }

    fn connections(&self) -> usize {
        self.by_backend.len()
    }

    fn statements(&self) -> usize {
        self.by_backend.values().map(Vec::len).sum()
    }

    /// Transactions (`xact_commit`): each statement outside BEGIN ... COMMIT is one, and so
    /// is each block; a statement of the extended protocol outside a block is one more (the
    /// Sync after the driver's Parse, which the log does not show); and each connection is
    /// one more (the backend's start-up transaction, which reads the catalog).
    fn transactions(&self) -> usize {
        let mut count = 0;
        for statements in self.by_backend.values() {
            count += 1;
            let mut open = false;
            for (text, extended) in statements {
                match text.as_str() {
                    "BEGIN" => open = true,
                    "COMMIT" => {
                        open = false;
                        count += 1;
                    }
                    _ if !open => count += 1 + usize::from(*extended),
                    _ => {}
                }
            }
        }
        count
    }

    /// The set-up: every statement of a connection before its last (the handler's).
    fn setup_texts(&self) -> BTreeSet<&str> {
        (self.by_backend.values())
            .flat_map(|s| s[..s.len() - 1].iter().map(|(text, _)| text.as_str()))
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_per_request_app_is_exact_against_the_statement_log() {
    let db = TestDb::start_with(&[("log_statement", "all"), ("log_line_prefix", "%a:%p:")]).await;
    let app = Fixture::start(&db.url(), 2).await;
    let r = audit(
        &db,
        app.url("/php-like"),
        &["-n", "40", "-c", "2", "--warmup", "4"],
    )
    .await;
    assert_valid(&r);
    let log = std::fs::read_to_string(db.cluster.dir().join("server.log")).unwrap();
    let logged = Logged::read(&log);

    // The log's requests: every request opened two connections and ran one handler
    // query on each (warm-up and window alike, so the log's per-request figures are the
    // window's).
    let connections = logged.connections();
    assert_eq!(connections % 2, 0, "{connections} connections");
    let requests = (connections / 2) as f64;
    let warmed = (r.load.warmup_done.as_ref()).map_or(r.load.warmup, |w| w.requests);
    assert_eq!(requests, (r.load.requests + warmed) as f64);
    let statements = logged.statements() as f64 / requests;
    let handler = connections as f64 / requests;
    let setup_statements = statements - handler;
    assert_eq!(setup_statements, 2.0 * SETUP_STATEMENTS as f64);

    let p = &r.per_request;
    assert_eq!(p.new_sessions, Some(2.0), "{p:?}");
    assert_eq!(p.statements, Some(statements), "{p:?}");
    assert_eq!(
        p.transactions,
        logged.transactions() as f64 / requests,
        "{p:?}"
    );
    // The handler's page and total each scan all of `items` (no index).
    assert_eq!(table(&r, "public.items").seq_rows_read, 2.0 * ITEMS as f64);
    let setup = p.setup.as_ref().expect("the set-up is recognised");
    assert_eq!(setup.new_connections_per_request, 2.0);
    assert_eq!(setup.statements_per_request, setup_statements);
    assert_eq!(
        setup.statements_per_connection,
        setup_statements / 2.0,
        "{setup:?}"
    );
    assert_eq!(
        p.statements.unwrap() - setup.statements_per_request,
        handler
    );
    assert_eq!(setup.share_of_statements, setup_statements / statements);
    assert_eq!(setup.statements.len(), logged.setup_texts().len());
    assert!(
        (setup.statements.iter()).all(|s| !s.query.contains("items")),
        "{setup:?}"
    );
    // The handler's rows: the page and its total.
    assert_eq!(
        p.rows_returned.unwrap() - setup.rows_returned_per_request,
        PAGE_SIZE as f64 + 1.0
    );
    // The set-up's rows read are the rows read outside the app's tables: on new
    // connections, exactly what the test counts itself. On connections already set up,
    // the handler's planning still reads a few catalog rows: those a pool would not save.
    let truth = set_up_rows_read(&db.url()).await;
    eprintln!(
        "set-up rows read per request: pgcost {}, the test's count {} on new connections \
         ({} outside the handler's tables on set-up ones)",
        setup.rows_read_per_request, truth.fresh, truth.pooled
    );
    assert_eq!(setup.rows_read_per_request, truth.fresh);
    assert!(truth.pooled < 0.1 * truth.fresh, "{}", truth.pooled);
    findings_read_the_set_up_right(&r);
    eprintln!(
        "php-like: {statements} statements per request, {setup_statements} of them set-up; \
         rows read {} per request, {} of them set-up ({:.0}%)",
        p.rows_read,
        setup.rows_read_per_request,
        setup.share_of_rows_read * 100.0
    );
}

/// Requests the test makes itself, counted in `pg_stat_database`.
const TRUTH_REQUESTS: i64 = 20;

/// Rows read per request outside the handler's tables, counted by the test itself in
/// `pg_stat_database`: `fresh` for requests on new connections (as the endpoint makes
/// them), `pooled` for the same handler queries on two connections already set up.
struct SetUpTruth {
    fresh: f64,
    pooled: f64,
}

/// Each count over [`TRUTH_REQUESTS`] requests the test makes, less the rows its own read
/// of the count costs (measured alone: each read is made by a new connection, whose rows
/// land in the next read), less the handler's scans of `items` (both queries read all of
/// it).
async fn set_up_rows_read(url: &str) -> SetUpTruth {
    let reads = rows_read_over(url, || async {}).await;
    let fresh = rows_read_over(url, || async {
        for _ in 0..TRUTH_REQUESTS {
            php_like::request(url).await.unwrap();
        }
    })
    .await;
    let (first, first_driver) = php_like::connect(url).await.unwrap();
    let (second, second_driver) = php_like::connect(url).await.unwrap();
    php_like::handler(&first, &second).await.unwrap();
    let pooled = rows_read_over(url, || async {
        for _ in 0..TRUTH_REQUESTS {
            php_like::handler(&first, &second).await.unwrap();
        }
        // Closed: each backend publishes its counters as it exits.
        drop((first, second));
        let _ = (first_driver.await, second_driver.await);
    })
    .await;
    let per_request =
        |rows: i64| (rows - reads) as f64 / TRUTH_REQUESTS as f64 - 2.0 * ITEMS as f64;
    SetUpTruth {
        fresh: per_request(fresh),
        pooled: per_request(pooled),
    }
}

/// `tup_returned` of the database at `url` moved by `work`.
async fn rows_read_over<F: std::future::Future<Output = ()>>(
    url: &str,
    work: impl FnOnce() -> F,
) -> i64 {
    let before = tup_returned(url).await;
    work().await;
    tup_returned(url).await - before
}

/// Read once every backend has published its counters: exited, or idle past the stats
/// interval (1 s).
async fn tup_returned(url: &str) -> i64 {
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT tup_returned FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    drop(client);
    let _ = driver.await;
    row.get(0)
}

/// `connection_per_request` first, saving the whole set-up; nothing else on it.
fn findings_read_the_set_up_right(r: &Report) {
    let setup = r.per_request.setup.as_ref().unwrap();
    let first = &r.findings[0];
    assert_eq!(
        first.kind,
        FindingKind::ConnectionPerRequest,
        "{:?}",
        r.findings
    );
    assert_eq!(
        first.saves_per_request.statements,
        setup.statements_per_request
    );
    assert_eq!(
        first.saves_per_request.rows_read,
        setup.rows_read_per_request
    );
    assert!(
        first.suggestion.contains("PgBouncer"),
        "{}",
        first.suggestion
    );
    assert!(
        first.suggestion.contains(php_like::TYPES),
        "{}",
        first.suggestion
    );
    for f in &r.findings {
        assert!(
            !matches!(
                f.kind,
                FindingKind::RepeatedStatement
                    | FindingKind::NPlusOne
                    | FindingKind::CacheCandidate
                    | FindingKind::RoundTrips
            ),
            "{f:?}"
        );
    }
}
