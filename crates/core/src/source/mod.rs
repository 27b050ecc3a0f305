//! The app's source (`--source DIR`): which model or entity declares each table, and
//! where a statement's SQL is written, so that a finding names a file and line to open.
//! Reading the tree is the only I/O ([`SourceMap::scan`]); everything after it is pure.
//! A location says what it is ("the model of `issues`"): pgcost sees SQL, not call sites.

mod inflect;
mod java;
mod javascript;
mod literal;
pub mod location;
mod model;
mod php;
mod prisma;
mod python;
mod ruby;
#[cfg(test)]
mod tests;
mod walk;

use std::path::{Path, PathBuf};

pub use location::{CodeLocation, ConfigLines, Origin};
pub use model::Model;
pub use walk::WalkError;

use literal::SqlFile;

/// At most this many places are given for one statement's literal SQL.
const MAX_LITERAL_HITS: usize = 3;

/// What the source tree says about the tables and the SQL of the app.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    /// The directory read, as given.
    pub root: PathBuf,
    /// Every declaration found, in path order.
    pub models: Vec<Model>,
    sql_files: Vec<SqlFile>,
}

impl SourceMap {
    /// Reads every source file below `root`.
    pub fn scan(root: &Path) -> Result<SourceMap, WalkError> {
        let files = walk::files(root)?;
        let files = files.iter().map(|f| (f.uri.as_str(), f.text.as_str()));
        Ok(SourceMap::of_files(root, files))
    }

    /// The map of files already read: (path relative to `root`, text).
    pub fn of_files<'a>(root: &Path, files: impl Iterator<Item = (&'a str, &'a str)>) -> Self {
        let mut map = SourceMap {
            root: root.to_path_buf(),
            ..SourceMap::default()
        };
        for (uri, text) in files {
            map.models.extend(models_of(uri, text));
            map.sql_files.extend(SqlFile::of(uri, text));
        }
        map
    }

    /// Where to look for a finding on `tables` (bare or `schema.table`) and `query`: the
    /// statement's literal SQL first, where the source holds it, then the model of each
    /// table. Empty when the source names none of them.
    pub fn locate(&self, tables: &[String], query: Option<&str>) -> Vec<CodeLocation> {
        let mut out: Vec<CodeLocation> = Vec::new();
        if let Some(fragment) = query.and_then(literal::fragment) {
            let hits = (self.sql_files.iter())
                .filter_map(|file| Some((file, file.line_of(&fragment)?)))
                .take(MAX_LITERAL_HITS);
            out.extend(hits.map(|(file, line)| CodeLocation {
                uri: file.uri.clone(),
                line,
                origin: Origin::LiteralSql {
                    fragment: fragment.clone(),
                },
            }));
        }
        for table in tables {
            let bare = table.rsplit('.').next().unwrap_or(table).to_lowercase();
            let declared = self.models.iter().filter(|m| m.table == bare);
            out.extend(declared.map(|m| CodeLocation {
                uri: m.uri.clone(),
                line: m.line,
                origin: Origin::Model {
                    table: bare.clone(),
                    model: m.model.clone(),
                },
            }));
        }
        out.dedup();
        out
    }
}

/// The declarations of one file, by the stack its name and folder say it belongs to.
fn models_of(uri: &str, text: &str) -> Vec<Model> {
    let (folder, name) = uri.rsplit_once('/').unwrap_or(("", uri));
    let extension = name.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match extension {
        "rb" if uri.contains("app/models/") => ruby::models(uri, text),
        "py" => python::models(uri, text, django_app(folder, name)),
        "ts" | "tsx" | "js" | "mjs" | "cjs" => javascript::models(uri, text),
        "prisma" => prisma::models(uri, text),
        "php" => php::models(uri, text),
        "java" | "kt" => java::models(uri, text),
        _ => Vec::new(),
    }
}

/// The Django app label of a Python file: the folder of `models.py`, or the folder
/// above a `models/` package; `None` for any other file.
fn django_app<'a>(folder: &'a str, name: &str) -> Option<&'a str> {
    let last = |path: &'a str| path.rsplit('/').next().filter(|s| !s.is_empty());
    if name == "models.py" {
        last(folder)
    } else {
        folder.strip_suffix("/models").and_then(last)
    }
}
