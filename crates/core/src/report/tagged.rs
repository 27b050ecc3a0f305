//! The tags a report's statements carry: each statement's from the samples of
//! `pg_stat_activity` (by query id, else by folded text), else from the comment its
//! pg_stat_statements text kept; and the count of statements tagged, for the views.

use crate::report::Report;
use crate::tags::{Observed, TagSummary};

/// Gives each statement its tags and the report its [`TagSummary`]; `observed` is `None`
/// where `pg_stat_activity` was not sampled.
pub fn attach(report: &mut Report, observed: Option<&Observed>) {
    let empty = Observed::default();
    let seen = observed.unwrap_or(&empty);
    for statement in &mut report.statements {
        statement.tags = seen.statement(&statement.queryid, &statement.query);
    }
    let counted = (report.statements.iter()).filter(|s| !s.utility);
    let statements = counted.clone().count();
    let tagged = counted.filter(|s| s.tags.is_some()).count();
    report.tags = Some(TagSummary {
        samples: observed.map(|o| o.samples),
        statements,
        tagged,
    });
}

#[cfg(test)]
mod tests {
    use crate::findings::tests::{report, stmt};
    use crate::tags::{Observed, Sample};

    #[test]
    fn every_statement_gets_the_tags_it_was_seen_with() {
        let queries = [
            "SELECT a FROM t WHERE id = $1",
            "SELECT b FROM u /*route='%2Fu',file='src%2Fu.rs%3A3'*/",
            "SELECT c FROM v",
            "BEGIN",
        ];
        let statements = queries.iter().map(|q| stmt(q, 1.0, 1.0)).collect();
        let mut r = report(statements, vec![]);
        let mut observed = Observed::default();
        let row = |pid, start, query: &str| Sample {
            pid,
            query_start: start,
            query_id: None,
            query: query.to_string(),
        };
        observed.add_read(&[
            row(
                1,
                1.0,
                "SELECT a FROM t WHERE id = 42 /*route='%2Ft',traceparent='00-9'*/",
            ),
            row(2, 1.0, "SELECT c FROM v"),
        ]);
        super::attach(&mut r, Some(&observed));
        let by_text = |q: &str| {
            r.statements
                .iter()
                .find(|s| s.query.starts_with(q))
                .unwrap()
        };
        let t = by_text("SELECT a").tags.as_ref().unwrap();
        assert_eq!((t.samples, t.seen[0].share), (1, Some(1.0)));
        assert_eq!(t.describe(), "route /t");
        let u = by_text("SELECT b").tags.as_ref().unwrap();
        assert_eq!((u.samples, u.seen[0].share), (0, None));
        assert_eq!(u.describe(), "src/u.rs:3, route /u");
        assert_eq!(by_text("SELECT c").tags, None);
        let summary = r.tags.unwrap();
        assert_eq!(
            (summary.samples, summary.statements, summary.tagged),
            (Some(2), 3, 2)
        );
        assert_eq!(
            summary.describe(),
            "tags: 2 of 3 statements tagged (2 samples of pg_stat_activity)"
        );
    }
}
