//! Hand-built windows and bursts for the report's tests, shared with the views' tests.

// Built without cfg(test) under the feature `fixtures`: its tests are then compiled out.
#![cfg_attr(not(test), allow(dead_code, unused_imports))]

use super::build::*;
use super::*;
use crate::delta::DatabaseDelta;
use crate::delta::{StatementDelta, TableDelta, WindowDelta};
use crate::load::LoadResult;
use crate::plan::Plans;
use crate::report::model::counters::{DatabaseCounters, TableCounters, WriteCounters};
use crate::report::model::notes::{Note, messages};
use crate::snapshot::StatementKey;
use std::time::Duration;

pub fn load(n: u64, status: &[(u16, u64)]) -> LoadResult {
    let mut h = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for i in 0..n {
        h.record(1000 + i).unwrap();
    }
    LoadResult {
        latency_us: h,
        status: status.iter().copied().collect(),
        ..LoadResult::new(n, 8, Duration::from_secs(2))
    }
}

pub fn context(n: u64) -> Context {
    Context {
        target: Target {
            method: "GET".into(),
            url: "http://127.0.0.1:1/x".into(),
            database: "postgres://u@h:5432/d".into(),
            server_version: "15.18".into(),
            server_version_num: 150018,
            stats_source: "admin".into(),
            pg_stat_statements: Some("1.10".into()),
            credentials: vec![],
        },
        warmup: 20,
        requests: n,
        settle: Settle {
            before_seconds: 10.6,
            after_seconds: 10.7,
            timed_out: false,
        },
        statements_available: true,
        warnings: vec![],
        invalid_reasons: vec![],
        allowed_statuses: vec![],
        pool: Pool::default(),
        findings: None,
        unauthenticated: None,
        plans: Plans::default(),
        windows: Default::default(),
        background: None,
        warmed: None,
        tags: None,
        writes_allowed: false,
        source: None,
    }
}

pub fn stmt(id: i64, query: &str, calls: i64, rows: i64) -> StatementDelta {
    StatementDelta {
        key: StatementKey {
            userid: 10,
            queryid: id,
            toplevel: Some(true),
        },
        query: query.into(),
        calls,
        rows,
        exec_time_ms: calls as f64 * 0.1,
        plan_time_ms: None,
        shared_blks_hit: calls,
        shared_blks_read: 0,
        writes: Default::default(),
    }
}

#[test]
fn window_counts_are_the_subtracted_figures_undivided() {
    let mut nested = stmt(2, "SELECT 2", 9, 9);
    nested.key.toplevel = Some(false);
    let delta = WindowDelta {
        database: DatabaseDelta {
            xact_commit: 40,
            xact_rollback: 2,
            tup_returned: 900,
            tup_fetched: 7,
            ..Default::default()
        },
        statements: vec![stmt(1, "SELECT 1", 42, 84), nested],
        ..Default::default()
    };
    // Transactions, statements (top-level ones) and rows read; not rows fetched or returned.
    let counts = |statements| crate::background::Counts {
        transactions: Some(42),
        statements,
        rows_read: Some(900),
        ..Default::default()
    };
    assert_eq!(window_counts(&delta, true), counts(Some(42)));
    assert_eq!(window_counts(&delta, false), counts(None));
}

#[test]
fn per_request_figures_divide_window_totals() {
    let delta = WindowDelta {
        database: DatabaseDelta {
            xact_commit: 200,
            tup_returned: 10_000,
            sessions: Some(0),
            ..Default::default()
        },
        statements: vec![
            stmt(1, "BEGIN", 200, 0),
            stmt(2, "SELECT * FROM items WHERE owner = $1", 200, 1000),
            stmt(3, "COMMIT", 200, 0),
        ],
        tables: vec![TableDelta {
            name: "public.items".into(),
            counters: TableCounters {
                seq_scan: 200,
                seq_tup_read: 10_000,
                ..Default::default()
            },
            relpages: 1,
            n_live_tup: 50,
        }],
        ..Default::default()
    };
    let r = Report::build(&delta, &load(200, &[(200, 200)]), context(200));
    assert!(r.valid, "{:?}", r.invalid_reasons);
    assert_eq!(r.per_request.transactions, 1.0);
    assert_eq!(r.per_request.statements, Some(3.0));
    assert_eq!(r.per_request.statements_excluding_utility, Some(1.0));
    assert_eq!(r.per_request.rows_read, 50.0);
    assert_eq!(r.per_request.rows_returned, Some(5.0));
    assert_eq!(r.statements[0].queryid, "2");
    assert_eq!(r.statements[0].rows_per_call, 5.0);
    assert_eq!(r.statements[0].share_of_rows_returned, 1.0);
    assert_eq!(r.tables[0].seq_rows_read, 50.0);
    assert_eq!(r.load.rps, 100.0);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["load"]["source"], "pgcost");
    assert_eq!(json["load"]["command_exit"], serde_json::Value::Null);
    // A report written before `source` existed reads as pgcost's own burst.
    let mut old = json.clone();
    let load = old["load"].as_object_mut().unwrap();
    load.remove("source");
    load.remove("command_exit");
    let old: Report = serde_json::from_value(old).unwrap();
    assert_eq!(old.load.source, "pgcost");
}

#[test]
fn rejected_requests_and_new_sessions() {
    let delta = WindowDelta {
        database: DatabaseDelta {
            sessions: Some(200),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = Report::build(&delta, &load(200, &[(200, 20), (401, 180)]), context(200));
    assert!(!r.valid);
    assert_eq!(
        r.invalid_reasons[0],
        crate::report::model::invalid::Invalid::new(
            crate::report::model::invalid::Code::Rejected,
            "180 of 200 responses were 401: these numbers measure the rejection path, not the endpoint"
        )
    );
    assert_eq!(
        r.notes[0],
        Note::NewConnections {
            sessions: 200,
            per_request: 1.0
        }
    );
    assert!(r.notes[0].message().contains("200 new connection(s)"));
    assert_eq!(r.per_request.new_sessions, Some(1.0));
}

#[test]
fn allowed_statuses_do_not_invalidate_but_are_reported() {
    let delta = WindowDelta::default();
    let mut ctx = context(40);
    ctx.allowed_statuses = vec![404];
    let r = Report::build(&delta, &load(40, &[(200, 30), (404, 10)]), ctx);
    assert!(r.valid, "{:?}", r.invalid_reasons);
    assert_eq!(
        messages(&r.notes),
        vec!["10 of 40 responses were 404, accepted by --allow-status 404".to_string()]
    );
    assert_eq!(r.notes[0].code(), "allowed_status_responses");
    // Any other code still invalidates, rejections first, before the audit's own reasons.
    let mut ctx = context(40);
    ctx.allowed_statuses = vec![404];
    let settle = crate::report::model::invalid::Invalid::new(
        crate::report::model::invalid::Code::SettleTimeout,
        "settling after the burst timed out",
    );
    ctx.invalid_reasons = vec![settle];
    let statuses = [(200, 30), (404, 3), (403, 2), (500, 1)];
    let r = Report::build(&delta, &load(40, &statuses), ctx);
    assert_eq!(r.invalid_reasons.len(), 3);
    let codes: Vec<_> = r.invalid_reasons.iter().map(|r| r.code).collect();
    use crate::report::model::invalid::Code;
    assert_eq!(
        codes,
        [Code::Rejected, Code::ServerErrors, Code::SettleTimeout]
    );
    assert!(
        r.invalid_reasons[0]
            .message
            .starts_with("2 of 40 responses were 403: these numbers")
    );
    assert!(
        r.invalid_reasons[1]
            .message
            .starts_with("1 of 40 responses were 500")
    );
}

#[test]
fn totals_keep_their_json_keys_and_order() {
    let totals = Totals {
        database: DatabaseCounters {
            xact_commit: 1,
            tup_returned: 3,
            blks_read: 9,
            sessions: None,
            ..Default::default()
        },
        statement_calls: Some(10),
        statement_rows: None,
        statement_writes: Some(WriteCounters {
            shared_blks_dirtied: 11,
            temp_blks_read: 16,
            wal_bytes: Some(15),
            ..Default::default()
        }),
    };
    let json = serde_json::to_string(&totals).unwrap();
    // The database's counters flattened first, under pg_stat_database's column names, then
    // the statements' sums, their write counters under pg_stat_statements' names.
    for part in [
        r#"{"xact_commit":1,"xact_rollback":0,"tup_returned":3,"#,
        r#""blks_read":9,"sessions":null,"statement_calls":10,"statement_rows":null,"#,
        r#""statement_writes":{"shared_blks_dirtied":11,"#,
        r#""temp_blks_read":16,"#,
        r#""wal_fpi":null,"wal_bytes":15"#,
    ] {
        assert!(json.contains(part), "{part} in {json}");
    }
    assert!(json.starts_with(r#"{"xact_commit""#), "{json}");
    assert_eq!(serde_json::from_str::<Totals>(&json).unwrap(), totals);
}

#[test]
fn utility_detection() {
    assert!(is_utility("BEGIN"));
    assert!(is_utility("commit"));
    assert!(is_utility("/* app */ SET search_path = $1"));
    assert!(!is_utility("SELECT 1"));
    assert!(!is_utility("WITH x AS (SELECT 1) SELECT * FROM x"));
    assert!(!is_utility("  -- c\nUPDATE t SET a = $1"));
}

#[test]
fn writes_per_request_sum_the_top_level_statements() {
    let writes = |wal: Option<i64>, temp: i64| WriteCounters {
        shared_blks_dirtied: 200,
        temp_blks_written: temp,
        wal_records: wal.map(|w| w / 100),
        wal_fpi: wal.map(|_| 0),
        wal_bytes: wal,
        ..WriteCounters::default()
    };
    let update = StatementDelta {
        writes: writes(Some(14_000), 0),
        ..stmt(
            1,
            "UPDATE sessions SET seen = now() WHERE id = $1",
            200,
            200,
        )
    };
    let sort = StatementDelta {
        writes: writes(Some(0), 3_000),
        ..stmt(2, "SELECT id FROM orders ORDER BY total", 200, 2_000)
    };
    // Nested in a function (track = all): its writes are already in its caller's.
    let nested = StatementDelta {
        key: StatementKey {
            toplevel: Some(false),
            ..update.key.clone()
        },
        ..update.clone()
    };
    let delta = WindowDelta {
        statements: vec![update, sort, nested],
        ..Default::default()
    };
    let r = Report::build(&delta, &load(200, &[(200, 200)]), context(200));
    let w = r.per_request.writes.as_ref().unwrap();
    assert_eq!(w.wal_bytes, Some(70.0));
    assert_eq!(w.wal_records, Some(0.7));
    assert_eq!(w.blocks_dirtied, 2.0);
    assert_eq!(w.temp_blocks_written, 15.0);
    let sort_row = r.statements.iter().find(|s| s.queryid == "2").unwrap();
    assert_eq!(sort_row.writes_per_request.temp_blocks_written, 15.0);
    assert_eq!(
        r.totals.statement_writes.as_ref().unwrap().wal_bytes,
        Some(14_000)
    );
    // A server without the WAL counters (before PG 13): null, not 0.
    let old = WindowDelta {
        statements: vec![StatementDelta {
            writes: writes(None, 0),
            ..stmt(1, "UPDATE t SET a = 1", 200, 200)
        }],
        ..Default::default()
    };
    let r = Report::build(&old, &load(200, &[(200, 200)]), context(200));
    let w = r.per_request.writes.unwrap();
    assert_eq!((w.wal_bytes, w.blocks_dirtied), (None, 1.0));
}

#[test]
fn error_answers_make_the_report_not_valid_and_say_what_was_seen() {
    let mut burst = load(40, &[(200, 40)]);
    burst.error_answers.insert("body \"errors\"".into(), 12);
    burst.first_error_answer = Some("body \"errors\": [{\"message\":\"expired\"}]".into());
    let r = Report::build(&WindowDelta::default(), &burst, context(40));
    assert!(!r.valid);
    assert_eq!(
        r.invalid_reasons[0].code,
        crate::report::model::invalid::Code::ErrorAnswers
    );
    assert!(
        r.invalid_reasons[0].message.starts_with(
            "12 of 40 responses were 2xx with an error in them (body \"errors\": [{\"message\":\"expired\"}])"
        ),
        "{:?}",
        r.invalid_reasons
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["load"]["error_answers"]["body \"errors\""], 12);
}
