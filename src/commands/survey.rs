//! `pgcost survey`: reads the traffic record, groups it into routes (`cost/survey`),
//! probes each route, screens the accepted ones and measures the top ones exactly
//! (`survey_measure`), and writes the ranking (`render/survey`).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::ProgressBar;

use crate::auth::{self, Redactor};
use crate::commands::{audit, survey_auth, survey_config, survey_measure};
use crate::config::{AuditConfig, outputs_from_args};
use crate::error::{Error, Result, exit};
use crate::flags::{AuditArgs, Spelling, SurveyArgs};
use crate::http::load;
use crate::http::rotation::Target;
use crate::measure;
use crate::output;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::{self, Progress};
use crate::render::format::SURVEY_FORMATS;
use crate::values::parse_url;
use pgcost_core::survey::input::{self, Parsed};
use pgcost_core::survey::openapi::{self, OpenApi};
use pgcost_core::survey::replay::{self, Expectation};
use pgcost_core::survey::routes::{self, Grouping, Override, Route, SAFE_METHODS};
use pgcost_core::survey::screen::Exact;
use pgcost_core::survey::{Measured, RouteInput, SurveyReport, SurveyTraffic, budget, rank};

/// Requests sent to each route before anything is measured: a refused connection or a
/// rejected route is found before the first settle wait.
const PROBE_REQUESTS: u64 = 2;

/// The warning of a survey with an OpenAPI input: its operations have no traffic counts.
const OPENAPI_COUNTS: &str = "an OpenAPI operation counts 1 request: its shares are per \
    request, not at a traffic mix";

/// The command: read, group, probe, measure, rank, write, and the exit code.
pub async fn execute(args: &SurveyArgs, env: EnvLookup<'_>) -> Result<i32> {
    let (args, settings) = survey_config::resolve(args)?;
    let args = &args;
    let outputs = outputs_from_args(&args.output, SURVEY_FORMATS)?;
    let base_url = (args.base.base_url.clone()).ok_or_else(|| {
        Error::usage("no base URL to replay the routes against")
            .with_hint("pass --base-url http://127.0.0.1:3000, or base_url under [survey]")
    })?;
    let (parsed, from_openapi) = read_inputs(args)?;
    let production = match &args.production_stats {
        Some(source) => Some(super::survey_production::read(source, env).await?),
        None => None,
    };
    let overrides = (args.routes.iter().chain(&from_openapi.templates))
        .map(|r| Override::parse(r).map_err(Error::usage))
        .collect::<Result<Vec<_>>>()?;
    let (allowed, warnings) = allowed_methods(args);
    let mut grouping = routes::group(&parsed.hits, &overrides, &allowed);
    grouping.skipped.extend(from_openapi.skipped);
    super::survey_graphql::explain_skipped(args, &mut grouping);
    replay::set_aside_rejected(&mut grouping);
    if grouping.routes.is_empty() {
        return Err(Error::usage(format!(
            "no route to replay: {} request(s) parsed, {} static, {} skipped",
            parsed.hits.len(),
            grouping.static_requests,
            grouping.skipped.iter().map(|s| s.requests).sum::<u64>()
        ))
        .with_hint(
            "only GET, HEAD and GraphQL queries are replayed; --allow-method METHOD replays \
             another",
        ));
    }
    if let Some(top) = settings.top {
        survey_config::keep_top(&mut grouping, top);
    }
    let redactor = Redactor::default();
    let (configs, expectations) =
        route_configs(args, &base_url, &grouping, &settings.auth, env, &redactor)?;
    let progress = Progress::new(args.output.quiet);
    let stop = output::stop_on_ctrl_c();
    let traffic = SurveyTraffic {
        base_url,
        parsed_requests: parsed.hits.len() as u64,
        unparsed_lines: parsed.unparsed,
        first_unparsed: parsed.first_unparsed.clone(),
        static_requests: grouping.static_requests,
        skipped: grouping.skipped.clone(),
        static_files: grouping.static_files.clone(),
        warnings,
        production,
    };
    let exact = survey_config::exact(args, &settings);
    let routes = (&configs[..], &expectations[..]);
    let mut report = survey(routes, &grouping, traffic, exact, &progress, stop.clone())
        .await
        .map_err(|e| output::scrubbed(e, &redactor))?;
    report.budget_failures = budget::check(&report, &settings.budget);
    let scrub = |text: &str| redactor.scrub(text);
    output::write(&report, &outputs, &scrub, &progress)?;
    let interrupted = stop.load(Ordering::Relaxed);
    if !interrupted && !report.budget_failures.is_empty() {
        return Ok(exit::BUDGET);
    }
    Ok(audit::exit_code_of(report.valid, interrupted))
}

/// The methods replayed beyond GET and HEAD (upper case), and the warnings the inputs
/// call for, shown as they are found: a replayed write, an OpenAPI or GraphQL operations
/// input's counts.
fn allowed_methods(args: &SurveyArgs) -> (Vec<String>, Vec<String>) {
    let allowed: Vec<String> = (args.allow_methods.iter())
        .map(|m| m.to_ascii_uppercase())
        .collect();
    let mut warnings: Vec<String> = (allowed.iter())
        .filter(|m| !SAFE_METHODS.contains(&m.as_str()))
        .map(|method| {
            format!("--allow-method {method}: a replayed {method} changes the app's data")
        })
        .collect();
    if !args.openapi.is_empty() {
        warnings.push(OPENAPI_COUNTS.to_string());
    }
    if !args.graphql_operations.is_empty() {
        warnings.push(super::survey_graphql::COUNTS.to_string());
    }
    warnings.iter().for_each(|w| progress::warning(w));
    (allowed, warnings)
}

/// Every input parsed, with what the OpenAPI documents add (their templates and the
/// operations they cannot replay); an input that cannot be read is a usage error, and so
/// is a record with no request in it.
fn read_inputs(args: &SurveyArgs) -> Result<(Parsed, OpenApi)> {
    if !args.has_inputs() {
        return Err(Error::usage("no traffic record to survey").with_hint(
            "pass --access-log, --har, --openapi or --graphql-operations, or list them under \
             [survey] in pgcost.toml",
        ));
    }
    let mut parsed = Parsed::default();
    for path in &args.access_logs {
        let text = read_text(path)?;
        parsed.extend(input::access_log(&path.display().to_string(), &text));
    }
    for path in &args.hars {
        let text = read_text(path)?;
        parsed.extend(input::har(&path.display().to_string(), &text).map_err(Error::usage)?);
    }
    let mut from_openapi = OpenApi::default();
    for path in &args.openapi {
        let text = read_text(path)?;
        let api = openapi::document(&path.display().to_string(), &text).map_err(Error::usage)?;
        parsed.extend(api.parsed);
        from_openapi.templates.extend(api.templates);
        from_openapi.skipped.extend(api.skipped);
    }
    let mut operation_files = Vec::new();
    for path in &args.graphql_operations {
        operation_files.push((path.display().to_string(), read_text(path)?));
    }
    let operations = super::survey_graphql::hits(args, &operation_files, &parsed.hits)?;
    parsed.hits.extend(operations);
    if parsed.unparsed > 0 {
        let first: Vec<String> = (parsed.first_unparsed.iter())
            .map(|u| format!("{}:{}: {}", u.file, u.line, u.text))
            .collect();
        progress::warning(&format!(
            "{} line(s) did not parse, the first: {}",
            parsed.unparsed,
            first.join(" | ")
        ));
    }
    if parsed.hits.is_empty() {
        return Err(Error::usage(format!(
            "no request found in the traffic record ({} line(s) did not parse, {} operation(s) \
             skipped)",
            parsed.unparsed,
            from_openapi.skipped.len()
        ))
        .with_hint(
            "--access-log takes nginx/Apache combined lines or JSON lines, --har a HAR file, \
             --openapi a document with example values (`pgcost docs survey`)",
        ));
    }
    Ok((parsed, from_openapi))
}

/// A file's text, gunzipped when it starts with gzip's magic bytes.
fn read_text(path: &Path) -> Result<String> {
    let cannot = |e: std::io::Error| Error::usage(format!("cannot read {}: {e}", path.display()));
    let bytes = std::fs::read(path).map_err(cannot)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .map_err(cannot)?;
        return Ok(String::from_utf8_lossy(&text).into_owned());
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Every route's audit and what its replay expects, each with the first
/// `[[survey.auth]]` entry that matches it; every secret joins `redactor`, and no error
/// prints one.
fn route_configs(
    args: &SurveyArgs,
    base_url: &str,
    grouping: &Grouping,
    auth: &[survey_auth::AuthTable],
    env: EnvLookup<'_>,
    redactor: &Redactor,
) -> Result<(Vec<AuditConfig>, Vec<Expectation>)> {
    let entries = survey_auth::expand(auth, env, redactor)?;
    let configs = (grouping.routes.iter())
        .map(|route| {
            let entry = survey_auth::pick(&entries, &route.template);
            route_config(args, base_url, route, env, redactor, entry)
        })
        .collect::<Result<Vec<_>>>()
        .map_err(|e| output::scrubbed(e, redactor))?;
    Ok(configs.into_iter().unzip())
}

/// The audit of one route: `audit`'s groups with the route's method and its most logged
/// URL (and body), and the credential of its `[[survey.auth]]` entry if one matches,
/// validated by [`AuditConfig::from_raw`] (its secrets join `redactor`); the burst rotates
/// over its sample, each URL with its body, and the statuses its URLs were logged with are
/// what the replay expects.
fn route_config(
    args: &SurveyArgs,
    base_url: &str,
    route: &Route,
    env: EnvLookup<'_>,
    redactor: &Redactor,
    entry: Option<&survey_auth::RouteAuth>,
) -> Result<(AuditConfig, Expectation)> {
    let mut load = args.load.clone();
    load.method = route.method.clone();
    if let Some(body) = &route.urls[0].body {
        // A GraphQL route: each target sends its own body; this one, the most logged, is
        // the request's (the credentials' probe sends it).
        (load.body, load.body_file) = (Some(body.clone()), None);
    }
    let mut output = args.output.clone();
    (output.output, output.exports) = (None, Vec::new());
    output.format = Default::default();
    let mut audit = AuditArgs {
        url: format!("{}{}", base_url.trim_end_matches('/'), route.urls[0].url),
        target: args.target.clone(),
        load,
        findings: args.findings.clone(),
        output,
        auth: args.auth.clone(),
        background: args.background.clone(),
    };
    let entry_env = |name: &str| survey_auth::without_default_token(env, name);
    let env: EnvLookup<'_> = match entry {
        Some(entry) => {
            survey_auth::apply(entry, &mut audit);
            &entry_env
        }
        None => env,
    };
    let mut config = AuditConfig::from_raw(
        &audit,
        &Spelling::flags(),
        redactor.clone(),
        env,
        &auth::prompt_on_terminal,
    )?;
    let sample = routes::apportion(&route.urls, config.requests);
    let expectation = Expectation::of(&sample, &route.statuses, entry.map(|e| e.used.clone()));
    let allowed = &mut config.auth.allowed_statuses;
    allowed.extend(expectation.allowed());
    allowed.sort_unstable();
    allowed.dedup();
    config.targets = (sample.into_iter())
        .map(|u| {
            let url = format!("{}{}", base_url.trim_end_matches('/'), u.url);
            Ok(Target {
                url: parse_url(&url)?,
                requests: u.requests,
                body: u.body.map(bytes::Bytes::from),
            })
        })
        .collect::<Result<_>>()?;
    Ok((config, expectation))
}

/// Probes every route (before any settle wait), measures the accepted ones (screened,
/// then the top ones exactly: `survey_measure`), and ranks them.
async fn survey(
    (configs, expectations): (&[AuditConfig], &[Expectation]),
    grouping: &Grouping,
    traffic: SurveyTraffic,
    exact: Exact,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<SurveyReport> {
    let mut outcomes: Vec<Option<Measured>> = Vec::with_capacity(configs.len());
    for (config, expectation) in configs.iter().zip(expectations) {
        outcomes.push(probe(config, expectation, &stop).await?);
    }
    let routes = survey_measure::Routes {
        configs,
        expectations,
        routes: &grouping.routes,
        outcomes,
    };
    let measured = survey_measure::measure(routes, exact, progress, stop).await?;
    let routes = (grouping.routes.iter().zip(configs).zip(measured))
        .zip(expectations)
        .map(|(((route, config), measured), expectation)| RouteInput {
            method: route.method.clone(),
            route: route.template.clone(),
            urls: route.urls.clone(),
            sample: routes::apportion(&route.urls, config.requests),
            credential: expectation.credential.clone(),
            measured,
        })
        .collect();
    Ok(rank::rank(routes, traffic))
}

/// A few requests to the route: a refused connection is a setup error; a route whose
/// every response is a rejection is returned as such, never measured.
async fn probe(
    config: &AuditConfig,
    expectation: &Expectation,
    stop: &Arc<AtomicBool>,
) -> Result<Option<Measured>> {
    let driver = measure::driver(config)?;
    let bar = ProgressBar::hidden();
    let probed = load::burst(&driver, PROBE_REQUESTS, 1, &bar, stop.clone()).await;
    if probed.errors.contains_key("connect") {
        return Err(Error::usage(format!(
            "{} refused connections: {}",
            config.request.url.origin().ascii_serialization(),
            probed
                .first_error
                .as_deref()
                .unwrap_or("connection refused")
        ))
        .with_hint("check that the app is running and listening at --base-url"));
    }
    Ok((probed.all_rejected(&config.auth.allowed_statuses))
        .map(|_| Measured::not_measured(expectation.probe_rejected(&probed.status))))
}
