//! PgBouncer's own statements in a window: its server check, its reset query and the
//! `SET` of a startup parameter, recognised in the `pg_stat_statements` delta by their
//! text, and taken out of the window with the transactions known to be theirs.

use std::collections::BTreeMap;

use super::Settings;
use crate::delta::{StatementDelta, WindowDelta, per_request};
use crate::report::model::notes::Note;

/// The startup parameters PgBouncer 1.18 tracks per client, spelt as it sends them in the
/// `SET name='value'` it runs when it hands a server connection to a client whose value
/// differs (`varcache.c`).
pub const TRACKED_PARAMETERS: &[&str] = &[
    "client_encoding",
    "DateStyle",
    "TimeZone",
    "standard_conforming_strings",
    "application_name",
];

/// The parameter of a `SET` as PgBouncer sends it (`SET TimeZone='UTC'`; from PG 16 the
/// constant may show as `$1`), else `None`. An app's own `SET TIME ZONE 'UTC'` or
/// `SET timezone = 'UTC'` is not PgBouncer's spelling.
pub fn pgbouncer_set(query: &str) -> Option<&'static str> {
    let rest = query.trim().strip_prefix("SET ")?;
    let param = TRACKED_PARAMETERS
        .iter()
        .find(|p| rest.strip_prefix(**p).is_some_and(|r| r.starts_with('=')))?;
    let value = rest[param.len() + 1..].trim_end_matches(';');
    let quoted = (value.starts_with('\'') || value.starts_with("E'")) && value.ends_with('\'');
    let placeholder = value
        .strip_prefix('$')
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    (quoted || placeholder).then_some(*param)
}

/// A statement's shape, to compare a configured query with pg_stat_statements' text:
/// lower case, one space between words, constants and placeholders alike, no `;`.
pub fn shape(query: &str) -> String {
    let words: Vec<String> = (query.trim().trim_end_matches(';').split_whitespace())
        .map(|w| {
            let w = w.to_lowercase();
            let bare = w.trim_start_matches('$');
            match !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit()) {
                true => "?".to_string(),
                false => w,
            }
        })
        .collect();
    words.join(" ")
}

/// PgBouncer's own statements found in a window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Own {
    /// Calls of the `SET` of each startup parameter.
    pub sets: BTreeMap<String, i64>,
    /// Calls counted as the server check (at most what PgBouncer can have sent).
    pub checks: i64,
    /// Calls of the check query beyond that bound, left in the figures.
    pub checks_left: i64,
    pub resets: i64,
}

impl Own {
    pub fn calls(&self) -> i64 {
        self.sets.values().sum::<i64>() + self.checks + self.resets
    }

    /// Transactions the statements made, as (exact part, more that may be): each check
    /// and reset is one; the `SET`s of one hand-out go in one query string, one
    /// transaction, so several parameters make between the most calls of one and the sum.
    pub fn transactions(&self) -> (i64, i64) {
        let most = self.sets.values().copied().max().unwrap_or(0);
        let sum: i64 = self.sets.values().sum();
        (self.checks + self.resets + most, sum - most)
    }
}

/// Finds PgBouncer's statements among the window's; `max_checks` bounds the server
/// checks PgBouncer can have sent in it.
pub fn recognise(statements: &[StatementDelta], settings: &Settings, max_checks: i64) -> Own {
    let mut own = Own::default();
    let check = shape(&settings.check_query);
    let resets = settings.reset_query_always || settings.pool_mode == "session";
    let reset = shape(&settings.reset_query);
    for s in statements.iter().filter(|s| s.key.toplevel != Some(false)) {
        if let Some(param) = pgbouncer_set(&s.query) {
            *own.sets.entry(param.to_string()).or_default() += s.calls;
        } else if !check.is_empty() && shape(&s.query) == check {
            let counted = s.calls.min((max_checks - own.checks).max(0));
            own.checks += counted;
            own.checks_left += s.calls - counted;
        } else if resets && !reset.is_empty() && shape(&s.query) == reset {
            own.resets += s.calls;
        }
    }
    own
}

/// The server checks PgBouncer can have sent over `window_seconds` with `servers`
/// server connections: one per connection per check delay, and one more.
pub fn max_checks(settings: &Settings, servers: i64, window_seconds: f64) -> i64 {
    if settings.check_delay_seconds <= 0.0 {
        return i64::MAX;
    }
    servers * (1 + (window_seconds / settings.check_delay_seconds).floor() as i64)
}

/// Takes `own` out of `window`: its statements (the counted part of the check query) and
/// the transactions known to be theirs. Returns the warnings that say so.
pub fn exclude(
    window: &mut WindowDelta,
    own: &Own,
    settings: &Settings,
    requests: u64,
) -> Vec<Note> {
    let mut warnings = Vec::new();
    let mut checks_to_take = own.checks;
    let check = shape(&settings.check_query);
    let reset = shape(&settings.reset_query);
    for s in &mut window.statements {
        if pgbouncer_set(&s.query).is_some() || (own.resets > 0 && shape(&s.query) == reset) {
            s.calls = 0;
        } else if checks_to_take > 0 && shape(&s.query) == check {
            let taken = s.calls.min(checks_to_take);
            checks_to_take -= taken;
            s.rows -= s.rows * taken / s.calls.max(1);
            s.calls -= taken;
        }
    }
    window.statements.retain(|s| s.calls > 0);
    let (exact, maybe) = own.transactions();
    window.database.xact_commit = (window.database.xact_commit - exact).max(0);
    if own.calls() > 0 {
        warnings.push(own_warning(own, settings, requests, (exact, maybe)));
    }
    if own.checks_left > 0 {
        warnings.push(Note::PgbouncerChecksKept {
            calls: own.checks_left,
            check_query: settings.check_query.clone(),
        });
    }
    warnings
}

fn own_warning(own: &Own, settings: &Settings, requests: u64, (exact, maybe): (i64, i64)) -> Note {
    Note::PgbouncerOwnStatements {
        sets: own.sets.clone(),
        checks: own.checks,
        check_query: settings.check_query.clone(),
        resets: own.resets,
        reset_query: settings.reset_query.clone(),
        calls_per_request: per_request(own.calls(), requests),
        transactions_taken: exact,
        transactions_maybe_left: maybe,
    }
}
