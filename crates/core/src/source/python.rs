//! Python: Django models (`db_table` in `class Meta`, else `applabel_modelname`) and
//! SQLAlchemy declarative classes (`__tablename__`).

use super::model::{Model, class_on, numbered, quoted};

/// A class of the file being read.
struct Class {
    name: String,
    line: usize,
    /// Its bases name a Django model (`models.Model`).
    django: bool,
    table: Option<String>,
    abstract_model: bool,
}

/// The models one Python file declares. `app_label` is the Django app the file belongs
/// to: the folder of `models.py`, or of the `models/` package.
pub fn models(uri: &str, text: &str, app_label: Option<&str>) -> Vec<Model> {
    let mut classes: Vec<Class> = Vec::new();
    for (number, line) in numbered(text) {
        if let Some((name, rest)) = class_on(line) {
            // Only top-level classes: `class Meta` inside one belongs to it.
            if !line.starts_with(char::is_whitespace) {
                classes.push(Class {
                    name: name.to_string(),
                    line: number,
                    django: rest.contains("models.Model") || rest.contains("(Model"),
                    table: None,
                    abstract_model: false,
                });
            }
            continue;
        }
        let Some(class) = classes.last_mut() else {
            continue;
        };
        let trimmed = line.trim_start();
        let assigns = |key: &str| {
            trimmed
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        };
        if assigns("__tablename__") || assigns("db_table") {
            class.table = quoted(trimmed).map(str::to_string);
        } else if assigns("abstract") && trimmed.contains("True") {
            class.abstract_model = true;
        }
    }
    classes
        .into_iter()
        .filter(|c| !c.abstract_model)
        .filter_map(|c| {
            let table = match (&c.table, app_label) {
                (Some(table), _) => table.clone(),
                (None, Some(app)) if c.django => format!("{app}_{}", c.name.to_lowercase()),
                _ => return None,
            };
            Some(Model::new(&table, &c.name, uri, c.line))
        })
        .collect()
}
