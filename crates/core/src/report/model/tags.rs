//! Tags as plain data: the static tags of a statement's execution, the sets a statement was
//! seen with, and how many statements got one. `crate::tags` reads them from the comments.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The static tags of one statement's execution. Every field is optional: apps send
/// different subsets.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Tags {
    /// The route or endpoint (sqlcommenter's `route`, GitLab's `endpoint_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// The controller or view (`controller`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// The controller's action (`action`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// A background job (`job`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The framework (`framework`, e.g. `django:5.2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// The source file of the call site (`source_location`, `line`, `code.filepath`, `file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its line (`code.lineno`, or after the file's colon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The tags a statement was seen with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatementTags {
    /// Executions of the statement that the samples of `pg_stat_activity` saw.
    pub samples: u64,
    /// Each tag set seen, most seen first.
    pub seen: Vec<TagShare>,
}

/// One tag set and how often it was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TagShare {
    #[serde(flatten)]
    pub tags: Tags,
    /// Samples of the statement that carried exactly these tags.
    pub samples: u64,
    /// Their part of the statement's samples, 0 to 1; null when the tags come from the
    /// text pg_stat_statements kept (its first execution's comment), not from samples.
    pub share: Option<f64>,
}

/// How many statements got a tag, for the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TagSummary {
    /// Samples of `pg_stat_activity` taken during the warm-up and the burst; null when
    /// none were taken (`--no-tags`, or a report written before tags existed).
    pub samples: Option<u64>,
    /// Statements of the report, utility statements apart.
    pub statements: usize,
    /// Those with at least one tag.
    pub tagged: usize,
}
