//! Laravel: Eloquent classes (`extends Model`) map to the snake_case plural of their name
//! unless they set `protected $table`.

use super::inflect::table_of_class;
use super::model::{Model, class_on, numbered, quoted};

/// The models one PHP file declares.
pub fn models(uri: &str, text: &str) -> Vec<Model> {
    let mut out = Vec::new();
    let mut current: Option<(String, usize, Option<String>)> = None;
    let finish = |current: Option<(String, usize, Option<String>)>, out: &mut Vec<Model>| {
        if let Some((class, line, table)) = current {
            let table = table.unwrap_or_else(|| table_of_class(&class));
            out.push(Model::new(&table, &class, uri, line));
        }
    };
    for (number, line) in numbered(text) {
        if let Some((class, rest)) = class_on(line) {
            finish(current.take(), &mut out);
            if rest.contains("extends Model") || rest.contains("extends Authenticatable") {
                current = Some((class.to_string(), number, None));
            }
            continue;
        }
        let trimmed = line.trim_start();
        if (trimmed.starts_with("protected $table") || trimmed.starts_with("public $table"))
            && let Some((_, _, table)) = current.as_mut()
        {
            *table = quoted(trimmed).map(str::to_string);
        }
    }
    finish(current, &mut out);
    out
}
