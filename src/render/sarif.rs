//! The SARIF 2.1.0 subset pgcost writes (`--format sarif`), as serde types, and what the
//! audit's and check's SARIF views share: the log around one run, a rule per finding kind
//! with the advice of `pgcost explain`, and a finding as a result at an endpoint.
//! pgcost measures a running service: every result names logical locations (the
//! endpoint, the statement or table). A result with a place in the code (a finding with
//! `--source`, a budget's line in pgcost.toml) also gets a physical location, relative
//! path and line; GitHub code scanning shows only those.

use std::collections::BTreeMap;

use serde::Serialize;

use pgcost_core::check::statement_diff::FindingRef;
use pgcost_core::findings::{self, Finding, FindingKind, Severity};
use pgcost_core::source::CodeLocation;
use pgcost_core::text::shown_sql;

/// The OASIS schema of SARIF 2.1.0 (with its errata), which the log names.
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The whole document: one run.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Log {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run>,
}

impl Log {
    /// A log of one run of pgcost, with `rules` and the `results` that refer to them.
    pub fn of(rules: Vec<Rule>, results: Vec<SarifResult>) -> Log {
        Log {
            schema: SCHEMA,
            version: "2.1.0",
            runs: vec![Run {
                tool: Tool {
                    driver: Driver {
                        name: "pgcost",
                        version: env!("CARGO_PKG_VERSION"),
                        information_uri: information_uri(),
                        rules,
                    },
                },
                results,
            }],
        }
    }

    /// The log as pgcost prints every JSON document.
    pub fn render(&self) -> String {
        crate::render::text::json(self)
    }
}

/// Where pgcost is documented: the package's homepage, or its repository; none when the
/// package names neither.
fn information_uri() -> Option<&'static str> {
    [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|uri| !uri.is_empty())
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Run {
    pub tool: Tool,
    pub results: Vec<SarifResult>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Driver {
    pub name: &'static str,
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information_uri: Option<&'static str>,
    pub rules: Vec<Rule>,
}

/// A text, and the same in Markdown when it has markup.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Text {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

impl Text {
    pub fn plain(text: impl Into<String>) -> Text {
        Text {
            text: text.into(),
            markdown: None,
        }
    }
}

/// One kind of result (SARIF's `reportingDescriptor`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The stable name: a finding kind's snake_case name, or a budget's rule.
    pub id: String,
    pub short_description: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_description: Option<Text>,
    pub help: Text,
    pub default_configuration: Configuration,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Configuration {
    pub level: Level,
}

/// SARIF's levels; pgcost writes no `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    /// A finding's level: high is an error, medium a warning, low a note.
    pub fn of(severity: Severity) -> Level {
        match severity {
            Severity::High => Level::Error,
            Severity::Medium => Level::Warning,
            Severity::Low => Level::Note,
        }
    }
}

/// One result (SARIF's `result`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: String,
    pub level: Level,
    pub message: Text,
    pub locations: Vec<Location>,
    /// The finding's other places in the code: the model of its table, its SQL in the
    /// source, the other call sites its statement was tagged with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related_locations: Vec<RelatedLocation>,
    /// Keeps a result the same across runs, for tools that track them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub partial_fingerprints: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
}

/// What pgcost adds to a result (SARIF's property bag).
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Properties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// The figures behind a finding, as in JSON's `findings[].evidence`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub evidence: BTreeMap<String, f64>,
    /// For a budget: the measured value and the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    /// For a finding: the tags its statement was sent with, as in JSON's
    /// `findings[].tags` (route, controller, file:line and their share of samples).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<pgcost_core::tags::StatementTags>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// The file and line, when the result has a place in the code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_location: Option<PhysicalLocation>,
    pub logical_locations: Vec<LogicalLocation>,
}

/// Another place of a result in the code, and what it is there.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelatedLocation {
    /// Unique within the result, from 1.
    pub id: u32,
    pub physical_location: PhysicalLocation,
    pub message: Text,
}

/// A file (relative URI) and a line.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ArtifactLocation {
    /// Relative, with `/` separators: `--source`'s, or pgcost.toml's as given.
    pub uri: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: u32,
}

impl PhysicalLocation {
    fn of(code: &CodeLocation) -> PhysicalLocation {
        PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: code.uri.clone(),
            },
            region: Region {
                start_line: code.line,
            },
        }
    }
}

impl Location {
    /// This location, at `code` too when there is one.
    pub fn in_code(self, code: Option<&CodeLocation>) -> Location {
        Location {
            physical_location: code.map(PhysicalLocation::of),
            ..self
        }
    }
}

/// Every relative location of a finding but the first (its `physicalLocation`), each with
/// what it is: absolute paths are left out, as from the first.
fn related(locations: &[CodeLocation]) -> Vec<RelatedLocation> {
    (locations.iter())
        .filter(|l| l.is_relative())
        .skip(1)
        .zip(1..)
        .map(|(l, id)| RelatedLocation {
            id,
            physical_location: PhysicalLocation::of(l),
            message: Text::plain(l.describe()),
        })
        .collect()
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogicalLocation {
    pub name: String,
    pub fully_qualified_name: String,
    /// `function` for an endpoint, `member` for a statement, `resource` for a table.
    pub kind: &'static str,
}

/// The endpoint a result is about: `name` as the user calls it (pgcost.toml's name, or
/// the request), the request `GET http://host/path`.
pub struct Endpoint<'a> {
    pub name: &'a str,
    pub request: String,
}

impl Endpoint<'_> {
    fn location(&self) -> LogicalLocation {
        LogicalLocation {
            name: self.name.to_string(),
            fully_qualified_name: self.request.clone(),
            kind: "function",
        }
    }

    /// A location at the endpoint, and at the statement or table when there is one.
    pub fn at(&self, statement: Option<&str>, table: Option<&str>) -> Location {
        let mut logical_locations = vec![self.location()];
        if let Some(query) = statement {
            logical_locations.push(LogicalLocation {
                name: shown_sql(query, 80),
                fully_qualified_name: shown_sql(query, usize::MAX),
                kind: "member",
            });
        } else if let Some(table) = table {
            logical_locations.push(LogicalLocation {
                name: table.to_string(),
                fully_qualified_name: table.to_string(),
                kind: "resource",
            });
        }
        Location {
            physical_location: None,
            logical_locations,
        }
    }
}

/// A rule per finding kind, in the order of `FindingKind::ALL`, each with its advice.
pub fn finding_rules() -> Vec<Rule> {
    FindingKind::ALL.into_iter().map(finding_rule).collect()
}

fn finding_rule(kind: FindingKind) -> Rule {
    let short = kind.one_line().to_string();
    Rule {
        id: kind.as_str().to_string(),
        short_description: Text::plain(short),
        full_description: Some(Text::plain(findings::summary(kind))),
        help: Text::plain(findings::explain(kind)),
        default_configuration: Configuration {
            level: Level::Warning,
        },
    }
}

/// The log of the audit's, scale's and survey's SARIF: each endpoint's findings as results
/// at it, and a rule per finding kind.
pub fn findings_log<'a>(
    endpoints: impl IntoIterator<Item = (Endpoint<'a>, &'a [Finding])>,
) -> String {
    let results = (endpoints.into_iter())
        .flat_map(|(endpoint, findings)| findings.iter().map(move |f| finding_result(&endpoint, f)))
        .collect();
    Log::of(finding_rules(), results).render()
}

/// A finding as a result at `endpoint`: its kind, its level, and a message that names
/// the statement (or table) and what fixing it saves.
pub fn finding_result(endpoint: &Endpoint, f: &Finding) -> SarifResult {
    let subject = match (&f.query, &f.table) {
        (Some(query), _) => format!(": {}", shown_sql(query, usize::MAX)),
        (None, Some(table)) => format!(" on table {table}"),
        (None, None) => String::new(),
    };
    let database = match &f.database {
        Some(db) => format!(" (database {db})"),
        None => String::new(),
    };
    // A tag may name an absolute path outside --source, which SARIF cannot take: the
    // physical location is the first relative one.
    let located = f.locations.iter().find(|l| l.is_relative());
    let code = match located {
        Some(at) => format!(" Open {}.", at.line_text()),
        None => String::new(),
    };
    let text = format!(
        "{} ({}) at {}{database}{subject}. Fixing it {}.{code}",
        f.kind,
        f.severity,
        endpoint.request,
        f.saves_per_request.describe()
    );
    let fingerprint = FindingRef::of(f).fingerprint;
    SarifResult {
        rule_id: f.kind.as_str().to_string(),
        level: Level::of(f.severity),
        message: Text::plain(text),
        locations: vec![(endpoint.at(f.query.as_deref(), f.table.as_deref())).in_code(located)],
        related_locations: related(&f.locations),
        partial_fingerprints: [(
            "pgcostFinding/v1".to_string(),
            format!("{}|{fingerprint}", endpoint.name),
        )]
        .into(),
        properties: Some(Properties {
            severity: Some(f.severity),
            evidence: f.evidence.clone(),
            tags: f.tags.clone(),
            ..Properties::default()
        }),
    }
}
