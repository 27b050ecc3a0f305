//! The write side of a request: WAL, dirtied blocks, temp files (written and read back) and
//! a temporary table's blocks per request equal what pg_stat_statements shows for the same
//! requests sent without pgcost, and a GET that writes or a sort that spills is named.

mod support;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use pgcost_core::findings::FindingKind;
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::{Fixture, articles, corpus};
use support::{DB, TestDb, audit_config};

/// Requests in the session touch's burst and in its truth window: enough that the page's
/// occasional pruning record (about one per hundred updates of the row) weighs the same
/// in both.
const N: u64 = 1000;

/// The summed `pg_stat_statements` counter `column` of the entries whose text is `query`.
async fn counter(db: &TestDb, query: &str, column: &str) -> i64 {
    let admin = db.connect("postgres").await;
    let sql = format!(
        "SELECT coalesce(sum({column}), 0)::bigint FROM pg_stat_statements \
         WHERE query = $1 AND dbid = (SELECT oid FROM pg_database WHERE datname = $2)"
    );
    admin.query_one(&sql, &[&query, &DB]).await.unwrap().get(0)
}

/// `column` per request of `query` over `n` requests to `url`, sent by a plain HTTP client
/// with `C` in flight as pgcost sends them: the truth, with no pgcost in the way.
async fn truth(db: &TestDb, url: &str, query: &str, column: &str, n: u64) -> f64 {
    let client = reqwest::Client::new();
    let before = counter(db, query, column).await;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..C {
        let (client, url) = (client.clone(), url.to_string());
        workers.spawn(async move {
            for _ in 0..n / C {
                let response = client.get(&url).send().await.unwrap();
                assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
    (counter(db, query, column).await - before) as f64 / n as f64
}

/// Requests in flight, in the truth windows and in pgcost's bursts. One: updates of one row
/// that wait for each other write a varying amount of WAL (how often the page is pruned
/// depends on which snapshots are still open), and the comparison is of WAL per request.
const C: u64 = 1;

fn finding_kinds(r: &Report) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wal_and_temp_files_per_request_equal_the_truth_and_are_named() {
    // No timed checkpoint inside the test: the first change to a page after one logs the
    // whole page (a full-page image), which would land in one window and not the other.
    let db = TestDb::start_with(&[("checkpoint_timeout", "1h"), ("max_wal_size", "1GB")]).await;
    let setup = db.connect(DB).await;
    setup.batch_execute(corpus::SCHEMA).await.unwrap();
    setup.batch_execute("VACUUM ANALYZE").await.unwrap();
    let app = Fixture::start(&db.url(), 4).await;
    let touch_url = app.url("/corpus/session-touch");
    let sort_url = app.url("/corpus/sorted-report");
    // The first touch after the set-up's checkpoint logs its page whole: before both
    // windows.
    truth(&db, &touch_url, corpus::SESSION_TOUCH, "wal_bytes", 12).await;
    let wal_truth = truth(&db, &touch_url, corpus::SESSION_TOUCH, "wal_bytes", N).await;
    let temp_truth = truth(
        &db,
        &sort_url,
        corpus::SORTED_REPORT,
        "temp_blks_written",
        40,
    )
    .await;
    let temp_read_truth = truth(&db, &sort_url, corpus::SORTED_REPORT, "temp_blks_read", 40).await;
    let staging_url = app.url("/corpus/temp-staging");
    let local_column = "local_blks_dirtied";
    let local_truth = truth(&db, &staging_url, corpus::TEMP_STAGING, local_column, 40).await;
    assert!(
        wal_truth > 0.0 && temp_truth > 0.0 && temp_read_truth > 0.0 && local_truth > 0.0,
        "{wal_truth} {temp_truth} {temp_read_truth} {local_truth}"
    );

    let n = N.to_string();
    let configs = vec![
        audit_config(&db, touch_url, &["-n", &n, "-c", "1", "--warmup", "40"]),
        audit_config(&db, sort_url, &["-n", "200", "-c", "1", "--warmup", "40"]),
        audit_config(
            &db,
            staging_url,
            &["-n", "100", "-c", "1", "--warmup", "10"],
        ),
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let hidden = pgcost::progress::Progress::hidden();
    let reports = pgcost::measure::run_sequence(&configs, &hidden, stop, |_| {})
        .await
        .unwrap_or_else(|e| panic!("audit failed: {} ({:?})", e.message, e.hint));
    let (touch, sort, staging) = (&reports[0], &reports[1], &reports[2]);
    for r in &reports {
        support::assert_valid(r);
    }

    // The session touch: one row updated per request, and its WAL within 5% of the truth
    // (the page's occasional pruning record falls in one window or the other).
    let writes = touch
        .per_request
        .writes
        .as_ref()
        .expect("pg_stat_statements");
    let wal = writes.wal_bytes.expect("PG 13+");
    println!("WAL bytes per request: pgcost {wal:.1}, truth {wal_truth:.1}");
    assert!(
        (wal - wal_truth).abs() <= 0.05 * wal_truth,
        "{wal} vs {wal_truth}"
    );
    assert_eq!(touch.per_request.rows_written, 1.0);
    assert!(writes.wal_records.unwrap() >= 1.0, "{writes:?}");
    let row = (touch.statements.iter())
        .find(|s| s.query == corpus::SESSION_TOUCH)
        .unwrap();
    assert_eq!(row.writes_per_request.wal_bytes, Some(wal));
    assert_eq!(finding_kinds(touch)[0], FindingKind::WritesOnRead);
    assert_eq!(touch.findings[0].evidence["wal_bytes_per_request"], wal);

    // The spilling sort: the same temp blocks per request as the truth, exactly (the same
    // sort of the same rows every time).
    let temp = sort
        .per_request
        .writes
        .as_ref()
        .unwrap()
        .temp_blocks_written;
    println!("temp blocks per request: pgcost {temp}, truth {temp_truth}");
    assert_eq!(temp, temp_truth);
    // And the blocks the spill read back, which the truth counts the same way.
    let temp_read = sort.per_request.writes.as_ref().unwrap().temp_blocks_read;
    assert_eq!(temp_read, temp_read_truth);
    assert_eq!(
        finding_kinds(sort)[0],
        FindingKind::SpillsToDisk,
        "{:?}",
        sort.findings
    );
    assert_eq!(sort.per_request.rows_written, 0.0);

    // The temporary table filled on each request: its blocks changed per request equal the
    // truth exactly (the same 2,000 rows into a new table every time), and so does the
    // figure a budget limits.
    let local = staging
        .per_request
        .writes
        .as_ref()
        .unwrap()
        .local_blocks_dirtied;
    println!("local blocks dirtied per request: pgcost {local}, truth {local_truth}");
    assert_eq!(local, local_truth);
    // pg_stat_database does not see those rows: a table dropped in the transaction that
    // made it takes its row counts with it (what it counts are the catalog's rows).
    assert!(staging.per_request.rows_written < 2000.0);
    assert_eq!(
        sort.per_request
            .writes
            .as_ref()
            .unwrap()
            .local_blocks_dirtied,
        0.0
    );
    let figure = pgcost_core::report::figure::Figure::LocalBlocksDirtied;
    let read = figure.read(Some(&staging.load), &staging.per_request);
    assert_eq!(read, Some(local_truth));

    // Every view shows the write side.
    let table = pgcost::render::View::render(touch, pgcost::render::format::Format::Table).unwrap();
    assert!(table.contains("WAL bytes"), "{table}");
    assert!(
        table.contains("Statements that wrote (per request)"),
        "{table}"
    );
    let markdown =
        pgcost::render::View::render(sort, pgcost::render::format::Format::Markdown).unwrap();
    assert!(markdown.contains("temp blocks written"), "{markdown}");
    let json: serde_json::Value = serde_json::to_value(touch).unwrap();
    assert_eq!(json["per_request"]["writes"]["wal_bytes"], wal);
    assert!(
        json["totals"]["statement_writes"]["wal_bytes"]
            .as_i64()
            .unwrap()
            > 0
    );
}

/// Per-request values: a body whose slug must be unique gets `{{run}}` and `{{seq}}`, so
/// that every request inserts a row of its own (one fixed body fails from its second
/// request on), and a PUT takes ids that exist from `--data`. The figures are each
/// request's one INSERT or UPDATE, and the table holds what the requests sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_give_each_request_values_of_its_own() {
    let db = TestDb::start().await;
    let setup = db.connect(DB).await;
    setup.batch_execute(articles::SCHEMA).await.unwrap();
    let app = Fixture::start(&db.url(), 4).await;
    let body = r#"{"slug": "a-{{run}}-{{seq}}", "title": "made at {{now}}"}"#;
    let post = [
        "-X",
        "POST",
        "--allow-writes",
        "--body",
        body,
        "-n",
        "100",
        "-c",
        "4",
    ];
    let r = support::audit(&db, app.url("/articles"), &post).await;
    support::assert_valid(&r);
    assert_eq!(support::table(&r, "public.articles").rows_inserted, 1.0);
    assert_eq!(r.per_request.rows_written, 1.0, "{:?}", r.per_request);
    let slugs: Vec<String> = (setup.query("SELECT slug FROM articles", &[]).await.unwrap())
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        slugs.len() > 100,
        "the warm-up and the burst each inserted: {}",
        slugs.len()
    );
    let parts: Vec<Vec<&str>> = slugs.iter().map(|s| s.split('-').collect()).collect();
    let runs: std::collections::BTreeSet<&str> = parts.iter().map(|p| p[1]).collect();
    assert_eq!(runs.len(), 1, "one run id: {runs:?}");
    assert!(runs.iter().all(|r| r.len() == 8), "{runs:?}");
    let seqs: std::collections::BTreeSet<u64> =
        parts.iter().map(|p| p[2].parse().unwrap()).collect();
    assert_eq!(seqs.len(), slugs.len(), "every {{{{seq}}}} once");
    // The run names what it wrote, probe and warm-up included, and how to delete it: the
    // statement's range holds exactly the run's rows. pgcost did not run it.
    let named = r.notes.iter().find_map(|n| match n {
        Note::RunWrote { tables, .. } => Some(tables.clone()),
        _ => None,
    });
    let named = named.expect("a run with --allow-writes names its rows");
    let articles = named.iter().find(|t| t.table == "public.articles").unwrap();
    assert_eq!(articles.inserted, slugs.len() as i64, "{named:?}");
    assert_eq!((articles.updated, articles.deleted), (0, 0));
    let delete = articles
        .delete
        .as_deref()
        .expect("a delete for inserts only");
    let range = delete.split_once(" WHERE ").unwrap().1;
    let in_range: i64 = (setup
        .query_one(&format!("SELECT count(*) FROM articles WHERE {range}"), &[]))
    .await
    .unwrap()
    .get(0);
    assert_eq!(in_range, slugs.len() as i64, "{delete}");

    let dir = std::env::temp_dir().join(format!("pgcost-templates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ids: Vec<i64> = (setup.query("SELECT id FROM articles ORDER BY id LIMIT 10", &[]))
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let csv = dir.join("ids.csv");
    let lines: Vec<String> = ids.iter().map(i64::to_string).collect();
    std::fs::write(&csv, format!("id\n{}\n", lines.join("\n"))).unwrap();
    let csv = csv.display().to_string();
    let put = [
        "-X",
        "PUT",
        "--allow-writes",
        "--data",
        &csv,
        "--body",
        r#"{"title": "v{{seq}}"}"#,
        "-n",
        "60",
        "-c",
        "2",
    ];
    let r = support::audit(&db, app.url("/articles/{{data.id}}"), &put).await;
    // Every answer a 200: each id existed.
    support::assert_valid(&r);
    let articles = support::table(&r, "public.articles");
    assert_eq!((articles.rows_updated, articles.rows_inserted), (1.0, 0.0));
    let renamed: i64 = (setup.query_one(
        "SELECT count(*) FROM articles WHERE title LIKE 'v%' AND id = ANY($1)",
        &[&ids],
    ))
    .await
    .unwrap()
    .get(0);
    assert_eq!(renamed, 10, "each row of --data was sent");
    let named = r.notes.iter().find_map(|n| match n {
        Note::RunWrote { tables, .. } => Some(tables.clone()),
        _ => None,
    });
    let articles = named
        .unwrap()
        .into_iter()
        .find(|t| t.table == "public.articles")
        .unwrap();
    assert!(
        articles.updated > 60 && articles.inserted == 0,
        "{articles:?}"
    );
    assert_eq!(
        articles.delete, None,
        "updated rows are not the run's to delete"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
