//! TypeScript and JavaScript: TypeORM entities (`@Entity("name")`, `@Entity({ name })`,
//! else the class name in snake_case) and Sequelize models (`tableName`, or
//! `sequelize.define('name'`, pluralised as Sequelize does).

use std::sync::LazyLock;

use regex::Regex;

use super::inflect::{snake_case, table_of_class};
use super::model::{Model, class_on, numbered, quoted};

/// The models one TypeScript or JavaScript file declares.
pub fn models(uri: &str, text: &str) -> Vec<Model> {
    static DEFINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"\.define\(\s*["'`]([^"'`]+)["'`]"#).expect("valid regex"));
    static TABLE_NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"tableName\s*:\s*["'`]([^"'`]+)["'`]"#).expect("valid regex")
    });
    let mut out = Vec::new();
    // An `@Entity(...)` waiting for its class: the name it gives, if any.
    let mut entity: Option<Option<String>> = None;
    // The model a `tableName` further down belongs to: (name, line, index in `out`).
    let mut owner: Option<(String, usize, Option<usize>)> = None;
    for (number, line) in numbered(text) {
        if let Some(arguments) = line.trim_start().strip_prefix("@Entity(") {
            entity = Some(quoted(arguments).map(str::to_string));
        }
        if let Some((class, _)) = class_on(line) {
            let class = class.to_string();
            if let Some(named) = entity.take() {
                let table = named.unwrap_or_else(|| snake_case(&class));
                out.push(Model::new(&table, &class, uri, number));
            }
            owner = Some((class, number, None));
        }
        if let Some(define) = DEFINE.captures(line) {
            let name = define[1].to_string();
            out.push(Model::new(&table_of_class(&name), &name, uri, number));
            owner = Some((name, number, Some(out.len() - 1)));
        }
        if let Some(table) = TABLE_NAME.captures(line)
            && let Some((name, at, defined)) = owner.take()
        {
            let model = Model::new(&table[1], &name, uri, at);
            match defined {
                Some(index) => out[index] = model,
                None => out.push(model),
            }
        }
    }
    out
}
