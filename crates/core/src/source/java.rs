//! JPA and Hibernate (Java, Kotlin): an `@Entity` class maps to the name of its
//! `@Table(name = "...")`, else to its class name in snake_case (Spring Boot's naming).

use std::sync::LazyLock;

use regex::Regex;

use super::inflect::snake_case;
use super::model::{Model, class_on, numbered};

/// The entities one Java or Kotlin file declares.
pub fn models(uri: &str, text: &str) -> Vec<Model> {
    static TABLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"@(?:\w+\.)*Table\s*\((?:[^)]*?\bname\s*=\s*)?"([^"]+)""#)
            .expect("valid regex")
    });
    let mut out = Vec::new();
    let mut entity = false;
    let mut table: Option<String> = None;
    for (number, line) in numbered(text) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("@Entity") || trimmed.starts_with("@jakarta.persistence.Entity") {
            entity = true;
        }
        if let Some(name) = TABLE.captures(trimmed) {
            table = Some(name[1].to_string());
        }
        if let Some((class, _)) = class_on(line) {
            if entity {
                let name = table.take().unwrap_or_else(|| snake_case(class));
                out.push(Model::new(&name, class, uri, number));
            }
            entity = false;
            table = None;
        }
    }
    out
}
