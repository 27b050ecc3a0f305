//! Findings on hand-built reports: each kind fires on its pattern and stays quiet on the
//! look-alikes.

// Built without cfg(test) under the feature `fixtures`: its tests are then compiled out.
#![cfg_attr(not(test), allow(dead_code, unused_imports))]

use super::*;
use crate::load::LatencySummary;
use crate::report::model::counters::DatabaseCounters;
use crate::report::{
    Load, PerRequest, Pool, Report, SCHEMA_VERSION, Settle, StatementRow, TableRow, Target, Totals,
    Writes, is_utility,
};

const REQUESTS: u64 = 100;

/// A top-level statement measured over `REQUESTS` requests.
pub fn stmt(query: &str, calls_per_request: f64, rows_per_call: f64) -> StatementRow {
    let calls = (calls_per_request * REQUESTS as f64).round() as i64;
    let rows = (calls as f64 * rows_per_call).round() as i64;
    StatementRow {
        query: query.to_string(),
        queryid: format!("{}", query.len()),
        toplevel: true,
        utility: is_utility(query),
        calls,
        rows,
        calls_per_request,
        rows_per_call,
        rows_per_request: calls_per_request * rows_per_call,
        mean_exec_ms: 0.1,
        mean_plan_ms: None,
        blocks_per_request: 1.0,
        writes_per_request: Default::default(),
        share_of_rows_returned: 0.0,
        plan: None,
        plan_shape: None,
        database: None,
        tags: None,
    }
}

/// A table with no counter movement but its size.
pub fn table(name: &str, pages: i64) -> TableRow {
    TableRow {
        table: name.to_string(),
        seq_scans: 0.0,
        seq_rows_read: 0.0,
        idx_scans: 0.0,
        idx_rows_fetched: 0.0,
        idx_entries_read: 0.0,
        rows_inserted: 0.0,
        rows_updated: 0.0,
        rows_deleted: 0.0,
        pages,
        live_rows: pages * 50,
        database: None,
    }
}

/// A valid report of `REQUESTS` requests with these statements and tables, no new
/// connections, and per-request totals consistent with the statements.
pub fn report(mut statements: Vec<StatementRow>, tables: Vec<TableRow>) -> Report {
    let rows_returned: f64 = statements.iter().map(|s| s.rows_per_request).sum();
    for s in &mut statements {
        if rows_returned > 0.0 {
            s.share_of_rows_returned = s.rows_per_request / rows_returned;
        }
    }
    let per_request_statements: f64 = statements.iter().map(|s| s.calls_per_request).sum();
    let non_utility: f64 = statements
        .iter()
        .filter(|s| !s.utility)
        .map(|s| s.calls_per_request)
        .sum();
    Report {
        schema_version: SCHEMA_VERSION,
        valid: true,
        invalid_reasons: vec![],
        notes: vec![],
        target: Target {
            method: "GET".into(),
            url: "http://127.0.0.1:8080/projects".into(),
            database: "postgres://app@127.0.0.1:5432/app".into(),
            server_version: "16.4".into(),
            server_version_num: 160004,
            stats_source: "admin".into(),
            pg_stat_statements: Some("1.10".into()),
            credentials: vec![],
        },
        load: Load {
            requests: REQUESTS,
            concurrency: 8,
            warmup: 20,
            warmup_done: None,
            wall_seconds: 1.0,
            rps: REQUESTS as f64,
            status: [("200".to_string(), REQUESTS)].into(),
            errors: BTreeMap::new(),
            error_answers: BTreeMap::new(),
            response_items: None,
            latency_ms: LatencySummary::default(),
            latency_percentiles_ms: Vec::new(),
            source: "pgcost".into(),
            command_exit: None,
        },
        settle: Settle {
            before_seconds: 0.5,
            after_seconds: 0.5,
            timed_out: false,
        },
        per_request: PerRequest {
            transactions: 1.0,
            statements: Some(per_request_statements),
            statements_excluding_utility: Some(non_utility),
            rows_read: 0.0,
            rows_fetched: 0.0,
            rows_returned: Some(rows_returned),
            rows_written: 0.0,
            blocks_hit: 0.0,
            blocks_read: 0.0,
            db_time_ms: Some(1.0),
            new_sessions: Some(0.0),
            writes: None,
            setup: None,
        },
        totals: Totals {
            database: DatabaseCounters {
                xact_commit: REQUESTS as i64,
                xact_rollback: 0,
                tup_returned: 0,
                tup_fetched: 0,
                tup_inserted: 0,
                tup_updated: 0,
                tup_deleted: 0,
                blks_hit: 0,
                blks_read: 0,
                sessions: Some(0),
            },
            statement_calls: None,
            statement_rows: None,
            statement_writes: None,
        },
        statements,
        tables,
        findings: Vec::new(),
        pool: Default::default(),
        baseline: None,
        unauthenticated: None,
        windows: Default::default(),
        nodes: Vec::new(),
        background: None,
        pgbouncer: None,
        tags: None,
    }
}

fn findings(report: &Report) -> Vec<Finding> {
    analyze(&Inputs::of(report), &Thresholds::default())
}

fn of_kind(report: &Report, kind: FindingKind) -> Vec<Finding> {
    findings(report)
        .into_iter()
        .filter(|f| f.kind == kind)
        .collect()
}

const GRANTS: &str = "SELECT g.action FROM group_grants g JOIN group_members m \
                      ON m.group_id = g.group_id WHERE m.user_id = $1";

// collection_to_boolean -------------------------------------------------------------------

#[test]
fn a_set_fetched_to_test_membership_becomes_an_exists() {
    let r = report(vec![stmt(GRANTS, 1.0, 40.0)], vec![]);
    let found = of_kind(&r, FindingKind::CollectionToBoolean);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.query.as_deref(), Some(GRANTS));
    assert!(!f.unparsed);
    assert_eq!(f.avoidable_rows_per_request, 39.0);
    assert_eq!(f.round_trips_per_request, 0.0);
    assert_eq!(f.severity, Severity::Medium);
    assert_eq!(f.evidence["rows_per_call"], 40.0);
    assert_eq!(f.evidence["rows_per_request"], 40.0);
    assert_eq!(f.evidence["share_of_rows_returned"], 1.0);
    assert!(
        f.suggestion.contains(
            "\n    SELECT EXISTS (SELECT 1 FROM group_grants g JOIN group_members m \
             ON m.group_id = g.group_id WHERE m.user_id = $1 AND <the condition the caller tests>)\n"
        ),
        "{}",
        f.suggestion
    );
    assert!(f.suggestion.contains("ask the question you actually have"));
    assert!(f.suggestion.contains("stops at the first matching row"));
    assert!(
        f.suggestion
            .contains("screens that really need the whole set")
    );
}

#[test]
fn a_set_without_where_gets_the_condition_alone() {
    let r = report(
        vec![stmt("SELECT code FROM feature_flags", 1.0, 25.0)],
        vec![],
    );
    let found = of_kind(&r, FindingKind::CollectionToBoolean);
    assert!(found[0].suggestion.contains(
        "SELECT EXISTS (SELECT 1 FROM feature_flags WHERE <the condition the caller tests>)"
    ));
}

#[test]
fn probes_pages_summaries_and_rare_statements_are_not_collections() {
    let quiet = [
        // Already an EXISTS probe.
        stmt(
            "SELECT EXISTS (SELECT 1 FROM group_grants g JOIN group_members m \
             ON m.group_id = g.group_id WHERE m.user_id = $1 AND g.action = $2)",
            1.0,
            1.0,
        ),
        // An EXISTS per row of a listing: the caller asked its question.
        stmt(
            "SELECT p.id, EXISTS (SELECT 1 FROM stars s WHERE s.project_id = p.id) \
             FROM projects p WHERE p.tenant_id = $1",
            1.0,
            30.0,
        ),
        // The page the endpoint returns.
        stmt(
            "SELECT id, title FROM projects WHERE tenant_id = $1 ORDER BY id LIMIT 20",
            1.0,
            20.0,
        ),
        // A summary.
        stmt(
            "SELECT count(*) FROM projects WHERE tenant_id = $1",
            1.0,
            1.0,
        ),
        stmt(
            "SELECT status, count(*) FROM tasks WHERE tenant_id = $1 GROUP BY status",
            1.0,
            12.0,
        ),
        // Once every ten requests.
        stmt(GRANTS, 0.1, 40.0),
        // Writes.
        stmt(
            "DELETE FROM carts WHERE expires_at < now() RETURNING id",
            1.0,
            15.0,
        ),
    ];
    for s in quiet {
        let query = s.query.clone();
        let r = report(vec![s], vec![]);
        let found = of_kind(&r, FindingKind::CollectionToBoolean);
        assert!(found.is_empty(), "{query}: {found:#?}");
    }
}

// n_plus_one ------------------------------------------------------------------------------

#[test]
fn a_lookup_per_item_is_n_plus_one() {
    let q = "SELECT id, name FROM users WHERE id = $1";
    let r = report(vec![stmt(q, 12.0, 1.0)], vec![]);
    let found = of_kind(&r, FindingKind::NPlusOne);
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.evidence["calls_per_request"], 12.0);
    assert_eq!(f.round_trips_per_request, 11.0);
    assert_eq!(f.severity, Severity::High);
    assert!(f.suggestion.contains("= ANY($1)"));
    assert!(
        f.suggestion
            .contains("\n    SELECT id, name FROM users WHERE id = ANY($1)\n"),
        "{}",
        f.suggestion
    );
    assert!(f.suggestion.contains("JOIN"));
}

#[test]
fn repeated_statements_returning_sets_or_running_twice_are_not_n_plus_one() {
    for s in [
        stmt("SELECT id FROM users WHERE id = $1", 2.0, 1.0),
        stmt("SELECT id FROM tasks WHERE project_id = $1", 12.0, 30.0),
        stmt("SELECT id FROM users WHERE id = $1", 0.1, 1.0),
    ] {
        let r = report(vec![s], vec![]);
        assert!(of_kind(&r, FindingKind::NPlusOne).is_empty());
    }
}

// round_trips -----------------------------------------------------------------------------

#[test]
fn many_statements_per_request_are_round_trips() {
    let lookups = [
        "SELECT id, tenant_id FROM sessions WHERE token = $1",
        "SELECT plan FROM tenants WHERE id = $1",
        "SELECT feature FROM entitlements WHERE tenant_id = $1 AND feature = $2",
        "SELECT role FROM memberships WHERE user_id = $1 AND tenant_id = $2",
    ];
    let mut statements = vec![
        stmt("BEGIN", 1.0, 0.0),
        stmt("SET app.tenant = $1", 1.0, 0.0),
    ];
    statements.extend(lookups.iter().map(|q| stmt(q, 1.0, 1.0)));
    statements.push(stmt(
        "SELECT locale FROM user_settings WHERE user_id = $1",
        2.0,
        1.0,
    ));
    statements.push(stmt(
        "SELECT body FROM announcements WHERE id = $1",
        0.1,
        1.0,
    ));
    statements.push(stmt("COMMIT", 1.0, 0.0));
    let r = report(statements, vec![]);
    let found = of_kind(&r, FindingKind::RoundTrips);
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert!((f.evidence["statements_per_request"] - 9.1).abs() < 1e-9);
    assert_eq!(f.evidence["statements_once_per_request"], 4.0);
    assert_eq!(f.evidence["statements_repeated_per_request"], 1.0);
    assert!((f.evidence["utility_statements_per_request"] - 3.0).abs() < 1e-9);
    // Four lookups collapse into one, and the repeated one is memoised.
    assert_eq!(f.round_trips_per_request, 4.0);
    assert_eq!(f.saves_per_request.statements, 4.0);
    // An upper bound: pgcost cannot see whether the lookups are independent.
    assert_eq!(f.severity, Severity::Medium);
    for q in lookups {
        assert!(
            f.suggestion.contains(&format!("\n  - {q}")),
            "{}",
            f.suggestion
        );
    }
    assert!(f.suggestion.contains("collapse them into one statement"));
    assert!(f.suggestion.contains("memoise"));
    assert!(f.suggestion.contains(
        "\n  - SELECT locale FROM user_settings WHERE user_id = $1 (2 times per request)"
    ));
    assert!(
        !f.suggestion.contains("announcements"),
        "runs once every ten requests"
    );
    assert!(
        !f.suggestion.contains("\n  - BEGIN"),
        "utility statements are not listed"
    );
}

#[test]
fn four_statements_per_request_are_fine() {
    let r = report(
        vec![
            stmt("BEGIN", 1.0, 0.0),
            stmt("SELECT plan FROM tenants WHERE id = $1", 1.0, 1.0),
            stmt(
                "SELECT id FROM projects WHERE tenant_id = $1 LIMIT 20",
                1.0,
                20.0,
            ),
            stmt("COMMIT", 1.0, 0.0),
        ],
        vec![],
    );
    assert!(of_kind(&r, FindingKind::RoundTrips).is_empty());
}

// connection_per_request ------------------------------------------------------------------

#[test]
fn a_connection_per_request_is_named_with_the_server_limit() {
    let mut r = report(vec![], vec![]);
    r.per_request.new_sessions = Some(1.0);
    r.pool = Pool {
        peak_backends: Some(8),
        max_connections: Some(100),
    };
    let found = analyze(&Inputs::of(&r), &Thresholds::default());
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.kind, FindingKind::ConnectionPerRequest);
    assert_eq!(f.severity, Severity::High);
    assert_eq!(f.evidence["new_sessions_per_request"], 1.0);
    assert_eq!(f.evidence["peak_backends"], 8.0);
    assert_eq!(f.evidence["max_connections"], 100.0);
    assert_eq!(f.evidence["processes_supported"], 12.0);
    assert!(f.suggestion.contains("one pool per process"));
    assert!(f.suggestion.contains("pg_pconnect"));
    assert!(f.suggestion.contains("PgBouncer"));
    assert_eq!(
        f.saves_per_request.statements, 1.0,
        "no set-up: one per connection"
    );
    assert!(f.suggestion.contains("at most 12 such processes"));

    r.pool = Pool::default();
    let without_pool = analyze(&Inputs::of(&r), &Thresholds::default());
    assert!(!without_pool[0].evidence.contains_key("processes_supported"));
}

/// `r` with `sessions` new connections per request and the set-up they imply.
fn with_setup(mut r: Report, sessions: f64, rows_read: f64) -> Report {
    r.per_request.new_sessions = Some(sessions);
    r.per_request.rows_read = rows_read;
    r.per_request.setup = crate::setup::recognise(&crate::setup::Inputs {
        new_sessions_per_request: r.per_request.new_sessions,
        statements_per_request: r.per_request.statements,
        rows_read_per_request: rows_read,
        statements: &r.statements,
        tables: &r.tables,
    });
    r
}

/// A PHP-like request: one new connection with its set-up (three type lookups by name
/// among it), then two keyed reads.
fn php_like() -> Report {
    let mut small = table("public.small", 1);
    small.idx_rows_fetched = 1.0;
    let mut items = table("public.items", 1);
    items.idx_rows_fetched = 1.0;
    let r = report(
        vec![
            stmt("SET client_encoding TO $1", 1.0, 0.0),
            stmt("SET TIME ZONE $1", 1.0, 0.0),
            stmt("SHOW server_version_num", 1.0, 1.0),
            stmt("BEGIN", 1.0, 0.0),
            stmt(
                "SELECT oid, typname FROM pg_type WHERE typname = $1",
                3.0,
                1.0,
            ),
            stmt("COMMIT", 1.0, 0.0),
            stmt("SELECT version()", 1.0, 1.0),
            stmt("SELECT current_setting($1)", 1.0, 1.0),
            stmt("SELECT label FROM small WHERE id = $1", 1.0, 1.0),
            stmt("SELECT name FROM items WHERE id = $1", 1.0, 1.0),
        ],
        vec![small, items],
    );
    with_setup(r, 1.0, 102.0)
}

#[test]
fn a_connection_per_request_saves_its_whole_set_up() {
    let r = php_like();
    let setup = r.per_request.setup.as_ref().unwrap();
    assert_eq!(setup.statements.len(), 8);
    assert_eq!(setup.statements_per_request, 10.0);
    assert_eq!(setup.rows_read_per_request, 100.0);
    let found = findings(&r);
    let f = &found[0];
    assert_eq!(f.kind, FindingKind::ConnectionPerRequest, "{found:?}");
    assert_eq!(f.saves_per_request.statements, 10.0);
    assert_eq!(f.saves_per_request.rows_read, 100.0);
    assert_eq!(f.saves_per_request.rows_returned, 6.0);
    assert_eq!(f.evidence["setup_statements_per_request"], 10.0);
    assert!(
        f.suggestion
            .contains("10 statements and 100 rows read per new connection")
    );
    assert!(f.suggestion.contains("SELECT version()"));
    assert!(f.suggestion.contains("pg_pconnect") && f.suggestion.contains("PgBouncer"));
    assert!(f.suggestion.contains("one pool per process"));
}

#[test]
fn the_set_up_gets_no_finding_of_its_own() {
    let r = php_like();
    let found = findings(&r);
    // The type lookups run three times on one connection: no N+1, no repeated statement;
    // version() runs once per request: no round trips of "auth lookups" (the handler's two
    // statements are too few); no set-up statement is a cache candidate.
    for kind in [
        FindingKind::NPlusOne,
        FindingKind::RepeatedStatement,
        FindingKind::RoundTrips,
    ] {
        assert!(of_kind(&r, kind).is_empty(), "{kind}: {found:?}");
    }
    let setup = r.per_request.setup.as_ref().unwrap();
    for f in &found {
        let query = f.query.as_deref().unwrap_or("");
        assert!(!setup.statements.iter().any(|s| s.query == query), "{f:?}");
    }
    // Without the set-up recognised, the same statements would be read as waste.
    let mut pooled = r.clone();
    pooled.per_request.setup = None;
    assert!(!of_kind(&pooled, FindingKind::NPlusOne).is_empty());
    assert!(!of_kind(&pooled, FindingKind::RoundTrips).is_empty());
}

#[test]
fn round_trips_count_the_handler_statements_beside_the_set_up() {
    let mut statements: Vec<StatementRow> = (0..6)
        .map(|i| {
            stmt(
                &format!("SELECT name FROM items WHERE id = $1 AND owner = {i}"),
                1.0,
                1.0,
            )
        })
        .collect();
    statements.push(stmt("SET TIME ZONE $1", 1.0, 0.0));
    statements.push(stmt("SHOW server_version_num", 1.0, 1.0));
    let r = with_setup(report(statements, vec![]), 1.0, 10.0);
    let found = of_kind(&r, FindingKind::RoundTrips);
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.evidence["statements_per_request"], 6.0);
    assert_eq!(f.evidence["setup_statements_per_request"], 2.0);
    assert_eq!(f.evidence["utility_statements_per_request"], 0.0);
    assert!(f.suggestion.contains("besides its new connections' set-up"));
    assert!(!f.suggestion.contains("SHOW"));
}

#[test]
fn occasional_or_unknown_new_connections_are_not_per_request() {
    for sessions in [Some(0.2), None] {
        let mut r = report(vec![], vec![]);
        r.per_request.new_sessions = sessions;
        assert!(findings(&r).is_empty());
    }
}

// cache_candidate -------------------------------------------------------------------------

#[test]
fn a_read_of_unwritten_tables_every_request_is_a_cache_candidate() {
    let q = "SELECT p.plan, f.name FROM tenants p JOIN plan_features f ON f.plan = p.plan \
             WHERE p.id = $1";
    let r = report(
        vec![stmt(q, 1.0, 3.0)],
        vec![table("public.tenants", 2), table("public.plan_features", 1)],
    );
    let found = of_kind(&r, FindingKind::CacheCandidate);
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.query.as_deref(), Some(q));
    assert_eq!(f.table, None, "two tables");
    assert_eq!(f.evidence["tables_read"], 2.0);
    assert_eq!(f.avoidable_rows_per_request, 3.0);
    assert_eq!(f.round_trips_per_request, 1.0);
    for rule in [
        "tenant first in the key",
        "cache only the reachable path",
        "drop everything on mutation",
        "the TTL is the real guarantee across instances",
        "never cache session revocation",
    ] {
        assert!(f.suggestion.contains(rule), "{rule}");
    }
    assert!(
        f.suggestion
            .contains("public.tenants, public.plan_features")
    );
}

#[test]
fn written_tables_rare_reads_writes_and_unknown_relations_are_not_cache_candidates() {
    let lookup = "SELECT plan FROM tenants WHERE id = $1";
    let mut written = table("public.tenants", 2);
    written.rows_updated = 0.01;
    let cases = [
        (stmt(lookup, 1.0, 1.0), written),
        (stmt(lookup, 0.1, 1.0), table("public.tenants", 2)),
        (
            stmt("UPDATE tenants SET seen_at = now() WHERE id = $1", 1.0, 1.0),
            table("public.tenants", 2),
        ),
        (
            stmt("SELECT plan FROM tenants WHERE id = $1 FOR SHARE", 1.0, 1.0),
            table("public.tenants", 2),
        ),
        // Session revocation stays a live read.
        (
            stmt(
                "SELECT revoked_at IS NULL AND expires_at > now() FROM sessions WHERE id = $1",
                1.0,
                1.0,
            ),
            table("public.sessions", 2),
        ),
        // A view: what it reads is unknown.
        (
            stmt(
                "SELECT plan FROM tenants t JOIN tenant_summary s ON s.id = t.id WHERE t.id = $1",
                1.0,
                1.0,
            ),
            table("public.tenants", 2),
        ),
    ];
    for (s, t) in cases {
        let query = s.query.clone();
        let r = report(vec![s], vec![t]);
        let found = of_kind(&r, FindingKind::CacheCandidate);
        assert!(found.is_empty(), "{query}: {found:#?}");
    }
}

#[test]
fn a_write_in_a_subquery_table_spoils_the_cache() {
    let q =
        "SELECT name FROM projects WHERE id IN (SELECT project_id FROM stars WHERE user_id = $1)";
    let mut stars = table("public.stars", 10);
    stars.rows_inserted = 0.5;
    let r = report(
        vec![stmt(q, 1.0, 2.0)],
        vec![table("public.projects", 10), stars],
    );
    assert!(of_kind(&r, FindingKind::CacheCandidate).is_empty());
}

// seq_scan_heavy --------------------------------------------------------------------------

#[test]
fn a_scan_of_a_big_table_for_a_few_rows_is_seq_scan_heavy() {
    let q = "SELECT id, title FROM items WHERE owner_id = $1 LIMIT 20";
    let mut items = table("public.items", 500);
    items.seq_scans = 1.0;
    items.seq_rows_read = 20_000.0;
    items.rows_updated = 1.0; // no cache candidate in the way
    let r = report(vec![stmt(q, 1.0, 5.0)], vec![items]);
    let found = findings(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.kind, FindingKind::SeqScanHeavy);
    assert_eq!(f.table.as_deref(), Some("public.items"));
    assert_eq!(f.query.as_deref(), Some(q));
    assert_eq!(f.evidence["rows_returned_per_request"], 5.0);
    assert_eq!(f.evidence["read_to_returned_ratio"], 4000.0);
    assert_eq!(f.avoidable_rows_per_request, 19_995.0);
    assert_eq!(f.severity, Severity::High);
    assert!(f.suggestion.contains("index"));
}

#[test]
fn without_a_statement_of_its_own_the_index_fetches_estimate_the_rows() {
    let mut audit = table("app.audit_log", 100);
    audit.seq_rows_read = 5_000.0;
    audit.idx_rows_fetched = 2.0;
    audit.rows_inserted = 1.0;
    let r = report(vec![], vec![audit]);
    let found = of_kind(&r, FindingKind::SeqScanHeavy);
    assert_eq!(found[0].evidence["rows_returned_per_request"], 2.0);
    assert!(
        found[0]
            .suggestion
            .contains("No measured statement names this table")
    );
}

#[test]
fn tiny_tables_and_proportionate_scans_are_not_seq_scan_heavy() {
    let lookup = "SELECT name FROM countries WHERE code = $1";
    let mut tiny = table("public.countries", 1);
    tiny.seq_scans = 1.0;
    tiny.seq_rows_read = 250.0;
    tiny.rows_updated = 1.0;
    let r = report(vec![stmt(lookup, 1.0, 1.0)], vec![tiny]);
    assert!(of_kind(&r, FindingKind::SeqScanHeavy).is_empty());

    let listing = "SELECT id FROM tasks WHERE project_id = $1";
    let mut tasks = table("public.tasks", 40);
    tasks.seq_rows_read = 400.0;
    tasks.rows_updated = 1.0;
    let r = report(vec![stmt(listing, 1.0, 60.0)], vec![tasks]);
    assert!(of_kind(&r, FindingKind::SeqScanHeavy).is_empty());
}

// Parsing ---------------------------------------------------------------------------------

#[test]
fn placeholders_parse_and_utility_statements_are_not_counted() {
    let r = report(
        vec![
            stmt("BEGIN", 1.0, 0.0),
            stmt(
                "SELECT id FROM items WHERE owner_id = $1 AND kind = ANY($2) LIMIT $3",
                1.0,
                1.0,
            ),
            stmt("UPDATE items SET seen = $1 WHERE id = $2", 1.0, 1.0),
            stmt(
                "SELECT id FROM items WHERE (owner_id = $1 AND kind = '",
                1.0,
                1.0,
            ),
            stmt("COMMIT", 1.0, 0.0),
        ],
        vec![],
    );
    assert_eq!(parse_rate(&r.statements), (2, 3));
}

#[test]
fn findings_on_unparsed_text_say_so() {
    let truncated = "SELECT r.name FROM roles r JOIN role_members rm ON rm.role_id = r.id \
                     WHERE rm.user_id = $1 AND (r.scope = '";
    let r = report(vec![stmt(truncated, 1.0, 30.0)], vec![]);
    let found = of_kind(&r, FindingKind::CollectionToBoolean);
    assert_eq!(found.len(), 1);
    assert!(found[0].unparsed);
    assert!(found[0].suggestion.contains("did not parse"));

    let r = report(vec![stmt(truncated, 8.0, 1.0)], vec![]);
    let found = of_kind(&r, FindingKind::NPlusOne);
    assert!(found[0].unparsed);
}

// Ranking, names, severity ----------------------------------------------------------------

#[test]
fn findings_rank_by_severity_then_round_trips_db_time_and_rows() {
    let mut r = report(
        vec![
            stmt(GRANTS, 1.0, 40.0),
            stmt("SELECT id, name FROM users WHERE id = $1", 12.0, 1.0),
            stmt("SELECT code FROM feature_flags", 1.0, 300.0),
        ],
        vec![],
    );
    r.per_request.new_sessions = Some(1.0);
    let kinds: Vec<(FindingKind, Severity, f64, f64)> = findings(&r)
        .iter()
        .map(|f| {
            let s = &f.saves_per_request;
            (f.kind, f.severity, s.statements, s.rows_returned)
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (FindingKind::NPlusOne, Severity::High, 11.0, 0.0),
            (FindingKind::ConnectionPerRequest, Severity::High, 1.0, 0.0),
            (FindingKind::CollectionToBoolean, Severity::High, 0.0, 299.0),
            // The two once-per-request statements collapse into one.
            (FindingKind::RoundTrips, Severity::Medium, 1.0, 0.0),
            (
                FindingKind::CollectionToBoolean,
                Severity::Medium,
                0.0,
                39.0
            ),
        ]
    );
}

#[test]
fn db_time_breaks_ties_between_equal_round_trips() {
    let mut slow = stmt("SELECT rate FROM currencies WHERE code = $1", 1.0, 1.0);
    slow.mean_exec_ms = 0.5;
    let fast = stmt("SELECT name FROM countries WHERE code = $1", 1.0, 1.0);
    let r = report(
        vec![fast, slow],
        vec![table("public.currencies", 1), table("public.countries", 1)],
    );
    let found = findings(&r);
    let queries: Vec<&str> = found.iter().filter_map(|f| f.query.as_deref()).collect();
    assert_eq!(
        queries,
        vec![
            "SELECT rate FROM currencies WHERE code = $1",
            "SELECT name FROM countries WHERE code = $1"
        ]
    );
    assert_eq!(found[0].saves_per_request.db_time_ms, 0.5);
}

#[test]
fn kinds_have_one_snake_case_name_everywhere() {
    for kind in FindingKind::ALL {
        let name = kind.to_string();
        assert_eq!(name.parse::<FindingKind>(), Ok(kind));
        assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
        assert!(kind.one_line().ends_with('.'), "{name} has its line");
    }
    assert_eq!(FindingKind::NPlusOne.to_string(), "n_plus_one");
    let error = "n-plus-one".parse::<FindingKind>().unwrap_err();
    assert!(
        error.to_string().contains("n_plus_one, round_trips"),
        "{error}"
    );
    for severity in Severity::ALL {
        assert_eq!(severity.to_string().parse::<Severity>(), Ok(severity));
    }
}

/// A finding of `kind` that saves `saving`, as the severity rule sees it.
fn saving_of(kind: FindingKind, saving: Saving, parameters: Option<f64>) -> Finding {
    let mut f = Finding::new(kind, String::new());
    f.saves_per_request = saving;
    if let Some(n) = parameters {
        f.evidence.insert("parameters".into(), n);
    }
    f
}

#[test]
fn severity_rule() {
    let t = Thresholds::default();
    let rows = |rows_read, rows_returned| Saving {
        rows_read,
        rows_returned,
        ..Saving::default()
    };
    let trips = |statements| Saving {
        statements,
        ..Saving::default()
    };
    let time = |db_time_ms| Saving {
        db_time_ms,
        ..Saving::default()
    };
    let s = |saving| severity(&saving_of(FindingKind::NPlusOne, saving, None), &t);
    assert_eq!(s(rows(100.0, 0.0)), Severity::High);
    assert_eq!(s(rows(0.0, 100.0)), Severity::High);
    assert_eq!(s(trips(3.0)), Severity::High);
    assert_eq!(s(time(10.0)), Severity::High);
    assert_eq!(s(rows(10.0, 0.0)), Severity::Medium);
    assert_eq!(s(trips(1.0)), Severity::Medium);
    assert_eq!(s(time(1.0)), Severity::Medium);
    assert_eq!(s(rows(9.9, 9.9)), Severity::Low);
    assert_eq!(s(trips(0.9)), Severity::Low);
    assert_eq!(s(time(0.9)), Severity::Low);
    let of = |kind, saving, parameters| severity(&saving_of(kind, saving, parameters), &t);
    assert_eq!(
        of(FindingKind::ConnectionPerRequest, trips(0.5), None),
        Severity::High
    );
    // round_trips' saving is an upper bound: at most medium.
    assert_eq!(
        of(FindingKind::RoundTrips, trips(6.0), None),
        Severity::Medium
    );
    assert_eq!(of(FindingKind::RoundTrips, trips(0.0), None), Severity::Low);
    // A repeat without parameters is certain waste; with them, one step lower.
    let repeated = FindingKind::RepeatedStatement;
    assert_eq!(of(repeated, rows(0.0, 0.5), Some(0.0)), Severity::Medium);
    assert_eq!(of(repeated, trips(3.0), Some(0.0)), Severity::High);
    assert_eq!(of(repeated, rows(0.0, 300.0), Some(2.0)), Severity::Medium);
    assert_eq!(of(repeated, trips(1.0), Some(2.0)), Severity::Low);
}

#[test]
fn thresholds_read_from_a_partial_config() {
    let t: Thresholds = serde_json::from_str(r#"{"n_plus_one_min_calls_per_request": 5}"#).unwrap();
    assert_eq!(t.n_plus_one_min_calls_per_request, 5.0);
    assert_eq!(t.seq_scan_min_pages, 8);
    assert!(serde_json::from_str::<Thresholds>(r#"{"typo": 1}"#).is_err());
}

#[test]
fn findings_round_trip_through_json() {
    let r = report(vec![stmt(GRANTS, 1.0, 40.0)], vec![]);
    let found = findings(&r);
    let json = serde_json::to_string(&found).unwrap();
    assert!(json.contains(r#""kind":"collection_to_boolean""#));
    assert!(json.contains(r#""severity":"medium""#));
    let back: Vec<Finding> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, found);
}

#[test]
fn a_write_per_item_is_batched_without_any() {
    let r = report(
        vec![stmt(
            "INSERT INTO events (user_id, kind) VALUES ($1, $2)",
            10.0,
            1.0,
        )],
        vec![],
    );
    let found = of_kind(&r, FindingKind::NPlusOne);
    assert_eq!(found[0].round_trips_per_request, 9.0);
    assert!(found[0].suggestion.contains("multi-row INSERT"));
    assert!(!found[0].suggestion.contains("ANY"));
}

// Precision: pages, batch loads, loops, credentials, reference reads --------------------

#[test]
fn the_page_is_neither_a_collection_nor_a_cache_candidate() {
    let pages = [
        "SELECT id, title FROM articles ORDER BY published_on DESC LIMIT $1",
        "SELECT id, title FROM articles ORDER BY id OFFSET $1",
        "SELECT id, title FROM articles ORDER BY id FETCH FIRST 5 ROWS ONLY",
    ];
    for page in pages {
        for rows in [3.0, 25.0] {
            let r = report(
                vec![stmt(page, 1.0, rows)],
                vec![table("public.articles", 2)],
            );
            assert!(findings(&r).is_empty(), "{page} ({rows} rows)");
        }
    }
    // A listing with its count: the count is the page's total, and without a LIMIT the
    // statement that returns the most rows is the page.
    let count = "SELECT count(*) FROM articles WHERE author_id = $1";
    for listing in [
        "SELECT id, title FROM articles WHERE author_id = $1 ORDER BY id LIMIT $2 OFFSET $3",
        "SELECT id, title FROM articles WHERE author_id = $1",
    ] {
        let r = report(
            vec![stmt(count, 1.0, 1.0), stmt(listing, 1.0, 40.0)],
            vec![table("public.articles", 2)],
        );
        assert!(findings(&r).is_empty(), "{listing}: {:#?}", findings(&r));
    }
}

#[test]
fn a_batch_load_by_a_list_of_keys_is_not_a_collection() {
    for batch in [
        "SELECT name, id FROM categories WHERE id IN ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        "SELECT name, id FROM categories WHERE id = ANY($1)",
        "SELECT name, id FROM categories WHERE id IN ($1 /*, ... */)",
    ] {
        let r = report(vec![stmt(batch, 1.0, 10.0)], vec![]);
        assert!(
            of_kind(&r, FindingKind::CollectionToBoolean).is_empty(),
            "{batch}"
        );
    }
    // A subquery is no list of keys.
    let r = report(
        vec![stmt(
            "SELECT name FROM categories WHERE id IN (SELECT category_id FROM grants WHERE user_id = $1)",
            1.0,
            30.0,
        )],
        vec![],
    );
    assert_eq!(of_kind(&r, FindingKind::CollectionToBoolean).len(), 1);
}

#[test]
fn the_list_an_n_plus_one_walks_is_not_a_collection() {
    let r = report(
        vec![
            stmt("SELECT id FROM small", 1.0, 10.0),
            stmt("SELECT label FROM small WHERE id = $1", 10.0, 1.0),
        ],
        vec![],
    );
    let kinds: Vec<FindingKind> = findings(&r).iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![FindingKind::NPlusOne, FindingKind::RoundTrips]);
}

#[test]
fn credential_checks_are_never_cache_candidates() {
    let reads = [
        (
            "SELECT user_id FROM sessions WHERE id = $1 AND expires_at > now()",
            "public.sessions",
        ),
        ("SELECT id, email FROM users WHERE id = $1", "public.users"),
        (
            "SELECT id, username FROM auth_user WHERE id = $1",
            "public.auth_user",
        ),
        (
            "SELECT id, role FROM directus_shares WHERE token = $1 AND status = $2",
            "public.directus_shares",
        ),
    ];
    for (query, name) in reads {
        let r = report(vec![stmt(query, 1.0, 1.0)], vec![table(name, 1)]);
        assert!(findings(&r).is_empty(), "{query}");
    }
}

#[test]
fn only_small_keyed_reference_reads_are_cache_candidates_and_three_at_most() {
    let lookup = "SELECT rate FROM currencies WHERE code = $1";
    // A growing table, a listing: not reference data.
    let r = report(
        vec![stmt(lookup, 1.0, 1.0)],
        vec![table("public.currencies", 9)],
    );
    assert!(findings(&r).is_empty());
    let r = report(
        vec![stmt(lookup, 1.0, 6.0)],
        vec![table("public.currencies", 1)],
    );
    assert!(findings(&r).is_empty());

    let tables = ["currencies", "countries", "locales", "timezones", "units"];
    let statements = tables
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut s = stmt(
                &format!("SELECT label FROM {name} WHERE code = $1"),
                1.0,
                1.0,
            );
            s.mean_exec_ms = 0.1 * (i + 1) as f64;
            s
        })
        .collect();
    let rows = tables
        .iter()
        .map(|name| table(&format!("public.{name}"), 1))
        .collect();
    let found = of_kind(&report(statements, rows), FindingKind::CacheCandidate);
    let kept: Vec<&str> = found.iter().filter_map(|f| f.table.as_deref()).collect();
    assert_eq!(
        kept,
        vec!["public.units", "public.timezones", "public.locales"],
        "the three that save the most db time"
    );
    assert!(found[0].suggestion.contains("runs 1 time per request"));
}

#[test]
fn a_parameterless_statement_twice_is_certain_waste() {
    let count = "SELECT COUNT(*) AS __count FROM admin_log";
    let r = report(
        vec![stmt(count, 2.0, 1.0)],
        vec![table("public.admin_log", 1)],
    );
    let found = findings(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.kind, FindingKind::RepeatedStatement);
    assert_eq!(f.severity, Severity::Medium);
    assert_eq!(f.evidence["parameters"], 0.0);
    assert_eq!(
        f.saves_per_request,
        Saving {
            statements: 1.0,
            rows_read: 0.0,
            rows_returned: 1.0,
            db_time_ms: 0.1,
            ..Saving::default()
        }
    );
    assert!(f.suggestion.contains("Compute it once per request"));
    assert!(f.suggestion.contains("paginator"), "{}", f.suggestion);

    // Ten times without parameters is no N+1: the same answer ten times.
    let r = report(vec![stmt(count, 10.0, 1.0)], vec![]);
    let kinds: Vec<FindingKind> = findings(&r).iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![FindingKind::RepeatedStatement, FindingKind::RoundTrips]
    );
    assert_eq!(findings(&r)[0].severity, Severity::High);
}

#[test]
fn a_repeat_with_parameters_is_a_memoisation_candidate_of_lower_severity() {
    let q = "SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2";
    let r = report(vec![stmt(q, 2.0, 1.0)], vec![]);
    let f = &of_kind(&r, FindingKind::RepeatedStatement)[0];
    assert_eq!(f.severity, Severity::Low);
    assert_eq!(f.evidence["parameters"], 2.0);
    assert!(f.suggestion.contains("memoise"));
    assert!(!f.suggestion.contains("paginator"));
    // Once per request, or a write, is no repeat.
    for s in [
        stmt(q, 1.0, 1.0),
        stmt("UPDATE counters SET n = n + 1", 2.0, 1.0),
    ] {
        assert!(of_kind(&report(vec![s], vec![]), FindingKind::RepeatedStatement).is_empty());
    }
}

#[test]
fn seq_scan_evidence_counts_rows_returned_through_joins() {
    let page = "SELECT a.id, a.title FROM articles a JOIN authors u ON u.id = a.author_id \
                ORDER BY a.published_on DESC LIMIT $1";
    let mut articles = table("public.articles", 800);
    articles.seq_scans = 1.0;
    articles.seq_rows_read = 40_000.0;
    let r = report(
        vec![stmt(page, 1.0, 25.0)],
        vec![articles, table("public.authors", 1)],
    );
    let found = findings(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.kind, FindingKind::SeqScanHeavy);
    assert_eq!(f.evidence["rows_returned_per_request"], 25.0);
    assert_eq!(f.evidence["read_to_returned_ratio"], 1600.0);
    assert_eq!(f.saves_per_request.rows_read, 39_975.0);
    assert!((f.saves_per_request.db_time_ms - 0.1 * 39_975.0 / 40_000.0).abs() < 1e-12);
    assert!(
        f.suggestion.contains("ORDER BY columns"),
        "{}",
        f.suggestion
    );
    assert!(f.suggestion.contains("joins included"));
}

#[test]
fn savings_follow_the_documented_formulas() {
    // collection_to_boolean: rows returned minus one per call, db time in proportion.
    let r = report(vec![stmt(GRANTS, 2.0, 50.0)], vec![]);
    let f = &of_kind(&r, FindingKind::CollectionToBoolean)[0];
    assert_eq!(f.saves_per_request.rows_returned, 98.0);
    assert_eq!(f.saves_per_request.statements, 0.0);
    assert!((f.saves_per_request.db_time_ms - 0.2 * 98.0 / 100.0).abs() < 1e-12);
    // n_plus_one: calls minus one statements, nothing else.
    let r = report(
        vec![stmt("SELECT a FROM b WHERE id = $1", 5.0, 1.0)],
        vec![],
    );
    let f = &of_kind(&r, FindingKind::NPlusOne)[0];
    assert_eq!(
        f.saves_per_request,
        Saving {
            statements: 4.0,
            ..Saving::default()
        }
    );
    // cache_candidate: everything the read costs, its table's rows read included when it
    // is the table's only reader.
    let mut currencies = table("public.currencies", 1);
    currencies.seq_rows_read = 30.0;
    let r = report(
        vec![stmt(
            "SELECT rate FROM currencies WHERE code = $1",
            1.0,
            1.0,
        )],
        vec![currencies],
    );
    let f = &of_kind(&r, FindingKind::CacheCandidate)[0];
    assert_eq!(
        f.saves_per_request,
        Saving {
            statements: 1.0,
            rows_read: 30.0,
            rows_returned: 1.0,
            db_time_ms: 0.1,
            ..Saving::default()
        }
    );
    let json = serde_json::to_value(f).unwrap();
    for key in ["statements", "rows_read", "rows_returned", "db_time_ms"] {
        assert!(json["saves_per_request"][key].is_number(), "{key}");
    }
}

/// `stmt` with what it wrote per request.
fn writer(query: &str, calls: f64, rows_per_call: f64, writes: Writes) -> StatementRow {
    StatementRow {
        writes_per_request: writes,
        ..stmt(query, calls, rows_per_call)
    }
}

fn wal(records: f64, bytes: f64) -> Writes {
    Writes {
        wal_records: Some(records),
        wal_bytes: Some(bytes),
        wal_full_page_images: Some(0.0),
        blocks_dirtied: records,
        ..Writes::default()
    }
}

#[test]
fn a_get_that_writes_on_every_request_is_named_with_its_wal() {
    let touch = "UPDATE sessions SET last_seen = now() WHERE id = $1";
    let r = report(vec![writer(touch, 1.0, 1.0, wal(1.0, 72.0))], vec![]);
    let f = &of_kind(&r, FindingKind::WritesOnRead)[0];
    assert_eq!(f.query.as_deref(), Some(touch));
    assert_eq!(f.evidence["wal_bytes_per_request"], 72.0);
    assert_eq!(f.evidence["rows_written_per_request"], 1.0);
    assert_eq!(f.saves_per_request.wal_bytes, 72.0);
    assert_eq!(f.saves_per_request.statements, 1.0);
    assert_eq!(f.severity, Severity::Medium);
    assert!(f.suggestion.contains("last_seen < now() - interval"));
    assert!(f.saves_per_request.describe().contains("72 bytes of WAL"));
    // Before PG 13 (no WAL counters) the rows it changed decide.
    let old = Writes {
        wal_records: None,
        wal_bytes: None,
        ..wal(1.0, 0.0)
    };
    let r = report(vec![writer(touch, 1.0, 1.0, old)], vec![]);
    assert_eq!(of_kind(&r, FindingKind::WritesOnRead).len(), 1);
}

#[test]
fn posts_guarded_writes_rare_writes_and_reads_that_prune_are_not_writes_on_read() {
    let touch = "UPDATE sessions SET last_seen = now() WHERE id = $1";
    let mut post = report(vec![writer(touch, 1.0, 1.0, wal(1.0, 72.0))], vec![]);
    post.target.method = "POST".into();
    // Runs every request, changes nothing: no WAL, no row.
    let guarded = report(vec![writer(touch, 1.0, 0.0, wal(0.0, 0.0))], vec![]);
    // Writes on one request in ten.
    let rare = report(vec![writer(touch, 0.1, 1.0, wal(0.1, 7.2))], vec![]);
    // A read that pruned a page: WAL, but no write of the app's.
    let read = report(
        vec![writer(
            "SELECT id FROM items WHERE owner = $1",
            1.0,
            3.0,
            wal(1.0, 60.0),
        )],
        vec![],
    );
    for r in [post, guarded, rare, read] {
        assert!(
            of_kind(&r, FindingKind::WritesOnRead).is_empty(),
            "{:?}",
            r.statements
        );
    }
}

#[test]
fn a_sort_that_spills_is_named_and_high_from_a_megabyte() {
    let sort = "SELECT id, title FROM events WHERE id <= $1 ORDER BY title LIMIT $2";
    let spill = |blocks: f64| Writes {
        temp_blocks_written: blocks,
        ..Writes::default()
    };
    let r = report(vec![writer(sort, 1.0, 1000.0, spill(9.0))], vec![]);
    let f = &of_kind(&r, FindingKind::SpillsToDisk)[0];
    assert_eq!(f.evidence["temp_blocks_written_per_request"], 9.0);
    assert_eq!(f.saves_per_request.temp_blocks_written, 9.0);
    assert_eq!(f.severity, Severity::Medium);
    assert!(
        f.suggestion.contains("72 kB of temp files"),
        "{}",
        f.suggestion
    );
    let r = report(vec![writer(sort, 1.0, 1000.0, spill(256.0))], vec![]);
    let f = &of_kind(&r, FindingKind::SpillsToDisk)[0];
    assert_eq!(f.severity, Severity::High);
    assert!(f.suggestion.contains("2.0 MB"), "{}", f.suggestion);
    let r = report(vec![writer(sort, 1.0, 1000.0, spill(0.5))], vec![]);
    assert!(of_kind(&r, FindingKind::SpillsToDisk).is_empty());
}
