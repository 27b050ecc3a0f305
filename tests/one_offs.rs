//! One-offs inside the window: a few requests that do what the others do not. A query run
//! once while the burst runs, or an ANALYZE that makes the app's backends reload their
//! catalog caches, leaves a remainder of a few events over the requests; pgcost measures
//! that window again, and the figures it reports are exact. Rare work that the app does in
//! every window (one request in 50) is kept, taken out of the figures, which are every
//! request's own, and given apart in the note `rare_events`.

mod support;

use std::time::{Duration, Instant};

use pgcost_core::report::model::notes::Note;
use pgcost_core::report::model::odd_events::{RareCost, RareFigure};
use support::fixture::{Fixture, rare};
use support::{ITEMS, TestDb, assert_valid, audit, table};

/// The statement of the fixture's `/scan`, as pg_stat_statements shows it.
const SCAN: &str = "SELECT id, owner, name FROM items";
/// A burst starts after this long without a call of the watched statement.
const QUIET: Duration = Duration::from_secs(3);

/// Runs `sql` once, over a connection of the app's own role to the target opened now, as
/// soon as the second run of calls of `watched` after a quiet spell starts: the first is
/// the warm-up, the second the measured burst (the settle wait before it is the spell).
/// Returns the connection once it ran (kept open: one that closed in the window would be
/// churn), `None` when it never did.
async fn once_in_the_burst(
    db: &TestDb,
    watched: &'static str,
    sql: &'static str,
) -> tokio::task::JoinHandle<Option<tokio_postgres::Client>> {
    let side = db.connect(support::DB).await;
    let watch = db.connect("postgres").await;
    tokio::spawn(async move {
        let calls = "SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements WHERE query = $1";
        // Quiet since long before: the warm-up's first call is the first start.
        let long_ago = Instant::now()
            .checked_sub(QUIET)
            .unwrap_or_else(Instant::now);
        let (mut last, mut changed, mut starts) = (0i64, long_ago, 0);
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            let now: i64 = watch.query_one(calls, &[&watched]).await.unwrap().get(0);
            if now != last {
                if changed.elapsed() >= QUIET {
                    starts += 1;
                    if starts == 2 {
                        side.batch_execute(sql).await.unwrap();
                        return Some(side);
                    }
                }
                (last, changed) = (now, Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        None
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_run_once_in_the_window_is_measured_again() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 8).await;
    let one_off = once_in_the_burst(&db, SCAN, "SELECT count(*) FROM items").await;
    let r = audit(&db, app.url("/scan"), &["-n", "200", "-c", "8"]).await;
    let side = one_off.await.unwrap();
    assert!(side.is_some(), "the one-off never ran");
    assert_valid(&r);
    let p = &r.per_request;
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.rows_read, ITEMS as f64, "{p:?}");
    assert_eq!(table(&r, "public.items").seq_scans, 1.0);
    assert_eq!(r.windows.discarded, 1, "{:?}", r.windows);
    let reason = &r.windows.reasons[0];
    assert!(
        reason.contains("1 sequential scan(s) of public.items more than 1 per request"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_analyze_in_the_window_shows_in_the_catalog_and_is_measured_again() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 8).await;
    let one_off = once_in_the_burst(&db, SCAN, "ANALYZE items").await;
    let r = audit(&db, app.url("/scan"), &["-n", "200", "-c", "8"]).await;
    let side = one_off.await.unwrap();
    assert!(side.is_some(), "the ANALYZE never ran");
    assert_valid(&r);
    let p = &r.per_request;
    assert_eq!(
        (p.transactions, p.statements, p.rows_read),
        (1.0, Some(1.0), ITEMS as f64),
        "{p:?}"
    );
    assert_eq!(r.windows.discarded, 1, "{:?}", r.windows);
    // The app's backends reload what they had cached of `items` (its pg_class row, its
    // columns, its statistics): scans of the catalog, which a warm backend never makes.
    let reason = &r.windows.reasons[0];
    assert!(reason.contains("catalog scan(s) of pg_"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rare_work_of_the_app_in_every_window_is_kept_with_a_note() {
    let db = TestDb::start().await;
    // One connection: once its first rare request has prepared the count and loaded what
    // it needs of `small`, every window holds the same four rare requests.
    let app = Fixture::start(&db.url(), 1).await;
    let requests = 200;
    let r = audit(
        &db,
        app.url(rare::PATH),
        &["-n", "200", "-c", "2", "--retries", "2"],
    )
    .await;
    assert!(r.valid, "{:?} {:?}", r.invalid_reasons, r.windows);
    assert_valid(&r);
    // Every request's own cost per request; the counts are taken out, and given apart.
    let ((statements, rows_read, rows_returned), counts) = rare::truth(requests);
    let p = &r.per_request;
    assert_eq!(p.transactions, statements, "{p:?}");
    assert_eq!(p.statements, Some(statements), "{p:?}");
    assert_eq!(p.rows_read, rows_read, "{p:?}");
    assert_eq!(p.rows_returned, Some(rows_returned), "{p:?}");
    // The first window also holds the rare path's first run (the warm-up's 40 requests
    // have none), cold: a one-off beside the rare work. The next two agree.
    assert_eq!(r.windows.discarded, 2, "{:?}", r.windows);
    let note = (r.notes.iter())
        .find_map(|n| match n {
            Note::RareEvents(work) => Some((work.windows, work.events.clone(), work.spread)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no rare_events note: {:?}", r.notes));
    let cost = taken_out(&r);
    let totals = |f: Option<RareFigure>| f.map(|f| f.total);
    assert_eq!(
        (
            cost.figures.transactions.unwrap().total,
            totals(cost.figures.statements)
        ),
        (counts.0, Some(counts.0)),
        "{cost:?}"
    );
    assert_eq!(cost.figures.rows_read.unwrap().total, counts.1, "{cost:?}");
    assert_eq!(
        totals(cost.figures.rows_returned),
        Some(counts.2),
        "{cost:?}"
    );
    assert!(cost.figures.rows_read.unwrap().per_minute > 0.0, "{cost:?}");
    assert_eq!(note.0, 3);
    assert!(
        note.2.is_zero(),
        "the same rare requests in both windows: {:?}",
        note.2
    );
    let described: Vec<String> = note.1.iter().map(ToString::to_string).collect();
    assert!(
        described.contains(
            &"4 sequential scan(s) of public.small more than 0 per request (40 rows)".to_string()
        ),
        "{described:?}"
    );
}

/// Rare work on a clock (a token touched at most once in 3 s, on a request): every window
/// longer than that has a touch, so measuring again cannot remove it. The second window
/// that shows it in the same counters is kept, without the retry left; the touches are
/// taken out of every figure, and the note gives their cost and rate apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rare_work_on_a_clock_is_kept_once_it_comes_back() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 1).await;
    let r = audit(
        &db,
        app.url(rare::TOUCHED),
        &["-n", "200", "-c", "2", "--retries", "3"],
    )
    .await;
    assert!(r.valid, "{:?} {:?}", r.invalid_reasons, r.windows);
    assert_valid(&r);
    // The first window had a touch, the second one too: kept, 2 retries left unused.
    assert_eq!(r.windows.discarded, 1, "{:?}", r.windows);
    let work = (r.notes.iter())
        .find_map(|n| match n {
            Note::RareEvents(work) => Some(work.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no rare_events note: {:?}", r.notes));
    assert_eq!(work.windows, 2);
    let inserted = (work.events.iter())
        .find(|e| e.of == "public.hits" && e.to_string().contains("inserted"))
        .unwrap_or_else(|| panic!("no insert into hits: {:?}", work.events));
    let touches = inserted.events as f64;
    assert!(touches >= 1.0, "{work:?}");
    assert!(work.per_minute.is_some_and(|rate| rate > 0.0), "{work:?}");
    // The touches are taken out of the figures: each request is one statement (and
    // transaction) that reads every item. Each touch, given apart, is one more statement
    // and transaction, and one row inserted.
    let p = &r.per_request;
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.rows_read, ITEMS as f64, "{p:?}");
    assert_eq!(p.rows_returned, Some(ITEMS as f64), "{p:?}");
    let cost = taken_out(&r);
    assert_eq!(
        cost.figures.transactions.unwrap().total,
        touches as i64,
        "{cost:?}"
    );
    assert_eq!(
        cost.figures.statements.map(|f| f.total),
        Some(touches as i64)
    );
    assert_eq!(
        cost.figures.rows_returned.map(|f| f.total),
        Some(touches as i64)
    );
    let hits = (r.tables.iter()).find(|t| t.table == "public.hits");
    assert!(
        hits.is_none(),
        "the touches' table is theirs alone: {hits:?}"
    );
    // Once in 3 s at most: the rate per minute with its ± of one touch holds at most 20.
    let rate = cost.figures.transactions.unwrap().per_minute;
    assert!(
        rate - cost.figures.transactions.unwrap().plus_minus_per_minute <= 20.0,
        "{cost:?}"
    );
}

/// The cost the note `rare_events` took out of the figures.
fn taken_out(r: &pgcost_core::report::Report) -> RareCost {
    (r.notes.iter())
        .find_map(|n| match n {
            Note::RareEvents(work) => work.taken_out,
            _ => None,
        })
        .unwrap_or_else(|| panic!("no rare work taken out: {:?}", r.notes))
}
