//! Round trips the app's plumbing spends on every request, not its handler: the pool's
//! liveness check on each checkout (`checkout_ping`), and a transaction opened and closed
//! around one read (`transaction_around_single_read`); and the classes `round_trips` sorts
//! its once-per-request statements into (auth, page, batch load, other lookups).

use super::inputs::Inputs;
use super::sql::Access;
use super::{Finding, FindingKind, Saving, Statement, Thresholds, amount, evidence, quoted};
use crate::setup::is_setup;

/// A `SELECT 1` (or the driver's equivalent) about once per request or more: the pool
/// checks each connection it hands out.
pub(super) fn checkout_ping(s: &Statement, t: &Thresholds) -> Option<Finding> {
    if !s.ping || s.calls_per_request < t.checkout_ping_min_calls_per_request {
        return None;
    }
    let suggestion = format!(
        "This statement reads nothing: it is a connection pool's liveness check, run {} \
         per request (once per connection checked out). Each one is a round trip before the \
         request's first real statement. Let the pool check less often: HikariCP needs no \
         connectionTestQuery with a JDBC4 driver; Tomcat JDBC and DBCP take testOnBorrow off \
         or a validationInterval; SQLAlchemy's pool_pre_ping can give way to pool_recycle; \
         Django's CONN_HEALTH_CHECKS checks only once per request; ActiveRecord 7.1+ verifies \
         only connections idle for a while. If the code checks out a connection per query, \
         check out once per request instead.",
        super::counted(s.calls_per_request, "time", "times"),
    );
    Some(Finding {
        query: Some(s.query.to_string()),
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
        ]),
        round_trips_per_request: s.calls_per_request,
        saves_per_request: Saving {
            statements: s.calls_per_request,
            db_time_ms: s.db_time_ms,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::CheckoutPing, suggestion)
    })
}

/// What a utility statement does to the transaction it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    Begin,
    /// COMMIT, END, ROLLBACK or ABORT of the whole transaction.
    End,
    /// Anything else: SET, SAVEPOINT, ROLLBACK TO, PREPARE TRANSACTION, ...
    Other,
}

fn control(query: &str) -> Control {
    let mut text = query.trim_start();
    while let Some(rest) = text.strip_prefix("/*") {
        text = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
    }
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .take(2)
        .map(str::to_ascii_uppercase)
        .collect();
    let second = words.get(1).map(String::as_str);
    match words.first().map(String::as_str) {
        Some("BEGIN" | "START") => Control::Begin,
        Some("COMMIT" | "END" | "ROLLBACK" | "ABORT")
            if !matches!(second, Some("TO" | "PREPARED")) =>
        {
            Control::End
        }
        _ => Control::Other,
    }
}

/// BEGIN and COMMIT (or ROLLBACK) on every request around exactly one read: the reads in
/// transactions are the reads less those that ran on their own (transactions less BEGINs).
/// Not raised when the request writes (or locks, or calls), runs other utility statements
/// (a SET LOCAL or a SAVEPOINT needs its transaction), or opens connections per request
/// (their start-up transactions blur the count).
pub(super) fn transaction_around_single_read(
    inputs: &Inputs,
    all: &[Statement],
    t: &Thresholds,
) -> Option<Finding> {
    let p = inputs.per_request;
    if p.new_sessions.unwrap_or(0.0) >= t.connection_min_new_sessions_per_request
        || all.iter().any(|s| s.shape.access != Access::Read)
    {
        return None;
    }
    let (mut begins, mut ends, mut others) = (0.0, 0.0, 0.0);
    for row in inputs
        .statements
        .iter()
        .filter(|s| s.toplevel && s.utility && !is_setup(p.setup.as_ref(), &s.query))
    {
        match control(&row.query) {
            Control::Begin => begins += row.calls_per_request,
            Control::End => ends += row.calls_per_request,
            Control::Other => others += row.calls_per_request,
        }
    }
    let tolerance = t.once_per_request_tolerance * begins.max(1.0);
    if begins < t.transaction_min_per_request
        || (begins - ends).abs() > tolerance
        || others > t.once_per_request_tolerance
    {
        return None;
    }
    let reads: f64 = all.iter().map(|s| s.calls_per_request).sum();
    let in_transactions = reads - (p.transactions - begins).max(0.0);
    let per_transaction = in_transactions / begins;
    if (per_transaction - 1.0).abs() > t.reads_per_transaction_tolerance {
        return None;
    }
    // The read, when exactly one runs as often as the transactions.
    let mut reads = (all.iter()).filter(|s| (s.calls_per_request - begins).abs() <= tolerance);
    let read = reads.next().filter(|_| reads.next().is_none());
    let named = read.map_or(String::new(), |s| format!(" ({})", quoted(s.query)));
    let saved = begins + ends;
    let suggestion = format!(
        "Each request opens {} and closes it again around a single read{named}: BEGIN and \
         COMMIT (or ROLLBACK) are {} round trips per request that protect nothing, since one \
         statement is atomic on its own. Run reads in autocommit: psycopg's autocommit = True \
         (SQLAlchemy: isolation_level=\"AUTOCOMMIT\" on the engine or the connection), JDBC's \
         setAutoCommit(true), or no explicit transaction in the code. Keep the transaction \
         where several statements must see one snapshot, or where one of them writes.",
        super::counted(begins, "transaction", "transactions"),
        amount(saved),
    );
    Some(Finding {
        query: read.map(|s| s.query.to_string()),
        table: read.and_then(|s| s.only_table()).map(|t| t.table.clone()),
        evidence: evidence(&[
            ("begin_per_request", begins),
            ("commit_per_request", ends),
            ("transactions_per_request", p.transactions),
            ("reads_per_transaction", per_transaction),
        ]),
        round_trips_per_request: saved,
        saves_per_request: Saving::of_statements(saved),
        ..Finding::new(FindingKind::TransactionAroundSingleRead, suggestion)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_control_is_told_from_other_utility_statements() {
        assert_eq!(control("BEGIN"), Control::Begin);
        assert_eq!(
            control("START TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
            Control::Begin
        );
        assert_eq!(control("/* app */ begin;"), Control::Begin);
        assert_eq!(control("COMMIT"), Control::End);
        assert_eq!(control("ROLLBACK"), Control::End);
        assert_eq!(control("ROLLBACK TO SAVEPOINT s1"), Control::Other);
        assert_eq!(control("COMMIT PREPARED 'x'"), Control::Other);
        assert_eq!(control("SET LOCAL work_mem = '64kB'"), Control::Other);
        assert_eq!(control("SAVEPOINT s1"), Control::Other);
    }
}

/// What a statement run once per request is, for `round_trips`' advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Authentication or authorisation: sessions, tokens, users, permissions, scopes.
    Auth,
    /// The tenant (account, workspace) whose key filters the page, looked up by the key the
    /// token or the session gave.
    Tenant,
    /// The page the endpoint returns.
    Page,
    /// The count of the page's rows.
    Count,
    /// A batch load keyed by the page's rows (a prefetch, an include, a relation).
    BatchLoad,
    /// A write: INSERT, UPDATE, DELETE, MERGE, a locking read. No lookup: the advice for
    /// lookups (merge them, cache them) does not fit it.
    Write,
    /// Any other lookup.
    Other,
}

fn class(s: &Statement, all: &[Statement]) -> Class {
    let tables: Vec<&str> = s.tables.iter().map(|t| t.table.as_str()).collect();
    if s.shape.access == Access::Write {
        Class::Write
    } else if s.is_total() {
        Class::Count
    } else if s.page {
        Class::Page
    } else if super::batch_load::keyed_by_the_page(s, all) {
        Class::BatchLoad
    } else if super::batch_load::scopes_the_page(s, all) {
        Class::Tenant
    } else if super::identity::decides_identity(tables, s.query)
        || super::identity::authorises(&s.relation_names())
    {
        Class::Auth
    } else {
        Class::Other
    }
}

/// The once-per-request statements by class, each class with the advice that fits it.
pub(super) fn once_per_request_advice(once: &[&Statement], all: &[Statement]) -> String {
    let groups = [
        (
            Class::Auth,
            "Auth steps (session, token, user, permission lookups): when they are keyed by \
             the same user or tenant, collapse them into one statement (one SELECT that joins \
             them, or scalar subqueries side by side in one select list):",
        ),
        (
            Class::Tenant,
            "The tenant that scopes the page, keyed by the token or the session: fold it \
             into the auth step that gave its key, or cache it for a few seconds:",
        ),
        (
            Class::BatchLoad,
            "Batch loads keyed by the page (one prefetch per relation): join the to-one \
             relations into the page's statement (select_related, joins, eager_load), and \
             drop the relations the response does not show:",
        ),
        (Class::Page, "The page: the endpoint's own rows, needed:"),
        (
            Class::Count,
            "The count of the page: one more scan of its rows on every request (see \
             count_per_page):",
        ),
        (
            Class::Write,
            "Writes, each its own round trip: rows of one table written one statement at a \
             time can go as one multi-row INSERT (or UPDATE ... FROM (VALUES ...)), and writes \
             to several tables as one statement with data-modifying CTEs (WITH ... INSERT ... \
             RETURNING ...):",
        ),
        (
            Class::Other,
            "Other lookups run once per request: merge the independent ones keyed alike, \
             or cache the ones that do not change per request:",
        ),
    ];
    let mut out = String::new();
    for (wanted, advice) in groups {
        let members: Vec<&&Statement> = (once.iter()).filter(|s| class(s, all) == wanted).collect();
        if members.is_empty() {
            continue;
        }
        out.push_str("\n\n");
        out.push_str(advice);
        for s in members {
            out.push_str(&format!("\n  - {}", quoted(s.query)));
        }
    }
    out
}
