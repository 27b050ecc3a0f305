//! `--source` end to end: a real audit of the fixture's N+1 page, with the Rails-style
//! tree of tests/fixtures/source/rails as its source. The N+1's statement reads table
//! `small`, whose model sets `self.table_name = "small"`, and a controller of the tree
//! writes the statement's SQL out: the finding names both, in JSON and in the table.

mod support;

use std::path::Path;

use serde_json::Value;
use support::fixture::Fixture;
use support::{TestDb, pgcost};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finding_names_its_model_and_its_sql_in_the_source() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let json_file = dir.path().join("report.json");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source/rails");
    let url = app.url("/n-plus-one");
    let mut audit = pgcost();
    audit
        .args(["audit", "-q", "-n", "60", "-c", "4", "--no-plans"])
        .args(["--url", &url, "--db", &db.url(), "--source"])
        .arg(&source)
        .arg("--export")
        .arg(format!("json={}", json_file.display()));
    let table = std::thread::spawn(move || audit.assert()).join().unwrap();
    let table = String::from_utf8(table.code(0).get_output().stdout.clone()).unwrap();

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let n_plus_one = (findings.iter())
        .find(|f| f["kind"] == "n_plus_one")
        .expect("the page's N+1 is found");
    assert_eq!(
        n_plus_one["locations"],
        serde_json::json!([
            {
                "uri": "app/controllers/labels_controller.rb",
                "line": 6,
                "origin": {"kind": "literal_sql", "fragment": "select label from small where id"}
            },
            {
                "uri": "app/models/small.rb",
                "line": 2,
                "origin": {"kind": "model", "table": "small", "model": "Small"}
            }
        ])
    );
    assert!(
        table.contains(
            "at app/controllers/labels_controller.rb:6, the statement's SQL in the source"
        ),
        "{table}"
    );
    // A finding on a table the source does not declare carries no location.
    for f in findings {
        let query = f["query"].as_str().unwrap_or_default();
        if !query.contains("small") {
            assert!(f.get("locations").is_none(), "{f:#}");
        }
    }
}
