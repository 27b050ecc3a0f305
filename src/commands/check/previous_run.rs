//! Previous runs (`--baseline FILE`): a `pgcost check` or a `pgcost audit` JSON document,
//! reduced to the per-request figures, statements (with their plan shapes) and findings
//! of each endpoint it measured.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use pgcost_core::check::budget::Figures;
use pgcost_core::check::statement_diff::{self, FindingRef, StatementFigures};
use pgcost_core::findings::Severity;
use pgcost_core::report::model::figure::{Figure, PerFigure, Source};
use pgcost_core::report::model::keyed::Keyed;
use pgcost_core::tags::StatementTags;

/// One endpoint of a previous run.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The endpoint's name in pgcost.toml; `None` for an `audit` report.
    pub name: Option<String>,
    pub method: String,
    /// Path and query of the measured URL: the base URL may differ between runs.
    pub path: String,
    pub valid: bool,
    pub figures: Figures,
    /// Whether pg_stat_statements was read: without it there are no statements to diff.
    pub statements_available: bool,
    /// One per normalized text.
    pub statements: Vec<StatementFigures>,
    pub findings: Vec<FindingRef>,
}

/// Every endpoint of a previous run.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousRun {
    pub entries: Vec<Entry>,
}

// Only the keys the comparison needs, so that baselines written by older or newer
// versions still load (new keys may appear without a schema bump).
#[derive(Deserialize)]
struct ReportKeys {
    valid: bool,
    target: TargetKeys,
    /// Read by the figure table's keys: a figure an older version did not write is unset.
    per_request: serde_json::Map<String, serde_json::Value>,
    load: LoadKeys,
    #[serde(default)]
    statements: Vec<StatementKeys>,
    #[serde(default)]
    findings: Vec<FindingKeys>,
}

#[derive(Deserialize)]
struct StatementKeys {
    query: String,
    queryid: Option<String>,
    calls_per_request: f64,
    rows_per_call: f64,
    #[serde(default)]
    plan_shape: Option<Vec<String>>,
    /// Read leniently: tags a newer version wrote differently are left out, not an error.
    #[serde(default)]
    tags: Option<serde_json::Value>,
}

// Kind as text: a kind a newer version added still loads.
#[derive(Deserialize)]
struct FindingKeys {
    kind: String,
    severity: Severity,
    query: Option<String>,
    table: Option<String>,
}

#[derive(Deserialize)]
struct TargetKeys {
    method: String,
    url: String,
}

#[derive(Deserialize)]
struct LoadKeys {
    latency_ms: LatencyKeys,
}

#[derive(Deserialize)]
struct LatencyKeys {
    p95: f64,
}

#[derive(Deserialize)]
struct CheckKeys {
    endpoints: Vec<EndpointKeys>,
}

#[derive(Deserialize)]
struct EndpointKeys {
    name: String,
    report: ReportKeys,
}

/// Path and query of a URL, or the text itself when it does not parse.
pub fn path_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        },
        Err(_) => url.to_string(),
    }
}

impl Entry {
    fn new(name: Option<String>, report: ReportKeys) -> Entry {
        // The figures check compares (the columns); rps and the median latency are not.
        let value = |f: Figure| match f.spec().source {
            Source::Latency => Some(report.load.latency_ms.p95),
            _ => report
                .per_request
                .get(f.key())
                .and_then(serde_json::Value::as_f64),
        };
        let figures = Figures {
            per_figure: Keyed::new(PerFigure::from_fn(|f| {
                Figure::COLUMNS.contains(&f).then(|| value(f))?
            })),
            ..Figures::default()
        };
        Entry {
            name,
            method: report.target.method,
            path: path_of(&report.target.url),
            valid: report.valid,
            figures,
            statements_available: Figure::Statements.of(&figures).is_some(),
            statements: statement_diff::merge(report.statements.into_iter().map(|s| {
                StatementFigures {
                    query: s.query,
                    queryid: s.queryid,
                    calls_per_request: s.calls_per_request,
                    rows_per_call: s.rows_per_call,
                    plan_shape: s.plan_shape,
                    tags: (s.tags)
                        .and_then(|t| serde_json::from_value::<StatementTags>(t).ok())
                        .and_then(|t| t.first().cloned()),
                }
            })),
            findings: (report.findings.into_iter())
                .map(|f| FindingRef::new(&f.kind, f.severity, f.query, f.table))
                .collect(),
        }
    }
}

/// `origin:line:column` of the first `"key"` in `text`, or `origin` alone.
fn position(text: &str, origin: &str, key: &str) -> String {
    match text.find(&format!("\"{key}\"")) {
        Some(offset) => {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("{origin}:{line}:{column}")
        }
        None => origin.to_string(),
    }
}

/// Refuses a document of another schema version: its keys may mean other things. A
/// document without one is left to the shape check.
fn check_schema_version(value: &serde_json::Value, text: &str, origin: &str) -> Result<()> {
    let expected = u64::from(if value.get("endpoints").is_some() {
        pgcost_core::check::SCHEMA_VERSION
    } else {
        pgcost_core::report::SCHEMA_VERSION
    });
    match value.get("schema_version") {
        None => Ok(()),
        Some(v) if v.as_u64() == Some(expected) => Ok(()),
        Some(v) => Err(Error::usage(format!(
            "--baseline {}: schema version {v}, but this pgcost reads schema version {expected}",
            position(text, origin, "schema_version")
        ))
        .with_hint(
            "write the baseline again with this version of pgcost: pgcost check --write-baseline FILE",
        )),
    }
}

impl PreviousRun {
    /// Parses a document; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<PreviousRun> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            Error::usage(format!("--baseline {origin} is not JSON: {e}"))
                .with_hint("pass a file written by --write-baseline or by --format json")
        })?;
        let shape_error = |e: serde_json::Error, what: &str| {
            Error::usage(format!(
                "--baseline {origin} is not a pgcost {what} report: {e}"
            ))
            .with_hint("pass a file written by --write-baseline or by --format json")
        };
        check_schema_version(&value, text, origin)?;
        let entries = if value.get("endpoints").is_some() {
            let doc: CheckKeys =
                serde_json::from_value(value).map_err(|e| shape_error(e, "check"))?;
            doc.endpoints
                .into_iter()
                .map(|e| Entry::new(Some(e.name), e.report))
                .collect()
        } else {
            let report: ReportKeys =
                serde_json::from_value(value).map_err(|e| shape_error(e, "audit"))?;
            vec![Entry::new(None, report)]
        };
        Ok(PreviousRun { entries })
    }

    pub fn load(path: &Path) -> Result<PreviousRun> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read --baseline {}: {e}", path.display())))?;
        PreviousRun::parse(&text, &path.display().to_string())
    }

    /// The previous run of an endpoint: the entry of the same name, or else an unnamed
    /// entry (from `pgcost audit`) with the same method, path and query.
    pub fn find(&self, name: &str, method: &str, url: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.name.as_deref() == Some(name))
            .or_else(|| {
                let path = path_of(url);
                self.entries
                    .iter()
                    .find(|e| e.name.is_none() && e.method == method && e.path == path)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{Exporter, JsonExporter};
    use pgcost_core::report::tests::{context, load};

    fn report_json(url: &str, transactions: i64) -> serde_json::Value {
        let delta = pgcost_core::delta::WindowDelta {
            database: pgcost_core::delta::DatabaseDelta {
                xact_commit: transactions,
                tup_returned: 400,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut c = context(100);
        c.target.url = url.into();
        let r = pgcost_core::report::Report::build(&delta, &load(100, &[(200, 100)]), c);
        serde_json::from_str(&JsonExporter.render(&r)).unwrap()
    }

    #[test]
    fn an_audit_report_matches_by_method_path_and_query() {
        let text = report_json("http://127.0.0.1:3000/api/v1/projects?limit=20", 300).to_string();
        let b = PreviousRun::parse(&text, "a.json").unwrap();
        assert_eq!(b.entries.len(), 1);
        let e = b
            .find(
                "projects",
                "GET",
                "http://10.0.0.1:8080/api/v1/projects?limit=20",
            )
            .unwrap();
        assert_eq!(e.figures.per_figure.transactions, Some(3.0));
        assert_eq!(e.figures.per_figure.rows_read, Some(4.0));
        assert!(e.valid);
        assert!(
            b.find("projects", "GET", "http://h/api/v1/projects")
                .is_none()
        );
        assert!(
            b.find("projects", "POST", "http://h/api/v1/projects?limit=20")
                .is_none()
        );
    }

    #[test]
    fn a_statements_tags_are_read_and_tags_of_another_shape_are_left_out() {
        let mut doc = report_json("http://h/x", 100);
        doc["statements"] = serde_json::json!([
            {"query": "SELECT a FROM t", "queryid": "1", "calls_per_request": 1.0,
             "rows_per_call": 1.0,
             "tags": {"samples": 3, "seen": [{"route": "/x", "file": "app/x.rb", "line": 4,
                                              "samples": 3, "share": 1.0}]}},
            {"query": "SELECT b FROM u", "queryid": "2", "calls_per_request": 1.0,
             "rows_per_call": 1.0, "tags": {"some_future_layout": true}}
        ]);
        let b = PreviousRun::parse(&doc.to_string(), "a.json").unwrap();
        let statements = &b.entries[0].statements;
        let tags = |q: &str| {
            let s = statements.iter().find(|s| s.query == q).unwrap();
            s.tags.clone()
        };
        let tagged = tags("SELECT a FROM t").expect("the baseline's tags");
        assert_eq!(tagged.route.as_deref(), Some("/x"));
        assert_eq!(
            (tagged.file.as_deref(), tagged.line),
            (Some("app/x.rb"), Some(4))
        );
        assert_eq!(tags("SELECT b FROM u"), None);
    }

    #[test]
    fn a_check_document_matches_by_name() {
        let doc = serde_json::json!({
            "schema_version": 1,
            "valid": true,
            "some_future_key": [1, 2],
            "endpoints": [
                {"name": "a", "report": report_json("http://h/x", 100)},
                {"name": "b", "report": report_json("http://h/y", 200)},
            ]
        });
        let b = PreviousRun::parse(&doc.to_string(), "b.json").unwrap();
        assert_eq!(
            b.find("b", "GET", "http://h/renamed")
                .unwrap()
                .figures
                .per_figure
                .transactions,
            Some(2.0)
        );
        assert!(b.find("c", "GET", "http://h/x").is_none());
    }

    /// `check --baseline` reads reports from before and after the unauthenticated run was
    /// renamed: `baseline` only, both keys, and `unauthenticated` only.
    #[test]
    fn reports_with_either_name_of_the_unauthenticated_run_load() {
        let run = serde_json::json!({"requests": 100});
        for keys in [
            &["baseline"][..],
            &["baseline", "unauthenticated"],
            &["unauthenticated"],
        ] {
            let mut audit = report_json("/x", 3);
            for key in keys {
                audit[*key] = run.clone();
            }
            let parsed = PreviousRun::parse(&audit.to_string(), "old.json").unwrap();
            assert_eq!(parsed.entries.len(), 1, "{keys:?}");
        }
    }

    #[test]
    fn other_documents_are_usage_errors() {
        let e = PreviousRun::parse("not json", "x.json").unwrap_err();
        assert!(e.message.contains("x.json is not JSON"), "{}", e.message);
        let e = PreviousRun::parse(r#"{"pipelines": {}}"#, "x.json").unwrap_err();
        assert!(
            e.message.contains("not a pgcost audit report"),
            "{}",
            e.message
        );
        assert!(e.hint.unwrap().contains("--write-baseline"));
    }

    #[test]
    fn a_baseline_of_another_schema_version_is_a_usage_error() {
        let doc = "{\n  \"schema_version\": 2,\n  \"valid\": true,\n  \"endpoints\": []\n}";
        let e = PreviousRun::parse(doc, "main.json").unwrap_err();
        assert_eq!(
            e.message,
            "--baseline main.json:2:3: schema version 2, but this pgcost reads schema version 1"
        );
        assert_eq!(e.exit_code(), 2);
        assert!(e.hint.unwrap().contains("--write-baseline"));
        let mut audit = report_json("http://h/x", 100);
        audit["schema_version"] = serde_json::json!(7);
        let e = PreviousRun::parse(&audit.to_string(), "a.json").unwrap_err();
        assert!(e.message.contains("schema version 7"), "{}", e.message);
    }

    #[test]
    fn statements_and_findings_are_read_back_with_their_fingerprints() {
        use pgcost_core::findings::{Inputs, Thresholds, analyze};
        use pgcost_core::report::tests::stmt;
        let delta = pgcost_core::delta::WindowDelta {
            database: pgcost_core::delta::DatabaseDelta {
                xact_commit: 200,
                sessions: Some(0),
                ..Default::default()
            },
            statements: vec![
                stmt(
                    1,
                    "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id WHERE m.user_id = $1",
                    200,
                    200 * 300,
                ),
                stmt(2, "SELECT id FROM projects WHERE id = $1", 400, 400),
            ],
            ..Default::default()
        };
        let mut r =
            pgcost_core::report::Report::build(&delta, &load(100, &[(200, 100)]), context(100));
        r.findings = analyze(&Inputs::of(&r), &Thresholds::default());
        let b = PreviousRun::parse(&JsonExporter.render(&r), "a.json").unwrap();
        let e = &b.entries[0];
        assert!(e.statements_available);
        let got: Vec<(&str, Option<&str>, f64, f64)> = e
            .statements
            .iter()
            .map(|s| {
                (
                    s.query.as_str(),
                    s.queryid.as_deref(),
                    s.calls_per_request,
                    s.rows_per_call,
                )
            })
            .collect();
        assert_eq!(got.len(), 2);
        assert!(got.contains(&("SELECT id FROM projects WHERE id = $1", Some("2"), 4.0, 1.0)));
        let naive = got.iter().find(|s| s.0.contains("group_grants")).unwrap();
        assert_eq!((naive.1, naive.2, naive.3), (Some("1"), 2.0, 300.0));
        let expected: Vec<_> = r.findings.iter().map(FindingRef::of).collect();
        assert!(!expected.is_empty());
        assert_eq!(e.findings, expected);
    }
}
