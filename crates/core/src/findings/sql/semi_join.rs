//! Self-semi-joins: `WHERE t.id IN (SELECT t.id FROM t WHERE ...)`, a filter by a list
//! of the same table's keys. Postgres reads the table whole to build the list, however
//! small the answer, and an index on the outer side does not change that.

use sqlparser::ast::{Expr, InTarget, Statement, TableFactor, TableWithJoins};

use super::{Relation, RelationWalk, relation, select_where, visit_expr};

/// The relations a plain `SELECT` reads in its FROM and again inside an `IN (SELECT ...)`
/// of its WHERE, each once, in the order met.
pub(super) fn self_semi_joins(statement: &Statement) -> Vec<Relation> {
    let Some((select, selection)) = select_where(statement) else {
        return Vec::new();
    };
    let outer: Vec<Relation> = select.from.iter().flat_map(named).collect();
    let mut found = Vec::new();
    let mut on_expr = |expr: &Expr| {
        let Expr::In {
            target: InTarget::Subquery(subquery),
            negated: false,
            ..
        } = expr
        else {
            return;
        };
        let mut walk = RelationWalk::default();
        walk.query(subquery);
        for inner in walk.relations {
            if outer.contains(&inner) && !found.contains(&inner) {
                found.push(inner);
            }
        }
    };
    visit_expr(selection, &mut on_expr, &mut |_| {});
    found
}

/// The tables a FROM item names directly, joins included (no derived tables).
fn named(from: &TableWithJoins) -> Vec<Relation> {
    std::iter::once(&from.relation)
        .chain(from.joins.iter().map(|join| &join.relation))
        .filter_map(|factor| match factor {
            TableFactor::Table {
                name, args: None, ..
            } => relation(name),
            _ => None,
        })
        .collect()
}
