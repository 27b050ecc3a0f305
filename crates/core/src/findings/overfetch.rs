//! The size of the page the response holds, and what it says about the statements: the page
//! statement that fetches k times more rows than the response shows (`overfetch`), and the
//! statements whose rows feed the page (eager loads of its children, never a
//! `collection_to_boolean`).

use super::sql::Access;
use super::{Finding, FindingKind, Statement, Thresholds, amount, evidence};

/// The page statement returns at least `overfetch_min_ratio` times the items of the
/// response: the app filters or cuts what it fetched. The page size is the item count of
/// the burst's first 2xx JSON response; without one, nothing fires.
pub(super) fn overfetch(s: &Statement, items: Option<f64>, t: &Thresholds) -> Option<Finding> {
    let items = items.filter(|n| *n >= 1.0)?;
    if s.shape.access != Access::Read
        || !s.page
        || s.is_total()
        || s.rows_per_call < t.overfetch_min_ratio * items
    {
        return None;
    }
    let ratio = s.rows_per_call / items;
    let saved_rows = (s.rows_per_call - items) * s.calls_per_request;
    let suggestion = format!(
        "This page returns {} rows per call, and the response holds {} items: the app \
         throws away {} of every {} rows it fetched. Move the app's filter into the \
         statement's WHERE (a permission, visibility or state test the app applies after \
         fetching), and LIMIT it to the page size, so that Postgres sends only the rows the \
         response shows. When the filter cannot be written in SQL, fetch the page in \
         smaller steps (keyset pagination) until it is full.",
        amount(s.rows_per_call),
        amount(items),
        amount(s.rows_per_call - items),
        amount(s.rows_per_call),
    );
    Some(Finding {
        evidence: evidence(&[
            ("rows_per_call", s.rows_per_call),
            ("response_items", items),
            ("rows_per_item", ratio),
            ("calls_per_request", s.calls_per_request),
        ]),
        avoidable_rows_per_request: saved_rows,
        saves_per_request: s.saving_of_rows_returned(saved_rows),
        ..s.finding(FindingKind::Overfetch, suggestion)
    })
}

/// Whether `s` loads rows the response shows: the children of the page (it reads a relation
/// of the page statement, and returns at most `eager_max_rows_per_page_item` rows per row of
/// the page), or about as many rows as the response has items (half to that factor).
pub(super) fn feeds_the_page(
    s: &Statement,
    all: &[Statement],
    items: Option<f64>,
    t: &Thresholds,
) -> bool {
    let factor = t.eager_max_rows_per_page_item;
    let names = s.relation_names();
    let children_of_page = all.iter().any(|page| {
        page.page
            && !page.is_total()
            && page.rows_per_call >= 1.0
            && !std::ptr::eq(page, s)
            && s.rows_per_call <= factor * page.rows_per_call
            && page.relation_names().iter().any(|n| names.contains(n))
    });
    let about_the_items = items
        .is_some_and(|n| n >= 2.0 && s.rows_per_call >= n / 2.0 && s.rows_per_call <= factor * n);
    children_of_page || about_the_items
}
