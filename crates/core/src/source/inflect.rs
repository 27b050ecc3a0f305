//! The naming conventions that turn a class name into its table name when the model does
//! not name it: snake_case, and the plural of the last word as Rails and Laravel make it.

/// `CustomValue` → `custom_value`, `HTTPLog` → `http_log`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let after_lower = i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_numeric());
            let acronym_end = i > 0
                && chars[i - 1].is_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if (after_lower || acronym_end) && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Words whose plural is the word itself.
const UNCOUNTABLE: &[&str] = &[
    "equipment",
    "information",
    "rice",
    "money",
    "species",
    "series",
    "fish",
    "sheep",
    "jeans",
    "police",
    "news",
    "metadata",
    "data",
];

/// Words with a plural of their own.
const IRREGULAR: &[(&str, &str)] = &[
    ("person", "people"),
    ("man", "men"),
    ("woman", "women"),
    ("child", "children"),
    ("sex", "sexes"),
    ("move", "moves"),
    ("zombie", "zombies"),
];

/// Endings, tried in order: (singular ending, plural ending).
const ENDINGS: &[(&str, &str)] = &[
    ("quiz", "quizzes"),
    ("matrix", "matrices"),
    ("vertex", "vertices"),
    ("index", "indices"),
    ("status", "statuses"),
    ("alias", "aliases"),
    ("octopus", "octopi"),
    ("virus", "viri"),
    ("axis", "axes"),
    ("testis", "testes"),
    ("sis", "ses"),
    ("bus", "buses"),
    ("hive", "hives"),
    ("buffalo", "buffaloes"),
    ("tomato", "tomatoes"),
    ("x", "xes"),
    ("ch", "ches"),
    ("ss", "sses"),
    ("sh", "shes"),
    ("s", "s"),
];

/// The plural of one lowercase word, by the rules Rails' inflector applies.
pub fn plural(word: &str) -> String {
    if UNCOUNTABLE.contains(&word) {
        return word.to_string();
    }
    if let Some((_, plural)) = IRREGULAR.iter().find(|(one, _)| *one == word) {
        return plural.to_string();
    }
    if let Some((one, many)) = ENDINGS.iter().find(|(one, _)| word.ends_with(one)) {
        return format!("{}{many}", &word[..word.len() - one.len()]);
    }
    let before_last = word.chars().rev().nth(1);
    if let Some(stem) = word.strip_suffix('y')
        && before_last.is_some_and(|c| !"aeiou".contains(c) || word.ends_with("quy"))
    {
        return format!("{stem}ies");
    }
    if let Some(stem) = word.strip_suffix("fe").filter(|s| !s.ends_with('f')) {
        return format!("{stem}ves");
    }
    if let Some(stem) = word.strip_suffix('f').filter(|s| s.ends_with(['l', 'r'])) {
        return format!("{stem}ves");
    }
    if let Some(stem) = word.strip_suffix("um").filter(|s| s.ends_with(['t', 'i'])) {
        return format!("{stem}a");
    }
    format!("{word}s")
}

/// The table a class maps to by convention: `CustomValue` → `custom_values`. A namespace
/// (`Admin::User`, `App\Models\User`) is dropped.
pub fn table_of_class(class: &str) -> String {
    let last = class.rsplit([':', '\\', '.']).next().unwrap_or(class);
    let snake = snake_case(last);
    match snake.rsplit_once('_') {
        Some((head, word)) => format!("{head}_{}", plural(word)),
        None => plural(&snake),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_become_rails_table_names() {
        for (class, table) in [
            ("Issue", "issues"),
            ("CustomValue", "custom_values"),
            ("Category", "categories"),
            ("Status", "statuses"),
            ("IssueStatus", "issue_statuses"),
            ("Person", "people"),
            ("Box", "boxes"),
            ("Watch", "watches"),
            ("Key", "keys"),
            ("Wife", "wives"),
            ("Shelf", "shelves"),
            ("Medium", "media"),
            ("Analysis", "analyses"),
            ("Admin::User", "users"),
            ("App\\Models\\FlightLog", "flight_logs"),
            ("HTTPRequest", "http_requests"),
            ("News", "news"),
        ] {
            assert_eq!(table_of_class(class), table, "{class}");
        }
    }
}
