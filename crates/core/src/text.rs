//! Text on one line: how a statement, URL or name is quoted in a finding or a view.

/// Collapses whitespace and cuts to `max` characters, the last one then marking the cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A statement as a finding shows it: without the app's sqlcommenter tag comments (their
/// content is in the finding's tags), on one line, cut at `max` characters.
pub fn shown_sql(query: &str, max: usize) -> String {
    one_line(&crate::tags::comment::strip_tags(query), max)
}

#[cfg(test)]
mod tests {
    use super::{one_line, shown_sql};

    #[test]
    fn shown_sql_drops_the_tag_comments_only() {
        let tagged = "SELECT id FROM t WHERE a = $1 /*code.filepath='src%2Fapi.rs',code.lineno='251',route='%2Fx'*/";
        assert_eq!(shown_sql(tagged, 200), "SELECT id FROM t WHERE a = $1");
        let other = "SELECT /* hint */ id FROM t";
        assert_eq!(shown_sql(other, 200), other);
    }

    #[test]
    fn flattens_and_marks_a_cut() {
        assert_eq!(one_line("SELECT 1\n  FROM t", 40), "SELECT 1 FROM t");
        assert_eq!(one_line("abcdef", 6), "abcdef");
        assert_eq!(one_line("abcdefg", 6), "abcde…");
    }
}
