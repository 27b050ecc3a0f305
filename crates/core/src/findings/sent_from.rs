//! Where a finding's statement was sent from, as the tags on its SQL say (see
//! `crate::tags`): the finding's `tags`, and a `Tag` location per tagged file:line. A tag
//! names the call site itself, so its locations come before those `--source` finds (the
//! model of a table, the SQL text). Pure.

use std::path::{Component, Path};

use crate::report::model::StatementRow;
use crate::source::{CodeLocation, Origin};
use crate::tags::StatementTags;

/// The tags of the statement whose text is `query`: the first entry of that text that
/// carries any (another role's entry of the same text may carry none).
pub fn tags_of<'a>(statements: &'a [StatementRow], query: &str) -> Option<&'a StatementTags> {
    (statements.iter())
        .filter(|s| s.query == query)
        .find_map(|s| s.tags.as_ref())
}

/// The tags of the several statements a finding is about (`round_trips`,
/// `session_setup_per_checkout`, `count_per_page`) as one: each distinct tag set with its
/// samples added up over the statements, most seen first, and its share of all their
/// samples (null for a set known from pg_stat_statements' text alone). `None` when no
/// statement carried any.
pub(super) fn merged<'a>(
    all: impl IntoIterator<Item = &'a StatementTags>,
) -> Option<StatementTags> {
    let mut merged = StatementTags {
        samples: 0,
        seen: Vec::new(),
    };
    for tags in all {
        merged.samples += tags.samples;
        for set in &tags.seen {
            match merged.seen.iter_mut().find(|s| s.tags == set.tags) {
                Some(same) => same.samples += set.samples,
                None => merged.seen.push(set.clone()),
            }
        }
    }
    let total = merged.samples;
    for set in &mut merged.seen {
        set.share = (set.samples > 0).then(|| set.samples as f64 / total as f64);
    }
    merged.seen.sort_by_key(|s| std::cmp::Reverse(s.samples));
    (!merged.seen.is_empty()).then_some(merged)
}

/// A `Tag` location per distinct file:line of `tags`, most seen first, with the route,
/// controller, action and job of the set seen most there and the shares of all its sets.
/// A file under `root` (the absolute `--source` directory) is made relative to it; any
/// other stays as the app sent it. A set without a line names no location.
pub fn locations(tags: &StatementTags, root: Option<&Path>) -> Vec<CodeLocation> {
    let mut out: Vec<CodeLocation> = Vec::new();
    for set in &tags.seen {
        let (Some(file), Some(line)) = (&set.tags.file, set.tags.line) else {
            continue;
        };
        let uri = relative(file, root);
        let same = out.iter_mut().find(|l| l.uri == uri && l.line == line);
        if let Some(Origin::Tag { share, .. }) = same.map(|l| &mut l.origin) {
            *share = share.zip(set.share).map(|(a, b)| a + b);
            continue;
        }
        let t = &set.tags;
        out.push(CodeLocation {
            uri,
            line,
            origin: Origin::Tag {
                route: t.route.clone(),
                controller: t.controller.clone(),
                action: t.action.clone(),
                job: t.job.clone(),
                share: set.share,
            },
        });
    }
    out
}

/// `file` relative to `root` with `/` separators when it is absolute and under it; else
/// as sent.
fn relative(file: &str, root: Option<&Path>) -> String {
    let path = Path::new(file);
    let under = root.filter(|_| path.is_absolute());
    match under.and_then(|root| path.strip_prefix(root).ok()) {
        Some(rest) => (rest.components())
            .filter_map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/"),
        None => file.to_string(),
    }
}

/// `"sent by route /x (controller y), 100% of samples"`: what the tags say beside the
/// file:line, set by set, for the views; `None` when no set names any.
pub fn sent_by(tags: &StatementTags) -> Option<String> {
    let sets: Vec<String> = (tags.seen.iter())
        .filter_map(|set| {
            let t = &set.tags;
            let controller = match (&t.controller, &t.action) {
                (Some(c), Some(a)) => Some(format!("controller {c}#{a}")),
                (Some(c), None) => Some(format!("controller {c}")),
                _ => None,
            };
            let who = match (&t.route, &t.job, controller) {
                (Some(route), _, Some(c)) => format!("route {route} ({c})"),
                (Some(route), _, None) => format!("route {route}"),
                (None, Some(job), _) => format!("job {job}"),
                (None, None, c) => c?,
            };
            Some(match set.share {
                Some(share) => format!("{who}, {:.0}% of samples", share * 100.0),
                None => format!("{who}, as pg_stat_statements kept it"),
            })
        })
        .collect();
    (!sets.is_empty()).then(|| format!("sent by {}", sets.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::{TagShare, Tags};

    fn set(file: Option<&str>, line: Option<u32>, route: &str, share: Option<f64>) -> TagShare {
        TagShare {
            tags: Tags {
                route: Some(route.into()),
                controller: Some("issues".into()),
                file: file.map(Into::into),
                line,
                ..Tags::default()
            },
            samples: 1,
            share,
        }
    }

    #[test]
    fn one_location_per_tagged_line_most_seen_first() {
        let tags = StatementTags {
            samples: 10,
            seen: vec![
                set(Some("/srv/app/api.rb"), Some(7), "/a", Some(0.6)),
                set(Some("lib/b.rb"), Some(3), "/b", Some(0.2)),
                set(Some("/srv/app/api.rb"), Some(7), "/c", Some(0.1)),
                set(Some("lib/c.rb"), None, "/d", Some(0.05)),
                set(None, None, "/e", Some(0.05)),
            ],
        };
        let found = locations(&tags, Some(Path::new("/srv/app")));
        let at: Vec<String> = found.iter().map(CodeLocation::at).collect();
        assert_eq!(at, ["api.rb:7", "lib/b.rb:3"]);
        assert_eq!(
            found[0].origin,
            Origin::Tag {
                route: Some("/a".into()),
                controller: Some("issues".into()),
                action: None,
                job: None,
                share: Some(0.7),
            }
        );
        assert_eq!(
            found[0].line_text(),
            "api.rb:7, the call site the app tagged (route /a, 70% of samples)"
        );
        let elsewhere = locations(&tags, Some(Path::new("/other")));
        assert_eq!(elsewhere[0].uri, "/srv/app/api.rb", "kept as sent");
        assert!(!elsewhere[0].is_relative() && elsewhere[1].is_relative());
        assert_eq!(locations(&tags, None)[0].uri, "/srv/app/api.rb");
    }

    #[test]
    fn a_finding_is_at_its_tagged_line_before_what_the_source_declares() {
        use crate::findings::{Finding, FindingKind, locate, tests::stmt};
        let query = "SELECT label FROM small WHERE id = $1";
        let mut statement = stmt(query, 1.0, 1.0);
        statement.tags = Some(StatementTags {
            samples: 2,
            seen: vec![set(Some("/srv/app/app/api.rb"), Some(7), "/a", Some(1.0))],
        });
        let model = "class Small < ApplicationRecord\n  self.table_name = \"small\"\nend\n";
        let files = [("app/models/small.rb", model)];
        let source = crate::source::SourceMap::of_files(Path::new("/srv/app"), files.into_iter());
        let mut finding = Finding::new(FindingKind::NPlusOne, String::new());
        finding.query = Some(query.into());
        let mut findings = vec![finding];
        locate(
            &mut findings,
            &[statement],
            Some((&source, Path::new("/srv/app"))),
        );
        let at: Vec<String> = findings[0].locations.iter().map(CodeLocation::at).collect();
        assert_eq!(at, ["app/api.rb:7", "app/models/small.rb:1"]);
        assert_eq!(findings[0].tags.as_ref().unwrap().samples, 2);
    }

    #[test]
    fn a_finding_over_several_statements_is_where_they_were_sent_from_most_seen_first() {
        use crate::findings::tests::{report, stmt, table};
        use crate::findings::{FindingKind, Thresholds, analyze, inputs::Inputs, locate};
        // Six lookups once per request: four sent from api.rb:7 (4 samples each), two from
        // lib/b.rb:3 (2 samples each): 16 and 4 of the 20 samples.
        let mut statements: Vec<_> = (1..=6)
            .map(|i| stmt(&format!("SELECT v FROM t{i} WHERE id = $1"), 1.0, 1.0))
            .collect();
        for (i, s) in statements.iter_mut().enumerate() {
            let (file, line, samples) = if i < 4 {
                ("api.rb", 7, 4)
            } else {
                ("lib/b.rb", 3, 2)
            };
            s.tags = Some(StatementTags {
                samples,
                seen: vec![set(Some(file), Some(line), "/x", Some(1.0))],
            });
            s.tags.as_mut().unwrap().seen[0].samples = samples;
        }
        let tables = (1..=6)
            .map(|i| table(&format!("public.t{i}"), 100))
            .collect();
        let r = report(statements, tables);
        let mut found: Vec<_> = analyze(&Inputs::of(&r), &Thresholds::default())
            .into_iter()
            .filter(|f| f.kind == FindingKind::RoundTrips)
            .collect();
        locate(&mut found, &r.statements, None);
        assert_eq!(found.len(), 1, "{found:#?}");
        let tags = found[0].tags.as_ref().expect("the statements' tags");
        assert_eq!(tags.samples, 20);
        let shares: Vec<Option<f64>> = tags.seen.iter().map(|s| s.share).collect();
        assert_eq!(shares, [Some(0.8), Some(0.2)]);
        let at: Vec<String> = found[0].locations.iter().map(CodeLocation::at).collect();
        assert_eq!(at, ["api.rb:7", "lib/b.rb:3"]);
    }

    #[test]
    fn says_who_sent_it_without_a_line() {
        let mut tags = StatementTags {
            samples: 4,
            seen: vec![set(None, None, "/api/x", Some(1.0))],
        };
        assert_eq!(
            sent_by(&tags).as_deref(),
            Some("sent by route /api/x (controller issues), 100% of samples")
        );
        assert!(locations(&tags, None).is_empty());
        tags.seen[0].tags.route = None;
        tags.seen[0].tags.action = Some("index".into());
        tags.seen[0].share = None;
        assert_eq!(
            sent_by(&tags).as_deref(),
            Some("sent by controller issues#index, as pg_stat_statements kept it")
        );
        tags.seen[0].tags.controller = None;
        assert_eq!(sent_by(&tags), None, "a file alone names nobody");
    }
}
