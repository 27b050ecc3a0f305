//! The keys a read looks its rows up by: the `column = $n` conditions AND-ed in the outer
//! WHERE, grouped by the relation each column belongs to. Two reads with the same columns on
//! the same relation load the same rows when their parameters are the same.

use sqlparser::ast::{BinaryOperator, Expr, Statement, TableFactor, TableWithJoins};

use super::{Relation, ident_name, key_equality, relation, select_where};

/// The equality columns one read filters one relation by, sorted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct KeyLookup {
    pub relation: Relation,
    pub columns: Vec<String>,
}

/// The key lookups of a plain `SELECT ... FROM ... WHERE` (no UNION, no data change). A bare
/// column counts only when the FROM names one table; a qualified one by its table's name or
/// alias.
pub(super) fn key_lookups(statement: &Statement) -> Vec<KeyLookup> {
    let Some((select, selection)) = select_where(statement) else {
        return Vec::new();
    };
    let mut names: Vec<(String, Relation)> = Vec::new();
    let mut derived = false;
    for table in &select.from {
        named_tables(table, &mut names, &mut derived);
    }
    let only = match (names.as_slice(), derived) {
        ([(_, only)], false) => Some(only.clone()),
        _ => None,
    };
    let mut conjuncts = Vec::new();
    conjuncts_of(selection, &mut conjuncts);
    let mut lookups: Vec<KeyLookup> = Vec::new();
    for (column, _) in conjuncts.into_iter().filter_map(key_equality) {
        let Some((relation, column)) = owner(column, &names, only.as_ref()) else {
            continue;
        };
        match lookups.iter_mut().find(|l| l.relation == relation) {
            Some(lookup) if !lookup.columns.contains(&column) => lookup.columns.push(column),
            Some(_) => {}
            None => lookups.push(KeyLookup {
                relation,
                columns: vec![column],
            }),
        }
    }
    for lookup in &mut lookups {
        lookup.columns.sort();
    }
    lookups.sort();
    lookups
}

/// The tables of one FROM item, by the name a column is qualified with (the alias, or the
/// bare table name); `derived` is set for anything else (a subquery, a function).
fn named_tables(table: &TableWithJoins, names: &mut Vec<(String, Relation)>, derived: &mut bool) {
    let factors = std::iter::once(&table.relation).chain(table.joins.iter().map(|j| &j.relation));
    for factor in factors {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => match relation(name) {
                Some(rel) => {
                    let by = alias
                        .as_ref()
                        .map_or_else(|| rel.name.clone(), |a| ident_name(&a.name));
                    names.push((by, rel));
                }
                None => *derived = true,
            },
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => named_tables(table_with_joins, names, derived),
            _ => *derived = true,
        }
    }
}

/// The relation and column name of a column expression.
fn owner(
    column: &Expr,
    names: &[(String, Relation)],
    only: Option<&Relation>,
) -> Option<(Relation, String)> {
    match column {
        Expr::Identifier(ident) => Some((only?.clone(), ident_name(ident))),
        Expr::CompoundIdentifier(parts) => {
            let (column, qualifiers) = parts.split_last()?;
            let qualifier = ident_name(qualifiers.last()?);
            let (_, rel) = names.iter().find(|(by, _)| *by == qualifier)?;
            Some((rel.clone(), ident_name(column)))
        }
        _ => None,
    }
}

fn conjuncts_of<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts_of(left, out);
            conjuncts_of(right, out);
        }
        Expr::Nested(inner) => conjuncts_of(inner, out),
        _ => out.push(expr),
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape;

    fn keys(sql: &str) -> Vec<(String, Vec<String>)> {
        shape(sql)
            .keys
            .into_iter()
            .map(|k| (k.relation.name, k.columns))
            .collect()
    }

    fn key(table: &str, columns: &[&str]) -> (String, Vec<String>) {
        (
            table.to_string(),
            columns.iter().map(|c| c.to_string()).collect(),
        )
    }

    #[test]
    fn equality_columns_are_read_by_relation() {
        assert_eq!(
            keys("SELECT title FROM events WHERE id = $1"),
            [key("events", &["id"])]
        );
        assert_eq!(
            keys("SELECT * FROM events e WHERE $2 = e.tenant_id AND e.id = $1 AND e.at > now()"),
            [key("events", &["id", "tenant_id"])]
        );
        assert_eq!(
            keys(
                "SELECT u.name FROM users u JOIN orgs o ON o.id = u.org_id \
                 WHERE u.id = $1 AND o.active"
            ),
            [key("users", &["id"])]
        );
        assert_eq!(
            keys("SELECT users.* FROM users WHERE users.id = $1 LIMIT $2"),
            [key("users", &["id"])]
        );
    }

    #[test]
    fn ambiguous_or_absent_keys_are_none() {
        // A bare column in a join may belong to either table.
        assert!(keys("SELECT 1 FROM a JOIN b ON a.id = b.a_id WHERE id = $1").is_empty());
        assert!(keys("SELECT id FROM events WHERE id = $1 OR slug = $2").is_empty());
        assert!(keys("SELECT id FROM events WHERE id IN ($1, $2)").is_empty());
        assert!(keys("SELECT id FROM events").is_empty());
        assert!(keys("UPDATE events SET title = $1 WHERE id = $2").is_empty());
    }
}
