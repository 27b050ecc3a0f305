//! Prisma: `model X { ... }` in a `.prisma` schema maps to table `X`, or to the name of
//! its `@@map("name")`.

use super::model::{Model, numbered, quoted};

/// The models one Prisma schema declares.
pub fn models(uri: &str, text: &str) -> Vec<Model> {
    let mut out = Vec::new();
    let mut current: Option<(String, usize, Option<String>)> = None;
    for (number, line) in numbered(text) {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("model ") {
            let name = rest.trim_end_matches('{').trim().to_string();
            current = Some((name, number, None));
        } else if let Some(rest) = trimmed.strip_prefix("@@map(") {
            if let Some((_, _, table)) = current.as_mut() {
                *table = quoted(rest).map(str::to_string);
            }
        } else if trimmed.starts_with('}')
            && let Some((name, at, table)) = current.take()
        {
            out.push(Model::new(
                table.as_deref().unwrap_or(&name),
                &name,
                uri,
                at,
            ));
        }
    }
    out
}
