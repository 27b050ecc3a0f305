//! The rule of each kind of finding that is not a repeated statement: when it fires on a
//! statement or a table of the report, and its evidence, suggestion and saving (the
//! formulas are in `docs/findings.md`).

use super::*;

/// Whether `s` is the list an N+1 of the same request walks: the loop runs at most once
/// per row of it and at least once per two rows (a per-request query cache answers
/// repeated keys, so a loop may run fewer times than the list has rows).
pub(super) fn walked_by_n_plus_one(s: &Statement, all: &[Statement], t: &Thresholds) -> bool {
    all.iter().any(|loop_| {
        loop_.is_n_plus_one(t)
            && loop_.calls_per_request <= s.rows_per_request + t.once_per_request_tolerance
            && loop_.calls_per_request >= s.rows_per_request / 2.0
    })
}

/// A step of authorisation run once per request (the key owner's scopes, the user's
/// permissions) that loads one owner's constant set, not a batch keyed by a page's rows:
/// its list holds one key (`IN ($3)`), or the request reads no page whose rows could have
/// given it several (`role_id IN ($1, $2)`, the user's roles; a prefetch of the roles of
/// a page of users follows that page).
fn auth_collection(s: &Statement, all: &[Statement], t: &Thresholds) -> bool {
    let fed_by_a_page = || {
        all.iter()
            .any(|page| page.page && !page.is_total() && page.query != s.query)
    };
    s.runs_once_per_request(t)
        && super::identity::authorises(&s.relation_names())
        && (lists_one_key(s.query) || !fed_by_a_page())
}

/// Every `IN (…)` list of placeholders in the text holds one: `IN ($3)`, or as a row
/// constructor, `IN (($3))`.
fn lists_one_key(query: &str) -> bool {
    let text = query.to_ascii_lowercase().replace(' ', "");
    let lists: Vec<&str> = (text.split("in(").skip(1))
        .filter(|rest| rest.starts_with('$') || rest.starts_with("($"))
        .map(|rest| {
            let mut depth = 1usize;
            let end = rest.find(|c| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            &rest[..end.unwrap_or(rest.len())]
        })
        .collect();
    !lists.is_empty() && lists.iter().all(|l| l.matches('$').count() == 1)
}

pub(super) fn collection_to_boolean(
    s: &Statement,
    all: &[Statement],
    items: Option<f64>,
    t: &Thresholds,
) -> Option<Finding> {
    let outer = s.shape.outer.as_ref()?;
    let answers_already = outer.aggregate || outer.exists || outer.group_by || outer.limit;
    // The page, a batch load, the list a loop walks and the page's children: their rows
    // are used. A list of keys does not make an auth step's constant collection a batch
    // load: the ORM adds `id IN ($3)` to the key owner's scopes as well.
    // Nor are an auth step's rows about the response's items, however many it lists.
    let auth_step = auth_collection(s, all, t);
    let batch_load = s.shape.keyed_by_list && !auth_step;
    let rows_used = s.page
        || batch_load
        || walked_by_n_plus_one(s, all, t)
        || (!auth_step && super::overfetch::feeds_the_page(s, all, items, t));
    if s.shape.access != Access::Read
        || answers_already
        || rows_used
        || s.calls_per_request < t.collection_min_calls_per_request
        || s.rows_per_call < t.collection_min_rows_per_call
    {
        return None;
    }
    let saved_rows = (s.rows_per_request - s.calls_per_request).max(0.0);
    let question = "<the condition the caller tests>";
    let rewrite = match &outer.filter {
        Some(filter) => format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE {filter} AND {question})",
            outer.from
        ),
        None => format!(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE {question})",
            outer.from
        ),
    };
    let caveat = if s.shape.parsed {
        ""
    } else {
        "\n\n(The statement's text did not parse, perhaps because pg_stat_statements \
         truncated it: the rewrite was rebuilt from its tokens, so check it.)"
    };
    let suggestion = format!(
        "This statement returns {} rows per call ({} per request) with no LIMIT: it builds \
         a whole set. If the caller only tests whether a matching row exists (a permission, \
         a membership, a flag), ask the question you actually have:\n\n    {rewrite}\n\n\
         Postgres stops at the first matching row and sends back one boolean instead of \
         the set. Keep the set-building query for screens that really need the whole set.\
         {caveat}",
        amount(s.rows_per_call),
        amount(s.rows_per_request),
    );
    Some(Finding {
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
            ("rows_per_request", s.rows_per_request),
            ("share_of_rows_returned", s.share_of_rows_returned),
        ]),
        // An EXISTS sends back one row per call.
        avoidable_rows_per_request: saved_rows,
        saves_per_request: s.saving_of_rows_returned(saved_rows),
        ..s.finding(FindingKind::CollectionToBoolean, suggestion)
    })
}

pub(super) fn n_plus_one(s: &Statement, t: &Thresholds) -> Option<Finding> {
    if !s.is_n_plus_one(t) {
        return None;
    }
    let saved = s.calls_per_request - 1.0;
    let batch = if s.shape.access == Access::Write {
        "Send all the items in one statement: one multi-row INSERT, or an INSERT, UPDATE \
         or DELETE that reads the items from arrays with `unnest($1, $2)`; or fold the \
         write into the statement that produced the list."
            .to_string()
    } else {
        let example = match &s.shape.batched {
            Some(batched) => format!(", for example:\n\n    {batched}\n\n"),
            None => " (`WHERE id = ANY($1)`), ".to_string(),
        };
        format!(
            "Batch it: pass all the keys as one array parameter and match them with \
             `= ANY($1)`{example}returning the key column so the app can match rows to \
             items; or JOIN this table into the statement that produced the list."
        )
    };
    let suggestion = format!(
        "This statement runs {} times per request and returns {} row(s) per call: one \
         round trip per item, the N+1 pattern. {batch} That saves about {} round trips \
         per request.",
        amount(s.calls_per_request),
        amount(s.rows_per_call),
        amount(saved),
    );
    Some(Finding {
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("rows_per_call", s.rows_per_call),
            ("rows_per_request", s.rows_per_request),
        ]),
        round_trips_per_request: saved,
        saves_per_request: Saving::of_statements(saved),
        ..s.finding(FindingKind::NPlusOne, suggestion)
    })
}

/// Top-level statements per request besides the set-up of new connections (which is
/// `connection_per_request`'s saving) and the session settings sent per checkout (which are
/// `session_setup_per_checkout`'s), the utility statements among them, and the set-up's.
fn handler_statements(inputs: &Inputs, checkout: f64) -> Option<(f64, Option<f64>, f64)> {
    let p = inputs.per_request;
    let setup = p.setup.as_ref();
    let setup_statements = setup.map_or(0.0, |s| s.statements_per_request);
    let setup_utility = setup.map_or(0.0, |s| s.utility_per_request());
    let all = p.statements?;
    let utility = (p.statements_excluding_utility)
        .map(|non_utility| (all - setup_utility - checkout - non_utility).max(0.0));
    Some((all - setup_statements - checkout, utility, setup_statements))
}

/// The suggestion's first sentence.
fn round_trips_opening(
    per_request: f64,
    utility: Option<f64>,
    setup: f64,
    checkout: f64,
) -> String {
    let mut opening = format!(
        "Each request makes {} round trips to Postgres",
        amount(per_request)
    );
    if setup > 0.0 {
        opening.push_str(" besides its new connections' set-up");
    }
    if checkout > 0.0 {
        opening.push_str(&format!(
            " besides {} session settings sent per checkout (session_setup_per_checkout)",
            amount(checkout)
        ));
    }
    if let Some(utility) = utility.filter(|u| *u > 0.0) {
        opening.push_str(&format!(
            " ({} of them BEGIN, COMMIT, SET and the like)",
            amount(utility)
        ));
    }
    opening.push_str(", and each one waits for the network and the server in turn.");
    opening
}

pub(super) fn round_trips(inputs: &Inputs, all: &[Statement], t: &Thresholds) -> Option<Finding> {
    let statements = all;
    let checkout = super::session_setup::per_checkout_calls(inputs, t);
    let (per_request, utility, setup) = handler_statements(inputs, checkout)?;
    if per_request < t.round_trips_min_statements_per_request {
        return None;
    }
    // Pings and N+1 statements have their own findings and their own fixes.
    let once: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.runs_once_per_request(t) && !s.ping)
        .collect();
    let repeated: Vec<&Statement> = statements
        .iter()
        .filter(|s| {
            s.calls_per_request >= t.memoise_min_calls_per_request && !s.is_n_plus_one(t) && !s.ping
        })
        .collect();
    let saved = once.len().saturating_sub(1) as f64
        + repeated
            .iter()
            .map(|s| s.calls_per_request - 1.0)
            .sum::<f64>();

    let mut suggestion = round_trips_opening(per_request, utility, setup, checkout);
    suggestion.push_str(&super::round_trips::once_per_request_advice(&once, all));
    if !repeated.is_empty() {
        suggestion.push_str(
            "\n\nThese statements run more than once per request with the same text; when \
             the parameters repeat too, memoise the result for the rest of the request:",
        );
        for s in &repeated {
            suggestion.push_str(&format!(
                "\n  - {} ({} times per request)",
                quoted(s.query),
                amount(s.calls_per_request)
            ));
        }
    }
    let mut figures = vec![
        ("statements_per_request", per_request),
        ("statements_once_per_request", once.len() as f64),
        ("statements_repeated_per_request", repeated.len() as f64),
    ];
    if let Some(utility) = utility {
        figures.push(("utility_statements_per_request", utility));
    }
    if setup > 0.0 {
        figures.push(("setup_statements_per_request", setup));
    }
    if checkout > 0.0 {
        figures.push(("session_settings_per_request", checkout));
    }
    Some(Finding {
        evidence: evidence(&figures),
        round_trips_per_request: saved,
        saves_per_request: Saving::of_statements(saved),
        tags: sent_from::merged(once.iter().chain(&repeated).filter_map(|s| s.tags)),
        ..Finding::new(FindingKind::RoundTrips, suggestion)
    })
}

/// A reference-like read: keyed, of small tables nothing wrote in the window, and neither
/// the page, a batch load keyed by the page ([`batch_load::keyed_by_the_page`]), a read
/// that found nothing or of an empty table (no evidence of fixed data), nor a credential
/// check ([`identity::decides_identity`]).
pub(super) fn cache_candidate(s: &Statement, all: &[Statement], t: &Thresholds) -> Option<Finding> {
    let written =
        |table: &&TableRow| table.rows_inserted + table.rows_updated + table.rows_deleted != 0.0;
    let large = |table: &&TableRow| table.pages > t.cache_max_table_pages;
    let names = || s.tables.iter().map(|table| table.table.as_str());
    if s.shape.access != Access::Read
        || s.page
        || s.calls_per_request < t.cache_min_calls_per_request
        || s.rows_per_call > t.cache_max_rows_per_call
        || s.tables.is_empty()
        || s.unknown_relation
        || s.tables.iter().any(written)
        || s.tables.iter().any(large)
        || s.rows_per_request <= 0.0
        || s.tables.iter().any(|table| table.live_rows == 0)
        || identity::decides_identity(names(), s.query)
        || batch_load::keyed_by_the_page(s, all)
    {
        return None;
    }
    let names: Vec<&str> = s.tables.iter().map(|table| table.table.as_str()).collect();
    let suggestion = format!(
        "This read runs {} per request, returns {} per call and reads only {}, small \
         tables, none empty, which nothing inserted, updated or deleted during the measured \
         window; its keys are no list of ids the request has just read. Its result is a candidate for an \
         application cache; first check that the app's other paths rarely write these \
         tables. If you cache it:\n\
         \x20 - tenant first in the key, so one tenant's entry can never answer another's;\n\
         \x20 - cache only the reachable path: the result for the keys this request used, \
         not a copy of the tables;\n\
         \x20 - drop everything on mutation: any write to these tables invalidates every \
         entry built from them;\n\
         \x20 - the TTL is the real guarantee across instances: another instance's write \
         never reaches this cache, so the TTL bounds how stale an answer can be;\n\
         \x20 - never cache session revocation: a revoked session or token must fail on \
         the very next request.",
        counted(s.calls_per_request, "time", "times"),
        counted(s.rows_per_call, "row", "rows"),
        names.join(", "),
    );
    Some(Finding {
        evidence: cache_evidence(s),
        avoidable_rows_per_request: s.rows_per_request,
        round_trips_per_request: s.calls_per_request,
        saves_per_request: Saving {
            statements: s.calls_per_request,
            rows_read: s.table_rows_read,
            rows_returned: s.rows_per_request,
            db_time_ms: s.db_time_ms,
            ..Saving::default()
        },
        ..s.finding(FindingKind::CacheCandidate, suggestion)
    })
}

/// Why a cache candidate fired: its calls and rows, the size of its largest table, the
/// fewest live rows among its tables (none empty) and the writes to them in the window
/// (none).
fn cache_evidence(s: &Statement) -> BTreeMap<String, f64> {
    let pages = s.tables.iter().map(|t| t.pages).max().unwrap_or(0);
    let live = s.tables.iter().map(|t| t.live_rows).min().unwrap_or(0);
    evidence(&[
        ("calls_per_request", s.calls_per_request),
        ("rows_per_call", s.rows_per_call),
        ("rows_per_request", s.rows_per_request),
        ("tables_read", s.tables.len() as f64),
        ("largest_table_pages", pages as f64),
        ("smallest_table_live_rows", live as f64),
        ("rows_written_per_request", 0.0),
        ("keys_from_the_page", 0.0),
    ])
}
