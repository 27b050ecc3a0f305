//! Literal SQL in the source: a statement's distinctive fragment (its text up to the
//! first parameter) looked up in the files that hold SQL, case, quotes and line breaks
//! aside.

/// A source file that holds SQL, folded for matching.
#[derive(Debug, Clone)]
pub struct SqlFile {
    pub uri: String,
    /// The text folded by [`fold`].
    folded: String,
    /// The offset in `folded` where each line starts: entry i is line i + 1.
    line_starts: Vec<usize>,
}

/// Words a file must hold for its SQL to be worth keeping.
const SQL_WORDS: [&str; 4] = ["select ", "insert into", "update ", "delete from"];

/// Shortest fragment worth looking for: a shorter one (`select * from t`) would match
/// unrelated code.
const MIN_FRAGMENT_CHARS: usize = 28;
const MIN_FRAGMENT_WORDS: usize = 4;

impl SqlFile {
    /// The file, when it holds SQL.
    pub fn of(uri: &str, text: &str) -> Option<SqlFile> {
        let mut folded = String::with_capacity(text.len());
        let mut line_starts = Vec::new();
        for line in text.lines() {
            line_starts.push(folded.len());
            fold_into(line, &mut folded);
            if !folded.ends_with(' ') {
                folded.push(' ');
            }
        }
        SQL_WORDS
            .iter()
            .any(|word| folded.contains(word))
            .then(|| SqlFile {
                uri: uri.to_string(),
                folded,
                line_starts,
            })
    }

    /// The line where `fragment` (folded) starts, if the file holds it.
    pub fn line_of(&self, fragment: &str) -> Option<u32> {
        let offset = self.folded.find(fragment)?;
        let line = self.line_starts.partition_point(|&start| start <= offset);
        u32::try_from(line).ok()
    }
}

/// Lowercase, without double quotes, back quotes and backslashes (escaped quotes), runs of blanks made one space.
fn fold_into(text: &str, out: &mut String) {
    for c in text.chars() {
        if matches!(c, '"' | '`' | '\\') {
            continue;
        }
        if c.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

/// The part of a normalized statement worth looking for: its text up to the first
/// parameter (`$1`), folded; `None` when that is too short to be distinctive.
pub fn fragment(query: &str) -> Option<String> {
    let head = query.split('$').next().unwrap_or(query);
    let mut folded = String::new();
    fold_into(head, &mut folded);
    let trimmed = folded.trim_end_matches([' ', '=', '(', '<', '>', ',', '!']);
    let words = trimmed.split(' ').count();
    (trimmed.len() >= MIN_FRAGMENT_CHARS && words >= MIN_FRAGMENT_WORDS)
        .then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_is_found_across_lines_and_quotes() {
        let text = "fn load() {\n    let sql = \"SELECT label\n        FROM \\\"small\\\" WHERE id = $1\";\n}\n";
        let file = SqlFile::of("src/load.rs", text).unwrap();
        let fragment = fragment("SELECT label FROM small WHERE id = $1").unwrap();
        assert_eq!(fragment, "select label from small where id");
        assert_eq!(file.line_of(&fragment), Some(2));
    }

    #[test]
    fn short_fragments_and_files_without_sql_are_skipped() {
        assert_eq!(fragment("SELECT $1"), None);
        assert_eq!(fragment("SELECT * FROM t WHERE id = $1"), None);
        assert!(SqlFile::of("a.rb", "puts 'hello'\n").is_none());
    }
}
