//! `duplicate_load`: different statements read the same table by the same key in one
//! request, as when the authentication loads the user and the handler loads it again.

use super::sql::{Access, KeyLookup};
use super::{Finding, FindingKind, Saving, Statement, Thresholds, amount, evidence, quoted};

/// Whether `s` loads an object by its key: a read returning at most
/// `n_plus_one_max_rows_per_call` rows, on every request, that is no summary (count,
/// aggregate), no N+1 (a loop loads different keys) and no ping.
fn loads_an_object(s: &Statement, t: &Thresholds) -> bool {
    s.shape.access == Access::Read
        && !s.ping
        && !s.shape.counts
        && !s.shape.keys.is_empty()
        && s.calls_per_request >= t.duplicate_min_calls_per_request
        && s.rows_per_call <= t.n_plus_one_max_rows_per_call
        && !s.is_n_plus_one(t)
        && s.shape
            .outer
            .as_ref()
            .is_some_and(|o| !o.aggregate && !o.group_by)
}

/// Two keys are the same when they name the same columns of the same table (a schema on
/// one side only does not tell them apart).
fn same_key(a: &KeyLookup, b: &KeyLookup) -> bool {
    let schemas_agree = match (&a.relation.schema, &b.relation.schema) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    };
    a.relation.name == b.relation.name && schemas_agree && a.columns == b.columns
}

/// One finding per key that two or more different statement texts load by.
pub(super) fn duplicate_load(all: &[Statement], t: &Thresholds) -> Vec<Finding> {
    let loads: Vec<&Statement> = all.iter().filter(|s| loads_an_object(s, t)).collect();
    let mut seen: Vec<&KeyLookup> = Vec::new();
    let mut findings = Vec::new();
    for key in loads.iter().flat_map(|s| &s.shape.keys) {
        if seen.iter().any(|k| same_key(k, key)) {
            continue;
        }
        seen.push(key);
        let group: Vec<&Statement> = loads
            .iter()
            .filter(|s| s.shape.keys.iter().any(|k| same_key(k, key)))
            .copied()
            .collect();
        if group.len() >= 2 {
            findings.push(finding(key, &group));
        }
    }
    findings
}

fn finding(key: &KeyLookup, group: &[&Statement]) -> Finding {
    let calls: f64 = group.iter().map(|s| s.calls_per_request).sum();
    let kept = group
        .iter()
        .map(|s| s.calls_per_request)
        .fold(0.0, f64::max);
    let saved = calls - kept;
    let table = group
        .iter()
        .flat_map(|s| &s.tables)
        .find(|table| key.relation.designates(&table.table))
        .map_or_else(|| key.relation.name.clone(), |table| table.table.clone());
    let mut suggestion = format!(
        "{} different statements read {table} by the same key ({}), {} calls per request in \
         all. When the key's value is the same (the signed-in user, the tenant, the object \
         of the page), load the row once with the columns every caller needs and pass it \
         on, or keep it for the rest of the request. pgcost cannot see the parameters: when \
         the values differ, these are different rows, and nothing is wasted.\n\nThe \
         statements:",
        group.len(),
        key.columns.join(", "),
        amount(calls),
    );
    for s in group {
        suggestion.push_str(&format!(
            "\n  - {} ({} per request)",
            quoted(s.query),
            amount(s.calls_per_request)
        ));
    }
    Finding {
        query: Some(group[0].query.to_string()),
        table: Some(table),
        evidence: evidence(&[
            ("statements", group.len() as f64),
            ("calls_per_request", calls),
            ("key_columns", key.columns.len() as f64),
        ]),
        round_trips_per_request: saved,
        saves_per_request: Saving::of_statements(saved),
        ..Finding::new(FindingKind::DuplicateLoad, suggestion)
    }
}
