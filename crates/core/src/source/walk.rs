//! Reads the source tree: every text file pgcost knows how to read, below the directory,
//! skipping build output, dependencies and version control.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// Folders never read: dependencies, build output, version control, virtualenvs.
const SKIPPED: &[&str] = &[
    "target",
    "node_modules",
    "vendor",
    "dist",
    "build",
    "__pycache__",
    "venv",
];

/// The extensions of the files read: the stacks' models, and code that may hold SQL.
const EXTENSIONS: &[&str] = &[
    "rb", "py", "ts", "tsx", "js", "mjs", "cjs", "prisma", "php", "java", "kt", "go", "rs", "ex",
    "exs", "cs", "sql",
];

/// Files larger than this are generated or data, not code.
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Why the source directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: PathBuf,
        source: walkdir::Error,
    },
}

/// One file: its path relative to the root, with `/`, and its text.
pub struct SourceFile {
    pub uri: String,
    pub text: String,
}

/// Every readable source file below `root`, in path order. Files that are not UTF-8
/// are skipped.
pub fn files(root: &Path) -> Result<Vec<SourceFile>, WalkError> {
    if !root.is_dir() {
        return Err(WalkError::NotADirectory(root.to_path_buf()));
    }
    let mut out = Vec::new();
    let walk = WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !skipped(e));
    for entry in walk {
        let entry = entry.map_err(|source| WalkError::Unreadable {
            path: root.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let wanted =
            (path.extension().and_then(|e| e.to_str())).is_some_and(|e| EXTENSIONS.contains(&e));
        let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES);
        if !entry.file_type().is_file() || !wanted || !small {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        out.push(SourceFile {
            uri: relative_uri(root, path),
            text,
        });
    }
    Ok(out)
}

/// A folder to skip: hidden (`.git`, `.venv`) or in [`SKIPPED`].
fn skipped(entry: &walkdir::DirEntry) -> bool {
    let name = entry.file_name().to_string_lossy();
    entry.file_type().is_dir() && (name.starts_with('.') || SKIPPED.contains(&name.as_ref()))
}

/// `path` below `root`, with `/` separators.
fn relative_uri(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = (relative.components())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
