//! What a pool's liveness check looks like: a SELECT of one constant with no FROM
//! (`SELECT 1`, `select 1 as one`, `/* ping */ SELECT 1`, normalized to `SELECT $1`), or
//! an empty query.

use sqlparser::ast::{Expr, SelectItem, SetExpr, Statement};

use super::parse;

/// Whether the text is a liveness check: it reads nothing and computes nothing.
pub(crate) fn is_ping(sql: &str) -> bool {
    if sql.trim().trim_end_matches(';').trim().is_empty() {
        return true;
    }
    let Some(Statement::Query(query)) = parse(sql) else {
        return false;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    let constant = |e: &Expr| match e {
        Expr::Value(_) => true,
        Expr::Cast { expr, .. } => matches!(expr.as_ref(), Expr::Value(_)),
        _ => false,
    };
    query.with.is_none()
        && query.limit_clause.is_none()
        && select.from.is_empty()
        && select.selection.is_none()
        && match select.projection.as_slice() {
            [SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. }] => constant(e),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_pings_are_recognised() {
        for ping in [
            "SELECT $1",
            "SELECT 1",
            "select $1 as one",
            "/* ping */ SELECT $1",
            "SELECT $1::int",
            ";",
            "",
        ] {
            assert!(is_ping(ping), "{ping:?}");
        }
        for read in [
            "SELECT $1 FROM users WHERE id = $2",
            "SELECT now()",
            "SELECT $1, $2",
            "SELECT version()",
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM t)",
            "SET search_path = app",
        ] {
            assert!(!is_ping(read), "{read:?}");
        }
    }
}
