//! What a statement's normalized text says about its shape: whether it writes, which
//! tables it reads, and the clauses of its outer SELECT.
//!
//! The text is parsed with `sqlparser` when it parses. When it does not (pg_stat_statements
//! truncates long texts, and a few Postgres forms are beyond the parser), the same facts are
//! read from its tokens, more coarsely.

use sqlparser::ast::{
    BinaryOperator, Expr, FromTable, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr,
    Ident, InTarget, LimitClause, ObjectName, ObjectNamePart, Query, SelectItem, SetExpr,
    Statement, TableFactor, TableObject, TableWithJoins, UpdateTableFromKind, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

mod keys;
mod ping;
mod semi_join;
mod tokens;

pub(crate) use keys::KeyLookup;
pub(crate) use ping::is_ping;

use tokens::{
    calls_side_effect_function, keyed_by_list, lex, mentioned_relations, outer_calls, placeholders,
    text_access, text_outer_select,
};

/// Aggregate functions: an outer query that calls one answers with a summary, not a set.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bool_or",
    "bool_and",
    "every",
    "array_agg",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "string_agg",
    "xmlagg",
    "bit_and",
    "bit_or",
    "bit_xor",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "percentile_cont",
    "percentile_disc",
    "mode",
    "any_value",
];

/// Functions with side effects: a SELECT that calls one is not a pure read.
const SIDE_EFFECT_PREFIXES: &[&str] = &["nextval", "setval", "pg_advisory", "pg_notify"];

/// A table name as written in the statement, folded as Postgres folds it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Relation {
    pub schema: Option<String>,
    pub name: String,
}

impl Relation {
    /// Whether this name designates `table`, given as `schema.table`. An unqualified name
    /// matches the bare table name in any schema.
    pub fn designates(&self, table: &str) -> bool {
        let (schema, name) = match table.rsplit_once('.') {
            Some((schema, name)) => (Some(schema), name),
            None => (None, table),
        };
        self.name == name
            && match (&self.schema, schema) {
                (Some(ours), Some(theirs)) => ours == theirs,
                _ => true,
            }
    }
}

/// Whether the statement changes data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// A SELECT (or VALUES, TABLE) with no side effects.
    Read,
    /// INSERT, UPDATE, DELETE, MERGE, a data-modifying CTE, a locking SELECT (`FOR
    /// UPDATE` writes the row's lock) or a call to `nextval` and the like.
    Write,
    /// Anything else: CALL, COPY, DDL.
    Other,
}

/// The outer query of a plain `SELECT ... FROM ...` (no UNION).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OuterSelect {
    /// An aggregate in the select list, or a HAVING clause.
    pub aggregate: bool,
    /// An EXISTS in the select list: the statement is already a probe.
    pub exists: bool,
    pub group_by: bool,
    /// LIMIT, OFFSET or FETCH FIRST: the statement returns a page.
    pub limit: bool,
    /// The FROM clause as SQL text.
    pub from: String,
    /// The WHERE condition as SQL text, parenthesized when it would bind looser than AND.
    pub filter: Option<String>,
}

/// Everything the findings need to know about one statement text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    /// False when the text did not parse and the rest was read from tokens.
    pub parsed: bool,
    pub access: Access,
    /// Relations read or written, from the parsed tree (CTE names excluded). Empty when
    /// the text did not parse.
    pub relations: Vec<Relation>,
    /// Names that follow FROM, JOIN, UPDATE or INTO in the tokens. Coarse (an
    /// `EXTRACT(x FROM col)` yields `col`), so only names of known tables count.
    pub mentioned: Vec<Relation>,
    pub outer: Option<OuterSelect>,
    /// A SELECT with its one `column = $n` condition turned into `column = ANY($n)`.
    pub batched: Option<String>,
    /// Distinct `$n` placeholders: parameters, or constants pg_stat_statements replaced.
    /// None means every call computes the same answer from the same data.
    pub placeholders: usize,
    /// It looks rows up by a list of keys, `IN ($1, $2, ...)` or `= ANY($1)`: a batch
    /// load, whose rows the caller uses.
    pub keyed_by_list: bool,
    /// The outer select list calls `count(...)`.
    pub counts: bool,
    /// The `column = $n` lookups of its outer WHERE, by relation; empty when the text did
    /// not parse.
    pub keys: Vec<KeyLookup>,
    /// Tables its FROM reads and its WHERE reads again in an `IN (SELECT ...)`: the list
    /// of keys takes a whole read of the table. Empty when the text did not parse.
    pub self_semi_joins: Vec<Relation>,
}

/// Reads the shape of one normalized statement text.
pub(crate) fn shape(sql: &str) -> Shape {
    let tokens = lex(sql);
    let mentioned = mentioned_relations(&tokens);
    let side_effects = calls_side_effect_function(&tokens);
    let placeholders = placeholders(&tokens);
    let keyed_by_list = keyed_by_list(&tokens);
    let counts = outer_calls(&tokens, "count");
    let upgrade = |access: Access| {
        if side_effects && access == Access::Read {
            Access::Write
        } else {
            access
        }
    };
    match parse(sql) {
        Some(statement) => {
            let mut walk = RelationWalk::default();
            walk.statement(&statement);
            Shape {
                parsed: true,
                access: upgrade(statement_access(&statement)),
                relations: walk.relations,
                mentioned,
                outer: outer_select(&statement),
                batched: batched(&statement),
                placeholders,
                keyed_by_list,
                counts,
                keys: keys::key_lookups(&statement),
                self_semi_joins: semi_join::self_semi_joins(&statement),
            }
        }
        None => Shape {
            parsed: false,
            access: upgrade(text_access(&tokens)),
            relations: Vec::new(),
            mentioned,
            outer: text_outer_select(&tokens),
            batched: None,
            placeholders,
            keyed_by_list,
            counts,
            keys: Vec::new(),
            self_semi_joins: Vec::new(),
        },
    }
}

/// Whether the text parses as exactly one statement.
pub(crate) fn parses(sql: &str) -> bool {
    parse(sql).is_some()
}

fn parse(sql: &str) -> Option<Statement> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    if statements.len() == 1 {
        statements.pop()
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------
// The parsed path.

/// The outer `SELECT` of a plain query (no UNION, no data change) and its WHERE.
fn select_where(statement: &Statement) -> Option<(&sqlparser::ast::Select, &Expr)> {
    let Statement::Query(query) = statement else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    Some((select, select.selection.as_ref()?))
}

fn statement_access(statement: &Statement) -> Access {
    match statement {
        Statement::Query(query) if query_writes(query) || !query.locks.is_empty() => Access::Write,
        Statement::Query(_) => Access::Read,
        Statement::Insert(_)
        | Statement::Update(_)
        | Statement::Delete(_)
        | Statement::Merge(_) => Access::Write,
        _ => Access::Other,
    }
}

fn query_writes(query: &Query) -> bool {
    let in_ctes = query
        .with
        .as_ref()
        .is_some_and(|with| with.cte_tables.iter().any(|cte| query_writes(&cte.query)));
    in_ctes || set_expr_writes(&query.body)
}

fn set_expr_writes(body: &SetExpr) -> bool {
    match body {
        SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => true,
        SetExpr::Query(query) => query_writes(query),
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_writes(left) || set_expr_writes(right)
        }
        _ => false,
    }
}

/// Collects the relations a statement touches, through joins, derived tables, CTEs and
/// subqueries in expressions.
#[derive(Default)]
struct RelationWalk {
    relations: Vec<Relation>,
    cte_names: Vec<String>,
}

impl RelationWalk {
    fn statement(&mut self, statement: &Statement) {
        match statement {
            Statement::Query(query) => self.query(query),
            Statement::Insert(insert) => {
                if let TableObject::TableName(name) = &insert.table {
                    self.name(name);
                }
                if let Some(source) = &insert.source {
                    self.query(source);
                }
            }
            Statement::Update(update) => {
                self.table_with_joins(&update.table);
                if let Some(
                    UpdateTableFromKind::BeforeSet(from) | UpdateTableFromKind::AfterSet(from),
                ) = &update.from
                {
                    from.iter().for_each(|t| self.table_with_joins(t));
                }
                if let Some(selection) = &update.selection {
                    self.expr(selection);
                }
            }
            Statement::Delete(delete) => {
                let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) =
                    &delete.from;
                from.iter().for_each(|t| self.table_with_joins(t));
                for t in delete.using.iter().flatten() {
                    self.table_with_joins(t);
                }
                if let Some(selection) = &delete.selection {
                    self.expr(selection);
                }
            }
            _ => {}
        }
    }

    fn query(&mut self, query: &Query) {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.cte_names.push(ident_name(&cte.alias.name));
                self.query(&cte.query);
            }
        }
        self.set_expr(&query.body);
    }

    fn set_expr(&mut self, body: &SetExpr) {
        match body {
            SetExpr::Select(select) => {
                select.from.iter().for_each(|t| self.table_with_joins(t));
                for e in select.projection.iter().filter_map(select_item_expr) {
                    self.expr(e);
                }
                for e in select.selection.iter().chain(&select.having) {
                    self.expr(e);
                }
            }
            SetExpr::Query(query) => self.query(query),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left);
                self.set_expr(right);
            }
            SetExpr::Values(values) => values
                .rows
                .iter()
                .flat_map(|row| row.content.iter())
                .for_each(|e| self.expr(e)),
            SetExpr::Insert(statement)
            | SetExpr::Update(statement)
            | SetExpr::Delete(statement)
            | SetExpr::Merge(statement) => self.statement(statement),
            SetExpr::Table(table) => {
                if let Some(name) = &table.table_name {
                    self.push(Relation {
                        schema: table.schema_name.as_ref().map(ident_name),
                        name: ident_name(name),
                    });
                }
            }
        }
    }

    fn table_with_joins(&mut self, table: &TableWithJoins) {
        self.table_factor(&table.relation);
        table
            .joins
            .iter()
            .for_each(|join| self.table_factor(&join.relation));
    }

    fn table_factor(&mut self, factor: &TableFactor) {
        match factor {
            // With arguments it is a set-returning function, not a table.
            TableFactor::Table {
                name, args: None, ..
            } => self.name(name),
            TableFactor::Derived { subquery, .. } => self.query(subquery),
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.table_with_joins(table_with_joins),
            _ => {}
        }
    }

    fn expr(&mut self, expr: &Expr) {
        let mut subqueries = Vec::new();
        visit_expr(expr, &mut |_| {}, &mut |q| subqueries.push(q));
        subqueries.into_iter().for_each(|q| self.query(q));
    }

    fn name(&mut self, name: &ObjectName) {
        if let Some(relation) = relation(name) {
            self.push(relation);
        }
    }

    fn push(&mut self, relation: Relation) {
        let is_cte = relation.schema.is_none() && self.cte_names.contains(&relation.name);
        if !is_cte && !self.relations.contains(&relation) {
            self.relations.push(relation);
        }
    }
}

/// Postgres folds unquoted identifiers to lower case.
fn ident_name(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    }
}

fn relation(name: &ObjectName) -> Option<Relation> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => Some(ident_name(ident)),
            ObjectNamePart::Function(_) => None,
        })
        .collect::<Option<_>>()?;
    let (name, qualifiers) = parts.split_last()?;
    Some(Relation {
        schema: qualifiers.last().cloned(),
        name: name.clone(),
    })
}

fn select_item_expr(item: &SelectItem) -> Option<&Expr> {
    match item {
        SelectItem::UnnamedExpr(expr)
        | SelectItem::ExprWithAlias { expr, .. }
        | SelectItem::ExprWithAliases { expr, .. } => Some(expr),
        _ => None,
    }
}

/// Calls `on_expr` for `expr` and every expression nested in it, and `on_query` for each
/// subquery met on the way (without entering it).
fn visit_expr<'a>(
    expr: &'a Expr,
    on_expr: &mut dyn FnMut(&'a Expr),
    on_query: &mut dyn FnMut(&'a Query),
) {
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        on_expr(expr);
        push_operands(expr, &mut stack, on_query);
    }
}

/// Pushes the expressions directly inside `expr` onto `stack`, and hands its subqueries to
/// `on_query`. The order matters: relations are listed in the order the walk meets them.
fn push_operands<'a>(
    expr: &'a Expr,
    stack: &mut Vec<&'a Expr>,
    on_query: &mut dyn FnMut(&'a Query),
) {
    match expr {
        Expr::In { expr, target, .. } => {
            stack.push(expr);
            match target {
                InTarget::List(list) => stack.extend(list),
                InTarget::Subquery(query) => on_query(query),
                InTarget::Unnest(e) => stack.push(e),
                InTarget::Table { .. } => {}
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => stack.extend([&**expr, &**low, &**high]),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            stack.extend(operand.as_deref());
            for when in conditions {
                stack.extend([&when.condition, &when.result]);
            }
            stack.extend(else_result.as_deref());
        }
        Expr::Exists { subquery, .. } | Expr::Subquery(subquery) => on_query(subquery),
        Expr::Function(function) => {
            for arguments in [&function.args, &function.parameters] {
                match arguments {
                    FunctionArguments::None => {}
                    FunctionArguments::Subquery(query) => on_query(query),
                    FunctionArguments::List(list) => {
                        stack.extend(list.args.iter().filter_map(function_arg_expr))
                    }
                }
            }
            stack.extend(function.filter.as_deref());
        }
        Expr::Tuple(items) => stack.extend(items),
        Expr::Array(array) => stack.extend(&array.elem),
        _ => {
            if let Some(operand) = sole_operand(expr) {
                stack.push(operand);
            } else if let Some((left, right)) = operand_pair(expr) {
                stack.extend([left, right]);
            } else {
                push_string_operands(expr, stack);
            }
        }
    }
}

/// The operand of a form that wraps exactly one expression.
fn sole_operand(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::IsFalse(e)
        | Expr::IsNotFalse(e)
        | Expr::IsTrue(e)
        | Expr::IsNotTrue(e)
        | Expr::IsNull(e)
        | Expr::IsNotNull(e)
        | Expr::IsUnknown(e)
        | Expr::IsNotUnknown(e)
        | Expr::Nested(e)
        | Expr::UnaryOp { expr: e, .. }
        | Expr::Cast { expr: e, .. }
        | Expr::Collate { expr: e, .. }
        | Expr::Extract { expr: e, .. }
        | Expr::Ceil { expr: e, .. }
        | Expr::Floor { expr: e, .. }
        | Expr::Named { expr: e, .. }
        | Expr::JsonAccess { value: e, .. }
        | Expr::CompoundFieldAccess { root: e, .. } => Some(e),
        _ => None,
    }
}

/// The two operands of a form that combines exactly two expressions.
fn operand_pair(expr: &Expr) -> Option<(&Expr, &Expr)> {
    match expr {
        Expr::IsDistinctFrom(a, b)
        | Expr::IsNotDistinctFrom(a, b)
        | Expr::BinaryOp {
            left: a, right: b, ..
        }
        | Expr::AnyOp {
            left: a, right: b, ..
        }
        | Expr::AllOp {
            left: a, right: b, ..
        }
        | Expr::AtTimeZone {
            timestamp: a,
            time_zone: b,
        }
        | Expr::Position { expr: a, r#in: b } => Some((a, b)),
        _ => None,
    }
}

/// Pushes the operands of the pattern matches and string functions (LIKE, ILIKE, SIMILAR
/// TO, SUBSTRING, TRIM) onto `stack`; other forms push nothing.
fn push_string_operands<'a>(expr: &'a Expr, stack: &mut Vec<&'a Expr>) {
    match expr {
        Expr::Like {
            expr,
            pattern,
            escape_char,
            ..
        }
        | Expr::ILike {
            expr,
            pattern,
            escape_char,
            ..
        }
        | Expr::SimilarTo {
            expr,
            pattern,
            escape_char,
            ..
        } => {
            stack.extend([&**expr, &**pattern]);
            stack.extend(escape_char.as_deref());
        }
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            stack.push(expr);
            stack.extend(substring_from.as_deref());
            stack.extend(substring_for.as_deref());
        }
        Expr::Trim {
            expr, trim_what, ..
        } => {
            stack.push(expr);
            stack.extend(trim_what.as_deref());
        }
        _ => {}
    }
}

fn function_arg_expr(arg: &FunctionArg) -> Option<&Expr> {
    let (FunctionArg::Named { arg, .. }
    | FunctionArg::ExprNamed { arg, .. }
    | FunctionArg::Unnamed(arg)) = arg;
    match arg {
        FunctionArgExpr::Expr(expr) => Some(expr),
        _ => None,
    }
}

/// Whether the expression calls an aggregate at its own level (subqueries and window
/// calls such as `count(*) OVER ()` do not count: they do not reduce the outer rows).
fn has_aggregate(expr: &Expr) -> bool {
    let mut found = false;
    visit_expr(
        expr,
        &mut |e| {
            if let Expr::Function(function) = e {
                let name = function
                    .name
                    .0
                    .last()
                    .and_then(|part| part.as_ident())
                    .map(|ident| ident.value.to_lowercase())
                    .unwrap_or_default();
                let aggregate = AGGREGATES.contains(&name.as_str())
                    || name.ends_with("_agg")
                    || !function.within_group.is_empty()
                    || function.filter.is_some();
                found |= aggregate && function.over.is_none();
            }
        },
        &mut |_| {},
    );
    found
}

fn has_exists(expr: &Expr) -> bool {
    let mut found = false;
    visit_expr(
        expr,
        &mut |e| found |= matches!(e, Expr::Exists { .. }),
        &mut |_| {},
    );
    found
}

fn outer_select(statement: &Statement) -> Option<OuterSelect> {
    let Statement::Query(query) = statement else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    if select.from.is_empty() {
        return None;
    }
    let projection: Vec<&Expr> = (select.projection.iter())
        .filter_map(select_item_expr)
        .collect();
    let limit = match &query.limit_clause {
        Some(LimitClause::LimitOffset { limit, offset, .. }) => limit.is_some() || offset.is_some(),
        Some(LimitClause::OffsetCommaLimit { .. }) => true,
        None => false,
    } || query.fetch.is_some();
    Some(OuterSelect {
        aggregate: select.having.is_some() || projection.iter().any(|e| has_aggregate(e)),
        exists: projection.iter().any(|e| has_exists(e)),
        group_by: match &select.group_by {
            GroupByExpr::All(_) => true,
            GroupByExpr::Expressions(exprs, _) => !exprs.is_empty(),
        },
        limit,
        from: select
            .from
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        filter: select.selection.as_ref().map(|e| {
            let binds_looser_than_and = matches!(
                e,
                Expr::BinaryOp {
                    op: BinaryOperator::Or,
                    ..
                }
            );
            if binds_looser_than_and {
                format!("({e})")
            } else {
                e.to_string()
            }
        }),
    })
}

/// The SELECT with its single `column = $n` condition (among the AND-ed conditions of the
/// outer WHERE) turned into `column = ANY($n)`, so one call serves every key.
fn batched(statement: &Statement) -> Option<String> {
    // Only reads: a write per item usually carries values per item, which `= ANY` loses.
    let mut statement = statement.clone();
    let selection = match &mut statement {
        Statement::Query(query) if query.locks.is_empty() => match query.body.as_mut() {
            SetExpr::Select(select) => select.selection.as_mut()?,
            _ => return None,
        },
        _ => return None,
    };
    let mut conjuncts = Vec::new();
    conjuncts_mut(selection, &mut conjuncts);
    let mut keyed: Vec<&mut Expr> = conjuncts
        .into_iter()
        .filter(|e| key_equality(e).is_some())
        .collect();
    if keyed.len() != 1 {
        return None;
    }
    let condition = keyed.pop()?;
    let (column, placeholder) = key_equality(condition)?;
    *condition = Expr::AnyOp {
        left: Box::new(column.clone()),
        compare_op: BinaryOperator::Eq,
        right: Box::new(placeholder.clone()),
        is_some: false,
    };
    Some(statement.to_string())
}

fn conjuncts_mut<'a>(expr: &'a mut Expr, out: &mut Vec<&'a mut Expr>) {
    if let Expr::BinaryOp {
        left,
        op: BinaryOperator::And,
        right,
    } = expr
    {
        conjuncts_mut(left, out);
        conjuncts_mut(right, out);
    } else {
        out.push(expr);
    }
}

/// `column = $n` or `$n = column`, as (column, placeholder).
fn key_equality(expr: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = expr
    else {
        return None;
    };
    let is_column = |e: &Expr| matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_));
    let is_placeholder =
        |e: &Expr| matches!(e, Expr::Value(v) if matches!(v.value, Value::Placeholder(_)));
    if is_column(left) && is_placeholder(right) {
        Some((left, right))
    } else if is_placeholder(left) && is_column(right) {
        Some((right, left))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(schema: Option<&str>, name: &str) -> Relation {
        Relation {
            schema: schema.map(str::to_string),
            name: name.to_string(),
        }
    }

    #[test]
    fn placeholders_parse() {
        let s = shape("SELECT id, title FROM items WHERE owner_id = $1 AND status = $2 LIMIT $3");
        assert!(s.parsed);
        assert_eq!(s.access, Access::Read);
        assert_eq!(s.relations, vec![relation(None, "items")]);
        assert!(s.outer.unwrap().limit);
    }

    #[test]
    fn relations_come_through_joins_subqueries_and_ctes() {
        let s = shape(
            "WITH mine AS (SELECT project_id FROM app.members WHERE user_id = $1) \
             SELECT p.id FROM projects p JOIN mine ON mine.project_id = p.id \
             WHERE p.tenant_id IN (SELECT id FROM \"Tenants\" WHERE active)",
        );
        assert!(s.parsed);
        assert_eq!(
            s.relations,
            vec![
                relation(Some("app"), "members"),
                relation(None, "projects"),
                relation(None, "Tenants"),
            ]
        );
        assert!(relation(Some("app"), "members").designates("app.members"));
        assert!(relation(None, "projects").designates("public.projects"));
        assert!(!relation(Some("app"), "projects").designates("public.projects"));
    }

    #[test]
    fn writes_are_recognized() {
        for sql in [
            "INSERT INTO audit (user_id, at) VALUES ($1, now())",
            "UPDATE sessions SET seen_at = now() WHERE id = $1",
            "DELETE FROM carts WHERE id = $1",
            "WITH gone AS (DELETE FROM carts WHERE id = $1 RETURNING *) SELECT count(*) FROM gone",
            "SELECT id FROM jobs WHERE state = $1 FOR UPDATE SKIP LOCKED",
            "SELECT nextval($1)",
        ] {
            assert_eq!(shape(sql).access, Access::Write, "{sql}");
        }
        assert_eq!(shape("SELECT id FROM jobs").access, Access::Read);
    }

    #[test]
    fn aggregates_and_probes_of_the_outer_query() {
        let outer = |sql: &str| shape(sql).outer.unwrap();
        assert!(outer("SELECT count(*) FROM items WHERE owner_id = $1").aggregate);
        assert!(outer("SELECT owner_id, max(at) FROM items GROUP BY owner_id").group_by);
        assert!(outer("SELECT EXISTS (SELECT 1 FROM items) FROM tenants WHERE id = $1").exists);
        let windowed = outer("SELECT id, count(*) OVER () FROM items WHERE owner_id = $1");
        assert!(!windowed.aggregate);
        let nested = outer(
            "SELECT i.id FROM items i WHERE i.price > (SELECT avg(price) FROM items) AND i.x = $1",
        );
        assert!(!nested.aggregate && !nested.exists && !nested.limit && !nested.group_by);
    }

    #[test]
    fn from_and_filter_text() {
        let o = shape(
            "SELECT g.action FROM group_grants g JOIN group_members m ON m.group_id = g.group_id \
             WHERE m.user_id = $1",
        )
        .outer
        .unwrap();
        assert_eq!(
            o.from,
            "group_grants g JOIN group_members m ON m.group_id = g.group_id"
        );
        assert_eq!(o.filter.as_deref(), Some("m.user_id = $1"));
        let or = shape("SELECT id FROM t WHERE a = $1 OR b = $2")
            .outer
            .unwrap();
        assert_eq!(or.filter.as_deref(), Some("(a = $1 OR b = $2)"));
    }

    #[test]
    fn one_key_condition_becomes_any() {
        let s = shape("SELECT id, name FROM users WHERE id = $1 AND deleted_at IS NULL");
        assert_eq!(
            s.batched.as_deref(),
            Some("SELECT id, name FROM users WHERE id = ANY($1) AND deleted_at IS NULL")
        );
        let two_keys = shape("SELECT 1 FROM members WHERE user_id = $1 AND project_id = $2");
        assert_eq!(two_keys.batched, None);
    }

    #[test]
    fn truncated_text_is_read_from_tokens() {
        let s = shape(
            "SELECT r.name FROM roles r, role_members rm WHERE rm.role_id = r.id AND rm.user_id = $1 AND (r.scope = '",
        );
        assert!(!s.parsed);
        assert_eq!(s.access, Access::Read);
        assert_eq!(
            s.mentioned,
            vec![relation(None, "roles"), relation(None, "role_members")]
        );
        let o = s.outer.unwrap();
        assert_eq!(o.from, "roles r, role_members rm");
        assert!(!o.aggregate && !o.limit && !o.group_by && !o.exists);
        assert!(
            o.filter
                .unwrap()
                .starts_with("rm.role_id = r.id AND rm.user_id = $1")
        );
    }

    #[test]
    fn token_scan_reads_clauses_of_the_outer_query_only() {
        let tokens = lex("SELECT count(*) FROM (SELECT id FROM items LIMIT $1) s WHERE (");
        let o = text_outer_select(&tokens).unwrap();
        assert!(o.aggregate);
        assert!(!o.limit, "the LIMIT belongs to the subquery");
        assert_eq!(
            text_access(&lex("UPDATE t SET a = $1 WHERE (")),
            Access::Write
        );
        assert_eq!(
            mentioned_relations(&lex("SELECT a FROM t WHERE a IS DISTINCT FROM b")),
            vec![relation(None, "t")]
        );
    }
}
