//! Notes: the caveats a report carries, typed. Each kind has a stable `code()` that CI can
//! match on (listed in docs/json.md) and a `message()`, the prose the views show; the I/O
//! layer produces them with the figures they name instead of formatting prose. JSON shows
//! them twice: `warnings` (the messages, kept for compatibility) and `notes` (code,
//! message and the typed fields).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How many statement calls one role outside `--app-role` ran in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoleCalls {
    pub role: String,
    pub calls: i64,
}

/// One caveat that leaves a report's numbers usable. The serde tag is the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Note {
    /// `--allow-status 401` or `403`: rejections do not make the report invalid.
    AllowStatusRejection { status: u16 },
    /// A JWT the requests carry expires within 5 minutes of the run's estimated end.
    TokenExpiresSoon {
        token: String,
        /// RFC 3339, UTC.
        expires_at: String,
        expires_in_seconds: u64,
    },
    /// `--insecure`.
    TlsInsecure,
    /// The same answer with and without credentials, accepted by --allow-anonymous-equal.
    AnonymousAnswerAccepted { status: u16, body_bytes: usize },
    /// `--admin-db` names the target: statistics are read through it.
    AdminDbIsTarget { admin_db: String },
    /// The admin database lacks the pg_stat_statements extension the target has.
    AdminDbLacksPgStatStatements { admin_db: String },
    /// The admin database refused the connection.
    AdminDbUnreachable { admin_db: String, error: String },
    /// PostgreSQL 13 or 14: the stats collector may hold counters back.
    #[serde(rename = "server_older_than_15")]
    ServerOlderThan15 { version: String },
    /// The statistics role lacks pg_read_all_stats.
    RoleCannotReadAllStats { role: String },
    /// pg_stat_statements is not in shared_preload_libraries.
    PgStatStatementsNotLoaded,
    /// pg_stat_statements is loaded but its extension exists in neither database.
    PgStatStatementsExtensionMissing,
    /// compute_query_id = off.
    ComputeQueryIdOff,
    /// Entries that changed in the window whose texts could not be read after it.
    StatementTextsUnavailable { entries: usize },
    /// Entries that vanished from pg_stat_statements during the window (evicted);
    /// `node` names the database when several were measured.
    PgStatStatementsEntriesVanished {
        entries: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<String>,
    },
    /// The server's clock stepped ahead of pgcost's during the run.
    ServerClockAhead { seconds: f64 },
    /// Counters moved during a settle wait while the app was idle.
    BackgroundWhileIdle { node: String, replica: bool },
    /// A `--replica` that is not in recovery.
    ReplicaNotInRecovery { node: String },
    /// A replica's replay lag longer than --settle-timeout.
    ReplicaLag {
        node: String,
        lag_seconds: f64,
        settle_timeout_seconds: f64,
    },
    /// Windows discarded for app connection churn and measured again.
    WindowsDiscarded {
        discarded: u32,
        reasons: Vec<String>,
    },
    /// Transactions beyond the statements pg_stat_statements counted.
    UncountedTransactions {
        transactions: i64,
        statements: i64,
        beyond_per_request: f64,
    },
    /// App connections opened or closed in every window within --retries.
    ConnectionChurn {
        opened: i64,
        closed: i64,
        retries: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uncounted_transactions: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uncounted_per_request: Option<f64>,
    },
    /// Another database of the server moved in the window without being measured.
    UnmeasuredDatabase {
        database: String,
        transactions_per_request: f64,
        rows_read_per_request: f64,
        /// The `--db` that would add it.
        add: String,
    },
    /// Every request succeeded but no counter of the measured databases moved.
    MovedNothing { requests: u64 },
    /// Responses outside 2xx and 3xx accepted by --allow-status.
    AllowedStatusResponses {
        status: u16,
        count: u64,
        requests: u64,
    },
    /// The app opened connections during the window.
    NewConnections { sessions: i64, per_request: f64 },
    /// Other client backends were active in the window, not subtracted.
    BackgroundNotSubtracted {
        backends: Vec<String>,
        app_roles: bool,
    },
    /// Statement calls of roles outside --app-role, left out.
    OtherRolesStatements { roles: Vec<RoleCalls> },
    /// The unauthenticated baseline got 2xx answers.
    UnauthenticatedAnswered { answered: u64, requests: u64 },
    /// PgBouncer's own statements, taken out of the window.
    PgbouncerOwnStatements {
        sets: BTreeMap<String, i64>,
        checks: i64,
        check_query: String,
        resets: i64,
        reset_query: String,
        calls_per_request: f64,
        transactions_taken: i64,
        transactions_maybe_left: i64,
    },
    /// Calls of the server check query beyond what PgBouncer can have sent, kept.
    PgbouncerChecksKept { calls: i64, check_query: String },
    /// Plans skipped: no connection to the target database.
    PlansSkippedConnection { error: String },
    /// Plans skipped: the role may not read the tables.
    PlansSkippedPrivilege {
        role: String,
        error: String,
        pg_read_all_data: bool,
    },
    /// The USL fits the ramp's curve poorly.
    UslPoorFit { r_squared: f64 },
    /// With --control: the background subtracted was above --max-background of the signal
    /// in some figure; the figures stand, within their stated uncertainty.
    BackgroundSubtracted {
        figure: String,
        share: f64,
        max_share: f64,
        period_seconds: Option<f64>,
    },
    /// The warm-up reached its cap before two slices agreed.
    WarmupNotSteady { requests: u64, seconds: f64 },
    /// A statement's rows or blocks per call changed between the halves of every window
    /// within --retries: a plan change (a prepared statement gone generic) in the window.
    PlanChanged {
        statement: String,
        rows_per_call: [f64; 2],
        blocks_per_call: [f64; 2],
        /// Tables whose sequential scans moved in the window, when any did.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        seq_scanned: Vec<String>,
        retries: u32,
    },
    /// With --control: the burst was raised past -n, so that the background leaves every
    /// corrected figure within 15%.
    BurstSized {
        requested: u64,
        sent: u64,
        /// The app roles' statements a second in the control window.
        background_per_second: f64,
    },
    /// Events that only some requests had (a remainder of a few events over the requests,
    /// `cost::one_off`) came back in the same counters in the last two windows: the app's
    /// own rare work, kept in the figures.
    RareEvents(crate::cost::odd_events::RareWork),
}

/// Every code, once: docs/json.md lists them all.
pub const CODES: [&str; 38] = [
    "allow_status_rejection",
    "token_expires_soon",
    "tls_insecure",
    "anonymous_answer_accepted",
    "admin_db_is_target",
    "admin_db_lacks_pg_stat_statements",
    "admin_db_unreachable",
    "server_older_than_15",
    "role_cannot_read_all_stats",
    "pg_stat_statements_not_loaded",
    "pg_stat_statements_extension_missing",
    "compute_query_id_off",
    "statement_texts_unavailable",
    "pg_stat_statements_entries_vanished",
    "server_clock_ahead",
    "background_while_idle",
    "replica_not_in_recovery",
    "replica_lag",
    "windows_discarded",
    "uncounted_transactions",
    "connection_churn",
    "unmeasured_database",
    "moved_nothing",
    "allowed_status_responses",
    "new_connections",
    "background_not_subtracted",
    "other_roles_statements",
    "unauthenticated_answered",
    "pgbouncer_own_statements",
    "pgbouncer_checks_kept",
    "plans_skipped_connection",
    "plans_skipped_privilege",
    "usl_poor_fit",
    "background_subtracted",
    "warmup_not_steady",
    "plan_changed",
    "burst_sized",
    "rare_events",
];

impl Note {
    /// The stable identifier of this kind of note, snake_case, for CI to match on.
    pub fn code(&self) -> &'static str {
        CODES[self.index()]
    }

    /// The position of this kind in [`CODES`].
    fn index(&self) -> usize {
        use Note::*;
        match self {
            AllowStatusRejection { .. } => 0,
            TokenExpiresSoon { .. } => 1,
            TlsInsecure => 2,
            AnonymousAnswerAccepted { .. } => 3,
            AdminDbIsTarget { .. } => 4,
            AdminDbLacksPgStatStatements { .. } => 5,
            AdminDbUnreachable { .. } => 6,
            ServerOlderThan15 { .. } => 7,
            RoleCannotReadAllStats { .. } => 8,
            PgStatStatementsNotLoaded => 9,
            PgStatStatementsExtensionMissing => 10,
            ComputeQueryIdOff => 11,
            StatementTextsUnavailable { .. } => 12,
            PgStatStatementsEntriesVanished { .. } => 13,
            ServerClockAhead { .. } => 14,
            BackgroundWhileIdle { .. } => 15,
            ReplicaNotInRecovery { .. } => 16,
            ReplicaLag { .. } => 17,
            WindowsDiscarded { .. } => 18,
            UncountedTransactions { .. } => 19,
            ConnectionChurn { .. } => 20,
            UnmeasuredDatabase { .. } => 21,
            MovedNothing { .. } => 22,
            AllowedStatusResponses { .. } => 23,
            NewConnections { .. } => 24,
            BackgroundNotSubtracted { .. } => 25,
            OtherRolesStatements { .. } => 26,
            UnauthenticatedAnswered { .. } => 27,
            PgbouncerOwnStatements { .. } => 28,
            PgbouncerChecksKept { .. } => 29,
            PlansSkippedConnection { .. } => 30,
            PlansSkippedPrivilege { .. } => 31,
            UslPoorFit { .. } => 32,
            BackgroundSubtracted { .. } => 33,
            WarmupNotSteady { .. } => 34,
            PlanChanged { .. } => 35,
            BurstSized { .. } => 36,
            RareEvents(_) => 37,
        }
    }

    /// What the user is told.
    pub fn message(&self) -> String {
        setup_message(self)
            .or_else(|| statistics_message(self))
            .or_else(|| window_message(self))
            .or_else(|| traffic_message(self))
            .expect("every note has a message")
    }

    /// The note as one node's, when a request touches several databases: a window's own
    /// notes (pg_stat_statements entries that vanished) name their node.
    pub fn on_node(&self, name: &str) -> Note {
        match self {
            Note::PgStatStatementsEntriesVanished { entries, .. } => {
                Note::PgStatStatementsEntriesVanished {
                    entries: *entries,
                    node: Some(name.to_string()),
                }
            }
            other => other.clone(),
        }
    }

    /// Shown in the table view's header, beside the figures: the work the measured
    /// databases may have missed.
    pub fn in_header(&self) -> bool {
        matches!(
            self,
            Note::UnmeasuredDatabase { .. } | Note::MovedNothing { .. }
        )
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// The messages of `notes`, in order.
pub fn messages(notes: &[Note]) -> Vec<String> {
    notes.iter().map(Note::message).collect()
}

/// "3 app connections opened and 1 closed".
pub fn describe_churn(opened: i64, closed: i64) -> String {
    let first = if opened > 0 { opened } else { closed };
    let noun = if first == 1 {
        "app connection"
    } else {
        "app connections"
    };
    match (opened, closed) {
        (o, 0) => format!("{o} {noun} opened"),
        (0, c) => format!("{c} {noun} closed"),
        (o, c) => format!("{o} {noun} opened and {c} closed"),
    }
}

/// `2024-05-01 12:00:00 UTC` from RFC 3339.
fn utc(rfc3339: &str) -> String {
    rfc3339.replace('T', " ").replace('Z', " UTC")
}

fn whole_seconds(seconds: u64) -> String {
    humantime::format_duration(Duration::from_secs(seconds.max(1))).to_string()
}

/// The notes about the run's options and credentials.
fn setup_message(note: &Note) -> Option<String> {
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
fn statistics_message(note: &Note) -> Option<String> {
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
            crate::cost::snapshot::UNAVAILABLE_TEXT
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
fn window_message(note: &Note) -> Option<String> {
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

/// The notes about other traffic: other backends and roles, PgBouncer's own statements.
fn traffic_message(note: &Note) -> Option<String> {
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
        } => background_not_subtracted(backends, *app_roles),
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

fn background_not_subtracted(backends: &[String], app_roles: bool) -> String {
    let shown: Vec<&str> = backends.iter().take(3).map(|s| s.as_str()).collect();
    let more = match backends.len().saturating_sub(shown.len()) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    let statements = match app_roles {
        false => {
            "--app-role ROLE counts only the app's statements (pg_stat_statements by role), and "
        }
        true => "statements are the app roles' only (--app-role); ",
    };
    format!(
        "{} other client backend(s) were active in the window while pgcost sent no requests, \
         or belong to roles outside --app-role ({}{more}): the pg_stat_database figures \
         (transactions, rows read, rows fetched and written, blocks) include their work; for \
         exact numbers, {statements}--control DURATION measures that background before the \
         warm-up and subtracts it",
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

/// The `warnings` and `notes` keys of a JSON document, from one list of notes; used with
/// `#[serde(flatten, with = "crate::cost::notes::keys")]`. Reading takes `notes` (a document
/// written before it existed reads back with none).
pub mod keys {
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Note;

    /// A note as JSON shows it: its code and fields, and its message.
    #[derive(Serialize, schemars::JsonSchema)]
    struct Shown<'a> {
        #[serde(flatten)]
        note: &'a Note,
        message: String,
    }

    /// The two keys [`serialize`] writes, as the JSON Schema describes them.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)] // read by the schema's derive only
    pub struct Schema<'a> {
        /// Each note's message, in the notes' order.
        warnings: Vec<String>,
        /// Each note: its `code`, its fields, and its `message`.
        notes: Vec<Shown<'a>>,
    }

    pub fn serialize<S: Serializer>(notes: &[Note], serializer: S) -> Result<S::Ok, S::Error> {
        let messages: Vec<String> = notes.iter().map(Note::message).collect();
        let shown: Vec<Shown<'_>> = (notes.iter())
            .map(|note| Shown {
                note,
                message: note.message(),
            })
            .collect();
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("warnings", &messages)?;
        map.serialize_entry("notes", &shown)?;
        map.end()
    }

    #[derive(Deserialize)]
    struct Keys {
        #[serde(default)]
        notes: Vec<Note>,
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Note>, D::Error> {
        Ok(Keys::deserialize(deserializer)?.notes)
    }
}

#[cfg(test)]
mod tests;
