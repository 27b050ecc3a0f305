//! Where in the app's source a finding points: a file, a line and how pgcost knows it.
//! Plain data, serialized in the report as `findings[].locations`.

use serde::{Deserialize, Serialize};

/// A place in the app's source to open for a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeLocation {
    /// The file, relative to the source directory (`--source`), with `/` separators.
    pub uri: String,
    /// The line, counted from 1.
    pub line: u32,
    /// What the line is: the model that declares a table, or the SQL text itself. It is
    /// never the call site unless it says so.
    pub origin: Origin,
}

/// How a location was found, which says what the line is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// The model or entity that declares `table` (an ActiveRecord class, a Django model,
    /// a TypeORM entity, ...): where its queries are built, not where they run.
    Model {
        /// The table, as the statement names it.
        table: String,
        /// The class, model or entity name.
        model: String,
    },
    /// A line of the source that holds a distinctive fragment of the statement's SQL.
    LiteralSql {
        /// The fragment that was found.
        fragment: String,
    },
    /// A tag the app sent with the statement in a SQL comment (`file:line`).
    Tag,
}

impl CodeLocation {
    /// `path:line`, as editors and terminals open it.
    pub fn at(&self) -> String {
        format!("{}:{}", self.uri, self.line)
    }

    /// What the location is, in words: "the model of `issues` (Issue)".
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Model { table, model } => format!("the model of `{table}` ({model})"),
            Origin::LiteralSql { .. } => "the statement's SQL in the source".to_string(),
            Origin::Tag => "the call site the app tagged".to_string(),
        }
    }

    /// `path:line (what it is)`, one line for the text views.
    pub fn line_text(&self) -> String {
        format!("{}, {}", self.at(), self.describe())
    }
}
