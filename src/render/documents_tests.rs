//! Every JSON document, built by hand, pinned as a snapshot and validated against its
//! JSON Schema (`pgcost_core::schema`, checked in as `docs/schema/`): a refactor that changes a
//! key or a figure shows in the snapshot, and a schema that no longer describes the
//! document fails here.

use serde::Serialize;

use crate::render::text::json;
use pgcost_core::schema;

/// `document` written as JSON: it validates against its schema, and its text is the
/// snapshot `document_NAME`.
fn pinned<T: Serialize>(name: &str, document: &T) {
    let text = json(document);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let schema = serde_json::to_value(schema::of(name).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {}", errors.join("\n"));
    insta::assert_snapshot!(format!("document_{name}"), text);
}

#[test]
fn audit_document() {
    pinned("audit", &super::tests::sample());
}

#[test]
fn check_document() {
    pinned("check", &super::sarif_tests::check());
}

#[test]
fn ramp_document() {
    pinned("ramp", &super::ramp::tests::report());
}

#[test]
fn scale_document() {
    pinned("scale", &super::scale::tests::sample());
}

#[test]
fn survey_document() {
    pinned("survey", &super::survey::tests::survey());
}

#[test]
fn demo_document() {
    pinned("demo", &super::demo::markdown::tests::demo());
}

/// A schema rejects a document that breaks it: a figure of the wrong type.
#[test]
fn a_broken_document_fails_its_schema() {
    let mut value = serde_json::to_value(super::tests::sample()).unwrap();
    value["per_request"]["rows_read"] = "many".into();
    let schema = serde_json::to_value(schema::of("audit").unwrap()).unwrap();
    assert!(!jsonschema::is_valid(&schema, &value));
}
