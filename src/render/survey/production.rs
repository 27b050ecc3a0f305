//! The table's production section (`--production-stats`): the top production statements,
//! the route that explains most of each, and those no surveyed route explains.

use std::fmt::Write;

use pgcost_core::survey::production::{Attributed, Production};

/// Statements shown; the JSON has the top 20 and the first 20 unexplained.
const SHOWN: usize = 10;

/// A statement's text on one line, cut to `width` characters.
fn short(query: &str, width: usize) -> String {
    let line = query.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= width {
        return line;
    }
    let cut: String = line.chars().take(width.saturating_sub(3)).collect();
    format!("{cut}...")
}

fn explained_by(a: &Attributed) -> String {
    match a.routes.first() {
        None => "UNEXPLAINED".into(),
        Some(top) => {
            let others = match a.routes.len() - 1 {
                0 => String::new(),
                n => format!(" (+{n} route(s))"),
            };
            format!(
                "{} {} {:.0}%{others}",
                top.method,
                top.route,
                top.share * 100.0
            )
        }
    }
}

pub(super) fn render(out: &mut String, p: &Production) {
    let percent = |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
    let _ = writeln!(
        out,
        "\nproduction statements of {} ({} read, top by {}): the routes explain {} of the calls, {} of the time",
        p.source,
        p.statements,
        p.ranked_by,
        percent(p.explained_share_of_calls),
        percent(p.explained_share_of_exec_time)
    );
    let _ = writeln!(
        out,
        "{:>10} {:>12}  {:<50} explained by",
        "calls", "time ms", "statement"
    );
    for a in p.top.iter().take(SHOWN) {
        let s = &a.statement;
        let _ = writeln!(
            out,
            "{:>10} {:>12}  {:<50} {}",
            s.calls,
            s.total_exec_time_ms
                .map_or("-".into(), |t| format!("{t:.1}")),
            short(&s.query, 50),
            explained_by(a)
        );
    }
    for s in p.unexplained.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "unexplained (no surveyed route ran it) x{}: {}",
            s.calls,
            short(&s.query, 80)
        );
    }
    if p.unexplained_statements > SHOWN.min(p.unexplained.len()) {
        let _ = writeln!(
            out,
            "  ... {} unexplained statement(s) in all, --format json lists {}",
            p.unexplained_statements,
            p.unexplained.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgcost_core::survey::production::{Explaining, ProductionRow};

    #[test]
    fn each_statement_names_the_route_explaining_most() {
        let row = |query: &str, calls| ProductionRow {
            queryid: None,
            query: query.into(),
            calls,
            rows: None,
            total_exec_time_ms: Some(2.0),
            shared_blks_hit: None,
        };
        let explaining = |route: &str, share| Explaining {
            method: "GET".into(),
            route: route.into(),
            calls_per_request: 1.0,
            expected_calls: 1.0,
            share,
        };
        let production = Production {
            source: "prod.csv".into(),
            ranked_by: "total_exec_time",
            statements: 2,
            explained_share_of_calls: Some(0.5),
            explained_share_of_exec_time: Some(0.5),
            top: vec![
                Attributed {
                    statement: row("SELECT id,\n label FROM small", 9),
                    matched_by: Some("queryid"),
                    routes: vec![explaining("/items/{id}", 0.75), explaining("/list", 0.25)],
                },
                Attributed {
                    statement: row("VACUUM items", 1),
                    matched_by: None,
                    routes: Vec::new(),
                },
            ],
            unexplained_statements: 1,
            unexplained: vec![row("VACUUM items", 1)],
        };
        let mut out = String::new();
        render(&mut out, &production);
        assert!(
            out.contains("explain 50.0% of the calls, 50.0% of the time"),
            "{out}"
        );
        assert!(out.contains("SELECT id, label FROM small"), "{out}");
        assert!(out.contains("GET /items/{id} 75% (+1 route(s))"), "{out}");
        assert!(out.contains("UNEXPLAINED"), "{out}");
        assert!(
            out.contains("unexplained (no surveyed route ran it) x1: VACUUM items"),
            "{out}"
        );
    }
}
