//! Checks that point at `file:line:column`: the file's text and the spans serde kept.

use std::collections::BTreeMap;
use std::ops::Range;

use super::schema::EndpointTable;
use crate::commands::check::acks::{Ack, parse_date};
use crate::commands::scale;
use crate::error::{Error, Result};
use pgcost_core::check::budget::{self, numeric_limits};

/// The file's text and name, to turn byte offsets into `file:line:column`.
pub(super) struct Source<'a> {
    pub(super) origin: String,
    pub(super) text: &'a str,
}

impl Source<'_> {
    pub(super) fn position(&self, offset: usize) -> (usize, usize) {
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    }

    pub(super) fn at(&self, span: Option<Range<usize>>, message: impl std::fmt::Display) -> Error {
        match span {
            Some(span) => {
                let (line, column) = self.position(span.start);
                Error::usage(format!("{}:{line}:{column}: {message}", self.origin))
            }
            None => Error::usage(format!("{}: {message}", self.origin)),
        }
    }

    /// An error found in the file, without a position.
    pub(super) fn in_file(&self, e: Error) -> Error {
        Error {
            message: format!("{}: {}", self.origin, e.message),
            ..e
        }
    }
}

/// One endpoint's name (set, and not seen before), path, budget and acks (returned);
/// `seen` holds the names before it, with where each is defined.
pub(super) fn check_endpoint<'a>(
    source: &Source<'_>,
    endpoint: &'a EndpointTable,
    seen: &mut BTreeMap<&'a str, usize>,
) -> Result<Vec<Ack>> {
    let name = endpoint.name.get_ref();
    if name.trim().is_empty() {
        return Err(source.at(Some(endpoint.name.span()), "an endpoint name is empty"));
    }
    if let Some(first) = seen.insert(name, endpoint.name.span().start) {
        let (line, _) = source.position(first);
        return Err(source.at(
            Some(endpoint.name.span()),
            format!("duplicate endpoint name {name:?} (first defined on line {line})"),
        ));
    }
    check_load(source, endpoint)?;
    check_scale(source, endpoint)?;
    let acks = acks(source, endpoint)?;
    for (limit, value) in numeric_limits(&endpoint.budget) {
        if value < 0.0 {
            return Err(source.at(
                Some(endpoint.name.span()),
                format!("endpoint {name:?}: budget.{limit} must not be negative"),
            ));
        }
    }
    Ok(acks)
}

/// `scale = {...}`: a path with its placeholder once, values a line can be fitted to; and
/// a slope budget only on a scaled endpoint.
fn check_scale(source: &Source<'_>, endpoint: &EndpointTable) -> Result<()> {
    let name = endpoint.name.get_ref();
    let Some(scale) = &endpoint.scale else {
        if budget::has_slope_limits(&endpoint.budget) {
            return Err(source
                .at(
                    Some(endpoint.name.span()),
                    format!("endpoint {name:?}: a slope budget needs scale = {{...}}"),
                )
                .with_hint(
                    "add scale = { param = \"n\", values = [5, 25, 50] } and {n} in the path",
                ));
        }
        return Ok(());
    };
    // The position of the key at fault, the message and hint of the shared check.
    let at = |span: Range<usize>, e: Error| Error {
        hint: e.hint,
        ..source.at(Some(span), format!("endpoint {name:?}: {}", e.message))
    };
    let (Some(path), None) = (&endpoint.path, &endpoint.command) else {
        return Err(source.at(
            Some(scale.span()),
            format!("endpoint {name:?}: scale needs a path, not a command"),
        ));
    };
    let table = scale.get_ref();
    scale::check_template("path", path.get_ref(), table.param()).map_err(|e| at(path.span(), e))?;
    scale::check_values("scale.values", table.values.clone()).map_err(|e| at(scale.span(), e))?;
    Ok(())
}

/// An endpoint's load: a path under `base_url`, or a command with its count.
fn check_load(source: &Source<'_>, endpoint: &EndpointTable) -> Result<()> {
    let name = endpoint.name.get_ref();
    let at_name = |message: String| source.at(Some(endpoint.name.span()), message);
    match (&endpoint.path, &endpoint.command) {
        (Some(path), None) if !path.get_ref().starts_with('/') => Err(source
            .at(
                Some(path.span()),
                format!("path {:?} must start with /", path.get_ref()),
            )
            .with_hint("paths are appended to base_url, e.g. path = \"/api/v1/projects\"")),
        (Some(_), None) => Ok(()),
        (None, Some(command)) if command.is_empty() => Err(at_name(format!(
            "endpoint {name:?}: command is empty"
        ))),
        (None, Some(_)) if endpoint.count_from.is_none() && endpoint.requests.is_none() => {
            Err(at_name(format!(
                "endpoint {name:?}: a command needs its request count"
            ))
            .with_hint("add count_from = \"locust:run_stats.csv\" (or autocannon:, k6:, oha:), or requests = N"))
        }
        (None, Some(_)) => Ok(()),
        (Some(_), Some(_)) => Err(at_name(format!(
            "endpoint {name:?} has both path and command"
        ))
        .with_hint("an endpoint is either a path that pgcost loads, or a command that makes the load")),
        (None, None) => Err(at_name(format!("endpoint {name:?} has no path"))
            .with_hint("add path = \"/api/v1/...\" (or command = [...] for your own load tool)")),
    }
}

/// An endpoint's `[[endpoint.ack]]` tables, validated: a reason, a real date.
fn acks(source: &Source<'_>, endpoint: &EndpointTable) -> Result<Vec<Ack>> {
    let name = endpoint.name.get_ref();
    endpoint
        .ack
        .iter()
        .map(|table| {
            if table.reason.get_ref().trim().is_empty() {
                return Err(source
                    .at(Some(table.reason.span()), format!("endpoint {name:?}: an ack's reason is empty"))
                    .with_hint("say why the finding is accepted for now, e.g. reason = \"fixed in #123\""));
            }
            let expires = (table.expires.as_ref())
                .map(|date| {
                    parse_date(date.get_ref()).map_err(|e| {
                        source
                            .at(Some(date.span()), format!("endpoint {name:?}: ack expires {e}"))
                            .with_hint("write the date as expires = \"2027-03-01\"")
                    })
                })
                .transpose()?;
            if let Some(statement) = &table.statement
                && statement.get_ref().trim().is_empty()
            {
                return Err(source.at(
                    Some(statement.span()),
                    format!("endpoint {name:?}: an ack's statement is empty; leave it out to acknowledge every finding of the kind"),
                ));
            }
            let span = (table.statement.as_ref()).map_or(table.kind.span(), |s| s.span());
            let (line, column) = source.position(span.start);
            Ok(Ack {
                kind: *table.kind.get_ref(),
                statement: table.statement.as_ref().map(|s| s.get_ref().clone()),
                reason: table.reason.get_ref().clone(),
                expires,
                at: format!("{}:{line}:{column}", source.origin),
            })
        })
        .collect()
}
