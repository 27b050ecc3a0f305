//! The prose of each note: `Note::message` (in `notes.rs`) asks these functions in turn,
//! each owning a group of kinds.

use std::time::Duration;

use super::notes::{self, Note, describe_churn};

/// `2024-05-01 12:00:00 UTC` from RFC 3339.
fn utc(rfc3339: &str) -> String {
    rfc3339.replace('T', " ").replace('Z', " UTC")
}

fn whole_seconds(seconds: u64) -> String {
    humantime::format_duration(Duration::from_secs(seconds.max(1))).to_string()
}

/// The notes about the run's options and credentials.
pub(super) fn setup_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::AllowStatusRejection { status } => format!(
            "--allow-status {status}: rejected requests do not make this report invalid, so \
             its numbers may measure the rejection path rather than the endpoint"
        ),
        Note::TokenExpiresSoon {
            token,
            expires_at,
            expires_in_seconds,
        } => format!(
            "{token} expires at {} (in {}), within 5 minutes of the run's estimated end: a slow \
             run may measure rejected requests",
            utc(expires_at),
            whole_seconds(*expires_in_seconds)
        ),
        Note::TlsInsecure => "--insecure: the target's TLS certificate was not verified".into(),
        Note::AnonymousAnswerAccepted { status, body_bytes } => format!(
            "the app answered the same without your credentials (both requests got {status} \
             and the same {body_bytes}-byte body), accepted by --allow-anonymous-equal as a \
             public endpoint"
        ),
        Note::UnauthenticatedAnswered { answered, requests } => format!(
            "the unauthenticated baseline got {answered} of {requests} responses with a 2xx \
             status: the endpoint answers without credentials, so the difference is not the \
             cost of authentication"
        ),
        Note::AllowedStatusResponses {
            status,
            count,
            requests,
        } => format!(
            "{count} of {requests} responses were {status}, accepted by --allow-status {status}"
        ),
        _ => return None,
    })
}

/// How to make pg_stat_statements available, with or without a restart.
fn statements_setup_hint(preloaded: bool) -> &'static str {
    match preloaded {
        true => {
            "run CREATE EXTENSION pg_stat_statements; in the target database and in the admin \
             database (--admin-db)"
        }
        false => {
            "add pg_stat_statements to shared_preload_libraries in postgresql.conf, restart the \
             server, then run CREATE EXTENSION pg_stat_statements; in the target and admin \
             databases"
        }
    }
}

/// The notes about where and how the statistics are read.
pub(super) fn statistics_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::AdminDbIsTarget { admin_db } => format!(
            "--admin-db is the target database {admin_db:?}: statistics are read through the \
             target and the tool's own footprint is subtracted"
        ),
        Note::AdminDbLacksPgStatStatements { admin_db } => format!(
            "pg_stat_statements is not installed in the admin database {admin_db:?}, so \
             statistics are read through the target and the tool's own footprint is \
             subtracted; run CREATE EXTENSION pg_stat_statements; in {admin_db:?} to avoid this"
        ),
        Note::AdminDbUnreachable { admin_db, error } => format!(
            "could not connect to the admin database {admin_db:?} ({error}), so statistics \
             are read through the target and the tool's own footprint is subtracted"
        ),
        Note::ServerOlderThan15 { version } => format!(
            "PostgreSQL {version} is older than 15: its stats collector may hold an idle pooled \
             connection's counters until that connection is used again, so figures are \
             best effort; PG 13 and 14 are past end of life"
        ),
        Note::RoleCannotReadAllStats { role } => format!(
            "role {role:?} cannot see other roles' statement texts or backend states: statement \
             totals stay exact but the per-statement breakdown is merged, and settling waits \
             out the flush timer after the last request instead of watching the app's \
             backends; fix with GRANT pg_read_all_stats TO {role};"
        ),
        Note::PgStatStatementsNotLoaded => format!(
            "pg_stat_statements is not loaded, so statements, rows returned and the \
             per-statement breakdown are unavailable; {}",
            statements_setup_hint(false)
        ),
        Note::PgStatStatementsExtensionMissing => format!(
            "pg_stat_statements is loaded but its extension exists in neither the target \
             nor the admin database, so statement figures are unavailable; {}",
            statements_setup_hint(true)
        ),
        Note::TrackPlanningOff => "pg_stat_statements.track_planning is off, so plan time \
                                    is not counted and a statement re-planned on every request \
                                    goes unnamed: a superuser can turn it on without a restart \
                                    (ALTER SYSTEM SET pg_stat_statements.track_planning = on; \
                                    SELECT pg_reload_conf();)"
            .into(),
        Note::ComputeQueryIdOff => "compute_query_id is off, so pg_stat_statements records \
                                    nothing; set compute_query_id = auto"
            .into(),
        _ => return plans_message(note),
    })
}

/// The notes about the statements' texts and plans.
fn plans_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::StatementTextsUnavailable { entries } => format!(
            "{entries} pg_stat_statements entries changed in the window, but their texts could \
             not be read after it (evicted or reset meanwhile): they are shown as {}",
            notes::UNAVAILABLE_TEXT
        ),
        Note::PgStatStatementsEntriesVanished { entries, node } => {
            let line = format!(
                "{entries} pg_stat_statements entries vanished during the window: entries may \
                 have been evicted"
            );
            match node {
                Some(node) => format!("{node}: {line}"),
                None => line,
            }
        }
        Note::PlansSkippedConnection { error } => {
            format!("plans skipped: cannot connect to the target database: {error}")
        }
        Note::PlansSkippedPrivilege {
            role,
            error,
            pg_read_all_data,
        } => {
            let grant = match pg_read_all_data {
                true => {
                    format!("GRANT pg_read_all_data TO {role}; (or GRANT SELECT on those tables)")
                }
                false => format!("GRANT SELECT ON <those tables> TO {role};"),
            };
            format!(
                "plans skipped: EXPLAIN needs SELECT on the tables, and {role} may not read them \
                 ({error}); {grant}, or pass --no-plans"
            )
        }
        _ => return None,
    })
}

/// The notes about the measured window and the nodes in it.
pub(super) fn window_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::ServerClockAhead { seconds } => format!(
            "the database server's clock stepped {seconds:.1} s ahead of pgcost's during the \
             run; the settle waits were timed by pgcost's own clock, so the counts are complete, \
             but timestamps read from the server are off by that much"
        ),
        Note::BackgroundWhileIdle { node, replica } => format!(
            "{}: counters moved while the app was idle and pgcost sent nothing (during a settle \
             wait): other traffic (other services, cron jobs, monitoring) runs on this database, \
             and the figures include whatever of it fell in the window",
            match replica {
                true => format!("replica {node}"),
                false => format!("database {node:?}"),
            }
        ),
        Note::ReplicaNotInRecovery { node } => format!(
            "--replica {node} is not in recovery (pg_is_in_recovery() is false): it is a \
             primary, not a standby; its figures are counted as a replica's all the same. Give a \
             database the app writes to with --db"
        ),
        Note::ReplicaLag {
            node,
            lag_seconds,
            settle_timeout_seconds,
        } => format!(
            "replica {node} replayed the primary's changes {lag_seconds:.1} s late at the end of \
             the window (more than --settle-timeout, {settle_timeout_seconds:.0} s): the app's \
             reads there saw data that old. Its counters are complete all the same: they count \
             the queries it ran, not the WAL it replayed"
        ),
        Note::UnmeasuredDatabase {
            database,
            transactions_per_request,
            rows_read_per_request,
            add,
        } => format!(
            "database {database:?} also moved during the window ({transactions_per_request:.1} \
             transactions and {rows_read_per_request:.1} rows read per request, not counted \
             here): the request may use it, or other traffic on this server; to measure it too, \
             add {add}"
        ),
        Note::MovedNothing { requests } => format!(
            "every request succeeded, but no counter of the measured database moved (0 \
             transactions, 0 statements, 0 rows in {requests} requests): the app's database \
             work happened elsewhere, on a read replica (add it with --replica URL), in another \
             database (--db URL) or in a cache"
        ),
        Note::UslPoorFit { r_squared } => format!(
            "the Universal Scalability Law fits the curve poorly (r² {r_squared:.2}): its peak \
             is not a prediction"
        ),
        _ => return churn_message(note),
    })
}

/// The notes about connections that opened or closed, and work pg_stat_statements missed.
fn churn_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::WindowsDiscarded { discarded, reasons } => format!(
            "{discarded} window(s) discarded and measured again: {}",
            reasons.join("; ")
        ),
        Note::RareEvents(work) => work.message(),
        Note::WarmupNotSteady { requests, seconds } => format!(
            "the warm-up stopped at its cap ({requests} requests, {seconds:.0} s) before two \
             slices agreed on every statement's rows and blocks per call: plans or caches may \
             still have been changing when the window opened"
        ),
        Note::PlanChanged {
            statement,
            rows_per_call,
            blocks_per_call,
            seq_scanned,
            retries,
        } => plan_changed(
            statement,
            *rows_per_call,
            *blocks_per_call,
            seq_scanned,
            *retries,
        ),
        Note::UncountedTransactions {
            transactions,
            statements,
            beyond_per_request,
        } => format!(
            "transactions exceed statements: {transactions} transactions against {statements} \
             statements ({beyond_per_request:.3} per request beyond them) did work \
             pg_stat_statements does not count, such as DEALLOCATE, a statement prepared \
             outside a transaction, or an empty transaction (a driver's ping, or an idle \
             connection catching up with catalog changes made elsewhere in the cluster)"
        ),
        Note::ConnectionChurn {
            opened,
            closed,
            retries,
            uncounted_transactions,
            uncounted_per_request,
        } => {
            let mut text = format!(
                "connection churn: {} during the window, and no clean window within --retries \
                 {retries}: the figures include their set-up (connecting, catalog reads, the \
                 driver's set-up statements) and any closing work",
                describe_churn(*opened, *closed)
            );
            if let (Some(extra), Some(each)) = (uncounted_transactions, uncounted_per_request) {
                text.push_str(&format!(
                    "; transactions beyond statements: {extra} ({each:.3} per request)"
                ));
            }
            text
        }
        Note::NewConnections {
            sessions,
            per_request,
        } => format!(
            "the app opened {sessions} new connection(s) during the window ({per_request:.2} \
             per request): their set-up (catalog reads, authentication) is billed to the \
             endpoint"
        ),
        _ => return None,
    })
}

fn plan_changed(
    statement: &str,
    rows: [f64; 2],
    blocks: [f64; 2],
    seq_scanned: &[String],
    retries: u32,
) -> String {
    let mut text = format!(
        "plan change inside the window, in every window within --retries {retries}: {statement} \
         went from {:.1} to {:.1} blocks and {:.1} to {:.1} rows per call between the halves \
         of the burst (a prepared statement switching to a generic plan, or a cache filling); \
         the figures mix both plans",
        blocks[0], blocks[1], rows[0], rows[1]
    );
    if !seq_scanned.is_empty() {
        text.push_str(&format!(
            "; tables scanned sequentially in the window: {}",
            seq_scanned.join(", ")
        ));
    }
    text.push_str("; a longer --warmup, or plan_cache_mode set for the app's role, gives one plan");
    text
}

/// The notes of a run with `--allow-writes`: what its requests and the whole run wrote.
pub(super) fn writes_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::WritesAllowed { tables } if tables.is_empty() => {
            "--allow-writes: the requests wrote no row (pg_stat_user_tables)".to_string()
        }
        Note::RunWrote {
            tables,
            xid_from,
            xid_to,
        } => {
            let mut lines = vec![format!(
                "--allow-writes: the run (probe and warm-ups included) used transaction ids \
                 {xid_from} to {} and wrote {}",
                xid_to - 1,
                match tables.is_empty() {
                    true => "no row".to_string(),
                    false => format!("{} table(s):", tables.len()),
                }
            )];
            for t in tables {
                let delete = (t.delete.as_deref()).map_or(String::new(), |d| {
                    format!("; to delete them (pgcost does not): {d}")
                });
                lines.push(format!(
                    "  {}: {} inserted, {} updated, {} deleted{delete}",
                    t.table, t.inserted, t.updated, t.deleted
                ));
            }
            lines.join("\n")
        }
        Note::WritesAllowed { tables } => {
            let list: Vec<String> = tables.iter().map(|t| t.describe()).collect();
            format!(
                "--allow-writes: the requests wrote rows, per request: {}; the probe and the \
                 warm-up wrote too, and pgcost does not give them back",
                list.join("; ")
            )
        }
        _ => return None,
    })
}

/// The notes about other traffic: other backends and roles, PgBouncer's own statements.
pub(super) fn traffic_message(note: &Note) -> Option<String> {
    Some(match note {
        Note::BurstSized {
            requested,
            sent,
            background_per_second,
        } => format!(
            "the burst sent {sent} requests, not -n {requested}: beside a background of \
             {background_per_second:.1} statements a second in the app's roles, which comes in \
             bursts, {requested} requests would have left their figures uncertain by more than \
             15% (the time --max-duration leaves bounds the burst)"
        ),
        Note::BackgroundNotSubtracted {
            backends,
            app_roles,
            shares_app_role,
        } => background_not_subtracted(backends, *app_roles, *shares_app_role),
        Note::BackgroundSubtracted {
            figure,
            share,
            max_share,
            period_seconds,
        } => format!(
            "the background subtracted was {:.0}% of the signal in {figure} (more than \
             --max-background {:.0}%){}: the figures are corrected within their stated \
             uncertainty, which holds only while the background keeps its pace",
            share * 100.0,
            max_share * 100.0,
            period_seconds
                .map(|p| format!("; it runs every {p:.1} s"))
                .unwrap_or_default()
        ),
        Note::OtherRolesStatements { roles } => {
            let calls: i64 = roles.iter().map(|o| o.calls).sum();
            let each: Vec<String> = (roles.iter())
                .map(|o| format!("{} {}", o.role, o.calls))
                .collect();
            format!(
                "{calls} statement call(s) of roles outside --app-role ran in the window ({}): \
                 left out of the statement figures",
                each.join(", ")
            )
        }
        Note::PgbouncerOwnStatements { .. } => pgbouncer_own(note),
        Note::PgbouncerChecksKept { calls, check_query } => format!(
            "{calls} call(s) of {check_query:?}, PgBouncer's server_check_query, are more than \
             PgBouncer can have sent in this window, and were kept as the app's own"
        ),
        _ => return None,
    })
}

fn background_not_subtracted(
    backends: &[String],
    app_roles: bool,
    shares_app_role: bool,
) -> String {
    let shown: Vec<&str> = backends.iter().take(3).map(|s| s.as_str()).collect();
    let more = match backends.len().saturating_sub(shown.len()) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    let statements = match (app_roles, shares_app_role) {
        (false, _) => {
            "--app-role ROLE counts only the app's statements (pg_stat_statements by role), and "
        }
        (true, false) => "statements are the app roles' only (--app-role); ",
        (true, true) => {
            "the statement figures include theirs too, since they share an --app-role role \
             (the app's own pool or jobs); "
        }
    };
    format!(
        "{} client backend(s) were active in the window while pgcost sent no requests, or \
         belong to roles outside --app-role ({}{more}): the \
         pg_stat_database figures (transactions, rows read, rows fetched and written, blocks) \
         include their work; for exact numbers, {statements}--control DURATION measures that \
         background before the warm-up and subtracts it",
        backends.len(),
        shown.join(", "),
    )
}

fn pgbouncer_own(note: &Note) -> String {
    let Note::PgbouncerOwnStatements {
        sets,
        checks,
        check_query,
        resets,
        reset_query,
        calls_per_request,
        transactions_taken,
        transactions_maybe_left,
    } = note
    else {
        unreachable!("called with PgBouncer's own statements")
    };
    let mut parts: Vec<String> = (sets.iter())
        .map(|(param, calls)| format!("{calls} SET {param}"))
        .collect();
    if *checks > 0 {
        parts.push(format!("{checks} server check(s) ({check_query:?})"));
    }
    if *resets > 0 {
        parts.push(format!("{resets} reset(s) ({reset_query:?})"));
    }
    let mut line = format!(
        "PgBouncer's own statements landed in the window ({}; {calls_per_request:.2} per \
         request): they are left out of statements and transactions",
        parts.join(", "),
    );
    if *transactions_maybe_left > 0 {
        line.push_str(&format!(
            "; {transactions_taken} transaction(s) were taken out, and up to \
             {transactions_maybe_left} more of the SETs' may remain in transactions (several \
             parameters can share one)"
        ));
    }
    line
}
