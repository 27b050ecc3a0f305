//! Exactness: the reported per-request figures equal what the fixture's SQL costs by
//! construction, against a real throwaway cluster and a pooled app.

mod support;

use support::{assert_valid, audit, table};

use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::{ITEMS, SMALL, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_scan_per_request_at_concurrency_1_and_8() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 8).await;
    for concurrency in ["1", "8"] {
        // Ten warm-up requests per pooled connection, so that all eight are open and
        // warm before the window (with fewer, one may open inside it, and pgcost would
        // rightly count its set-up).
        let r = audit(
            &db,
            app.url("/scan"),
            &["-n", "200", "-c", concurrency, "--warmup", "80"],
        )
        .await;
        assert_valid(&r);
        assert_eq!(r.target.stats_source, "admin");
        let p = &r.per_request;
        assert_eq!(p.transactions, 1.0, "c={concurrency}: {p:?}");
        assert_eq!(p.statements, Some(1.0), "c={concurrency}: {p:?}");
        assert_eq!(p.rows_read, ITEMS as f64, "c={concurrency}: {p:?}");
        assert_eq!(
            p.rows_returned,
            Some(ITEMS as f64),
            "c={concurrency}: {p:?}"
        );
        assert_eq!(p.rows_written, 0.0);
        assert_eq!(p.new_sessions, Some(0.0));
        let items = table(&r, "public.items");
        assert_eq!(items.seq_scans, 1.0);
        assert_eq!(items.seq_rows_read, ITEMS as f64);
        assert_eq!(r.statements.len(), 1);
        assert_eq!(r.statements[0].calls_per_request, 1.0);
        assert_eq!(r.statements[0].rows_per_call, ITEMS as f64);
        assert!(
            r.settle.after_seconds < 11.5,
            "settle took {}",
            r.settle.after_seconds
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_transaction_and_varying_cost() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 8).await;

    let r = audit(
        &db,
        app.url("/tx"),
        &["-n", "200", "-c", "8", "--warmup", "80"],
    )
    .await;
    assert_valid(&r);
    let p = &r.per_request;
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.statements, Some(4.0), "BEGIN, two SELECTs, COMMIT: {p:?}");
    assert_eq!(p.statements_excluding_utility, Some(2.0), "{p:?}");
    assert_eq!(p.rows_read, (ITEMS + SMALL) as f64, "{p:?}");
    assert_eq!(p.rows_returned, Some((1 + SMALL) as f64), "{p:?}");

    // 80 warm-up requests and 200 measured ones are both multiples of four, so the window
    // holds whole cycles of 1, 2, 3 and 4 scans.
    let r = audit(
        &db,
        app.url("/vary"),
        &["-n", "200", "-c", "8", "--warmup", "80"],
    )
    .await;
    assert_valid(&r);
    let p = &r.per_request;
    assert_eq!(p.transactions, 2.5, "{p:?}");
    assert_eq!(p.statements, Some(2.5), "{p:?}");
    assert_eq!(p.rows_read, 2.5 * ITEMS as f64, "{p:?}");
    assert_eq!(p.rows_returned, Some(2.5 * (ITEMS / 5) as f64), "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_fallback_to_the_target_database() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;

    let r = audit(
        &db,
        app.url("/write"),
        &["-n", "100", "-c", "4", "-X", "POST", "--allow-writes"],
    )
    .await;
    assert_valid(&r);
    assert_eq!(r.per_request.rows_written, 1.0, "{:?}", r.per_request);
    assert_eq!(table(&r, "public.hits").rows_inserted, 1.0);
    let written = r.notes.iter().find_map(|n| match n {
        Note::WritesAllowed { tables } => Some(tables.clone()),
        _ => None,
    });
    let written = written.expect("--allow-writes names what the requests wrote");
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0].table, "public.hits");
    assert_eq!(
        (written[0].inserted, written[0].updated, written[0].deleted),
        (1.0, 0.0, 0.0)
    );
    let message = Note::WritesAllowed { tables: written }.message();
    assert!(message.contains("public.hits 1 inserted"), "{message}");

    // No admin database to read from: the tool reads through the target and must take
    // its own footprint out.
    let r = audit(
        &db,
        app.url("/scan"),
        &["-n", "100", "-c", "4", "--admin-db", "no_such_db"],
    )
    .await;
    assert_valid(&r);
    assert!(
        !r.notes
            .iter()
            .any(|n| matches!(n, Note::WritesAllowed { .. }))
    );
    assert_eq!(r.target.stats_source, "target");
    assert!(
        r.notes
            .iter()
            .map(Note::message)
            .any(|w| w.contains("no_such_db")),
        "{:?}",
        r.notes
    );
    let p = &r.per_request;
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.rows_read, ITEMS as f64, "{p:?}");
    assert_eq!(p.rows_returned, Some(ITEMS as f64), "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_per_request_is_counted_and_warned_about() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let r = audit(&db, app.url("/fresh"), &["-n", "50", "-c", "2"]).await;
    assert_valid(&r);
    assert_eq!(r.per_request.new_sessions, Some(1.0), "{:?}", r.per_request);
    assert_eq!(r.per_request.statements, Some(1.0));
    assert_eq!(r.per_request.rows_returned, Some(SMALL as f64));
    assert!(
        r.notes
            .iter()
            .map(Note::message)
            .any(|w| w.contains("new connection")),
        "{:?}",
        r.notes
    );
}
