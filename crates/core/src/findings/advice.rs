//! The advice of each finding kind, written once: a short block the table view prints
//! once per kind present, and the full text `pgcost explain KIND` prints.

use super::FindingKind;

/// Two or three sentences: what the kind means and the usual fix (its advice's first
/// paragraph).
pub fn summary(kind: FindingKind) -> &'static str {
    advice(kind).split_once("\n\n").unwrap_or_default().0
}

/// The full advice for one kind, as `pgcost explain KIND` prints it: the summary, then when
/// it fires, when it does not, the fix, and what the fix saves.
pub fn explain(kind: FindingKind) -> String {
    let (summary, body) = advice(kind).split_once("\n\n").unwrap_or_default();
    let summary = textwrap::fill(summary, 90);
    format!("{kind}\n\n{summary}\n\n{body}\n\nThresholds and formulas: `pgcost docs findings`.\n")
}

/// Each kind's advice, written once: a summary in one paragraph, then the full text.
fn advice(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::CollectionToBoolean => COLLECTION_TO_BOOLEAN,
        FindingKind::RepeatedStatement => REPEATED_STATEMENT,
        FindingKind::NPlusOne => N_PLUS_ONE,
        FindingKind::RoundTrips => ROUND_TRIPS,
        FindingKind::ConnectionPerRequest => CONNECTION_PER_REQUEST,
        FindingKind::CacheCandidate => CACHE_CANDIDATE,
        FindingKind::SeqScanHeavy => SEQ_SCAN_HEAVY,
        FindingKind::WritesOnRead => WRITES_ON_READ,
        FindingKind::SpillsToDisk => SPILLS_TO_DISK,
        FindingKind::CheckoutPing => CHECKOUT_PING,
        FindingKind::TransactionAroundSingleRead => TRANSACTION_AROUND_SINGLE_READ,
        FindingKind::Overfetch => OVERFETCH,
        FindingKind::DuplicateLoad => DUPLICATE_LOAD,
        FindingKind::ScanGrowsWithPage => SCAN_GROWS_WITH_PAGE,
        FindingKind::SessionSetupPerCheckout => SESSION_SETUP_PER_CHECKOUT,
        FindingKind::CountPerPage => COUNT_PER_PAGE,
        FindingKind::PerRowSubquery => PER_ROW_SUBQUERY,
        FindingKind::PlanningDominates => PLANNING_DOMINATES,
    }
}

const COLLECTION_TO_BOOLEAN: &str = "\
A statement builds a whole set where the caller tests one yes or no. Ask with SELECT \
EXISTS (SELECT 1 FROM ... WHERE ... AND <condition>): Postgres stops at the first match \
and sends one boolean.

Fires when a read runs at least every other request, returns at least 10 rows per call,
and its outer query has no aggregate, EXISTS, GROUP BY, LIMIT or OFFSET.

Not raised for the page the endpoint returns (LIMIT or OFFSET, or a listing with its
count), for a batch load by a list of keys (IN ($1, ...) or = ANY($1)), or for the list
an N+1 walks: their rows are used. A list of one key (IN ($3)) in a read of a permission,
scope, grant or role table run once per request is no batch load: it is an auth step
loading one owner's constant set, and fires.

The fix, when the caller only tests whether a matching row exists (a permission, a
membership, a flag):

    SELECT EXISTS (SELECT 1 FROM <the same FROM> WHERE <the same WHERE> AND <condition>)

Keep the set-building query for screens that really need the set.

Saves per request: rows returned minus one per call, and the statement's db time in
proportion.";

const REPEATED_STATEMENT: &str = "\
The same statement runs more than once per request. Compute it once and pass the value \
on; with parameters, memoise it for the request when they repeat.

Fires when the same read runs at least twice per request and is not an N+1.

Without parameters ($n) every call returns the same answer: certain waste, at least
medium. With parameters the calls may differ, so it is a memoisation candidate, one step
lower.

The fix: compute it once per request and pass the value to every place that needs it, or
memoise it in a request-scoped variable. A count that runs twice is usually a paginator:
one count for the page numbers and a second \"full count\" of the same query. Count once
and hand the number to both.

Saves per request: calls minus one statements, and that share of its rows and db time.";

const N_PLUS_ONE: &str = "\
One statement per item of a list. Batch the keys into one array parameter (WHERE id = \
ANY($1)) or join the table into the statement that made the list.

Fires when a statement with parameters runs at least 3 times per request and returns at
most 2 rows per call: one round trip per item.

The fix for a read: pass all the keys as one array and match them with = ANY($1),
returning the key column so the app can match rows to items:

    SELECT id, name FROM users WHERE id = ANY($1)

or JOIN the table into the statement that produced the list. For a write: one multi-row
INSERT, or INSERT ... SELECT FROM unnest($1, $2).

Saves per request: calls minus one statements. The batch does the same lookups, so no
rows or db time are counted.";

const ROUND_TRIPS: &str = "\
Many statements per request, each waiting for the network in turn. Collapse independent \
lookups keyed by the same user or tenant into one statement.

Fires at 5 statements per request or more, BEGIN and COMMIT included. It lists the
statements that run exactly once per request by class: auth steps (session, token, user,
permission, scope lookups), batch loads keyed by the page (prefetches), the page and its
count, and other lookups; then those that run more often.

The fix for auth steps: collapse independent lookups keyed by the same user or tenant into
one statement, a join or scalar subqueries side by side:

    SELECT (SELECT plan FROM tenants WHERE id = $1),
           (SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2)

For batch loads: join the to-one relations into the page's statement and drop the ones
the response does not show. Memoise repeated statements for the request.

Saves per request: the once-per-request statements minus one, plus the extra calls of the
repeated ones. That is an upper bound (pgcost cannot see whether the lookups depend on
each other), so the finding is at most medium.";

const CONNECTION_PER_REQUEST: &str = "\
The app opens a connection per request and runs its set-up on each. Keep connections: a \
pool per process, persistent connections or PgBouncer.

Fires at 0.5 new connections per request or more (PostgreSQL 14+).

Each new connection costs a backend process, authentication and cold catalog caches
before its first query, and the set-up the app runs on it: its SETs, SHOWs, start-up
transaction and catalog lookups (pgcost lists them apart, as the set-up per new
connection). The fix depends on the stack, which pgcost cannot see:
  - with a pool: create one pool per process at start-up, and borrow a connection from
    it for each request;
  - without one (PHP, CGI, serverless functions): keep connections across requests with
    persistent connections (PHP: PDO::ATTR_PERSISTENT or pg_pconnect), or put a pooler
    such as PgBouncer in front of Postgres;
  - either way, move the SETs into the connection's start-up parameters (options=-c ...)
    or the role's defaults (ALTER ROLE ... SET), so that a connection runs none.
pgcost also reports the peak backends against max_connections: how many processes like
this one the server can take.

Saves per request: the whole set-up (its statements, rows read and rows returned), or one
round trip per new connection when no set-up statement was recognised. Always high.";

const CACHE_CANDIDATE: &str = "\
A keyed read of small tables nothing wrote in the window: a candidate for an application \
cache, keyed tenant first, dropped on any write, with a TTL.

Fires for a reference-like read: it runs once per request or more, returns at most 5 rows
per call (a keyed lookup, not a listing), and every table it reads is small (at most 8
pages) with no inserts, updates or deletes in the window. At most three are reported.

Never raised for:
  - the page the endpoint returns, or its count;
  - a batch load keyed by the page: IN ($1, ...) or = ANY($1), the same load with another
    number of keys, or a lookup by id after a page that holds the key (t.*, <table>_id);
  - a read that returns nothing, or of an empty table: no evidence of fixed data;
  - a statement that has its own finding (fix it before caching it);
  - what decides who the caller is or whether they may still act: sessions, tokens,
    revocation lists, credentials, and the user row loaded for authentication. These
    must be read on every request, or a revoked credential keeps working.

If you cache it:
  - tenant first in the key, so one tenant's entry can never answer another's;
  - cache only the reachable path: the result for the keys this request used;
  - drop everything on mutation: any write to these tables invalidates every entry
    built from them;
  - the TTL is the real guarantee across instances: another instance's write never
    reaches this cache, so the TTL bounds how stale an answer can be.

Saves per request: its calls (statements), its rows returned and its db time.";

const SEQ_SCAN_HEAVY: &str = "\
Sequential scans read a whole table to return a few rows. Index the columns the \
statements filter, join or (under a LIMIT) sort by; on a small table, or behind `id IN \
(SELECT id FROM the same table ...)`, fix the query's shape.

Fires when sequential scans of a table of at least 8 pages read at least 100 rows per
request and at least 10 times the rows that the statements reading the table return
(joins included).

The fix: an index on the columns the statements filter or join by,

    CREATE INDEX CONCURRENTLY ON <table> (<column>);

and, for a page (ORDER BY ... LIMIT n), on the ORDER BY columns: a top-N sort over the
whole table then stops after n rows. Confirm with EXPLAIN (ANALYZE, BUFFERS).

Not an index, but the query's shape, when the table is small (under 16 pages: evidence
small_table) or a statement filters it by a list of its own keys, `WHERE id IN (SELECT
id FROM the_table WHERE ...)` (evidence self_semi_join): Postgres reads all of a small
table about as cheaply as through an index, and reads a table twice to build such a list
and then its rows. The cost is how often the table is read: put the subquery's
conditions in the outer WHERE, correlate it on the key with EXISTS, or read the table
once per request and keep it. No index is proposed for a small table.

Saves per request: the rows read minus the rows returned, and the db time of the
statements that read the table in proportion.";

const WRITES_ON_READ: &str = "\
A GET or HEAD changes data on every request: WAL, dirty pages and row locks on a read. \
Write only when the stored value is stale, or batch the writes.

Fires when the endpoint is a GET or HEAD and an INSERT, UPDATE, DELETE, MERGE or locking
SELECT runs at least once per request and changes something on every request: at least
one WAL record per request (PostgreSQL 13+), or one row affected before that.

Not raised for a guarded write that runs on every request but changes nothing (\"only when
last_seen is older than 5 minutes\"): it writes no WAL.

A write on a read costs WAL, dirty pages that must be flushed, replication traffic, later
vacuum work, and row locks that concurrent requests for the same row wait on. The fix, for
activity records (session touches, last-seen times, counters):

    UPDATE sessions SET last_seen = now()
    WHERE id = $1 AND last_seen < now() - interval '5 minutes'

or keep the value in memory or a cache and flush it in batches.

Saves per request: the statement's calls and db time, and its WAL bytes.";

const SPILLS_TO_DISK: &str = "\
A sort or hash outgrows work_mem and writes temp files on every request. Avoid the sort \
(an index, a LIMIT) or raise work_mem for that statement.

Fires when a statement writes at least one temp-file block (8 kB) per request: a sort,
hash or materialization outgrew work_mem (a limit per operation, 4 MB by default) and
went to disk, to be read back before the statement can answer.

EXPLAIN (ANALYZE, BUFFERS) names the node: \"Sort Method: external merge  Disk: ...\", or
a hash with more than one batch. Avoid the work first: an index that returns the rows in
order, a LIMIT, fewer or narrower columns. Otherwise raise work_mem for that statement
only:

    BEGIN; SET LOCAL work_mem = '32MB'; <the statement>; COMMIT;

or ALTER ROLE <role> SET work_mem = '...' for the role that runs it.

Saves per request: the temp blocks written. High from 1 MB (128 blocks) per request,
medium below.";

const CHECKOUT_PING: &str = "\
The pool sends a SELECT 1 each time it hands out a connection: a round trip per checkout. \
Let it check idle connections only, or check out once per request.

Fires when a statement that reads nothing (SELECT 1, SELECT 1 AS one, /* ping */ SELECT 1,
an empty query) runs at least 0.9 times per request: a pool's liveness check on each
checkout (SQLAlchemy's pool_pre_ping, ActiveRecord before 7.1, a connectionTestQuery).
It is never an N+1, a repeated statement or a cache candidate.

The fix is in the pool's settings:
  - HikariCP: drop connectionTestQuery (a JDBC4 driver checks with isValid());
  - Tomcat JDBC, DBCP, c3p0: testOnBorrow off, or a validationInterval;
  - SQLAlchemy: pool_pre_ping off with pool_recycle below the server's idle timeout;
  - Django: CONN_HEALTH_CHECKS checks once per request, not per query;
  - ActiveRecord 7.1+ verifies only connections that sat idle;
  - code that checks out a connection per query: check out once per request.

Saves per request: its calls (statements) and its db time.";

const TRANSACTION_AROUND_SINGLE_READ: &str = "\
BEGIN and COMMIT around a single read on every request: two round trips that protect \
nothing. Run reads in autocommit.

Fires when BEGIN and COMMIT (or ROLLBACK) each run at least 0.99 times per request, in
equal numbers, and each transaction holds one read: the reads less those that ran in
autocommit (transactions less BEGINs), per BEGIN, are 1 within 0.25. psycopg2 without
autocommit, as SQLAlchemy uses it, opens one around every checkout.

Not raised when the request writes or locks a row, runs another utility statement (a SET
LOCAL or a SAVEPOINT needs its transaction), holds two reads or more per transaction, or
opens connections per request.

The fix: run reads in autocommit (psycopg: autocommit = True; SQLAlchemy:
isolation_level=\"AUTOCOMMIT\"; JDBC: setAutoCommit(true)). Keep the transaction where
several statements must see one snapshot.

Saves per request: the BEGINs and COMMITs, 2 round trips per transaction.";

const OVERFETCH: &str = "\
The page fetches several times the rows the response shows, and the app drops the rest. \
Filter in the WHERE and LIMIT to the page size.

Fires when the page (a statement with LIMIT, OFFSET or FETCH FIRST, or a listing with its
count) returns at least 2 rows per call for each item of the response. The page size is
the item count of the burst's first 2xx JSON response (load.response_items): the length of
a top-level array, or of the largest array among the values of a top-level object. A
response that is not JSON, or holds no array, gets no such finding.

The app filters after fetching (permissions, visibility, state) or cuts the rows. The fix:
move the filter into the WHERE and LIMIT to the page size; when the filter cannot be
written in SQL, fetch in smaller keyset steps until the page is full.

Saves per request: the rows returned beyond the response's items, and the page's db time
in proportion.";

const DUPLICATE_LOAD: &str = "\
Different statements load the same row by the same key in one request. Load it once with \
the columns every caller needs, and pass it on.

Fires when two different statement texts, each run at least 0.99 times per request and
returning at most 2 rows per call, read the same table by the same key: the same columns
compared with = $n in the outer WHERE (a count, an aggregate, an N+1 or a ping never
counts). The user loaded by the authentication and again by the handler is the usual case.

pgcost cannot see the parameters: when their values differ, the rows differ too. So the
finding is one step lower than its saving, as a repeated statement with parameters.

The fix: load the row once, with the columns every caller needs, and pass it on (or keep
it for the request).

Saves per request: the calls of every statement of the key but the most frequent one. The
row kept may need the other statements' columns, so no rows or db time are counted.";

const SCAN_GROWS_WITH_PAGE: &str = "\
Each item of the page costs a scan: rows read grow far faster than the rows returned. \
Index the column each item is looked up by, or batch the lookups.

Raised by `pgcost scale` only, which measures one endpoint at several page sizes n. Fires
when the request's rows read per request grow by at least 1 row per unit of n and more than
10 times faster than its rows returned. The table whose rows read grow fastest is named.

Not raised for a page that reads a fixed number of rows whatever its size (a COUNT, a
sorted scan under a LIMIT): its rows read do not grow with n.

The fix: index the column each item of the page is looked up or filtered by, or load the
items' rows in one statement (WHERE key = ANY($1)).

Saves per request: rows read, (rows read slope - rows returned slope) x the largest n.";

const SESSION_SETUP_PER_CHECKOUT: &str = "\
Session settings (SET search_path, SET statement_timeout, RESET) sent on every checkout: \
round trips per request. Set them once per connection: the pool's connection init, the \
connection options, or ALTER ROLE ... SET.

Fires when a session setting runs at least 0.9 times per request: SET (search_path,
statement_timeout, TIME ZONE, ...), RESET or DISCARD, sent by an ORM or a pool each time
it hands out a connection. Each is a round trip before the request's own work.

Not raised for SET LOCAL, SET TRANSACTION, SET CONSTRAINTS, SET ROLE or SET SESSION
AUTHORIZATION, nor for a custom setting with a dot (app.tenant_id): they belong to the
transaction or carry the request's identity. Not raised when the app opens a connection
per request (connection_per_request names that set-up). round_trips leaves these settings
out of its count and its advice.

The fix: set what is the same on every request once per connection:
  - in the pool's connection initialisation (node-postgres `options` or an on-connect
    hook, SQLAlchemy's `connect` event, HikariCP's connectionInitSql, Django `OPTIONS`);
  - in the connection string: options=-c search_path=app -c statement_timeout=5s;
  - on the role or the database:

    ALTER ROLE app SET search_path = app;
    ALTER ROLE app SET statement_timeout = '5s';

Saves per request: the settings' calls (statements) and their db time.";

const COUNT_PER_PAGE: &str = "\
An exact COUNT with the page's filter runs beside the page on every request. Use keyset \
pagination, an estimated count, or count on the first page only.

Fires when a count (count(...) with no GROUP BY) runs on every request (0.99 times or more)
beside a page (LIMIT or OFFSET) of the same relations with the same filter, in the count's
WHERE or in the subquery it counts, and reads at least 100 rows per request. Those rows are
estimated, at least: the rows read from its tables beyond those the other statements
reading them return, halved, since the page's own filter and sort may read as many. A
count answered by an index-only scan reads no table rows that pgcost can see.

The fix:
  - keyset pagination needs neither OFFSET nor a total; show \"next\" when LIMIT n + 1
    returns one more row:

    SELECT ... WHERE (created_at, id) < ($1, $2) ORDER BY created_at DESC, id DESC LIMIT 26

  - an estimated count where an exact one is not needed: the planner's estimate (EXPLAIN's
    rows, or pg_class.reltuples for an unfiltered table);
  - count on the first page only, or drop the total from the response.

Saves per request: the count's rows read and its db time.";

const PER_ROW_SUBQUERY: &str = "\
A subquery runs once per row of its statement: its table is scanned far more often than \
the statement runs. Rewrite it as a join to a grouped table.

Fires when a table is scanned (sequential and index scans) at least 5 times per request
and at least 5 times per call of the statements that read it, and one of them reads the
table in a subquery: (SELECT ... FROM table ...) in its text. Postgres runs a correlated
subquery once per row of the outer query (a SubPlan), so a small table is read dozens of
times per request; tables under 8 pages escape seq_scan_heavy, not this rule.

Not raised when no reader has such a subquery: a nested loop join probing an index once
per row is the planner's choice, not the query's shape. IN (SELECT ...), = ANY (SELECT
...) and [NOT] EXISTS (SELECT ...) do not count: Postgres plans them as joins.

The fix: read the table once per call, as a join to a grouped derived table,

    SELECT b.*, coalesce(c.n, 0) AS cards_count
    FROM boards b
    LEFT JOIN (SELECT board_id, count(*) AS n FROM cards GROUP BY board_id) c
      ON c.board_id = b.id

or a LEFT JOIN LATERAL over an index on the correlated column, or a counter column.

Saves per request: rows read, the sequential rows read x (1 - calls / sequential scans):
each sequential scan beyond one per call reads the whole table again. Index scans per row
save no rows, only their loops, so they count 0.";

const PLANNING_DOMINATES: &str = "\
Postgres plans a statement for as long as it runs it, or longer, on every call. Prepare \
it once per connection, or join fewer tables per statement.

Fires when a statement's plan time per request (pg_stat_statements' total_plan_time over the
window) is at least 0.5 ms and at least its execution time. Plan time is counted only while
pg_stat_statements.track_planning is on (PostgreSQL 13 and later); when it is off, the
report carries the note track_planning_off with the ALTER SYSTEM that turns it on, and this
kind cannot fire.

A statement sent unprepared, or through the unnamed statement of the extended protocol, is
planned on every call; a join of many tables costs the planner more than running it over a
few indexed rows costs the executor.

The fix: prepare the statement once per connection and reuse its plan (psycopg
prepare_threshold, JDBC prepareThreshold, a name on the node-postgres query, Rails
prepared_statements: true; behind PgBouncer in transaction mode, max_prepared_statements
from 1.21). Or join fewer tables per statement, loading the page's relations in a second
keyed query; or, when the written join order is good,

    SET LOCAL join_collapse_limit = 1

in the statement's transaction, so the planner keeps it.

Saves per request: the plan time (plan_time_ms; db_time_ms counts execution only). A
prepared statement is still planned a few times per connection, so this is an upper bound.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_advice_that_fits_in_100_columns() {
        for kind in FindingKind::ALL {
            let text = explain(kind);
            assert!(text.starts_with(kind.as_str()));
            assert!(text.contains("Saves per request"), "{kind}");
            assert!(!summary(kind).contains('\n'), "{kind}: one paragraph");
            for line in text.lines() {
                assert!(line.chars().count() <= 100, "{kind}: {line}");
            }
        }
        assert!(explain(FindingKind::CacheCandidate).contains("revocation lists"));
        assert!(explain(FindingKind::CollectionToBoolean).contains("SELECT EXISTS"));
    }
}
