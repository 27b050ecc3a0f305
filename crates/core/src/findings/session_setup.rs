//! `session_setup_per_checkout`: session settings (`SET search_path`, `SET statement_timeout`,
//! `RESET`, `DISCARD`) sent on every request, as an ORM or a pool sends them each time it
//! hands out a connection, where once per connection would do.

use super::inputs::Inputs;
use super::{Finding, FindingKind, Saving, Thresholds, amount, evidence, quoted};
use crate::report::model::StatementRow;
use crate::setup::is_setup;

/// Whether a utility statement sets or resets a session setting that could be set once per
/// connection. Not `SET LOCAL` (it lasts one transaction), `SET TRANSACTION`, `SET
/// CONSTRAINTS`, `SET ROLE` or `SET SESSION AUTHORIZATION` (the caller's identity), nor a
/// custom setting with a dot (`app.tenant_id`: the request's context, for row-level
/// security).
pub(super) fn is_session_setting(query: &str) -> bool {
    let mut text = query.trim_start();
    while let Some(rest) = text.strip_prefix("/*") {
        text = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
    }
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == '=' || c == ';')
        .filter(|w| !w.is_empty())
        .take(3)
        .map(str::to_ascii_lowercase)
        .collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match word(0) {
        "reset" | "discard" => true,
        "set" => {
            let name = if word(1) == "session" {
                word(2)
            } else {
                word(1)
            };
            !matches!(
                name,
                "local" | "transaction" | "constraints" | "role" | "session" | "authorization" | ""
            ) && !name.contains('.')
        }
        _ => false,
    }
}

/// The session settings sent on about every request, one entry per text (rows of other
/// users added together): none when connections are opened per request, whose set-up is
/// `connection_per_request`'s.
pub(super) fn per_checkout<'a>(inputs: &Inputs<'a>, t: &Thresholds) -> Vec<(&'a str, f64, f64)> {
    let p = inputs.per_request;
    if p.new_sessions.unwrap_or(0.0) >= t.connection_min_new_sessions_per_request {
        return Vec::new();
    }
    let rows: Vec<&StatementRow> = inputs
        .statements
        .iter()
        .filter(|s| s.toplevel && s.utility && is_session_setting(&s.query))
        .filter(|s| !is_setup(p.setup.as_ref(), &s.query))
        .collect();
    let mut texts: Vec<(&str, f64, f64)> = Vec::new();
    for row in rows {
        let time = row.mean_exec_ms * row.calls_per_request;
        match texts.iter_mut().find(|(q, _, _)| *q == row.query) {
            Some(entry) => {
                entry.1 += row.calls_per_request;
                entry.2 += time;
            }
            None => texts.push((&row.query, row.calls_per_request, time)),
        }
    }
    texts.retain(|(_, calls, _)| *calls >= t.session_setup_min_calls_per_request);
    texts
}

/// Session settings sent per checkout, per request; 0 when there are none.
pub(super) fn per_checkout_calls(inputs: &Inputs, t: &Thresholds) -> f64 {
    per_checkout(inputs, t)
        .iter()
        .map(|(_, calls, _)| calls)
        .sum()
}

pub(super) fn session_setup_per_checkout(inputs: &Inputs, t: &Thresholds) -> Option<Finding> {
    let texts = per_checkout(inputs, t);
    if texts.is_empty() {
        return None;
    }
    let calls: f64 = texts.iter().map(|(_, c, _)| c).sum();
    let time: f64 = texts.iter().map(|(_, _, ms)| ms).sum();
    let all = inputs.per_request.statements.unwrap_or(0.0);
    let mut suggestion = format!(
        "Each request sends {} session settings{}: the ORM or the pool sets them each time it \
         hands out a connection, and each is a round trip before the request's own work. A \
         setting that is the same on every request belongs to the connection, set once: in \
         the pool's connection initialisation (node-postgres' `options` or an on-connect hook, \
         SQLAlchemy's `connect` event, HikariCP's connectionInitSql, Django's `OPTIONS`), in \
         the connection string (`options=-c search_path=app -c statement_timeout=5s`), or on \
         the role (`ALTER ROLE app SET search_path = app`, `ALTER ROLE app SET \
         statement_timeout = '5s'`). A pool that resets its connections on checkout (`RESET \
         ALL`, `DISCARD ALL`) can leave that to PgBouncer's server_reset_query or to the \
         connection's end. Statements:",
        amount(calls),
        if all > 0.0 {
            format!(" ({} of its {} round trips)", amount(calls), amount(all))
        } else {
            String::new()
        },
    );
    for (query, calls, _) in &texts {
        suggestion.push_str(&format!(
            "\n  - {} ({} per request)",
            quoted(query),
            amount(*calls)
        ));
    }
    let mut figures = vec![
        ("session_settings_per_request", calls),
        ("distinct_settings", texts.len() as f64),
        (
            "new_sessions_per_request",
            inputs.per_request.new_sessions.unwrap_or(0.0),
        ),
    ];
    if all > 0.0 {
        figures.push(("statements_per_request", all));
        figures.push(("share_of_statements", calls / all));
    }
    Some(Finding {
        query: match texts.as_slice() {
            [(only, _, _)] => Some(only.to_string()),
            _ => None,
        },
        evidence: evidence(&figures),
        round_trips_per_request: calls,
        saves_per_request: Saving {
            statements: calls,
            db_time_ms: time,
            ..Saving::default()
        },
        tags: super::sent_from::merged(
            (texts.iter()).filter_map(|(q, _, _)| super::sent_from::tags_of(inputs.statements, q)),
        ),
        ..Finding::new(FindingKind::SessionSetupPerCheckout, suggestion)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_settings_are_told_from_transaction_and_identity_settings() {
        for setting in [
            "SET search_path TO app, public",
            "SET statement_timeout = $1",
            "set statement_timeout to 5000",
            "SET TIME ZONE 'UTC'",
            "SET SESSION statement_timeout = '5s'",
            "/* pool */ RESET ALL",
            "DISCARD ALL",
            "SET NAMES 'UTF8'",
        ] {
            assert!(is_session_setting(setting), "{setting}");
        }
        for other in [
            "SET LOCAL statement_timeout = '2s'",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SET ROLE app_reader",
            "SET SESSION AUTHORIZATION app",
            "SET app.tenant_id = '42'",
            "SET CONSTRAINTS ALL DEFERRED",
            "BEGIN",
            "SHOW search_path",
        ] {
            assert!(!is_session_setting(other), "{other}");
        }
    }
}
