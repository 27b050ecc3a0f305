//! `pgcost docs [TOPIC]`: the user documentation, built into the binary, so that what
//! `--help` and `pgcost explain` point to exists wherever pgcost is installed, not only in
//! a checkout of its repository.

use crate::error::{Error, Result, exit};
use crate::output;

/// Each page: its topic name and its Markdown text (docs/TOPIC.md of the repository).
pub const TOPICS: &[(&str, &str)] = &[
    ("postgres", include_str!("../../docs/postgres.md")),
    (
        "authentication",
        include_str!("../../docs/authentication.md"),
    ),
    ("findings", include_str!("../../docs/findings.md")),
    ("json", include_str!("../../docs/json.md")),
    ("ci", include_str!("../../docs/ci.md")),
    ("measure", include_str!("../../docs/measure.md")),
    ("ramp", include_str!("../../docs/ramp.md")),
    ("scale", include_str!("../../docs/scale.md")),
    ("background", include_str!("../../docs/background.md")),
    ("replicas", include_str!("../../docs/replicas.md")),
    ("pgbouncer", include_str!("../../docs/pgbouncer.md")),
    ("survey", include_str!("../../docs/survey.md")),
    ("source", include_str!("../../docs/source.md")),
    ("tags", include_str!("../../docs/tags.md")),
];

/// The command: one page, or the list of pages.
pub fn execute(topic: Option<&str>) -> Result<i32> {
    output::print_stdout(&run(topic)?)?;
    Ok(exit::OK)
}

/// The text `pgcost docs` prints.
pub fn run(topic: Option<&str>) -> Result<String> {
    match topic {
        None => Ok(index()),
        Some(name) => page(name).map(str::to_string).ok_or_else(|| {
            let names: Vec<&str> = TOPICS.iter().map(|(name, _)| *name).collect();
            Error::usage(format!("there is no documentation page {name:?}"))
                .with_hint(format!("the pages are: {}", names.join(", ")))
        }),
    }
}

/// The page of `name`, if there is one.
pub fn page(name: &str) -> Option<&'static str> {
    (TOPICS.iter())
        .find(|(topic, _)| topic.eq_ignore_ascii_case(name.trim()))
        .map(|(_, text)| *text)
}

/// One line per page: its topic and its title (the first heading).
fn index() -> String {
    let mut text =
        String::from("pgcost's documentation; read a page with `pgcost docs TOPIC`:\n\n");
    for (name, page) in TOPICS {
        let title = page
            .lines()
            .find_map(|line| line.strip_prefix("# "))
            .unwrap_or(name);
        text.push_str(&format!("  {name:<16}{title}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_a_title_and_an_unknown_topic_lists_the_pages() {
        let index = run(None).unwrap();
        for (name, page) in TOPICS {
            assert!(page.starts_with("# "), "{name} has no title");
            assert!(index.contains(name));
        }
        assert_eq!(
            run(Some("Ramp")).unwrap(),
            include_str!("../../docs/ramp.md")
        );
        let err = run(Some("nope")).unwrap_err();
        assert!(err.hint.unwrap().contains("findings"));
    }
}
