//! `count_per_page`: an exact `COUNT(*)` with the page's whole filter, run as a statement of
//! its own on every request beside the page: the pagination's total, paid in rows read on
//! every page.

use super::{Finding, FindingKind, Saving, Statement, Thresholds, amount, evidence, quoted};

/// A filter's text compared between statements: quotes, case, spacing and the numbers of
/// the parameters do not count.
fn normalised(filter: &str) -> String {
    let mut out = String::new();
    let mut chars = filter.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {}
            '$' => {
                out.push('$');
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            c if c.is_whitespace() => {}
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// Whether `count` totals the rows `page` pages through: the same relations, and the same
/// filter, in the count's outer WHERE or in a subquery it counts (`SELECT count(*) FROM
/// (SELECT … WHERE …) AS anon_1`).
fn totals(count: &Statement, page: &Statement) -> bool {
    let limited = page.shape.outer.as_ref().is_some_and(|o| o.limit);
    if !limited || page.is_total() || count.relation_names() != page.relation_names() {
        return false;
    }
    let filter = |s: &Statement| s.shape.outer.as_ref().and_then(|o| o.filter.clone());
    match (filter(count), filter(page)) {
        (Some(c), Some(p)) => normalised(&c) == normalised(&p),
        (None, Some(p)) => normalised(count.query).contains(&normalised(&p)),
        (None, None) => true,
        (Some(_), None) => false,
    }
}

/// Rows the count reads per request, at least: the rows read from its tables beyond those
/// the other statements reading them return, halved, since the page's own filter and sort
/// may read as many. A count served by an index-only scan fetches no heap row: its index
/// entries read stand for the rows then.
fn counted_rows(count: &Statement, all: &[Statement]) -> (f64, f64) {
    let read: f64 = count
        .tables
        .iter()
        .map(|t| t.seq_rows_read + t.idx_rows_fetched.max(t.idx_entries_read))
        .sum();
    let returned: f64 = all
        .iter()
        .filter(|s| s.query != count.query)
        .filter(|s| {
            s.tables
                .iter()
                .any(|t| count.tables.iter().any(|c| c.table == t.table))
        })
        .map(|s| s.rows_per_request)
        .sum();
    (read, ((read - returned) / 2.0).max(0.0))
}

pub(super) fn count_per_page(s: &Statement, all: &[Statement], t: &Thresholds) -> Option<Finding> {
    if !s.is_total() || s.calls_per_request < t.count_min_calls_per_request {
        return None;
    }
    let page = all.iter().find(|p| totals(s, p))?;
    let (read, counted) = counted_rows(s, all);
    if counted < t.count_min_rows_read_per_request {
        return None;
    }
    let suggestion = format!(
        "This count runs {} per request beside the page it totals, with the same filter:\n\n\
         \x20   {}\n\n\
         It reads at least {} rows per request to number the pages, while the page returns \
         {}. The total is the pagination's cost, paid on every page. Options:\n\
         \x20 - keyset pagination (WHERE (sort_key, id) < ($1, $2) ORDER BY sort_key DESC, id \
         DESC LIMIT n) needs neither OFFSET nor a total: show \"next\" when LIMIT n + 1 \
         returns one more row;\n\
         \x20 - an estimated count where an exact one is not needed: the planner's estimate \
         (EXPLAIN's rows, or pg_class.reltuples for an unfiltered table);\n\
         \x20 - count only on the first page, or drop the total from the response.",
        super::counted(s.calls_per_request, "time", "times"),
        quoted(page.query),
        amount(counted),
        amount(page.rows_per_request),
    );
    Some(Finding {
        evidence: evidence(&[
            ("calls_per_request", s.calls_per_request),
            ("counted_rows_read_per_request", counted),
            ("table_rows_read_per_request", read),
            ("page_rows_per_request", page.rows_per_request),
            ("same_filter_as_page", 1.0),
        ]),
        avoidable_rows_per_request: counted,
        saves_per_request: Saving {
            rows_read: counted,
            db_time_ms: s.db_time_ms,
            ..Saving::default()
        },
        tags: super::sent_from::merged([s.tags, page.tags].into_iter().flatten()),
        ..s.finding(FindingKind::CountPerPage, suggestion)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compare_without_quotes_case_spacing_or_parameter_numbers() {
        assert_eq!(
            normalised(r#""ho_notes"."user_id" = $1"#),
            normalised("ho_notes.user_id   =  $3")
        );
        assert_ne!(normalised("status = $1"), normalised("status <> $1"));
    }
}
