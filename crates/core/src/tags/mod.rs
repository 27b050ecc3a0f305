//! Tags: where in the app a statement comes from, read black-box from the comments apps put
//! on their SQL (sqlcommenter, marginalia, Rails query log tags). `pg_stat_activity` is
//! sampled during the warm-up and the burst; each sample's comment is read and counted
//! under its query id (or, without one, its folded text); [`Observed::statement`] gives a
//! statement the tag sets seen with it and the share of its samples each was seen in. Only
//! static tags are read: a per-request value (`traceparent`) never splits a set.

pub mod comment;

use std::collections::BTreeMap;

pub use crate::report::model::tags::{StatementTags, TagShare, TagSummary, Tags};

impl Tags {
    /// The static tags among one comment's `pairs`; `None` when it has none of them.
    pub fn from_pairs(pairs: &[(String, String)]) -> Option<Tags> {
        let get = |names: &[&str]| {
            (pairs.iter())
                .find(|(k, v)| names.contains(&k.as_str()) && !v.trim().is_empty())
                .map(|(_, v)| v.trim().to_string())
        };
        let mut tags = Tags {
            route: get(&["route", "endpoint_id"]),
            controller: get(&["controller"]),
            action: get(&["action"]),
            job: get(&["job"]),
            framework: get(&["framework"]),
            ..Tags::default()
        };
        let lineno = get(&["code.lineno", "lineno"]).and_then(|l| l.parse().ok());
        if let Some(file) = get(&["code.filepath", "filepath", "file"]) {
            let (file, line) = split_location(&file);
            tags.file = Some(file);
            tags.line = lineno.or(line);
        } else if let Some(location) = get(&["source_location", "line"]) {
            let (file, line) = split_location(&location);
            // Marginalia's `line` is always `file:line`; a bare number is no location.
            if line.is_some() || location.contains('/') {
                tags.file = Some(file);
                tags.line = line;
            }
        }
        (tags != Tags::default()).then_some(tags)
    }

    /// `path:line`, when the call site is known.
    pub fn location(&self) -> Option<String> {
        let file = self.file.as_ref()?;
        Some(match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file.clone(),
        })
    }

    /// The tags in one line, location first (it is what a narrow view must keep):
    /// `app/controllers/issues_controller.rb:12, route /issues, controller issues#index`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.location().into_iter().collect();
        let named = [
            ("route", &self.route),
            ("controller", &self.controller),
            ("action", &self.action),
            ("job", &self.job),
            ("framework", &self.framework),
        ];
        for (name, value) in named {
            if let Some(value) = value {
                parts.push(format!("{name} {value}"));
            }
        }
        parts.join(", ")
    }
}

/// `app/x.rb:12:in 'index'` → (`app/x.rb`, 12); a text without a line number stays whole.
fn split_location(text: &str) -> (String, Option<u32>) {
    let mut parts = text.splitn(3, ':');
    let file = parts.next().unwrap_or_default();
    match parts.next().and_then(|l| l.trim().parse().ok()) {
        Some(line) if !file.is_empty() => (file.to_string(), Some(line)),
        _ => (text.to_string(), None),
    }
}

/// One row of a `pg_stat_activity` sample: a backend's current (or last) query.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub pid: i32,
    /// When the query started (epoch seconds): a backend seen twice with the same start
    /// is one execution, counted once.
    pub query_start: f64,
    /// `query_id` (PG 14+ with `compute_query_id`); `None` before, or when off.
    pub query_id: Option<i64>,
    pub query: String,
}

/// What the samples saw of one statement.
#[derive(Debug, Clone, Default, PartialEq)]
struct Counts {
    samples: u64,
    sets: BTreeMap<Tags, u64>,
}

impl Counts {
    fn add(&mut self, tags: Option<Tags>) {
        self.samples += 1;
        if let Some(tags) = tags {
            *self.sets.entry(tags).or_default() += 1;
        }
    }
}

impl Counts {
    fn merge(&mut self, other: &Counts) {
        self.samples += other.samples;
        for (tags, n) in &other.sets {
            *self.sets.entry(tags.clone()).or_default() += n;
        }
    }
}

/// The samples of a run, counted by statement: each execution a sample saw counts once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    by_id: BTreeMap<i64, Counts>,
    by_text: BTreeMap<String, Counts>,
    /// Executions counted.
    pub samples: u64,
    /// Reads of `pg_stat_activity` taken.
    pub reads: u64,
    /// Each backend's last execution counted, by the start of its query.
    last_start: BTreeMap<i32, f64>,
}

impl Observed {
    /// One read of `pg_stat_activity`: its rows' executions not counted yet.
    pub fn add_read(&mut self, rows: &[Sample]) {
        self.reads += 1;
        for row in rows {
            if self.last_start.insert(row.pid, row.query_start) != Some(row.query_start) {
                self.add(row);
            }
        }
    }

    /// `other`'s counts added to these (a warm-up's and a burst's).
    pub fn merge(&mut self, other: &Observed) {
        self.samples += other.samples;
        self.reads += other.reads;
        for (id, counts) in &other.by_id {
            self.by_id.entry(*id).or_default().merge(counts);
        }
        for (text, counts) in &other.by_text {
            self.by_text.entry(text.clone()).or_default().merge(counts);
        }
    }

    fn add(&mut self, sample: &Sample) {
        self.samples += 1;
        let tags = Tags::from_pairs(&comment::tag_pairs(&sample.query));
        match sample.query_id {
            Some(id) if id != 0 => self.by_id.entry(id).or_default().add(tags),
            _ => (self.by_text.entry(comment::fold(&sample.query)))
                .or_default()
                .add(tags),
        }
    }

    /// The tags of the statement `queryid` whose pg_stat_statements text is `text` (as it
    /// was kept, with the first comment seen): the sets the samples saw, most seen first;
    /// else the comment of that text, as seen once. `None` when neither has a tag.
    pub fn statement(&self, queryid: &str, text: &str) -> Option<StatementTags> {
        let by_id = queryid
            .parse::<i64>()
            .ok()
            .and_then(|id| self.by_id.get(&id));
        let counts = by_id.or_else(|| self.by_text.get(&comment::fold(text)));
        if let Some(counts) = counts.filter(|c| !c.sets.is_empty()) {
            let mut seen: Vec<TagShare> = (counts.sets.iter())
                .map(|(tags, &n)| TagShare {
                    tags: tags.clone(),
                    samples: n,
                    share: Some(n as f64 / counts.samples as f64),
                })
                .collect();
            seen.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.tags.cmp(&b.tags)));
            return Some(StatementTags {
                samples: counts.samples,
                seen,
            });
        }
        let tags = Tags::from_pairs(&comment::tag_pairs(text))?;
        Some(StatementTags {
            samples: counts.map_or(0, |c| c.samples),
            seen: vec![TagShare {
                tags,
                samples: 0,
                share: None,
            }],
        })
    }
}

impl StatementTags {
    /// The set seen most.
    pub fn first(&self) -> Option<&Tags> {
        self.seen.first().map(|s| &s.tags)
    }

    /// The sets in one line: each set's tags, with its share when the samples saw more
    /// than one, or when it is not every sample's.
    pub fn describe(&self) -> String {
        let sets: Vec<String> = (self.seen.iter())
            .map(|s| match s.share {
                Some(share) if share < 0.995 || self.seen.len() > 1 => {
                    format!("{} ({:.0}% of samples)", s.tags.describe(), share * 100.0)
                }
                _ => s.tags.describe(),
            })
            .collect();
        sets.join("; ")
    }
}

/// The tests' tagged statement: one route and file:line, seen in each of `samples`.
#[cfg(any(test, feature = "fixtures"))]
pub fn seen_always(route: &str, file: &str, line: u32, samples: u64) -> StatementTags {
    StatementTags {
        samples,
        seen: vec![TagShare {
            tags: Tags {
                route: Some(route.into()),
                file: Some(file.into()),
                line: Some(line),
                ..Tags::default()
            },
            samples,
            share: Some(1.0),
        }],
    }
}

/// How to get tags, when no statement had any: one line per stack, each under 100 columns.
pub const NO_TAGS_HINT: &str = "to name each statement's route and file:line, turn on SQL comments:\n\
- Rails 7.1+: config.active_record.query_log_tags_enabled = true (+ :source_location)\n\
- Django: opentelemetry-instrumentation-django's SqlCommenter, or google-cloud-sqlcommenter\n\
- Node (knex, Sequelize), Spring, Hibernate: sqlcommenter; GitLab: marginalia\n\
- pgcost docs tags: every stack, and what pgcost reads";

impl TagSummary {
    /// One line for the views: how many statements got a tag, and how to get them when
    /// none did.
    pub fn describe(&self) -> String {
        let samples = match self.samples {
            Some(n) => format!(" ({n} samples of pg_stat_activity)"),
            None => " (pg_stat_activity not sampled)".to_string(),
        };
        if self.tagged == 0 && self.statements > 0 {
            return format!(
                "tags: none of {} statements carried a tag{samples}\n{NO_TAGS_HINT}",
                self.statements
            );
        }
        format!(
            "tags: {} of {} statements tagged{samples}",
            self.tagged, self.statements
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: Option<i64>, query: &str) -> Sample {
        Sample {
            pid: 1,
            query_start: 0.0,
            query_id: id,
            query: query.to_string(),
        }
    }

    #[test]
    fn reads_each_stacks_location() {
        let tags = |text: &str| Tags::from_pairs(&comment::tag_pairs(text)).unwrap();
        let rails = tags(
            "/*controller='issues',action='index',\
             source_location='app%2Fmodels%2Fissue.rb%3A12%3Ain%20%60visible%27'*/",
        );
        assert_eq!(rails.location().as_deref(), Some("app/models/issue.rb:12"));
        assert_eq!(rails.controller.as_deref(), Some("issues"));
        let gitlab = tags("/*endpoint_id:GET /api/:version/projects,line:/app/lib/api.rb:7*/");
        assert_eq!(gitlab.route.as_deref(), Some("GET /api/:version/projects"));
        assert_eq!(gitlab.location().as_deref(), Some("/app/lib/api.rb:7"));
        let otel = tags("/*code.filepath='src%2Fapi.rs',code.lineno='150',route='%2Fx'*/");
        assert_eq!(otel.location().as_deref(), Some("src/api.rs:150"));
        assert_eq!(
            Tags::from_pairs(&comment::tag_pairs("/*traceparent='00-ab-cd-01'*/")),
            None,
            "a per-request value alone is no tag"
        );
    }

    #[test]
    fn reads_every_static_key_and_ignores_per_request_ones() {
        let text = "SELECT 1 /*action='index',controller='issues',framework='rails%3A7.1',\
                    job='SyncJob',route='%2Fissues',traceparent='00-aa-bb-01',\
                    tracestate='k%3Dv',db_driver='pg'*/";
        let tags = Tags::from_pairs(&comment::tag_pairs(text)).unwrap();
        let expected = Tags {
            route: Some("/issues".into()),
            controller: Some("issues".into()),
            action: Some("index".into()),
            job: Some("SyncJob".into()),
            framework: Some("rails:7.1".into()),
            file: None,
            line: None,
        };
        assert_eq!(tags, expected);
        assert_eq!(
            tags.describe(),
            "route /issues, controller issues, action index, job SyncJob, framework rails:7.1"
        );
        let bare_line = Tags::from_pairs(&comment::tag_pairs("/*line:12*/ SELECT 1"));
        assert_eq!(bare_line, None, "a bare number is no file:line");
        let file_only = Tags::from_pairs(&comment::tag_pairs("/*code.filepath='app.py'*/"));
        assert_eq!(file_only.unwrap().location().as_deref(), Some("app.py"));
    }

    #[test]
    fn shares_by_query_id_and_falls_back_to_text() {
        let mut observed = Observed::default();
        let a = "SELECT 1 FROM t WHERE id = 5 /*route='%2Fa',traceparent='00-1'*/";
        let a2 = "SELECT 1 FROM t WHERE id = 6 /*route='%2Fa',traceparent='00-2'*/";
        let b = "SELECT 1 FROM t WHERE id = 7 /*route='%2Fb'*/";
        for q in [a, a2, b, "SELECT 1 FROM t WHERE id = 8"] {
            observed.add(&sample(Some(42), q));
        }
        let tags = observed
            .statement("42", "SELECT 1 FROM t WHERE id = $1")
            .unwrap();
        assert_eq!(tags.samples, 4);
        assert_eq!(tags.seen[0].tags.route.as_deref(), Some("/a"));
        assert_eq!(tags.seen[0].share, Some(0.5));
        assert_eq!(tags.seen[1].share, Some(0.25));
        assert_eq!(
            tags.describe(),
            "route /a (50% of samples); route /b (25% of samples)"
        );

        let mut pg13 = Observed::default();
        pg13.add(&sample(
            None,
            "SELECT name FROM u WHERE id IN (1, 2) /*job='Sync'*/",
        ));
        let tags = pg13.statement("7", "SELECT name FROM u WHERE id IN ($1, $2, $3)");
        assert_eq!(tags.unwrap().first().unwrap().job.as_deref(), Some("Sync"));
    }

    #[test]
    fn counts_each_execution_once_across_reads() {
        let row = |pid: i32, start: f64, query: &str| Sample {
            pid,
            query_start: start,
            query_id: Some(7),
            query: query.to_string(),
        };
        let tagged = "SELECT 1 /*route='%2Fa',code.filepath='src%2Fa.rs',code.lineno='9'*/";
        let mut warm_up = Observed::default();
        // Backend 1 idle on the same execution in two reads; backend 2 runs two.
        warm_up.add_read(&[row(1, 10.0, tagged), row(2, 11.0, "SELECT 1")]);
        warm_up.add_read(&[row(1, 10.0, tagged), row(2, 12.0, tagged)]);
        assert_eq!((warm_up.reads, warm_up.samples), (2, 3));
        let mut burst = Observed::default();
        burst.add_read(&[row(1, 20.0, tagged)]);
        warm_up.merge(&burst);
        let tags = warm_up.statement("7", "SELECT $1").unwrap();
        assert_eq!((tags.samples, tags.seen[0].samples), (4, 3));
        assert_eq!(tags.seen[0].share, Some(0.75));
        assert_eq!(tags.describe(), "src/a.rs:9, route /a (75% of samples)");
    }

    #[test]
    fn an_unsampled_statement_keeps_the_comment_of_its_text() {
        let tags = Observed::default()
            .statement("9", "SELECT 1 /*controller:issues,action:show*/")
            .unwrap();
        assert_eq!(tags.samples, 0);
        assert_eq!(tags.seen[0].share, None);
        assert_eq!(tags.describe(), "controller issues, action show");
        assert_eq!(Observed::default().statement("9", "SELECT 1"), None);
    }
}
