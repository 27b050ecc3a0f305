//! Rails: the ActiveRecord classes of `app/models`. A class maps to the plural of its
//! name (`CustomValue` → `custom_values`) unless it sets `self.table_name`.

use super::inflect::table_of_class;
use super::model::{Model, class_on, numbered, quoted};

/// The models one Ruby file under `app/models` declares.
pub fn models(uri: &str, text: &str) -> Vec<Model> {
    let mut out = Vec::new();
    // (class, line, whether a table name was set) of the class being read.
    let mut current: Option<(String, usize, bool)> = None;
    let finish = |current: Option<(String, usize, bool)>, out: &mut Vec<Model>| {
        if let Some((class, line, false)) = current {
            out.push(Model::new(&table_of_class(&class), &class, uri, line));
        }
    };
    for (number, line) in numbered(text) {
        if let Some((class, rest)) = class_on(line) {
            finish(current.take(), &mut out);
            // A subclass: of ApplicationRecord, or of another model (single-table
            // inheritance); `self.abstract_class = true` drops it again.
            if rest.trim_start().starts_with('<') && class != "ApplicationRecord" {
                current = Some((class.to_string(), number, false));
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with("self.table_name =") || trimmed.starts_with("self.table_name=") {
            if let (Some((class, class_line, set)), Some(table)) = (current.as_mut(), quoted(line))
            {
                out.push(Model::new(table, class, uri, *class_line));
                *set = true;
            }
        } else if trimmed.starts_with("self.abstract_class") && trimmed.contains("true") {
            current = None;
        }
    }
    finish(current, &mut out);
    out
}
