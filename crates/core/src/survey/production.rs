//! Production attribution (`--production-stats`): production's `pg_stat_statements`
//! mapped onto the surveyed routes whose replay ran each statement, by queryid or by
//! folded text, and each statement's calls shared among those routes at the logged
//! traffic mix. Pure: the command reads the export.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::check::statement_diff::normalized;

/// Production statements reported with their routes, and unexplained ones listed.
pub const TOP: usize = 20;

/// One production statement, as the export gives it (rows of one queryid summed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ProductionRow {
    /// As text, since it is a 64-bit integer; null when the export has none.
    pub queryid: Option<String>,
    pub query: String,
    pub calls: u64,
    /// Null when the export has no `rows` column.
    pub rows: Option<u64>,
    /// `total_exec_time` (`total_time` before PG 13), in ms; null without either column.
    pub total_exec_time_ms: Option<f64>,
    /// Null when the export has no `shared_blks_hit` column.
    pub shared_blks_hit: Option<u64>,
}

/// What was read from `--production-stats`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductionStats {
    /// The file, or the URL without its password.
    pub source: String,
    pub rows: Vec<ProductionRow>,
}

/// A statement the replay of a route ran, from the route's audit.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteStatement {
    pub queryid: String,
    pub query: String,
    pub calls_per_request: f64,
}

/// A route as attribution reads it.
#[derive(Debug, Clone, Copy)]
pub struct RouteRun<'a> {
    pub method: &'a str,
    pub route: &'a str,
    pub log_requests: u64,
    pub valid: bool,
    pub statements: &'a [RouteStatement],
}

/// A route that ran a production statement in its replay.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Explaining {
    pub method: String,
    pub route: String,
    /// The statement's calls per request in the route's replay.
    pub calls_per_request: f64,
    /// `calls_per_request` × the route's logged requests.
    pub expected_calls: f64,
    /// `expected_calls` over the sum of them over the routes that ran the statement.
    pub share: f64,
}

/// One production statement and the routes that explain it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Attributed {
    #[serde(flatten)]
    pub statement: ProductionRow,
    /// `queryid` or `text`; null when no valid route ran the statement.
    pub matched_by: Option<&'static str>,
    /// Most share first; empty when unexplained.
    pub routes: Vec<Explaining>,
}

/// The `production` key of the survey's document.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Production {
    pub source: String,
    /// `total_exec_time` when the export has execution times, else `calls`.
    pub ranked_by: &'static str,
    /// Production statements read, rows of one queryid counted once.
    pub statements: usize,
    /// Of production's calls, those of statements some valid route ran.
    pub explained_share_of_calls: Option<f64>,
    /// Of production's execution time, that of statements some valid route ran; null
    /// without execution times.
    pub explained_share_of_exec_time: Option<f64>,
    /// The top statements by `ranked_by`, each with the routes that explain it.
    pub top: Vec<Attributed>,
    /// Production statements no valid route ran, in all.
    pub unexplained_statements: usize,
    /// The first of them by `ranked_by`.
    pub unexplained: Vec<ProductionRow>,
}

/// A statement's text with bind parameters (`$1`), numbers and string literals made
/// `?`, unquoted words lower-cased, and tokens separated by one space: what two servers,
/// or two spellings of one statement, agree on.
pub fn folded(query: &str) -> String {
    let chars: Vec<char> = normalized(query).chars().collect();
    let mut tokens: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        i += 1;
        let token = if c.is_whitespace() {
            continue;
        } else if c == '\'' || c == '"' {
            while i < chars.len() {
                i += 1;
                if chars[i - 1] == c {
                    if chars.get(i) == Some(&c) {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            if c == '\'' {
                "?".to_string()
            } else {
                chars[start..i].iter().collect()
            }
        } else if c == '$' || c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            "?".to_string()
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || "_$".contains(chars[i])) {
                i += 1;
            }
            chars[start..i].iter().collect::<String>().to_lowercase()
        } else {
            c.to_string()
        };
        tokens.push(token);
    }
    if tokens.last().is_some_and(|t| t == ";") {
        tokens.pop();
    }
    tokens.join(" ")
}

/// Rows of one queryid (or, without one, of one folded text) summed: the export has a
/// row per role and database.
fn merged(rows: &[ProductionRow]) -> Vec<ProductionRow> {
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut out: Vec<ProductionRow> = Vec::new();
    let add = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b).or(a).or(b);
    for row in rows {
        let key = match &row.queryid {
            Some(id) => format!("id:{id}"),
            None => format!("text:{}", folded(&row.query)),
        };
        match by_key.get(&key) {
            Some(&i) => {
                let m = &mut out[i];
                m.calls += row.calls;
                m.rows = add(m.rows, row.rows);
                m.shared_blks_hit = add(m.shared_blks_hit, row.shared_blks_hit);
                m.total_exec_time_ms = (m.total_exec_time_ms.zip(row.total_exec_time_ms))
                    .map(|(a, b)| a + b)
                    .or(m.total_exec_time_ms)
                    .or(row.total_exec_time_ms);
            }
            None => {
                by_key.insert(key, out.len());
                out.push(row.clone());
            }
        }
    }
    out
}

/// The valid routes that ran `row`, and how the match was made: by queryid when any
/// route's statement has the row's queryid, else by folded text.
fn explaining(row: &ProductionRow, routes: &[RouteRun]) -> (Option<&'static str>, Vec<Explaining>) {
    let text = folded(&row.query);
    let by_id = |s: &RouteStatement| row.queryid.as_deref() == Some(s.queryid.as_str());
    let by_text = |s: &RouteStatement| folded(&s.query) == text;
    let valid = || routes.iter().filter(|r| r.valid);
    let matcher: (&'static str, &dyn Fn(&RouteStatement) -> bool) =
        if valid().any(|r| r.statements.iter().any(by_id)) {
            ("queryid", &by_id)
        } else {
            ("text", &by_text)
        };
    let mut found: Vec<Explaining> = valid()
        .filter_map(|r| {
            let calls_per_request: f64 = (r.statements.iter())
                .filter(|s| (matcher.1)(s))
                .map(|s| s.calls_per_request)
                .sum();
            (calls_per_request > 0.0).then(|| Explaining {
                method: r.method.to_string(),
                route: r.route.to_string(),
                calls_per_request,
                expected_calls: calls_per_request * r.log_requests as f64,
                share: 0.0,
            })
        })
        .collect();
    let total: f64 = found.iter().map(|e| e.expected_calls).sum();
    let routes_found = found.len() as f64;
    for e in &mut found {
        // A route is in the survey because the log has it, so `total` is above 0.
        e.share = if total > 0.0 {
            e.expected_calls / total
        } else {
            1.0 / routes_found
        };
    }
    found.sort_by(|a, b| {
        (b.share
            .partial_cmp(&a.share)
            .unwrap_or(std::cmp::Ordering::Equal))
        .then(a.route.cmp(&b.route))
        .then(a.method.cmp(&b.method))
    });
    let how = (!found.is_empty()).then_some(matcher.0);
    (how, found)
}

/// Maps production's statements onto the routes whose replay ran them.
pub fn attribute(stats: &ProductionStats, routes: &[RouteRun]) -> Production {
    let mut rows = merged(&stats.rows);
    let by_time = !rows.is_empty() && rows.iter().all(|r| r.total_exec_time_ms.is_some());
    let weight = |r: &ProductionRow| {
        if by_time {
            r.total_exec_time_ms.unwrap_or(0.0)
        } else {
            r.calls as f64
        }
    };
    rows.sort_by(|a, b| {
        (weight(b)
            .partial_cmp(&weight(a))
            .unwrap_or(std::cmp::Ordering::Equal))
        .then(b.calls.cmp(&a.calls))
        .then(a.query.cmp(&b.query))
    });
    let attributed: Vec<Attributed> = (rows.iter())
        .map(|row| {
            let (matched_by, routes) = explaining(row, routes);
            Attributed {
                statement: row.clone(),
                matched_by,
                routes,
            }
        })
        .collect();
    let share = |f: &dyn Fn(&ProductionRow) -> f64| {
        let total: f64 = rows.iter().map(f).sum();
        let explained: f64 = (attributed.iter())
            .filter(|a| a.matched_by.is_some())
            .map(|a| f(&a.statement))
            .sum();
        (total > 0.0).then(|| explained / total)
    };
    let unexplained: Vec<ProductionRow> = (attributed.iter())
        .filter(|a| a.matched_by.is_none())
        .map(|a| a.statement.clone())
        .collect();
    Production {
        source: stats.source.clone(),
        ranked_by: if by_time { "total_exec_time" } else { "calls" },
        statements: rows.len(),
        explained_share_of_calls: share(&|r| r.calls as f64),
        explained_share_of_exec_time: if by_time {
            share(&|r| r.total_exec_time_ms.unwrap_or(0.0))
        } else {
            None
        },
        unexplained_statements: unexplained.len(),
        unexplained: unexplained.into_iter().take(TOP).collect(),
        top: attributed.into_iter().take(TOP).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prod(queryid: Option<&str>, query: &str, calls: u64, ms: Option<f64>) -> ProductionRow {
        ProductionRow {
            queryid: queryid.map(str::to_string),
            query: query.into(),
            calls,
            rows: Some(calls),
            total_exec_time_ms: ms,
            shared_blks_hit: None,
        }
    }

    fn stmt(queryid: &str, query: &str, calls_per_request: f64) -> RouteStatement {
        RouteStatement {
            queryid: queryid.into(),
            query: query.into(),
            calls_per_request,
        }
    }

    fn run<'a>(route: &'a str, log: u64, valid: bool, s: &'a [RouteStatement]) -> RouteRun<'a> {
        RouteRun {
            method: "GET",
            route,
            log_requests: log,
            valid,
            statements: s,
        }
    }

    #[test]
    fn folding_agrees_on_spelling_and_parameters() {
        assert_eq!(
            folded("SELECT name\n  FROM items WHERE id=$1;"),
            "select name from items where id = ?"
        );
        assert_eq!(
            folded("select NAME from Items where ID = 42 and tag = 'it''s'"),
            "select name from items where id = ? and tag = ?"
        );
        assert_eq!(folded("SELECT \"Mixed\" FROM t"), "select \"Mixed\" from t");
        assert_eq!(folded("SELECT a_1, $2"), "select a_1 , ?");
        assert_ne!(
            folded("SELECT id FROM items"),
            folded("SELECT id FROM small")
        );
    }

    #[test]
    fn calls_are_shared_by_calls_per_request_times_logged_requests() {
        let items = [
            stmt("11", "SELECT name FROM items WHERE id = $1", 1.0),
            stmt("22", "SELECT id, label FROM small", 1.0),
        ];
        let listing = [stmt("22", "SELECT id, label FROM small", 3.0)];
        let denied = [stmt("33", "SELECT secret FROM vault", 1.0)];
        let routes = [
            run("/items/{id}", 60, true, &items),
            run("/list", 10, true, &listing),
            run("/denied", 500, false, &denied),
        ];
        let stats = ProductionStats {
            source: "prod.csv".into(),
            rows: vec![
                prod(Some("22"), "SELECT id, label FROM small", 900, Some(90.0)),
                prod(
                    Some("11"),
                    "SELECT name FROM items WHERE id = $1",
                    600,
                    Some(30.0),
                ),
                prod(Some("33"), "SELECT secret FROM vault", 5, Some(1.0)),
                prod(Some("44"), "VACUUM items", 1, Some(200.0)),
            ],
        };
        let p = attribute(&stats, &routes);
        assert_eq!(p.ranked_by, "total_exec_time");
        assert_eq!(p.statements, 4);
        let queries: Vec<&str> = p.top.iter().map(|a| a.statement.query.as_str()).collect();
        assert_eq!(
            queries,
            [
                "VACUUM items",
                "SELECT id, label FROM small",
                "SELECT name FROM items WHERE id = $1",
                "SELECT secret FROM vault"
            ]
        );
        // `small`: /items 1 × 60 = 60 calls against /list 3 × 10 = 30.
        let small = &p.top[1];
        assert_eq!(small.matched_by, Some("queryid"));
        let shares: Vec<(&str, f64, f64)> = (small.routes.iter())
            .map(|e| (e.route.as_str(), e.expected_calls, e.share))
            .collect();
        assert_eq!(
            shares,
            [("/items/{id}", 60.0, 2.0 / 3.0), ("/list", 30.0, 1.0 / 3.0)]
        );
        assert_eq!(p.top[2].routes.len(), 1);
        assert_eq!(p.top[2].routes[0].share, 1.0);
        // Only a route that is not valid ran it: unexplained, as the job is.
        assert_eq!(p.top[3].matched_by, None);
        assert!(p.top[3].routes.is_empty());
        let unexplained: Vec<&str> = p.unexplained.iter().map(|r| r.query.as_str()).collect();
        assert_eq!(unexplained, ["VACUUM items", "SELECT secret FROM vault"]);
        assert_eq!(p.unexplained_statements, 2);
        assert_eq!(p.explained_share_of_calls, Some(1500.0 / 1506.0));
        assert_eq!(p.explained_share_of_exec_time, Some(120.0 / 321.0));
    }

    #[test]
    fn another_servers_queryids_fall_back_to_folded_text() {
        let scan = [stmt("7", "SELECT id, owner, name FROM items", 2.0)];
        let routes = [run("/scan", 3, true, &scan)];
        let stats = ProductionStats {
            source: "prod.json".into(),
            rows: vec![
                prod(Some("-9"), "select id, owner, name\n from ITEMS", 40, None),
                prod(None, "SELECT id,owner,name FROM items;", 2, None),
                prod(Some("-9"), "select id, owner, name\n from ITEMS", 10, None),
            ],
        };
        let p = attribute(&stats, &routes);
        assert_eq!(p.ranked_by, "calls");
        assert_eq!(p.explained_share_of_exec_time, None);
        // The two rows of queryid -9 are one statement.
        assert_eq!(p.statements, 2);
        assert_eq!(p.top[0].statement.calls, 50);
        assert_eq!(p.top[0].statement.rows, Some(50));
        for a in &p.top {
            assert_eq!(a.matched_by, Some("text"), "{a:?}");
            assert_eq!(a.routes[0].route, "/scan");
            assert_eq!(a.routes[0].expected_calls, 6.0);
        }
        assert_eq!(p.explained_share_of_calls, Some(1.0));
        assert!(p.unexplained.is_empty());
    }

    #[test]
    fn only_the_top_are_listed() {
        let rows = (0..30)
            .map(|i| prod(Some(&i.to_string()), &format!("SELECT {i}"), i, None))
            .collect();
        let stats = ProductionStats {
            source: "x".into(),
            rows,
        };
        let p = attribute(&stats, &[]);
        assert_eq!((p.top.len(), p.unexplained.len()), (TOP, TOP));
        assert_eq!(p.unexplained_statements, 30);
        assert_eq!(p.top[0].statement.calls, 29);
    }
}
