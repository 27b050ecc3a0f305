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

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn flattens_and_marks_a_cut() {
        assert_eq!(one_line("SELECT 1\n  FROM t", 40), "SELECT 1 FROM t");
        assert_eq!(one_line("abcdef", 6), "abcdef");
        assert_eq!(one_line("abcdefg", 6), "abcde…");
    }
}
