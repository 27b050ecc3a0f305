//! Where in the app's source a finding points: a file, a line and how pgcost knows it.
//! Plain data, serialized in the report as `findings[].locations`.

use serde::{Deserialize, Serialize};

/// A place in the app's source to open for a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeLocation {
    /// The file, relative to the source directory (`--source`), with `/` separators. A
    /// tag's file is as the app sent it (made relative when under `--source`), so it may
    /// be absolute.
    pub uri: String,
    /// The line, counted from 1.
    pub line: u32,
    /// What the line is: the model that declares a table, or the SQL text itself. It is
    /// never the call site unless it says so.
    pub origin: Origin,
}

/// How a location was found, which says what the line is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The call site the app tagged the statement with in a SQL comment (`file:line`, see
    /// docs/tags.md), with the tags seen beside it.
    Tag {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        controller: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<String>,
        /// The part of the statement's samples sent from this line, 0 to 1; absent when
        /// the tag comes from the text pg_stat_statements kept, not from samples.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        share: Option<f64>,
    },
    /// A key of pgcost.toml: the limit a budget failure broke.
    ConfigKey {
        /// The key, as in `[endpoint.budget]` (`nodes.NAME.` before a database's own).
        key: String,
    },
}

/// The lines of one `[[endpoint]]` of pgcost.toml: its name, and each key of its budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigLines {
    /// pgcost.toml, relative to the working directory when under it.
    pub uri: String,
    /// The line of the endpoint's `name`.
    pub endpoint_line: u32,
    /// `statements`, `nodes.auth.rows_read`, `forbid`, ... → line; `""` is the
    /// `[endpoint.budget]` header.
    pub keys: std::collections::BTreeMap<String, u32>,
}

impl ConfigLines {
    /// Reads the lines of the endpoint whose `name` is at byte `name_offset` of `text`:
    /// from there to the next `[[endpoint]]`.
    pub fn of(uri: &str, text: &str, name_offset: usize) -> ConfigLines {
        let first = text[..name_offset.min(text.len())].matches('\n').count();
        let mut keys = std::collections::BTreeMap::new();
        let mut table: Option<String> = None;
        for (i, line) in text.lines().enumerate().skip(first + 1) {
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let trimmed = line.trim();
            if trimmed.starts_with("[[endpoint]]") {
                break;
            }
            if let Some(header) = trimmed.strip_prefix('[') {
                let header = header.trim_end_matches(']').trim();
                table = header.strip_prefix("endpoint.budget").map(|rest| {
                    let rest = rest.trim_start_matches('.');
                    keys.entry(rest.to_string()).or_insert(number);
                    rest.to_string()
                });
                continue;
            }
            if let (Some(table), Some((key, _))) = (&table, trimmed.split_once('=')) {
                let key = key.trim();
                let key = match table.as_str() {
                    "" => key.to_string(),
                    table => format!("{table}.{key}"),
                };
                keys.entry(key).or_insert(number);
            }
        }
        ConfigLines {
            uri: uri.to_string(),
            endpoint_line: u32::try_from(first + 1).unwrap_or(u32::MAX),
            keys,
        }
    }

    /// The place of the budget's `key` (`rows_read`, `nodes.auth.forbid`), else the
    /// budget's header, else the endpoint's name.
    pub fn of_key(&self, key: String) -> CodeLocation {
        let line = (self.keys.get(&key))
            .or_else(|| self.keys.get(""))
            .copied()
            .unwrap_or(self.endpoint_line);
        CodeLocation {
            uri: self.uri.clone(),
            line,
            origin: Origin::ConfigKey { key },
        }
    }
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
            Origin::Tag {
                route,
                controller,
                job,
                share,
                ..
            } => {
                // Who sent it in a word; the finding's tags carry the rest.
                let who = (route.as_ref().map(|r| format!("route {r}")))
                    .or_else(|| job.as_ref().map(|j| format!("job {j}")))
                    .or_else(|| controller.as_ref().map(|c| format!("controller {c}")));
                let share = share.map(|s| format!("{:.0}% of samples", s * 100.0));
                let parts: Vec<String> = who.into_iter().chain(share).collect();
                match parts.is_empty() {
                    true => "the call site the app tagged".to_string(),
                    false => format!("the call site the app tagged ({})", parts.join(", ")),
                }
            }
            Origin::ConfigKey { key } => format!("the budget's `{key}`"),
        }
    }

    /// `path:line (what it is)`, one line for the text views.
    pub fn line_text(&self) -> String {
        format!("{}, {}", self.at(), self.describe())
    }

    /// Whether the uri is relative, as SARIF and GitHub annotations need: a tag may name
    /// an absolute path outside `--source`.
    pub fn is_relative(&self) -> bool {
        !self.uri.starts_with('/') && !self.uri.starts_with('\\') && self.uri.get(1..2) != Some(":")
    }
}
