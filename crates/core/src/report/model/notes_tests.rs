//! The notes' codes, messages and JSON.

use serde::{Deserialize, Serialize};

use super::notes::*;

/// One note of every kind, in the order of [`CODES`].
fn one_of_each() -> Vec<Note> {
    vec![
        Note::AllowStatusRejection { status: 401 },
        Note::TokenExpiresSoon {
            token: "the bearer token".into(),
            expires_at: "2023-11-14T22:18:20Z".into(),
            expires_in_seconds: 300,
        },
        Note::TlsInsecure,
        Note::AnonymousAnswerAccepted {
            status: 200,
            body_bytes: 2,
        },
        Note::AdminDbIsTarget {
            admin_db: "app".into(),
        },
        Note::AdminDbLacksPgStatStatements {
            admin_db: "postgres".into(),
        },
        Note::AdminDbUnreachable {
            admin_db: "postgres".into(),
            error: "refused".into(),
        },
        Note::ServerOlderThan15 {
            version: "14.11".into(),
        },
        Note::RoleCannotReadAllStats { role: "app".into() },
        Note::PgStatStatementsNotLoaded,
        Note::PgStatStatementsExtensionMissing,
        Note::ComputeQueryIdOff,
        Note::TrackPlanningOff,
        Note::StatementTextsUnavailable { entries: 2 },
        Note::PgStatStatementsEntriesVanished {
            entries: 3,
            node: None,
        },
        Note::ServerClockAhead { seconds: 2.5 },
        Note::BackgroundWhileIdle {
            node: "app".into(),
            replica: false,
        },
        Note::ReplicaNotInRecovery {
            node: "app@h:5433".into(),
        },
        Note::ReplicaLag {
            node: "app@h:5433".into(),
            lag_seconds: 42.25,
            settle_timeout_seconds: 30.0,
        },
        Note::WindowsDiscarded {
            discarded: 1,
            reasons: vec!["1 app connection opened during the window".into()],
        },
        Note::UncountedTransactions {
            transactions: 224,
            statements: 200,
            beyond_per_request: 0.12,
        },
        Note::ConnectionChurn {
            opened: 2,
            closed: 0,
            retries: 2,
            uncounted_transactions: None,
            uncounted_per_request: None,
        },
        Note::UnmeasuredDatabase {
            database: "auth".into(),
            transactions_per_request: 2.0,
            rows_read_per_request: 12.8,
            add: "--db postgres://u@h/auth".into(),
        },
        Note::MovedNothing { requests: 100 },
        Note::AllowedStatusResponses {
            status: 404,
            count: 10,
            requests: 40,
        },
        Note::NewConnections {
            sessions: 200,
            per_request: 1.0,
        },
        Note::BackgroundNotSubtracted {
            backends: vec!["pid 7 (role cron)".into()],
            app_roles: false,
            shares_app_role: false,
        },
        Note::OtherRolesStatements {
            roles: vec![RoleCalls {
                role: "cron".into(),
                calls: 12,
            }],
        },
        Note::UnauthenticatedAnswered {
            answered: 40,
            requests: 40,
        },
        Note::PgbouncerOwnStatements {
            sets: [("application_name".to_string(), 20)].into(),
            checks: 4,
            check_query: "select 1".into(),
            resets: 0,
            reset_query: "DISCARD ALL".into(),
            calls_per_request: 0.12,
            transactions_taken: 24,
            transactions_maybe_left: 0,
        },
        Note::PgbouncerChecksKept {
            calls: 9,
            check_query: "select 1".into(),
        },
        Note::PlansSkippedConnection {
            error: "refused".into(),
        },
        Note::PlansSkippedPrivilege {
            role: "app".into(),
            error: "permission denied".into(),
            pg_read_all_data: true,
        },
        Note::UslPoorFit { r_squared: 0.42 },
        Note::BackgroundSubtracted {
            figure: "statements".into(),
            share: 0.18,
            max_share: 0.05,
            period_seconds: Some(2.0),
        },
        Note::WarmupNotSteady {
            requests: 2000,
            seconds: 30.0,
        },
        Note::PlanChanged {
            statement: "SELECT id FROM t WHERE kind = $1".into(),
            rows_per_call: [1.0, 1.0],
            blocks_per_call: [3.0, 45.0],
            seq_scanned: vec!["public.t".into()],
            retries: 2,
        },
        Note::BurstSized {
            requested: 40,
            sent: 527,
            background_per_second: 14.8,
        },
        Note::RareEvents(Box::new(crate::report::model::odd_events::RareWork {
            windows: 2,
            requests: 40,
            events: vec![crate::report::model::odd_events::OddEvents {
                kind: crate::report::model::odd_events::EventKind::RowsUpdated,
                of: "public.api_keys".into(),
                whole_per_request: 0,
                events: 1,
                rows: None,
            }],
            rows_read_per_request: 0.0,
            spread: Default::default(),
            per_minute: Some(1.2),
            taken_out: None,
        })),
        Note::WritesAllowed {
            tables: vec![WrittenTable {
                table: "public.articles".into(),
                inserted: 1.0,
                updated: 0.5,
                deleted: 0.0,
            }],
        },
        Note::RunWrote {
            tables: vec![RunTable {
                table: "public.articles".into(),
                inserted: 121,
                updated: 0,
                deleted: 0,
                delete: Some("DELETE FROM \"public\".\"articles\" WHERE xmin::text::bigint BETWEEN 1000 AND 1129".into()),
            }],
            xid_from: 1000,
            xid_to: 1130,
        },
    ]
}

#[test]
fn allowed_writes_are_named_by_table_or_said_to_be_none() {
    let mut notes = one_of_each();
    let run = notes.pop().unwrap().message();
    assert_eq!(
        run,
        "--allow-writes: the run (probe and warm-ups included) used transaction ids 1000 to \
         1129 and wrote 1 table(s):\n  public.articles: 121 inserted, 0 updated, 0 deleted; to \
         delete them (pgcost does not): DELETE FROM \"public\".\"articles\" WHERE \
         xmin::text::bigint BETWEEN 1000 AND 1129"
    );
    let Note::WritesAllowed { tables } = notes.pop().unwrap() else {
        unreachable!("the last kind")
    };
    let message = Note::WritesAllowed { tables }.message();
    assert!(
        message.contains("per request: public.articles 1 inserted, 0.50 updated;"),
        "{message}"
    );
    let none = Note::WritesAllowed { tables: Vec::new() }.message();
    assert_eq!(
        none,
        "--allow-writes: the requests wrote no row (pg_stat_user_tables)"
    );
}

#[test]
fn codes_are_distinct_snake_case_and_the_json_tag() {
    let notes = one_of_each();
    assert_eq!(notes.len(), CODES.len());
    let codes: Vec<&str> = notes.iter().map(Note::code).collect();
    assert_eq!(codes, CODES, "one note of each kind, in the order of CODES");
    let distinct: std::collections::BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(distinct.len(), codes.len(), "a code is used twice");
    for code in codes {
        let snake = code
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && code.starts_with(|c: char| c.is_ascii_lowercase())
            && !code.ends_with('_')
            && !code.contains("__");
        assert!(snake, "{code} is not snake_case");
    }
    for note in &notes {
        let json = serde_json::to_value(note).unwrap();
        assert_eq!(json["code"], note.code(), "{json}");
        assert!(!note.message().is_empty());
        assert_eq!(note.to_string(), note.message());
    }
}

#[test]
fn every_code_is_documented_in_json_md() {
    let docs = include_str!("../../../../../docs/json.md");
    for code in CODES {
        assert!(
            docs.contains(&format!("| `{code}` |")),
            "docs/json.md has no row for the note code {code}"
        );
    }
}

/// A document with one list of notes, as the report carries them.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Document {
    valid: bool,
    #[serde(flatten, with = "super::notes::keys")]
    notes: Vec<Note>,
}

#[test]
fn json_carries_the_messages_and_the_notes_and_reads_them_back() {
    let document = Document {
        valid: true,
        notes: vec![
            Note::TlsInsecure,
            Note::AllowedStatusResponses {
                status: 404,
                count: 10,
                requests: 40,
            },
        ],
    };
    let json = serde_json::to_value(&document).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "valid": true,
            "warnings": [
                "--insecure: the target's TLS certificate was not verified",
                "10 of 40 responses were 404, accepted by --allow-status 404",
            ],
            "notes": [
                {
                    "code": "tls_insecure",
                    "message": "--insecure: the target's TLS certificate was not verified",
                },
                {
                    "code": "allowed_status_responses",
                    "status": 404,
                    "count": 10,
                    "requests": 40,
                    "message": "10 of 40 responses were 404, accepted by --allow-status 404",
                },
            ],
        })
    );
    let back: Document = serde_json::from_value(json).unwrap();
    assert_eq!(back, document);
    // A document written before notes existed reads back without them.
    let old: Document =
        serde_json::from_value(serde_json::json!({"valid": false, "warnings": ["x"]})).unwrap();
    assert_eq!(old.notes, Vec::<Note>::new());
}

#[test]
fn messages_keep_their_wording() {
    let notes = one_of_each();
    assert_eq!(
        notes[1].message(),
        "the bearer token expires at 2023-11-14 22:18:20 UTC (in 5m), within 5 minutes of the \
         run's estimated end: a slow run may measure rejected requests"
    );
    assert_eq!(
        notes[16].message(),
        "database \"app\": counters moved while the app was idle and pgcost sent nothing \
         (during a settle wait): other traffic (other services, cron jobs, monitoring) runs on \
         this database, and the figures include whatever of it fell in the window"
    );
    assert_eq!(
        notes[21].message(),
        "connection churn: 2 app connections opened during the window, and no clean window \
         within --retries 2: the figures include their set-up (connecting, catalog reads, the \
         driver's set-up statements) and any closing work"
    );
    assert!(notes[32].message().ends_with(
        "GRANT pg_read_all_data TO app; (or GRANT SELECT on those tables), or pass --no-plans"
    ));
    assert_eq!(
        notes[9].message(),
        "pg_stat_statements is not loaded, so statements, rows returned and the per-statement \
         breakdown are unavailable; add pg_stat_statements to shared_preload_libraries in \
         postgresql.conf, restart the server, then run CREATE EXTENSION pg_stat_statements; in \
         the target and admin databases"
    );
}
