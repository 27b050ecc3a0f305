//! The JSON Schema of each document pgcost writes, generated from the types that serialize
//! it: the files of `docs/schema/`, which the tests keep equal to these and validate every
//! document against.

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};

use crate::check::CheckReport;
use crate::demo::DemoReport;
use crate::ramp::RampReport;
use crate::report::Report;
use crate::scale::ScaleReport;
use crate::survey::rank::SurveyReport;

/// Each document by name (`docs/schema/NAME.schema.json`): `audit` is also what `measure`
/// writes, `check` also `--write-baseline`.
pub const DOCUMENTS: [&str; 6] = ["audit", "check", "ramp", "scale", "survey", "demo"];

/// The schema of one document of [`DOCUMENTS`], as pgcost writes it (draft 2020-12).
pub fn of(document: &str) -> Option<Schema> {
    Some(match document {
        "audit" => written::<Report>(),
        "check" => written::<CheckReport>(),
        "ramp" => written::<RampReport>(),
        "scale" => written::<ScaleReport>(),
        "survey" => written::<SurveyReport>(),
        "demo" => written::<DemoReport>(),
        _ => return None,
    })
}

/// The schema of `T` as it serializes: fields serde skips, or leaves out when empty, are
/// not required.
fn written<T: JsonSchema>() -> Schema {
    let settings = SchemaSettings::draft2020_12().with(|s| s.contract = Contract::Serialize);
    settings.into_generator().into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_document_has_a_schema_with_its_title() {
        for (document, title) in DOCUMENTS.into_iter().zip([
            "Report",
            "CheckReport",
            "RampReport",
            "ScaleReport",
            "SurveyReport",
            "DemoReport",
        ]) {
            let schema = of(document).unwrap();
            assert_eq!(schema.get("title").unwrap(), title, "{document}");
            assert_eq!(schema.get("type").unwrap(), "object", "{document}");
        }
        assert!(of("nothing").is_none());
    }
}
