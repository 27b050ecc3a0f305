//! The JSON Schemas in `docs/schema/` are the ones the model's types generate
//! (`pgcost_core::schema`); `PGCOST_UPDATE_SCHEMA=1 cargo test --test json_schema` writes
//! them after a deliberate change of a document. The other tests validate the documents
//! they read against these files (`support::assert_schema`).

mod support;

use std::fs;
use std::path::Path;

use pgcost_core::schema::{self, DOCUMENTS};

#[test]
fn checked_in_schemas_are_the_generated_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    let update = std::env::var_os("PGCOST_UPDATE_SCHEMA").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for name in DOCUMENTS {
        let path = dir.join(format!("{name}.schema.json"));
        let mut text = serde_json::to_string_pretty(&schema::of(name).unwrap()).unwrap();
        text.push('\n');
        if update {
            fs::write(&path, &text).unwrap();
        } else if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date: {}; after a deliberate change of a document, run \
         PGCOST_UPDATE_SCHEMA=1 cargo test --test json_schema and document the change in \
         docs/json.md",
        stale.join(", ")
    );
}

/// The helper the other tests use passes a document its schema describes, and names the
/// key of one it does not.
#[test]
fn assert_schema_names_what_breaks_a_document() {
    let doc = serde_json::json!({"schema_version": 1});
    let broken = std::panic::catch_unwind(|| support::assert_schema("ramp", &doc.to_string()));
    let message = *broken.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("ramp document"), "{message}");
    assert!(
        message.contains("\"steps\" is a required property"),
        "{message}"
    );
}
