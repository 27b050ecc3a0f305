//! `connection_per_request`: the app opens connections per request, and pays for each one's
//! set-up ([`Setup`]) on every request.

use super::inputs::Inputs;
use super::{Finding, FindingKind, Saving, Thresholds, amount, counted, evidence, quoted};
use crate::setup::Setup;

/// Fires at `connection_min_new_sessions_per_request` new sessions per request or more. Its
/// saving is the whole set-up, or one round trip per connection when none was recognised.
pub(super) fn connection_per_request(inputs: &Inputs, t: &Thresholds) -> Option<Finding> {
    let new_sessions = inputs.per_request.new_sessions?;
    if new_sessions < t.connection_min_new_sessions_per_request {
        return None;
    }
    let setup = inputs.per_request.setup.as_ref();
    let mut figures = vec![("new_sessions_per_request", new_sessions)];
    if let Some(s) = setup {
        figures.push(("setup_statements_per_request", s.statements_per_request));
        figures.push(("setup_rows_read_per_request", s.rows_read_per_request));
        figures.push(("setup_share_of_statements", s.share_of_statements));
    }
    let mut suggestion = format!(
        "The app opened {} per request. Each one costs Postgres a new backend process, \
         authentication and cold catalog caches before its first query",
        counted(new_sessions, "new connection", "new connections")
    );
    match setup {
        Some(s) => suggestion.push_str(&setup_text(s)),
        None => suggestion.push_str(", and all of it is billed to this endpoint."),
    }
    suggestion.push_str(FIX);
    headroom(inputs, &mut figures, &mut suggestion);
    let saving = match setup {
        Some(s) => Saving {
            statements: s.statements_per_request,
            rows_read: s.rows_read_per_request,
            rows_returned: s.rows_returned_per_request,
            ..Saving::default()
        },
        None => Saving::of_statements(new_sessions),
    };
    Some(Finding {
        evidence: evidence(&figures),
        avoidable_rows_per_request: saving.rows_returned,
        round_trips_per_request: saving.statements,
        saves_per_request: saving,
        ..Finding::new(FindingKind::ConnectionPerRequest, suggestion)
    })
}

/// pgcost cannot see whether the app has a pool: the advice covers both stacks.
const FIX: &str = "\n\nKeep connections across requests. If the app has a pool, create \
    one pool per process at start-up and borrow a connection from it for each request. If \
    it has none (PHP, CGI, serverless functions), use persistent connections (PHP: \
    PDO::ATTR_PERSISTENT or pg_pconnect) or put a pooler such as PgBouncer in front of \
    Postgres. Either way, move the SETs into the connection's start-up parameters \
    (options=-c ...) or the role's defaults (ALTER ROLE ... SET), so that a connection \
    runs none.";

/// The set-up's figures and statements, for the suggestion.
fn setup_text(s: &Setup) -> String {
    let mut text = format!(
        ", then runs the app's set-up: {} and {} rows read per new connection, {} and {} \
         rows read per request ({:.0}% of the request's statements, {:.0}% of its rows \
         read). All of it is billed to this endpoint. The set-up:",
        counted(s.statements_per_connection, "statement", "statements"),
        amount(s.rows_read_per_connection),
        counted(s.statements_per_request, "statement", "statements"),
        amount(s.rows_read_per_request),
        s.share_of_statements * 100.0,
        s.share_of_rows_read * 100.0,
    );
    for st in &s.statements {
        text.push_str(&format!(
            "\n  - {} ({} per connection)",
            quoted(&st.query),
            counted(st.calls_per_connection, "time", "times")
        ));
    }
    text
}

/// Peak backends against `max_connections`: how many processes like this one fit.
fn headroom(inputs: &Inputs, figures: &mut Vec<(&str, f64)>, suggestion: &mut String) {
    let pool = inputs.pool;
    if let Some(peak) = pool.peak_backends {
        figures.push(("peak_backends", peak as f64));
    }
    if let Some(max) = pool.max_connections {
        figures.push(("max_connections", f64::from(max)));
    }
    if let (Some(peak), Some(max)) = (pool.peak_backends.filter(|p| *p > 0), pool.max_connections) {
        let processes = i64::from(max) / peak;
        figures.push(("processes_supported", processes as f64));
        suggestion.push_str(&format!(
            " At its peak the app held {peak} backends; with max_connections = {max}, the \
             server can take at most {processes} such processes."
        ));
    }
}
