//! Notes: the caveats a report carries, typed. Each kind has a stable `code()` that CI can
//! match on (listed in docs/json.md) and a `message()`, the prose the views show; the I/O
//! layer produces them with the figures they name instead of formatting prose. JSON shows
//! them twice: `warnings` (the messages, kept for compatibility) and `notes` (code,
//! message and the typed fields).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::note_messages::{
    setup_message, statistics_message, traffic_message, window_message, writes_message,
};

/// How many statement calls one role outside `--app-role` ran in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoleCalls {
    pub role: String,
    pub calls: i64,
}

/// One caveat that leaves a report's numbers usable. The serde tag is the code.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::VariantNames,
)]
#[serde(tag = "code", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
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
    #[strum(serialize = "server_older_than_15")]
    ServerOlderThan15 { version: String },
    /// The statistics role lacks pg_read_all_stats.
    RoleCannotReadAllStats { role: String },
    /// pg_stat_statements is not in shared_preload_libraries.
    PgStatStatementsNotLoaded,
    /// pg_stat_statements is loaded but its extension exists in neither database.
    PgStatStatementsExtensionMissing,
    /// compute_query_id = off.
    ComputeQueryIdOff,
    /// pg_stat_statements.track_planning is off (PG 13+): plan time is not counted, so
    /// `planning_dominates` cannot be found.
    TrackPlanningOff,
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
        /// Some of the backends run as an `--app-role` role (the app's own pool or jobs):
        /// their statements are in the statement figures too.
        #[serde(default)]
        shares_app_role: bool,
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
    /// `crate::one_off`) came back in the same counters in the last two windows: the app's
    /// own rare work, taken out of the figures (`taken_out`).
    RareEvents(Box<super::odd_events::RareWork>),
    /// `--allow-writes`: the requests were let write. What the window's requests wrote, per
    /// request, by table (`pg_stat_user_tables`); empty when they wrote nothing. The probe
    /// and the warm-up wrote as well, and pgcost gives nothing back.
    WritesAllowed { tables: Vec<WrittenTable> },
    /// `--allow-writes`: what the whole run wrote, by table (`pg_stat_user_tables`, from
    /// before its first request to the close of its last window: probe, warm-ups and
    /// retries included, and whatever else wrote those tables meanwhile), and the
    /// transaction ids it used: from `xid_from` to before `xid_to`. pgcost never runs a
    /// table's `delete`.
    RunWrote {
        tables: Vec<RunTable>,
        xid_from: i64,
        xid_to: i64,
    },
}

/// Rows one table got over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunTable {
    pub table: String,
    pub inserted: i64,
    pub updated: i64,
    pub deleted: i64,
    /// For a table the run only inserted into: a statement that deletes the rows inserted
    /// by the run's transaction ids (and by any other session's in that range). Null where
    /// rows were updated or deleted: an updated row's new version has such an id too.
    pub delete: Option<String>,
}

/// Rows one table got inserted, updated and deleted, per request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WrittenTable {
    pub table: String,
    pub inserted: f64,
    pub updated: f64,
    pub deleted: f64,
}

impl WrittenTable {
    /// `public.articles 1 inserted, 2 updated`.
    pub fn describe(&self) -> String {
        let counts = [
            (self.inserted, "inserted"),
            (self.updated, "updated"),
            (self.deleted, "deleted"),
        ];
        let said: Vec<String> = (counts.iter().filter(|(n, _)| *n > 0.0))
            .map(|(n, what)| match n.fract() == 0.0 {
                true => format!("{n:.0} {what}"),
                false => format!("{n:.2} {what}"),
            })
            .collect();
        format!("{} {}", self.table, said.join(", "))
    }
}

/// Every code, once, in the order the kinds are declared: docs/json.md lists them all.
/// The text of a changed entry whose text could not be read after the window.
pub const UNAVAILABLE_TEXT: &str = "<text unavailable>";

pub const CODES: &[&str] = <Note as strum::VariantNames>::VARIANTS;

impl Note {
    /// The stable identifier of this kind of note, snake_case, for CI to match on.
    pub fn code(&self) -> &'static str {
        self.into()
    }

    /// What the user is told.
    pub fn message(&self) -> String {
        setup_message(self)
            .or_else(|| statistics_message(self))
            .or_else(|| window_message(self))
            .or_else(|| traffic_message(self))
            .or_else(|| writes_message(self))
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

/// The `warnings` and `notes` keys of a JSON document, from one list of notes; used with
/// `#[serde(flatten, with = "notes::keys")]`. Reading takes `notes` (a document
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
