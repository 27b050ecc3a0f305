//! The `[survey]` section of pgcost.toml, so CI can watch the top routes: the survey's
//! inputs and burst, `top`, `[survey.budget]` and `[[survey.auth]]` (`survey_auth`), read
//! with the line of a bad key and merged under the command line's flags (a flag given wins
//! over its key).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::survey_auth::{self, AuthTable};
use crate::error::{Error, Result};
use crate::flags::{DEFAULT_CONCURRENCY, DEFAULT_CONFIG, DEFAULT_REQUESTS, SurveyArgs};
use pgcost_core::report::model::figure::{Figure, PerFigure};
use pgcost_core::survey::routes::{Grouping, Skipped};
use pgcost_core::survey::screen::Exact;

/// The file as the survey reads it: `[survey]` only; the other tables are `check`'s.
#[derive(Debug, Deserialize)]
struct FileWithSurvey {
    survey: Option<SurveyTable>,
}

/// `[survey]`. Paths are relative to the file's directory.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SurveyTable {
    pub access_logs: Vec<PathBuf>,
    pub hars: Vec<PathBuf>,
    pub openapi: Vec<PathBuf>,
    /// `--graphql-operations`: persisted-query files.
    pub graphql_operations: Vec<PathBuf>,
    /// `--graphql-path`.
    pub graphql_path: Option<String>,
    pub base_url: Option<String>,
    pub routes: Vec<String>,
    pub allow_methods: Vec<String>,
    pub requests: Option<u64>,
    pub concurrency: Option<u32>,
    /// Only the N most logged routes are replayed.
    pub top: Option<usize>,
    /// The routes measured exactly after the screening: `"auto"`, `"all"` or a number.
    pub exact: Option<Exact>,
    /// `[survey.budget]`: limits per request, for every ranked route, keyed as a
    /// budget's figures are.
    pub budget: PerFigure<f64>,
    /// `[[survey.auth]]`: a credential per path prefix, the first match wins.
    pub auth: Vec<AuthTable>,
}

/// What the file sets that no flag does.
#[derive(Debug, Default, PartialEq)]
pub struct Settings {
    pub top: Option<usize>,
    pub exact: Option<Exact>,
    pub budget: PerFigure<f64>,
    pub auth: Vec<AuthTable>,
}

/// `[survey]` of a pgcost.toml's text, if it has one; a bad key is named with its
/// `origin:line:column`.
pub fn parse(text: &str, origin: &str) -> Result<Option<SurveyTable>> {
    let file: FileWithSurvey = toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end().replace('\n', "; ");
        let at = match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                format!("{origin}:{line}:{column}")
            }
            None => origin.to_string(),
        };
        Error::usage(format!("{at}: {message}"))
            .with_hint("the keys of [survey] are described in `pgcost docs survey`")
    })?;
    let Some(table) = file.survey else {
        return Ok(None);
    };
    let negative = (Figure::ALL.into_iter())
        .find(|f| (table.budget.get(*f)).is_some_and(|v| v < 0.0 || v.is_nan()));
    if let Some(figure) = negative {
        return Err(Error::usage(format!(
            "{origin}: [survey.budget] {} must not be negative",
            figure.key()
        )));
    }
    if let Some(figure) =
        (Figure::ALL.into_iter()).find(|f| !f.spec().per_database && table.budget.get(*f).is_some())
    {
        return Err(Error::usage(format!(
            "{origin}: [survey.budget] {} is not a survey limit: a route's replay has no \
             latency of its own",
            figure.key()
        ))
        .with_hint("limit it in an endpoint's budget, which `pgcost check` holds"));
    }
    if table.top == Some(0) || table.requests == Some(0) || table.concurrency == Some(0) {
        return Err(Error::usage(format!(
            "{origin}: [survey] top, requests and concurrency must be at least 1"
        )));
    }
    survey_auth::check(&table.auth, origin)?;
    Ok(Some(table))
}

/// The flags with the `[survey]` section of `--config` (or of ./pgcost.toml when it has
/// one) under them, and what only the file sets.
pub fn resolve(args: &SurveyArgs) -> Result<(SurveyArgs, Settings)> {
    let mut merged = args.clone();
    let (path, named) = match &args.file.config {
        Some(path) => (path.clone(), true),
        None if Path::new(DEFAULT_CONFIG).is_file() => (PathBuf::from(DEFAULT_CONFIG), false),
        None => return Ok((merged, Settings::default())),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", path.display())))?;
    let origin = path.display().to_string();
    let Some(table) = parse(&text, &origin)? else {
        if named {
            return Err(
                Error::usage(format!("{origin} has no [survey] section")).with_hint(
                    "add [survey] with access_logs, hars or openapi (`pgcost docs survey`)",
                ),
            );
        }
        return Ok((merged, Settings::default()));
    };
    let base_dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let settings = merge(&mut merged, table, base_dir.unwrap_or(Path::new(".")));
    Ok((merged, settings))
}

/// The file's keys where the flags leave them open: the inputs when no input flag is
/// given, a list when its flag is not, `-n` and `-c` when they are at their defaults.
pub fn merge(args: &mut SurveyArgs, table: SurveyTable, base_dir: &Path) -> Settings {
    let under = |paths: Vec<PathBuf>| paths.into_iter().map(|p| base_dir.join(p)).collect();
    if !args.has_inputs() {
        args.access_logs = under(table.access_logs);
        args.hars = under(table.hars);
        args.openapi = under(table.openapi);
        args.graphql_operations = under(table.graphql_operations);
    }
    if args.graphql_path.is_none() {
        args.graphql_path = table.graphql_path;
    }
    if args.base.base_url.is_none() {
        args.base.base_url = table.base_url;
    }
    if args.routes.is_empty() {
        args.routes = table.routes;
    }
    if args.allow_methods.is_empty() {
        args.allow_methods = table.allow_methods;
    }
    let count = &mut args.load.burst.count.requests;
    if let Some(n) = table.requests
        && count.is_none_or(|c| c == DEFAULT_REQUESTS)
    {
        *count = Some(n);
    }
    let concurrency = &mut args.load.burst.concurrency;
    if let Some(c) = table.concurrency
        && *concurrency == DEFAULT_CONCURRENCY
    {
        *concurrency = c;
    }
    Settings {
        top: table.top,
        exact: table.exact,
        budget: table.budget,
        auth: table.auth,
    }
}

/// The routes measured exactly: `--exact`, else `exact` of the file, else `auto`, or `all`
/// with a `[survey.budget]` (its limits hold every figure, rows read need exact windows).
pub fn exact(args: &SurveyArgs, settings: &Settings) -> Exact {
    let budgeted = (Figure::ALL.into_iter()).any(|f| settings.budget.get(f).is_some());
    (args.exact.or(settings.exact)).unwrap_or(if budgeted { Exact::All } else { Exact::Auto })
}

/// Only the `top` most logged routes stay to be replayed; the others are listed in
/// `skipped[]` as not measured.
pub fn keep_top(grouping: &mut Grouping, top: usize) {
    if grouping.routes.len() <= top {
        return;
    }
    for route in grouping.routes.split_off(top) {
        grouping.skipped.push(Skipped {
            requests: route.requests(),
            method: route.method,
            route: route.template,
            reason: format!(
                "not measured: beyond the top {top} routes by logged requests ([survey] top)"
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::flags::{Cli, Command};
    use pgcost_core::survey::routes::{Route, UrlCount};

    fn args(flags: &[&str]) -> SurveyArgs {
        let cli = Cli::try_parse_from([&["pgcost", "survey"], flags].concat()).unwrap();
        match cli.command {
            Command::Survey(args) => args,
            other => panic!("{other:?}"),
        }
    }

    const FILE: &str = r#"base_url = "http://127.0.0.1:9"

[[endpoint]]
name = "x"
path = "/x"

[survey]
access_logs = ["logs/access.log", "/var/log/b.log"]
openapi = ["api.json"]
graphql_operations = ["persisted-queries.json"]
graphql_path = "/api/graphql/"
base_url = "http://127.0.0.1:3000"
routes = ["/items/{id}"]
requests = 40
concurrency = 2
top = 5
exact = 2

[survey.budget]
rows_read = 100
statements = 3
rows_returned = 50

[[survey.auth]]
paths = ["/api/"]
headers = { Authorization = "Token ${API_TOKEN}" }
"#;

    #[test]
    fn the_section_fills_what_the_flags_leave_open() {
        let table = parse(FILE, "pgcost.toml").unwrap().unwrap();
        let mut merged = args(&[]);
        let settings = merge(&mut merged, table, Path::new("ci"));
        assert_eq!(
            merged.access_logs,
            [
                PathBuf::from("ci/logs/access.log"),
                PathBuf::from("/var/log/b.log")
            ]
        );
        assert_eq!(merged.openapi, [PathBuf::from("ci/api.json")]);
        let operations = PathBuf::from("ci/persisted-queries.json");
        assert_eq!(merged.graphql_operations, [operations]);
        assert_eq!(merged.graphql_path.as_deref(), Some("/api/graphql/"));
        assert_eq!(
            merged.base.base_url.as_deref(),
            Some("http://127.0.0.1:3000")
        );
        assert_eq!(merged.routes, ["/items/{id}"]);
        assert_eq!(merged.load.burst.count.requests, Some(40));
        assert_eq!(merged.load.burst.concurrency, 2);
        assert_eq!(
            settings,
            Settings {
                top: Some(5),
                exact: Some(Exact::Top(2)),
                budget: PerFigure {
                    rows_read: Some(100.0),
                    statements: Some(3.0),
                    rows_returned: Some(50.0),
                    ..PerFigure::default()
                },
                auth: vec![AuthTable {
                    paths: vec!["/api/".into()],
                    headers: [("Authorization".into(), "Token ${API_TOKEN}".into())].into(),
                    cookies: Vec::new(),
                }],
            }
        );
    }

    #[test]
    fn exact_is_the_flag_else_the_file_else_all_with_a_budget() {
        let mut settings = Settings::default();
        assert_eq!(exact(&args(&[]), &settings), Exact::Auto);
        settings.budget.rows_read = Some(10.0);
        assert_eq!(exact(&args(&[]), &settings), Exact::All);
        settings.exact = Some(Exact::Top(2));
        assert_eq!(exact(&args(&[]), &settings), Exact::Top(2));
        assert_eq!(exact(&args(&["--exact", "auto"]), &settings), Exact::Auto);
    }

    #[test]
    fn check_reads_the_same_file_past_the_section() {
        let file = crate::commands::check::config::parse(FILE, "pgcost.toml").unwrap();
        assert_eq!(file.endpoints.len(), 1);
    }

    #[test]
    fn flags_win_over_the_section() {
        let table = parse(FILE, "pgcost.toml").unwrap().unwrap();
        let mut merged = args(&[
            "--har",
            "s.har",
            "--base-url",
            "http://h",
            "-n",
            "7",
            "-c",
            "3",
        ]);
        merge(&mut merged, table, Path::new("ci"));
        assert_eq!(merged.hars, [PathBuf::from("s.har")]);
        assert!(merged.access_logs.is_empty() && merged.openapi.is_empty());
        assert_eq!(merged.base.base_url.as_deref(), Some("http://h"));
        assert_eq!(merged.load.burst.count.requests, Some(7));
        assert_eq!(merged.load.burst.concurrency, 3);
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let text = "[survey]\naccess_logs = [\"a.log\"]\nmax_share = 0.5\n";
        let error = parse(text, "p.toml").unwrap_err();
        assert!(
            error
                .message
                .starts_with("p.toml:3:1: unknown field `max_share`"),
            "{}",
            error.message
        );
        let text = "[survey.budget]\nrows = 1\n";
        let error = parse(text, "p.toml").unwrap_err();
        assert!(
            error
                .message
                .starts_with("p.toml:2:1: unknown field `rows`"),
            "{}",
            error.message
        );
        assert_eq!(parse("[database]\nurl = \"x\"\n", "p.toml").unwrap(), None);
        let error = parse("[survey.budget]\nwal_bytes = -1\n", "p.toml").unwrap_err();
        assert!(error.message.contains("wal_bytes must not be negative"));
        let error = parse("[survey.budget]\np95_ms = 200\n", "p.toml").unwrap_err();
        assert!(error.message.contains("p95_ms is not a survey limit"));
        let error = parse("[survey]\ntop = 0\n", "p.toml").unwrap_err();
        assert!(error.message.contains("at least 1"), "{}", error.message);
        let text = "[survey]\n[[survey.auth]]\npaths = [\"/\"]\nheader = {}\n";
        let error = parse(text, "p.toml").unwrap_err();
        assert!(
            error
                .message
                .starts_with("p.toml:4:1: unknown field `header`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn routes_beyond_the_top_are_listed_as_not_measured() {
        let route = |template: &str, requests: u64| Route {
            method: "GET".into(),
            template: template.into(),
            urls: vec![UrlCount {
                url: template.into(),
                requests,
                body: None,
                logged_status: None,
            }],
            statuses: Default::default(),
        };
        let mut grouping = Grouping {
            routes: vec![route("/a", 9), route("/b", 5), route("/c", 2)],
            ..Grouping::default()
        };
        keep_top(&mut grouping, 2);
        assert_eq!(grouping.routes.len(), 2);
        assert_eq!(
            (
                grouping.skipped[0].route.as_str(),
                grouping.skipped[0].requests
            ),
            ("/c", 2)
        );
        assert!(grouping.skipped[0].reason.contains("top 2"));
    }
}
