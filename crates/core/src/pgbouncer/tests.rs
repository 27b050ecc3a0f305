//! Unit tests of PgBouncer's arithmetic: deltas per request, the SET recogniser, and
//! PgBouncer's own statements taken out of a window.

use super::*;
use crate::delta::{StatementDelta, WindowDelta};
use crate::snapshot::StatementKey;

fn stats(database: &str, xacts: i64, queries: i64, wait_us: i64) -> StatsRow {
    StatsRow {
        database: database.into(),
        xact_count: xacts,
        query_count: queries,
        wait_time_us: wait_us,
    }
}

fn pools(database: &str, user: &str, waiting: i64, servers: i64) -> PoolsRow {
    PoolsRow {
        database: database.into(),
        user: user.into(),
        cl_waiting: waiting,
        servers,
    }
}

fn statement(queryid: i64, query: &str, calls: i64, rows: i64) -> StatementDelta {
    StatementDelta {
        key: StatementKey {
            userid: 10,
            queryid,
            toplevel: Some(true),
        },
        query: query.into(),
        calls,
        rows,
        exec_time_ms: 0.0,
        plan_time_ms: None,
        shared_blks_hit: 0,
        shared_blks_read: 0,
        writes: Default::default(),
    }
}

#[test]
fn figures_are_the_pool_s_deltas_per_request() {
    let before = Reading {
        stats: vec![stats("pgbouncer", 5, 5, 0), stats("app", 100, 300, 2_000)],
        pools: vec![pools("app", "a", 0, 2)],
    };
    let after = Reading {
        stats: vec![stats("pgbouncer", 9, 9, 0), stats("app", 300, 700, 502_000)],
        pools: vec![pools("app", "a", 1, 2), pools("app", "b", 2, 1)],
    };
    let f = figures("app", (&before, &after), 2, 200, 7).unwrap();
    assert_eq!(f.transactions_per_request, 1.0);
    assert_eq!(f.queries_per_request, 2.0);
    // 500,000 µs over 200 requests: 2.5 ms each.
    assert_eq!(f.wait_ms_per_request, 2.5);
    // The readings' own 1 + 2 waiting beat the samples' 2.
    assert_eq!(f.max_cl_waiting, 3);
    assert_eq!(f.own_statements, 7);
    assert_eq!(after.servers("app"), 3);
    assert!(figures("other", (&before, &after), 0, 200, 0).is_none());
    // A pool born in the window counts from zero.
    let empty = Reading::default();
    let f = figures("app", (&empty, &after), 0, 100, 0).unwrap();
    assert_eq!(f.transactions_per_request, 3.0);
}

#[test]
fn the_pool_is_the_target_s_name_or_the_one_that_points_at_it() {
    let entry = |name: &str, database: &str| DatabaseEntry {
        name: name.into(),
        database: database.into(),
    };
    let entries = [
        entry("pgbouncer", "pgbouncer"),
        entry("shop", "shop_production"),
        entry("a", "app"),
        entry("b", "app"),
    ];
    assert_eq!(pool_database(&entries, "shop").unwrap(), "shop");
    assert_eq!(pool_database(&entries, "shop_production").unwrap(), "shop");
    assert!(pool_database(&entries, "app").unwrap_err().contains("a, b"));
    assert!(
        pool_database(&entries, "other")
            .unwrap_err()
            .contains("no database")
    );
    let fallback = [entry("*", ""), entry("shop", "shop")];
    assert_eq!(pool_database(&fallback, "other").unwrap(), "other");
}

#[test]
fn pgbouncer_s_own_set_is_recognised_by_its_spelling() {
    assert_eq!(pgbouncer_set("SET TimeZone='UTC'"), Some("TimeZone"));
    assert_eq!(
        pgbouncer_set("SET application_name='alpha'"),
        Some("application_name")
    );
    assert_eq!(pgbouncer_set("SET DateStyle=$1"), Some("DateStyle"));
    assert_eq!(
        pgbouncer_set("SET client_encoding=E'UTF8';"),
        Some("client_encoding")
    );
    // An app's own spelling, or a parameter PgBouncer does not track.
    assert_eq!(pgbouncer_set("SET TIME ZONE 'UTC'"), None);
    assert_eq!(pgbouncer_set("SET timezone = 'UTC'"), None);
    assert_eq!(pgbouncer_set("SET TimeZone = 'UTC'"), None);
    assert_eq!(pgbouncer_set("SET search_path='app'"), None);
    assert_eq!(pgbouncer_set("SET application_name=alpha"), None);
    assert_eq!(pgbouncer_set("SELECT 1"), None);
}

#[test]
fn shapes_compare_configured_queries_with_normalized_texts() {
    assert_eq!(shape("select 1"), shape("SELECT $1"));
    assert_eq!(shape(" DISCARD  ALL; "), "discard all");
    assert_ne!(shape("select 1"), shape("select id from t"));
}

#[test]
fn own_statements_leave_the_window_with_their_transactions() {
    let settings = Settings {
        pool_mode: "transaction".into(),
        ..Settings::default()
    };
    let mut window = WindowDelta::default();
    window.database.xact_commit = 230;
    window.statements = vec![
        statement(1, "SELECT id FROM items", 200, 10_000),
        statement(2, "SET application_name='alpha'", 20, 0),
        statement(3, "select $1", 13, 13),
        // The reset query is not sent in transaction mode: an app's own DISCARD ALL.
        statement(4, "DISCARD ALL", 2, 0),
    ];
    // Two server connections over 40 s with a 30 s delay: at most 4 checks.
    let bound = max_checks(&settings, 2, 40.0);
    assert_eq!(bound, 4);
    let own = recognise(&window.statements, &settings, bound);
    assert_eq!(own.sets["application_name"], 20);
    assert_eq!((own.checks, own.checks_left, own.resets), (4, 9, 0));
    assert_eq!(own.calls(), 24);
    assert_eq!(own.transactions(), (24, 0));
    let warnings: Vec<String> = (exclude(&mut window, &own, &settings, 200).iter())
        .map(|note| note.message())
        .collect();
    assert_eq!(window.database.xact_commit, 206);
    let left: Vec<(i64, i64, i64)> = (window.statements.iter())
        .map(|s| (s.key.queryid, s.calls, s.rows))
        .collect();
    assert_eq!(left, [(1, 200, 10_000), (3, 9, 9), (4, 2, 0)]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("20 SET application_name"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("4 server check(s)"), "{}", warnings[0]);
    assert!(warnings[1].contains("9 call(s)"), "{}", warnings[1]);
}

#[test]
fn sets_of_several_parameters_give_a_bound_on_transactions() {
    let mut window = WindowDelta::default();
    window.database.xact_commit = 100;
    window.statements = vec![
        statement(1, "SET application_name='a'", 6, 0),
        statement(2, "SET TimeZone='UTC'", 4, 0),
    ];
    let settings = Settings::default();
    let own = recognise(&window.statements, &settings, 0);
    assert_eq!(own.transactions(), (6, 4));
    let notes = exclude(&mut window, &own, &settings, 50);
    assert_eq!(notes[0].code(), "pgbouncer_own_statements");
    let warnings: Vec<String> = notes.iter().map(|note| note.message()).collect();
    assert!(window.statements.is_empty());
    assert_eq!(window.database.xact_commit, 94);
    assert!(warnings[0].contains("up to 4 more"), "{}", warnings[0]);
}

#[test]
fn a_zero_check_delay_bounds_nothing() {
    let settings = Settings {
        check_delay_seconds: 0.0,
        ..Settings::default()
    };
    assert_eq!(max_checks(&settings, 3, 10.0), i64::MAX);
}
