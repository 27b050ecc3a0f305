//! What a breach breaks, typed: a figure, a database's, a slope, a forbidden finding kind or a
//! limit on the statement set; JSON's `metric` names it by its key in pgcost.toml.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::findings::FindingKind;
use crate::report::model::figure::Figure;

/// One limit of a budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Limit {
    Figure(Figure),
    /// A database's own figure, under `[endpoint.budget.nodes]`.
    NodeFigure(String, Figure),
    /// The figure's slope over the scale's parameter.
    Slope(Figure),
    /// A kind `forbid` lists, with the database whose budget lists it.
    Forbidden(Option<String>, FindingKind),
    NewStatements,
    /// `fail_on_findings`: new findings at or above its severity.
    NewFindings,
    /// `fail_on_plan_change`.
    PlanChange,
    /// An acknowledgement whose date has come.
    AckExpired,
}

/// The limits on the statement set and the acknowledgements, by key.
const FIXED: [(&str, Limit); 4] = [
    ("new_statements", Limit::NewStatements),
    ("fail_on_findings", Limit::NewFindings),
    ("fail_on_plan_change", Limit::PlanChange),
    ("ack_expired", Limit::AckExpired),
];

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Figure(figure) => f.write_str(figure.key()),
            Limit::NodeFigure(node, figure) => write!(f, "nodes.{node}.{}", figure.key()),
            Limit::Slope(figure) => write!(f, "{}_slope", figure.key()),
            Limit::Forbidden(None, kind) => f.write_str(kind.as_str()),
            Limit::Forbidden(Some(node), kind) => write!(f, "nodes.{node}.{}", kind.as_str()),
            fixed => f.write_str(
                FIXED
                    .iter()
                    .find(|(_, l)| l == fixed)
                    .map_or("", |(k, _)| k),
            ),
        }
    }
}

impl From<Limit> for String {
    fn from(limit: Limit) -> String {
        limit.to_string()
    }
}

impl TryFrom<String> for Limit {
    type Error = String;

    fn try_from(text: String) -> Result<Limit, String> {
        if let Some((_, fixed)) = FIXED.iter().find(|(key, _)| *key == text) {
            return Ok(fixed.clone());
        }
        let (node, key) = match text.strip_prefix("nodes.").and_then(|r| r.rsplit_once('.')) {
            Some((node, key)) => (Some(node.to_string()), key),
            None => (None, text.as_str()),
        };
        let slope = key.strip_suffix("_slope").and_then(figure);
        match (node, figure(key), slope, key.parse::<FindingKind>()) {
            (None, Some(figure), _, _) => Ok(Limit::Figure(figure)),
            (Some(node), Some(figure), _, _) => Ok(Limit::NodeFigure(node, figure)),
            (None, None, Some(figure), _) => Ok(Limit::Slope(figure)),
            (node, None, _, Ok(kind)) => Ok(Limit::Forbidden(node, kind)),
            _ => Err(format!("no limit of a budget is named {text:?}")),
        }
    }
}

/// The figure whose key is `key`.
fn figure(key: &str) -> Option<Figure> {
    Figure::ALL.into_iter().find(|f| f.key() == key)
}

/// A figure written by its key, for `#[serde(with = "figure_key")]`.
pub mod figure_key {
    use super::*;

    pub fn serialize<S: Serializer>(figure: &Figure, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(figure.key())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Figure, D::Error> {
        let key = String::deserialize(deserializer)?;
        figure(&key).ok_or_else(|| serde::de::Error::custom(format!("no figure is named {key:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_limit_reads_back_from_its_key() {
        let limits = [
            Limit::Figure(Figure::P95Ms),
            Limit::NodeFigure("auth.eu".into(), Figure::RowsRead),
            Limit::Slope(Figure::Statements),
            Limit::Forbidden(None, FindingKind::SeqScanHeavy),
            Limit::Forbidden(Some("auth".into()), FindingKind::SeqScanHeavy),
            Limit::NewStatements,
            Limit::NewFindings,
            Limit::PlanChange,
            Limit::AckExpired,
        ];
        let keys: Vec<String> = limits.iter().map(Limit::to_string).collect();
        assert_eq!(
            keys,
            [
                "p95_ms",
                "nodes.auth.eu.rows_read",
                "statements_slope",
                "seq_scan_heavy",
                "nodes.auth.seq_scan_heavy",
                "new_statements",
                "fail_on_findings",
                "fail_on_plan_change",
                "ack_expired"
            ]
        );
        for (key, limit) in keys.iter().zip(&limits) {
            assert_eq!(&Limit::try_from(key.clone()).unwrap(), limit);
            let json = serde_json::to_string(limit).unwrap();
            assert_eq!(json, format!("{key:?}"));
            assert_eq!(&serde_json::from_str::<Limit>(&json).unwrap(), limit);
        }
        assert!(Limit::try_from("nodes.auth.p95_ms_slope".to_string()).is_err());
        assert!(Limit::try_from("rows".to_string()).is_err());
    }
}
