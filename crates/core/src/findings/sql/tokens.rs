//! The token path of the SQL reader, for texts that do not parse (truncated by
//! `track_activity_query_size`, or beyond the parser): tokens with their parenthesis depth,
//! and the access, placeholders, relations and outer select read from them.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, Tokenizer, Whitespace};

use super::*;

/// A token and its parenthesis depth (an opening parenthesis sits at the outer depth).
#[derive(Debug, Clone)]
pub(super) struct Lexeme {
    token: Token,
    depth: usize,
}

impl Lexeme {
    fn keyword(&self) -> Option<Keyword> {
        match &self.token {
            Token::Word(word)
                if word.quote_style.is_none() && word.keyword != Keyword::NoKeyword =>
            {
                Some(word.keyword)
            }
            _ => None,
        }
    }

    fn is_keyword(&self, keyword: Keyword) -> bool {
        self.keyword() == Some(keyword)
    }

    fn is_whitespace(&self) -> bool {
        matches!(self.token, Token::Whitespace(_))
    }
}

/// The text's tokens with comments turned into spaces. A truncated text (an unterminated
/// literal or quoted name) yields the tokens before the break.
pub(super) fn lex(sql: &str) -> Vec<Lexeme> {
    let dialect = PostgreSqlDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize() {
        Ok(tokens) => tokens,
        Err(error) => {
            let prefix = &sql[..byte_offset(sql, error.location)];
            Tokenizer::new(&dialect, prefix)
                .tokenize()
                .unwrap_or_default()
        }
    };
    let mut depth = 0usize;
    tokens
        .into_iter()
        .map(|token| {
            let token = match token {
                Token::Whitespace(Whitespace::SingleLineComment { .. })
                | Token::Whitespace(Whitespace::MultiLineComment(_)) => {
                    Token::Whitespace(Whitespace::Space)
                }
                other => other,
            };
            let at = match token {
                Token::LParen => {
                    depth += 1;
                    depth - 1
                }
                Token::RParen => {
                    depth = depth.saturating_sub(1);
                    depth
                }
                _ => depth,
            };
            Lexeme { token, depth: at }
        })
        .collect()
}

/// The byte offset of a 1-based line and column (counted in characters).
pub(super) fn byte_offset(sql: &str, location: Location) -> usize {
    let mut line = 1;
    let mut column = 1;
    for (offset, c) in sql.char_indices() {
        if line == location.line && column == location.column {
            return offset;
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    sql.len()
}

/// Indexes of the tokens that are not whitespace.
pub(super) fn significant(tokens: &[Lexeme]) -> Vec<usize> {
    (0..tokens.len())
        .filter(|&i| !tokens[i].is_whitespace())
        .collect()
}

pub(super) fn text_access(tokens: &[Lexeme]) -> Access {
    let Some(first) = tokens.iter().find(|t| !t.is_whitespace()) else {
        return Access::Other;
    };
    let writes = |t: &Lexeme| {
        [
            Keyword::INSERT,
            Keyword::UPDATE,
            Keyword::DELETE,
            Keyword::MERGE,
        ]
        .iter()
        .any(|&k| t.is_keyword(k))
    };
    match first.keyword() {
        Some(Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::TABLE) => {
            // A data-modifying CTE, or FOR UPDATE.
            if tokens.iter().any(writes) {
                Access::Write
            } else {
                Access::Read
            }
        }
        _ if writes(first) => Access::Write,
        _ => Access::Other,
    }
}

pub(super) fn calls_side_effect_function(tokens: &[Lexeme]) -> bool {
    let sig = significant(tokens);
    sig.windows(2).any(|pair| {
        let called = matches!(tokens[pair[1]].token, Token::LParen);
        match &tokens[pair[0]].token {
            Token::Word(word) if called => {
                let name = word.value.to_lowercase();
                SIDE_EFFECT_PREFIXES.iter().any(|p| name.starts_with(p))
            }
            _ => false,
        }
    })
}

/// How many distinct `$n` placeholders the text has.
pub(super) fn placeholders(tokens: &[Lexeme]) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for t in tokens {
        if let Token::Placeholder(p) = &t.token
            && !seen.contains(&p.as_str())
        {
            seen.push(p);
        }
    }
    seen.len()
}

/// `IN ($1, ..., $n)` (placeholders only), its row constructors `IN (($1), ($2))` or
/// `IN (($1, $2), ($3, $4))` (Django 6.1), or `ANY ($n)`: a lookup by a list of keys.
pub(super) fn keyed_by_list(tokens: &[Lexeme]) -> bool {
    let sig = significant(tokens);
    let token = |k: usize| sig.get(k).map(|&j| &tokens[j].token);
    // The end of a list of placeholders that starts at `k`, at its closing parenthesis.
    let placeholders_from = |mut k: usize| loop {
        match token(k) {
            Some(Token::Placeholder(_)) => k += 1,
            _ => return None,
        }
        match token(k) {
            Some(Token::Comma) => k += 1,
            Some(Token::RParen) => return Some(k),
            _ => return None,
        }
    };
    (0..sig.len()).any(|i| {
        let opens_list = (sig.get(i)).is_some_and(|&j| {
            let t = &tokens[j];
            t.is_keyword(Keyword::IN) || t.is_keyword(Keyword::ANY) || t.is_keyword(Keyword::SOME)
        }) && token(i + 1) == Some(&Token::LParen);
        if !opens_list {
            return false;
        }
        if token(i + 2) != Some(&Token::LParen) {
            return placeholders_from(i + 2).is_some();
        }
        let mut k = i + 2;
        loop {
            let Some(end) = (token(k) == Some(&Token::LParen))
                .then(|| placeholders_from(k + 1))
                .flatten()
            else {
                return false;
            };
            match token(end + 1) {
                Some(Token::Comma) => k = end + 2,
                Some(Token::RParen) => return true,
                _ => return false,
            }
        }
    })
}

/// Whether the outer query (depth 0) calls the function `name`.
pub(super) fn outer_calls(tokens: &[Lexeme], name: &str) -> bool {
    let sig = significant(tokens);
    sig.windows(2).any(|pair| {
        let (word, next) = (&tokens[pair[0]], &tokens[pair[1]]);
        word.depth == 0
            && next.token == Token::LParen
            && matches!(&word.token, Token::Word(w) if w.value.eq_ignore_ascii_case(name))
    })
}

/// Names that follow FROM, JOIN, UPDATE or INTO, and further names of a comma-separated
/// FROM list.
pub(super) fn mentioned_relations(tokens: &[Lexeme]) -> Vec<Relation> {
    let sig = significant(tokens);
    let mut found: Vec<Relation> = Vec::new();
    let mut expect_name = false;
    let mut from_list_depth: Option<usize> = None;
    let mut i = 0;
    while i < sig.len() {
        let token = &tokens[sig[i]];
        let introduces = [Keyword::FROM, Keyword::JOIN, Keyword::UPDATE, Keyword::INTO]
            .iter()
            .any(|&k| token.is_keyword(k));
        let after_distinct = i > 0 && tokens[sig[i - 1]].is_keyword(Keyword::DISTINCT);
        if introduces && !after_distinct {
            expect_name = true;
            from_list_depth = None;
            i += 1;
            continue;
        }
        if expect_name {
            if token.is_keyword(Keyword::ONLY) || token.is_keyword(Keyword::LATERAL) {
                i += 1;
                continue;
            }
            expect_name = false;
            if let Some((relation, next)) = dotted_name(tokens, &sig, i) {
                let is_function = sig
                    .get(next)
                    .is_some_and(|&j| matches!(tokens[j].token, Token::LParen));
                if !is_function {
                    if !found.contains(&relation) {
                        found.push(relation);
                    }
                    from_list_depth = Some(token.depth);
                }
                i = next;
                continue;
            }
        }
        if let Some(depth) = from_list_depth {
            if token.depth == depth && matches!(token.token, Token::Comma) {
                expect_name = true;
            } else if token.depth < depth
                || (token.depth == depth
                    && token.keyword().is_some()
                    && !token.is_keyword(Keyword::AS))
            {
                from_list_depth = None;
            }
        }
        i += 1;
    }
    found
}

/// The name `a` or `a.b` starting at significant index `i`, and the index after it.
pub(super) fn dotted_name(tokens: &[Lexeme], sig: &[usize], i: usize) -> Option<(Relation, usize)> {
    let word = |k: usize| match sig.get(k).map(|&j| &tokens[j].token) {
        Some(Token::Word(word)) => Some(match word.quote_style {
            Some(_) => word.value.clone(),
            None => word.value.to_lowercase(),
        }),
        _ => None,
    };
    let is_period = |k: usize| {
        sig.get(k)
            .is_some_and(|&j| tokens[j].token == Token::Period)
    };
    let mut parts = vec![word(i)?];
    let mut next = i + 1;
    while is_period(next) {
        parts.push(word(next + 1)?);
        next += 2;
    }
    let name = parts.pop()?;
    Some((
        Relation {
            schema: parts.pop(),
            name,
        },
        next,
    ))
}

/// Clauses that end a FROM or WHERE clause.
const CLAUSE_ENDS: &[Keyword] = &[
    Keyword::GROUP,
    Keyword::HAVING,
    Keyword::WINDOW,
    Keyword::ORDER,
    Keyword::LIMIT,
    Keyword::OFFSET,
    Keyword::FETCH,
    Keyword::FOR,
    Keyword::UNION,
    Keyword::INTERSECT,
    Keyword::EXCEPT,
    Keyword::RETURNING,
];

pub(super) fn text_outer_select(tokens: &[Lexeme]) -> Option<OuterSelect> {
    let sig = significant(tokens);
    let first = tokens[*sig.first()?].keyword()?;
    if !matches!(first, Keyword::SELECT | Keyword::WITH) {
        return None;
    }
    let outer: Vec<usize> = sig
        .iter()
        .copied()
        .filter(|&i| tokens[i].depth == 0)
        .collect();
    let is = |i: usize, k: Keyword| tokens[i].is_keyword(k);
    if outer
        .iter()
        .any(|&i| is(i, Keyword::UNION) || is(i, Keyword::INTERSECT) || is(i, Keyword::EXCEPT))
    {
        return None;
    }
    let select = outer.iter().position(|&i| is(i, Keyword::SELECT))?;
    let from = select + outer[select..].iter().position(|&i| is(i, Keyword::FROM))?;
    let ends_clause =
        |i: usize| CLAUSE_ENDS.iter().any(|&k| is(i, k)) || tokens[i].token == Token::SemiColon;
    let from_end = outer[from + 1..]
        .iter()
        .position(|&i| is(i, Keyword::WHERE) || ends_clause(i))
        .map_or(outer.len(), |p| from + 1 + p);
    let filter = (from_end < outer.len() && is(outer[from_end], Keyword::WHERE)).then(|| {
        let end = outer[from_end + 1..]
            .iter()
            .position(|&i| ends_clause(i))
            .map_or(outer.len(), |p| from_end + 1 + p);
        let text = text_between(tokens, outer[from_end] + 1, outer.get(end).copied());
        let has_or = outer[from_end + 1..end].iter().any(|&i| is(i, Keyword::OR));
        if has_or { format!("({text})") } else { text }
    });
    let select_list = &outer[select + 1..from];
    let calls_aggregate = select_list.iter().any(|&i| match &tokens[i].token {
        Token::Word(word) => {
            let name = word.value.to_lowercase();
            let called = tokens[i + 1..]
                .iter()
                .find(|t| !t.is_whitespace())
                .is_some_and(|t| t.token == Token::LParen);
            called && (AGGREGATES.contains(&name.as_str()) || name.ends_with("_agg"))
        }
        _ => false,
    });
    let after_from = &outer[from..];
    Some(OuterSelect {
        aggregate: calls_aggregate || after_from.iter().any(|&i| is(i, Keyword::HAVING)),
        exists: select_list.iter().any(|&i| is(i, Keyword::EXISTS)),
        group_by: after_from.iter().any(|&i| is(i, Keyword::GROUP)),
        limit: after_from
            .iter()
            .any(|&i| is(i, Keyword::LIMIT) || is(i, Keyword::OFFSET) || is(i, Keyword::FETCH)),
        from: text_between(tokens, outer[from] + 1, outer.get(from_end).copied()),
        filter,
    })
}

/// The text of tokens `start..end` (to the end when `end` is None), spaces collapsed.
pub(super) fn text_between(tokens: &[Lexeme], start: usize, end: Option<usize>) -> String {
    let end = end.unwrap_or(tokens.len());
    let text: String = tokens[start.min(end)..end]
        .iter()
        .map(|t| t.token.to_string())
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
