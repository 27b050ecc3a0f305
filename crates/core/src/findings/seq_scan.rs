//! `seq_scan_heavy`: sequential scans that read a table many times over the rows the
//! request gets back from it, the statement behind them, and the remedy: an index on a
//! large table; on a small one, or behind a self-semi-join, the query's shape.

use super::*;

/// A `seq_scan_heavy` finding on `table` when its sequential scans read it many times over
/// the rows the request gets back from it, with its saving: the rows read beyond those, and
/// the readers' time in proportion.
pub(super) fn seq_scan_heavy(
    table: &TableRow,
    statements: &[Statement],
    inputs: &Inputs,
    t: &Thresholds,
) -> Option<Finding> {
    if table.pages < t.seq_scan_min_pages
        || table.seq_rows_read < t.seq_scan_min_rows_read_per_request
    {
        return None;
    }
    let readers: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.tables.iter().any(|touched| touched.table == table.table))
        .collect();
    let returned = rows_returned(table, &readers);
    if table.seq_rows_read < t.seq_scan_min_read_to_returned_ratio * returned {
        return None;
    }
    let saved = (table.seq_rows_read - returned).max(0.0);
    let readers_time: f64 = readers.iter().map(|s| s.db_time_ms).sum();
    let remedy = Remedy::of(table, &readers, t);
    let looped = (readers.iter())
        .find(|s| (inputs.plan(s.query)).is_some_and(|p| p.loop_rescanned.contains(&table.table)));
    let suggestion = seq_scan_suggestion(table, &readers, returned, &remedy, looped);
    let scanner = scanning_reader(table, &readers, inputs);
    let flags = [
        ("scans_match_calls", readers.len() > 1 && scanner.is_some()),
        ("small_table", remedy.small),
        ("self_semi_join", !remedy.semi_joined.is_empty()),
        ("nested_loop_inner", looped.is_some()),
    ];
    let named = (remedy.semi_joined.first().copied()).or(scanner);
    Some(Finding {
        query: named.map(|s| s.query.to_string()),
        // Named by its table alone, it is about every reader: their tags as one (`locate`).
        tags: match named {
            Some(_) => None,
            None => super::sent_from::merged(readers.iter().filter_map(|s| s.tags)),
        },
        table: Some(table.table.clone()),
        evidence: evidence_of(table, returned, &flags),
        avoidable_rows_per_request: saved,
        saves_per_request: Saving {
            rows_read: saved,
            db_time_ms: readers_time * saved / table.seq_rows_read,
            ..Saving::default()
        },
        ..Finding::new(FindingKind::SeqScanHeavy, suggestion)
    })
}

/// What the request gets back from the table: the rows its readers return, joins
/// included; without a reader, the rows fetched through its indexes.
fn rows_returned(table: &TableRow, readers: &[&Statement]) -> f64 {
    if readers.is_empty() {
        table.idx_rows_fetched
    } else {
        readers.iter().map(|s| s.rows_per_request).sum()
    }
}

/// The finding's evidence: the table's scans and size, the rows returned and the ratio to
/// them where there are any, then each flag that is set, as 1.
fn evidence_of(table: &TableRow, returned: f64, flags: &[(&str, bool)]) -> BTreeMap<String, f64> {
    let mut figures = vec![
        ("seq_rows_read_per_request", table.seq_rows_read),
        ("seq_scans_per_request", table.seq_scans),
        ("rows_returned_per_request", returned),
        ("pages", table.pages as f64),
        ("live_rows", table.live_rows as f64),
    ];
    if returned > 0.0 {
        figures.push(("read_to_returned_ratio", table.seq_rows_read / returned));
    }
    for &(key, _) in flags.iter().filter(|(_, set)| *set) {
        figures.push((key, 1.0));
    }
    evidence(&figures)
}

/// The join a reader's plan rescans the table in, once per row of its outer side.
fn nested_loop_text(s: &Statement, table: &TableRow, remedy: &Remedy) -> String {
    let fix = match remedy.small {
        true => {
            "A hash join would read it once: check the outer side's row estimates \
             (ANALYZE), which the planner took for a few rows."
        }
        false => "An index on the join column lets each loop fetch only its matching rows.",
    };
    format!(
        "\n\nThe plan of {} scans {} on the inner side of a Nested Loop: the whole table \
         again for every row of the outer side. {fix}",
        quoted(s.query),
        table.table,
    )
}

/// What the remedy turns on: a table this small is read whole about as cheaply as
/// through an index, and a reader that filters it by a list of its own keys reads it
/// whole whatever its indexes.
struct Remedy<'s, 'a> {
    small: bool,
    /// The readers whose WHERE reads the table again in an `IN (SELECT ...)`.
    semi_joined: Vec<&'s Statement<'a>>,
}

impl<'s, 'a> Remedy<'s, 'a> {
    fn of(table: &TableRow, readers: &[&'s Statement<'a>], t: &Thresholds) -> Self {
        let semi_joined = (readers.iter().copied())
            .filter(|s| (s.shape.self_semi_joins.iter()).any(|r| r.designates(&table.table)))
            .collect();
        Remedy {
            small: table.pages < t.seq_scan_small_table_pages,
            semi_joined,
        }
    }
}

/// The statement behind a table's sequential scans: its only reader; among several, the
/// one reader whose plan (the custom one where it was explained) scans the table
/// sequentially; without plans that tell, the one reader whose calls per request match the
/// scans per request (within 10%).
fn scanning_reader<'a>(
    table: &TableRow,
    readers: &[&'a Statement<'a>],
    inputs: &Inputs,
) -> Option<&'a Statement<'a>> {
    if let [only] = readers {
        return Some(only);
    }
    let scanning: Vec<&&Statement> = (readers.iter())
        .filter(|s| (inputs.plan(s.query)).is_some_and(|p| p.seq_scanned.contains(&table.table)))
        .collect();
    if let [one] = scanning.as_slice() {
        return Some(**one);
    }
    let matching: Vec<&&Statement> = (readers.iter())
        .filter(|s| (s.calls_per_request - table.seq_scans).abs() <= 0.1 * table.seq_scans)
        .collect();
    match matching.as_slice() {
        [one] => Some(**one),
        _ => None,
    }
}

/// The finding's text: what the scans read against what they return, the remedy, the
/// statements that read the table, and the Nested Loop that rescans it, if one does.
fn seq_scan_suggestion(
    table: &TableRow,
    readers: &[&Statement],
    returned: f64,
    remedy: &Remedy,
    looped: Option<&&Statement>,
) -> String {
    let estimate = if readers.is_empty() {
        "rows fetched through its indexes"
    } else {
        "rows returned by the statements that read this table, joins included"
    };
    let mut suggestion = format!(
        "Sequential scans read {} rows of {} per request ({}) to return about {} \
         ({estimate}). The table has {} pages and {} live rows, so each scan reads all of \
         it. ",
        amount(table.seq_rows_read),
        table.table,
        counted(table.seq_scans, "scan", "scans"),
        amount(returned),
        table.pages,
        table.live_rows,
    );
    suggestion.push_str(&remedy_text(table, remedy));
    if readers.iter().any(|s| s.page) && !remedy.small {
        suggestion.push_str(
            " A page (ORDER BY ... LIMIT) reads this table: without an index on its ORDER \
             BY columns, Postgres sorts every matching row to return the first few; with \
             one, it stops after the page.",
        );
    }
    if readers.is_empty() {
        suggestion.push_str(
            " No measured statement names this table: look for a view or a function that \
             reads it, or a foreign key whose referencing column has no index.",
        );
    } else {
        suggestion.push_str("\n\nStatements that read it:");
        for s in readers {
            suggestion.push_str(&format!("\n  - {}", quoted(s.query)));
        }
    }
    if let Some(s) = looped {
        suggestion.push_str(&nested_loop_text(s, table, remedy));
    }
    suggestion
}

/// The remedy, in words: an index, or the shape of the query.
fn remedy_text(table: &TableRow, remedy: &Remedy) -> String {
    let index = "An index on the columns these statements filter or join by lets Postgres \
                 fetch just the matching rows; confirm with EXPLAIN (ANALYZE, BUFFERS).";
    let mut text = String::new();
    if remedy.small {
        text.push_str(&format!(
            "At {} pages the table is small: a sequential scan is a fair plan for it, and \
             an index would save little per scan. The cost is in how often, and why, the \
             queries read all of it: fix their shape rather than add an index.",
            table.pages
        ));
    }
    if let Some(s) = remedy.semi_joined.first() {
        text.push_str(&format!(
            "{}{} filters {} by a list of its own keys, `IN (SELECT ... FROM {})`: to build \
             the list and then the rows, Postgres reads the table twice on every call, and \
             a small one whole each time. Put the subquery's conditions in the outer WHERE, \
             or correlate it on the key with EXISTS, so that the table is read once, and \
             only where it matches.",
            if text.is_empty() { "" } else { " " },
            quoted(s.query),
            table.table,
            table.table,
        ));
    } else if remedy.small {
        text.push_str(
            " Look for a filter the planner cannot use a key for (a subquery over the whole \
             table, an OR across tables, a function of the column), or read the table once \
             per request and keep it for the rest.",
        );
    }
    if !remedy.small {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(index);
    }
    text
}

/// Drops `seq_scan_heavy` on a table whose every sequential scan a count could have made
/// that `count_per_page` names (the table's scans per request are at most the count's
/// calls): counting half a table reads it whole with or without an index, and the count's
/// remedy (an estimate, a cached total, no total) is the one that fits.
pub(super) fn leave_to_counts(
    findings: &mut Vec<Finding>,
    statements: &[Statement],
    t: &Thresholds,
) {
    let counts: Vec<&Statement> = (findings.iter())
        .filter(|f| f.kind == FindingKind::CountPerPage)
        .filter_map(|f| f.query.as_deref())
        .filter_map(|q| statements.iter().find(|s| s.query == q))
        .collect();
    let scanned_by_a_count = |f: &Finding| {
        counts.iter().any(|count| {
            (count.tables.iter()).any(|table| {
                f.table.as_deref() == Some(table.table.as_str())
                    && table.seq_scans <= count.calls_per_request + t.once_per_request_tolerance
            })
        })
    };
    findings.retain(|f| f.kind != FindingKind::SeqScanHeavy || !scanned_by_a_count(f));
}

/// Whether a `seq_scan_heavy` finding asks for no index: its table is small (evidence
/// `small_table`), where the remedy is the query's shape.
pub fn proposes_no_index(finding: &Finding) -> bool {
    finding.kind == FindingKind::SeqScanHeavy && finding.evidence.contains_key("small_table")
}
