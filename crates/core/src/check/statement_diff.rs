//! The statement diff of `check --baseline`: which statements an endpoint gained, lost or
//! calls more or less often per request, and which findings are new or resolved, matched
//! by normalized statement text and finding fingerprint. Pure; no I/O.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::check::plan_diff::{self, PlanChange};
use crate::findings::{Finding, Severity};
use crate::report::StatementRow;
use crate::tags::Tags;

/// A statement's calls per request must move by at least this much to count as changed.
pub const CALLS_CHANGE: f64 = 1.0;

/// Slack for comparing per-request ratios of integer counters.
const EPSILON: f64 = 1e-9;

/// One statement of one run, as the diff compares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementFigures {
    /// Normalized text, as pg_stat_statements shows it.
    pub query: String,
    /// pg_stat_statements' id, as text. It differs between servers and versions, so the
    /// diff matches statements by text and shows the id only to help find the entry.
    #[serde(default)]
    pub queryid: Option<String>,
    pub calls_per_request: f64,
    pub rows_per_call: f64,
    /// The plan's shape (see `crate::plan::shape`), when the run fetched its plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_shape: Option<Vec<String>>,
    /// The tag set the statement was seen with most (its route, file:line), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
}

/// One finding, as the diff and the acknowledgements see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FindingRef {
    /// `kind:hash`, stable across runs and servers: see [`fingerprint`].
    pub fingerprint: String,
    pub kind: String,
    #[schemars(with = "String")]
    pub severity: Severity,
    /// The statement's normalized text, when the finding is about one statement.
    #[serde(default)]
    pub statement: Option<String>,
    /// The table (`schema.table`), when the finding is about one table.
    #[serde(default)]
    pub table: Option<String>,
}

impl FindingRef {
    /// The finding's fingerprint and subject.
    pub fn of(finding: &Finding) -> FindingRef {
        FindingRef::new(
            finding.kind.as_str(),
            finding.severity,
            finding.query.clone(),
            finding.table.clone(),
        )
    }

    pub fn new(
        kind: &str,
        severity: Severity,
        statement: Option<String>,
        table: Option<String>,
    ) -> FindingRef {
        FindingRef {
            fingerprint: fingerprint(kind, statement.as_deref().or(table.as_deref())),
            kind: kind.to_string(),
            severity,
            statement,
            table,
        }
    }

    /// The statement or table the finding is about.
    pub fn subject(&self) -> Option<&str> {
        self.statement.as_deref().or(self.table.as_deref())
    }
}

/// A statement's text with every run of whitespace made one space: the key statements are
/// matched by.
pub fn normalized(query: &str) -> String {
    query.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `kind:` and the first 16 hex digits of the SHA-256 of the subject's normalized text
/// (the statement, or the table); the kind alone for a finding about neither. The
/// queryid is not used: it differs between servers and major versions, the text does not.
pub fn fingerprint(kind: &str, subject: Option<&str>) -> String {
    match subject {
        None => kind.to_string(),
        Some(subject) => {
            let digest = Sha256::digest(normalized(subject).as_bytes());
            let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            format!("{kind}:{hex}")
        }
    }
}

/// An endpoint's statements, one per normalized text: entries that share a text (another
/// role, a nested call) are summed, with the queryid of the first. With several
/// databases, the text is prefixed with its database (`auth: SELECT ...`): the same text
/// in two databases is two statements.
pub fn statements_of(rows: &[StatementRow]) -> Vec<StatementFigures> {
    merge(rows.iter().map(|row| StatementFigures {
        query: crate::nodes::in_database(&row.database, &row.query),
        queryid: Some(row.queryid.clone()),
        calls_per_request: row.calls_per_request,
        rows_per_call: row.rows_per_call,
        plan_shape: row.plan_shape.clone(),
        tags: (row.tags.as_ref()).and_then(|t| t.first().cloned()),
    }))
}

/// One entry per normalized text, in first-seen order; rows per call weighted by calls.
pub fn merge(rows: impl IntoIterator<Item = StatementFigures>) -> Vec<StatementFigures> {
    let mut out: Vec<StatementFigures> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for row in rows {
        let key = normalized(&row.query);
        match index.get(&key) {
            Some(&i) => {
                let entry = &mut out[i];
                let calls = entry.calls_per_request + row.calls_per_request;
                if calls > 0.0 {
                    entry.rows_per_call = (entry.rows_per_call * entry.calls_per_request
                        + row.rows_per_call * row.calls_per_request)
                        / calls;
                }
                entry.calls_per_request = calls;
                if entry.plan_shape.is_none() {
                    entry.plan_shape = row.plan_shape;
                }
                if entry.tags.is_none() {
                    entry.tags = row.tags;
                }
            }
            None => {
                index.insert(key, out.len());
                out.push(row);
            }
        }
    }
    out
}

/// One statement that appeared, went, or changed its calls per request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementChange {
    pub query: String,
    /// The current run's queryid; the baseline's for a statement that is gone.
    pub queryid: Option<String>,
    /// Null for a new statement.
    pub baseline_calls_per_request: Option<f64>,
    /// Null for a statement that is gone.
    pub calls_per_request: Option<f64>,
    pub baseline_rows_per_call: Option<f64>,
    pub rows_per_call: Option<f64>,
    /// Where the app sent it from, as its tags say (the set seen most): this run's, else
    /// the baseline's (a statement that is gone, or untagged this time). Absent when
    /// untagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Tags>,
}

/// What changed in an endpoint's statements and findings against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementDiff {
    /// Statements the baseline did not have.
    pub added: Vec<StatementChange>,
    /// Statements of the baseline this run did not execute.
    pub removed: Vec<StatementChange>,
    /// Statements of both whose calls per request moved by at least 1.
    pub calls_changed: Vec<StatementChange>,
    /// Findings whose fingerprint the baseline did not have.
    pub new_findings: Vec<FindingRef>,
    /// Findings of the baseline whose fingerprint this run does not have.
    pub resolved_findings: Vec<FindingRef>,
    /// Statements whose plan shape differs from the baseline's.
    #[serde(default)]
    pub plan_changed: Vec<PlanChange>,
}

impl StatementDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.calls_changed.is_empty()
            && self.new_findings.is_empty()
            && self.resolved_findings.is_empty()
            && self.plan_changed.is_empty()
    }
}

/// Compares the statements and findings of a baseline with the current run's.
pub fn diff(
    baseline: &[StatementFigures],
    current: &[StatementFigures],
    baseline_findings: &[FindingRef],
    current_findings: &[FindingRef],
) -> StatementDiff {
    let before = merge(baseline.iter().cloned());
    let now = merge(current.iter().cloned());
    let find = |list: &[StatementFigures], query: &str| {
        let key = normalized(query);
        list.iter().find(|s| normalized(&s.query) == key).cloned()
    };
    let mut out = StatementDiff::default();
    for s in &now {
        match find(&before, &s.query) {
            None => out.added.push(change(None, Some(s))),
            Some(b)
                if (s.calls_per_request - b.calls_per_request).abs() + EPSILON >= CALLS_CHANGE =>
            {
                out.calls_changed.push(change(Some(&b), Some(s)))
            }
            Some(_) => {}
        }
    }
    for b in &before {
        if find(&now, &b.query).is_none() {
            out.removed.push(change(Some(b), None));
        }
    }
    let has =
        |list: &[FindingRef], f: &FindingRef| list.iter().any(|o| o.fingerprint == f.fingerprint);
    out.new_findings = (current_findings.iter())
        .filter(|f| !has(baseline_findings, f))
        .cloned()
        .collect();
    out.resolved_findings = (baseline_findings.iter())
        .filter(|f| !has(current_findings, f))
        .cloned()
        .collect();
    out.plan_changed = (now.iter())
        .filter_map(|s| {
            let old = find(&before, &s.query)?.plan_shape?;
            plan_diff::compare(&s.query, &old, s.plan_shape.as_ref()?)
        })
        .collect();
    out
}

fn change(before: Option<&StatementFigures>, now: Option<&StatementFigures>) -> StatementChange {
    let any = now.or(before).expect("a change has a side");
    StatementChange {
        query: any.query.clone(),
        queryid: any.queryid.clone(),
        baseline_calls_per_request: before.map(|b| b.calls_per_request),
        calls_per_request: now.map(|n| n.calls_per_request),
        baseline_rows_per_call: before.map(|b| b.rows_per_call),
        rows_per_call: now.map(|n| n.rows_per_call),
        tags: (now.and_then(|n| n.tags.clone())).or_else(|| before.and_then(|b| b.tags.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(query: &str, id: &str, calls: f64, rows: f64) -> StatementFigures {
        StatementFigures {
            query: query.into(),
            queryid: Some(id.into()),
            calls_per_request: calls,
            rows_per_call: rows,
            plan_shape: None,
            tags: None,
        }
    }

    #[test]
    fn fingerprints_are_the_kind_and_a_hash_of_the_normalized_text() {
        let a = fingerprint("n_plus_one", Some("SELECT label FROM small WHERE id = $1"));
        let b = fingerprint(
            "n_plus_one",
            Some("SELECT label\n  FROM small WHERE id = $1 "),
        );
        assert_eq!(a, b, "whitespace does not matter");
        // sha256("SELECT label FROM small WHERE id = $1"), first 8 bytes (sha256sum agrees):
        // fixed forever, since baselines and acknowledgements store it.
        assert_eq!(a, "n_plus_one:f20df6701a5fecf9");
        assert_ne!(
            a,
            fingerprint(
                "collection_to_boolean",
                Some("SELECT label FROM small WHERE id = $1")
            )
        );
        assert_ne!(
            a,
            fingerprint("n_plus_one", Some("SELECT label FROM small WHERE id = $2"))
        );
        assert_eq!(fingerprint("round_trips", None), "round_trips");
        let f = FindingRef::new(
            "seq_scan_heavy",
            Severity::Medium,
            None,
            Some("public.items".into()),
        );
        assert_eq!(
            f.fingerprint,
            fingerprint("seq_scan_heavy", Some("public.items"))
        );
        assert_eq!(f.subject(), Some("public.items"));
    }

    #[test]
    fn added_removed_and_changed_statements_are_matched_by_text_not_queryid() {
        let before = vec![
            s("SELECT id FROM small WHERE id = $1", "1", 1.0, 1.0),
            s("SELECT name FROM items WHERE id = $1", "2", 1.0, 1.0),
            s("SELECT 1", "3", 2.0, 1.0),
            s("BEGIN", "4", 1.0, 0.0),
        ];
        // Another server: other queryids for the same texts.
        let now = vec![
            s("SELECT id FROM small WHERE id = $1", "91", 1.5, 1.0),
            s("SELECT name FROM items\n WHERE id = $1", "92", 2.0, 1.0),
            s("SELECT count(*) FROM small", "93", 1.0, 1.0),
            s("BEGIN", "94", 0.0, 0.0),
        ];
        let d = diff(&before, &now, &[], &[]);
        let queries = |list: &[StatementChange]| -> Vec<String> {
            list.iter().map(|c| c.query.clone()).collect()
        };
        assert_eq!(queries(&d.added), vec!["SELECT count(*) FROM small"]);
        assert_eq!(d.added[0].queryid.as_deref(), Some("93"));
        assert_eq!(d.added[0].baseline_calls_per_request, None);
        assert_eq!(d.added[0].calls_per_request, Some(1.0));
        assert_eq!(queries(&d.removed), vec!["SELECT 1"]);
        assert_eq!(d.removed[0].calls_per_request, None);
        assert_eq!(d.removed[0].queryid.as_deref(), Some("3"));
        // +0.5 is under the threshold; +1 and -1 are changes.
        assert_eq!(
            queries(&d.calls_changed),
            vec!["SELECT name FROM items\n WHERE id = $1", "BEGIN"]
        );
        let c = &d.calls_changed[0];
        assert_eq!(
            (c.baseline_calls_per_request, c.calls_per_request),
            (Some(1.0), Some(2.0))
        );
        assert!(!d.is_empty());
        assert!(diff(&before, &before, &[], &[]).is_empty());
    }

    #[test]
    fn entries_that_share_a_text_are_summed() {
        let rows = vec![
            s("SELECT a FROM t", "1", 1.0, 10.0),
            s("SELECT  a FROM t", "2", 3.0, 2.0),
        ];
        let merged = merge(rows);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].calls_per_request, 4.0);
        assert_eq!(merged[0].rows_per_call, 4.0);
        assert_eq!(merged[0].queryid.as_deref(), Some("1"));
        let d = diff(
            &[s("SELECT a FROM t", "1", 3.0, 4.0)],
            &merge(vec![]),
            &[],
            &[],
        );
        assert_eq!(d.removed.len(), 1);
    }

    #[test]
    fn new_and_resolved_findings_by_fingerprint() {
        let naive = FindingRef::new(
            "collection_to_boolean",
            Severity::High,
            Some("SELECT g.action FROM g".into()),
            None,
        );
        let n1 = FindingRef::new(
            "n_plus_one",
            Severity::Medium,
            Some("SELECT label FROM small WHERE id = $1".into()),
            None,
        );
        let rt = FindingRef::new("round_trips", Severity::Low, None, None);
        let d = diff(
            &[],
            &[],
            &[naive.clone(), rt.clone()],
            &[n1.clone(), rt.clone()],
        );
        assert_eq!(d.new_findings, vec![n1]);
        assert_eq!(d.resolved_findings, vec![naive]);
        assert!(d.added.is_empty() && d.removed.is_empty());
    }
}
