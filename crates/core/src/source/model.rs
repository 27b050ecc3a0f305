//! A table's declaration found in the source: which model names it, in which file and
//! line. Each stack's reader (`ruby`, `python`, ...) returns these.

use std::sync::LazyLock;

use regex::Regex;

/// A model or entity that declares a table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Model {
    /// The table, lowercased, without a schema.
    pub table: String,
    /// The class, model or entity name.
    pub model: String,
    /// The file, relative to the source directory.
    pub uri: String,
    /// The line of the class (or model) declaration, from 1.
    pub line: u32,
}

impl Model {
    /// A model of `table` (a `schema.` prefix dropped, case folded as Postgres folds an
    /// unquoted name).
    pub fn new(table: &str, model: &str, uri: &str, line: usize) -> Model {
        let table = table.rsplit('.').next().unwrap_or(table);
        Model {
            table: table.to_lowercase(),
            model: model.to_string(),
            uri: uri.to_string(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
        }
    }
}

/// The first quoted string of `text`, in single, double or back quotes.
pub fn quoted(text: &str) -> Option<&str> {
    static QUOTED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"["'`]([^"'`]+)["'`]"#).expect("valid regex"));
    QUOTED
        .captures(text)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// The class declared on `line` (`class Name` in Ruby, Python, PHP, Java, TypeScript),
/// with what follows its name.
pub fn class_on(line: &str) -> Option<(&str, &str)> {
    static CLASS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:export\s+)?(?:default\s+)?(?:public\s+|abstract\s+|final\s+|data\s+|open\s+)*class\s+([A-Za-z_][A-Za-z0-9_:]*)(.*)$")
            .expect("valid regex")
    });
    let captures = CLASS.captures(line)?;
    Some((captures.get(1)?.as_str(), captures.get(2)?.as_str()))
}

/// Lines numbered from 1.
pub fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, line)| (i + 1, line))
}
