//! The tags section of the table and Markdown views: how many statements carried tags in
//! their SQL comments, and for each tagged one, the route and file:line it came from.

use super::sections::Grid;
use pgcost_core::report::Report;
use pgcost_core::tags::comment::strip_tags;
use pgcost_core::text::one_line;

/// The most tagged statements listed; JSON has them all.
const SHOWN: usize = 20;

/// The summary line, and the tagged statements (most buffers first) as a grid when any
/// carried a tag, each column cut to its `widths`; `None` without a tag summary (no
/// pg_stat_statements).
pub fn section(report: &Report, widths: (usize, usize)) -> Option<(String, Option<Grid>)> {
    let summary = report.tags.as_ref()?;
    let rows: Vec<Vec<String>> = (report.statements.iter())
        .filter_map(|s| Some((s, s.tags.as_ref()?)))
        .take(SHOWN)
        .map(|(s, tags)| {
            let statement = one_line(&strip_tags(&s.query), widths.0);
            vec![statement, one_line(&tags.describe(), widths.1)]
        })
        .collect();
    let grid = (!rows.is_empty()).then(|| Grid::new(&["statement", "tags"], rows, 0..0));
    Some((summary.describe(), grid))
}

#[cfg(test)]
mod tests {
    use pgcost_core::findings::tests::{report, stmt};

    #[test]
    fn lists_the_tagged_statements_under_the_summary() {
        let queries = [
            "SELECT a FROM t WHERE id = $1 /*route='%2Fa',file='src%2Fa.rs%3A7'*/",
            "SELECT b FROM u",
        ];
        let statements = queries.iter().map(|q| stmt(q, 1.0, 1.0)).collect();
        let mut r = report(statements, vec![]);
        pgcost_core::report::tagged_for_tests(&mut r);
        let (title, grid) = super::section(&r, (40, 60)).unwrap();
        assert_eq!(
            title,
            "tags: 1 of 2 statements tagged (pg_stat_activity not sampled)"
        );
        let grid = grid.unwrap();
        assert_eq!(
            grid.rows,
            vec![vec![
                "SELECT a FROM t WHERE id = $1".to_string(),
                "src/a.rs:7, route /a".to_string()
            ]]
        );
    }
}
