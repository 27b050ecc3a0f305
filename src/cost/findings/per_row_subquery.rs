//! `per_row_subquery`: a table scanned many times per call of the statements that read it,
//! by a subquery in one statement's text that Postgres runs once per row of the outer
//! query (a SubPlan), as ORM annotations and computed counters do.

use super::{Finding, FindingKind, Saving, Statement, Thresholds, amount, evidence, quoted};
use crate::cost::report::model::TableRow;

/// Words before a sublink that Postgres pulls up into a (semi- or anti-) join, planned once
/// per call rather than run per row: `IN (SELECT …)`, `= ANY (SELECT …)`, `EXISTS (…)`.
const PULLED_UP: &[&str] = &["in", "any", "some", "all", "exists"];

/// The word right before character `at`, lower-case.
fn word_before(text: &[char], at: usize) -> String {
    let head: String = text[..at].iter().collect();
    let head = head.trim_end();
    let start = head
        .rfind(|c: char| !c.is_alphanumeric() && c != '_')
        .map_or(0, |i| i + 1);
    head[start..].to_string()
}

/// The text of each parenthesised scalar `(SELECT …)` in a statement, lower-cased and
/// without double quotes, nested ones included: the subqueries Postgres runs as SubPlans.
fn subqueries(query: &str) -> Vec<String> {
    let text: Vec<char> = query.to_lowercase().replace('"', "").chars().collect();
    let mut found = Vec::new();
    for (at, c) in text.iter().enumerate() {
        if *c != '(' {
            continue;
        }
        let rest: String = text[at + 1..].iter().collect();
        if !rest.trim_start().starts_with("select")
            || PULLED_UP.contains(&word_before(&text, at).as_str())
        {
            continue;
        }
        let mut depth = 0usize;
        let mut end = text.len();
        for (i, c) in text.iter().enumerate().skip(at) {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        found.push(text[at + 1..end].iter().collect());
    }
    found
}

/// Whether a subquery's FROM or JOIN names `table` (`schema.table`), bare or qualified.
fn names_table(subquery: &str, table: &str) -> bool {
    let bare = table.rsplit('.').next().unwrap_or(table);
    let words: Vec<&str> = subquery
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| matches!(w[0], "from" | "join") && (w[1] == bare || w[1] == table))
}

/// Whether the statement's text reads `table` in a subquery.
fn reads_in_a_subquery(s: &Statement, table: &str) -> bool {
    subqueries(s.query).iter().any(|q| names_table(q, table))
}

pub(super) fn per_row_subquery(
    table: &TableRow,
    statements: &[Statement],
    t: &Thresholds,
) -> Option<Finding> {
    let scans = table.seq_scans + table.idx_scans;
    let readers: Vec<&Statement> = statements
        .iter()
        .filter(|s| s.tables.iter().any(|touched| touched.table == table.table))
        .collect();
    let calls: f64 = readers.iter().map(|s| s.calls_per_request).sum();
    if scans < t.per_row_min_scans_per_request
        || calls <= 0.0
        || scans < t.per_row_min_scans_per_call * calls
    {
        return None;
    }
    let culprit = readers
        .iter()
        .find(|s| reads_in_a_subquery(s, &table.table))?;
    // Rewritten as a join or a GROUP BY, the table is scanned about once per call: each
    // sequential scan beyond that reads the whole table again.
    let saved = if table.seq_scans > calls {
        table.seq_rows_read * (1.0 - calls / table.seq_scans)
    } else {
        0.0
    };
    let suggestion = format!(
        "{} is scanned {} per request, {} per call of the statements that read it: a \
         subquery on it runs once per row of the outer query (a SubPlan in the plan), as \
         ORM annotations and computed counters do. The statement:\n\n    {}\n\n\
         Rewrite the subquery as a join to a grouped derived table, so the table is read \
         once per call:\n\n    \
         SELECT o.*, coalesce(c.n, 0) FROM <outer> o LEFT JOIN (SELECT key, count(*) AS n \
         FROM {} GROUP BY key) c ON c.key = o.id\n\n\
         or LEFT JOIN LATERAL with an index on the correlated column, or keep the figure in \
         a counter column. The table has {} pages, and each sequential scan reads \
         all of it.",
        table.table,
        super::counted(scans, "time", "times"),
        amount(scans / calls),
        quoted(culprit.query),
        table.table,
        table.pages,
    );
    Some(Finding {
        query: Some(culprit.query.to_string()),
        table: Some(table.table.clone()),
        evidence: evidence(&[
            ("scans_per_request", scans),
            ("seq_scans_per_request", table.seq_scans),
            ("idx_scans_per_request", table.idx_scans),
            ("reader_calls_per_request", calls),
            ("scans_per_call", scans / calls),
            (
                "rows_read_per_request",
                table.seq_rows_read + table.idx_rows_fetched,
            ),
            ("pages", table.pages as f64),
        ]),
        unparsed: !culprit.shape.parsed,
        avoidable_rows_per_request: saved,
        saves_per_request: Saving::of_rows_read(saved),
        ..Finding::new(FindingKind::PerRowSubquery, suggestion)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subqueries_are_found_with_the_tables_they_read() {
        let q = r#"SELECT "b".*, (SELECT COUNT(*) FROM "cards" WHERE "cards"."board_id" = "b"."id") AS n, (SELECT max(at) FROM app.events e WHERE e.board_id = b.id) FROM boards b"#;
        let found = subqueries(q);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(names_table(&found[0], "public.cards"));
        assert!(!names_table(&found[0], "public.boards"));
        assert!(names_table(&found[1], "app.events"));
        assert!(subqueries("SELECT count(*) FROM boards WHERE id IN ($1, $2)").is_empty());
        // Semi- and anti-joins: planned once, not run per row.
        for sublink in [
            r#"SELECT id FROM projects WHERE "projects"."id" IN (SELECT U0."id" FROM projects U0)"#,
            "SELECT id FROM boards b WHERE EXISTS (SELECT 1 FROM cards c WHERE c.board_id = b.id)",
            "SELECT id FROM boards b WHERE NOT EXISTS(SELECT 1 FROM cards c WHERE c.board_id = b.id)",
            "SELECT id FROM boards WHERE id = ANY (SELECT board_id FROM cards)",
        ] {
            assert!(subqueries(sublink).is_empty(), "{sublink}");
        }
    }
}
