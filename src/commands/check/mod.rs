//! `pgcost check`: measures every endpoint of pgcost.toml in one sequence of shared settle
//! waits, holds each to its budget and to a baseline, and renders the verdict for CI.
//!
//! `config` validates the flags and pgcost.toml into a `CheckConfig`, `previous_run` reads
//! the `--baseline` run, `acks` matches the acknowledgements; this module measures and
//! judges into the one `CheckReport` (the model, `cost/check/`) and writes its views
//! (`render/check/`): `CheckConfig::from_args` → `run` → `CheckReport` → `output::write`
//! → exit code.

pub mod acks;
pub mod config;
pub mod previous_run;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::auth::Redactor;
use crate::config::AuditConfig;
use crate::error::{Error, Result, exit};
use crate::flags::CheckArgs;
use crate::measure;
use crate::measure::external::Stdout;
use crate::output::{self, scrubbed, stop_on_ctrl_c, write_atomically};
use crate::postgres::conninfo::EnvLookup;
use crate::progress::{self, Progress};
use crate::render::View;
use crate::render::format::Format;
use crate::render::github;
use acks::Ack;
use budget::{Budget, Figures};
use config::CheckConfig;
use pgcost_core::report::Report;
use pgcost_core::scale::ScaleReport;
use previous_run::{Entry, PreviousRun};
use statement_diff::FindingRef;

// The verdict is plain data in the model, its views are in render/; `config/` and the
// tests name them through the command too.
pub use pgcost_core::check::{
    CheckReport, EndpointResult, FindingStatus, SCHEMA_VERSION, Status, budget, statement_diff,
};

/// 1 when a budget was exceeded or a figure regressed (on a valid report: that verdict
/// stands whatever happened to other endpoints), else 3 when a measurement is not valid,
/// else 0.
pub fn exit_code(report: &CheckReport) -> i32 {
    if !report.passed {
        exit::BUDGET
    } else if !report.valid {
        exit::INVALID
    } else {
        exit::OK
    }
}

/// What was measured for one endpoint, before judging.
#[derive(Debug, Clone)]
pub struct Measured {
    pub name: String,
    pub budget: Budget,
    pub report: Report,
    /// Its `[[endpoint.ack]]` tables.
    pub acks: Vec<Ack>,
    /// With `scale = {...}`: every value's fit (`report` is the largest value's).
    pub scale: Option<ScaleReport>,
}

/// Judges each measured endpoint against its budget, the baseline and its
/// acknowledgements (expired from `today` on). Pure. An acknowledgement whose statement
/// matches more than one finding is a usage error.
pub fn evaluate(
    measured: Vec<Measured>,
    baseline: Option<(&str, &PreviousRun)>,
    max_regression_percent: Option<f64>,
    today: time::Date,
) -> Result<CheckReport> {
    let endpoints = measured
        .into_iter()
        .map(|m| judge(m, baseline.map(|(_, b)| b), max_regression_percent, today))
        .collect::<Result<Vec<EndpointResult>>>()?;
    Ok(CheckReport {
        schema_version: SCHEMA_VERSION,
        valid: endpoints.iter().all(EndpointResult::trusted),
        passed: endpoints
            .iter()
            .all(|e| e.breaches.is_empty() && e.regressions.is_empty()),
        baseline: baseline.map(|(origin, _)| origin.to_string()),
        max_regression_percent,
        endpoints,
    })
}

/// A scaled endpoint's slope limits, held against its fits when every value is valid.
fn slopes(m: &Measured, verdict: &mut budget::BudgetVerdict) {
    if let Some(scale) = m.scale.as_ref().filter(|s| s.valid) {
        let slopes = budget::check_slopes(&m.budget, Some(scale));
        verdict.breaches.extend(slopes.breaches);
        verdict.unchecked.extend(slopes.unchecked);
    }
}

/// The baseline's entry `m` is compared with, or why there is none.
fn compared_entry<'a>(
    m: &Measured,
    baseline: Option<&'a PreviousRun>,
) -> (Option<&'a Entry>, Option<String>) {
    let Some(baseline) = baseline else {
        return (None, None);
    };
    let note = match baseline.find(&m.name, &m.report.target.method, &m.report.target.url) {
        None => "not in the baseline",
        Some(entry) if !entry.valid => "not valid in the baseline",
        Some(_) if !m.report.valid => "not compared: this run is not valid",
        Some(entry) => return (Some(entry), None),
    };
    (None, Some(note.into()))
}

/// One endpoint: its budget, the baseline's figures, statements and findings, and its
/// acknowledgements.
fn judge(
    m: Measured,
    baseline: Option<&PreviousRun>,
    max_regression_percent: Option<f64>,
    today: time::Date,
) -> Result<EndpointResult> {
    let mut verdict = if m.report.valid {
        budget::check(&m.budget, &m.report)
    } else {
        Default::default()
    };
    let (compared, baseline_note) = compared_entry(&m, baseline);
    let (deltas, regressions) = compared.map_or_else(Default::default, |entry| {
        budget::compare(
            &entry.figures,
            &Figures::of(&m.report),
            max_regression_percent,
        )
    });
    let current: Vec<FindingRef> = m.report.findings.iter().map(FindingRef::of).collect();
    let statement_diff = compared
        .filter(|entry| entry.statements_available && m.report.per_request.statements.is_some())
        .map(|entry| {
            statement_diff::diff(
                &entry.statements,
                &statement_diff::statements_of(&m.report.statements),
                &entry.findings,
                &current,
            )
        });
    let (covered_by, acks) = acks::apply(&m.acks, &current, today)?;
    let findings: Vec<FindingStatus> = current
        .into_iter()
        .zip(covered_by)
        .map(|(finding, ack)| FindingStatus {
            new: compared.map(|entry| {
                !(entry.findings.iter()).any(|f| f.fingerprint == finding.fingerprint)
            }),
            acknowledged: ack.map(|i| m.acks[i].reason.clone()),
            finding,
        })
        .collect();
    slopes(&m, &mut verdict);
    if m.report.valid {
        verdict.breaches.extend(budget::statement_set(
            &m.budget,
            statement_diff.as_ref(),
            &findings,
        ));
    }
    let expired = acks.iter().filter(|a| a.expired).map(budget::expired);
    verdict.breaches.extend(expired);
    Ok(EndpointResult {
        name: m.name,
        budget: m.budget,
        breaches: verdict.breaches,
        unchecked: verdict.unchecked,
        regressions,
        deltas,
        baseline_note,
        statement_diff,
        findings,
        acks,
        report: m.report,
        scale: m.scale,
    })
}

/// Logs in where asked, then measures the endpoints of `config` that pgcost loads in one
/// sequence: N + 1 settle waits for N endpoints; then each `command` endpoint, around its
/// own command, as `pgcost measure` does. After an interrupted burst, the endpoints
/// measured so far are returned, in the file's order.
pub async fn measure(
    config: &CheckConfig,
    progress: &Progress,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Measured>> {
    let (commands, paths): (Vec<_>, Vec<_>) =
        config.endpoints.iter().partition(|e| e.command.is_some());
    // A scaled endpoint is one window per value, in the same sequence.
    let points: Vec<(&config::Endpoint, Option<u64>, &AuditConfig)> = (paths.iter())
        .flat_map(|e| match &e.scale {
            Some(plan) => (plan.points.iter())
                .map(|(n, a)| (*e, Some(*n), a))
                .collect(),
            None => vec![(*e, None, &e.audit)],
        })
        .collect();
    let audits: Vec<_> = points.iter().map(|(_, _, a)| (*a).clone()).collect();
    let total = points.len();
    if !paths.is_empty() {
        progress.status(&format!(
            "warming up {total} window(s) of {} endpoint(s), then measuring each between \
             shared settle waits",
            paths.len()
        ));
    }
    let reports = measure::measure_sequence(&audits, progress, stop.clone(), |i| {
        let (e, n, audit) = points[i];
        let at = n.map_or(String::new(), |n| format!(" at {n}"));
        progress.status(&format!(
            "measuring {}/{total} {}{at}: {} {}",
            i + 1,
            e.name,
            audit.request.method,
            audit.request.url
        ));
    })
    .await?;
    let mut pairs = gather(&paths, reports);
    for endpoint in commands {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let load = endpoint.command.as_ref().expect("a command endpoint");
        progress.status(&format!("measuring {}: its command", endpoint.name));
        let external = measure::external::Load {
            command: &load.command,
            count: &load.count,
            dir: Some(&load.dir),
            stdout: Stdout::beside_report(config.outputs.report_on_stdout()),
        };
        let report = measure::command(&endpoint.audit, external, progress, stop.clone()).await?;
        pairs.push((endpoint, report, None));
    }
    let order = |e: &config::Endpoint| config.endpoints.iter().position(|c| c.name == e.name);
    pairs.sort_by_key(|(e, _, _)| order(e));
    Ok(pairs
        .into_iter()
        .map(|(e, report, scale)| Measured {
            name: e.name.clone(),
            budget: e.budget.clone(),
            report,
            acks: e.acks.clone(),
            scale,
        })
        .collect())
}

/// The reports of the sequence, back to their endpoints: one each, or one per value of a
/// scaled endpoint, fitted (its report is its largest value's). An endpoint whose windows
/// an interruption cut short is left out.
fn gather<'a>(
    paths: &[&'a config::Endpoint],
    reports: Vec<Report>,
) -> Vec<(&'a config::Endpoint, Report, Option<ScaleReport>)> {
    let mut reports = reports.into_iter();
    let mut out = Vec::new();
    for endpoint in paths {
        let Some(plan) = &endpoint.scale else {
            match reports.next() {
                Some(report) => out.push((*endpoint, report, None)),
                None => break,
            }
            continue;
        };
        let measured: Vec<(u64, Report)> = (plan.points.iter().map(|(n, _)| *n))
            .zip(reports.by_ref())
            .collect();
        if measured.len() < plan.points.len() {
            break;
        }
        let scale = pgcost_core::scale::build(plan.template.clone(), &measured);
        let (_, largest) = measured.into_iter().last().expect("at least two values");
        out.push((*endpoint, largest, Some(scale)));
    }
    out
}

/// Every secret of every endpoint, including tokens learned at login: never printed.
struct Secrets(Vec<Redactor>);

impl Secrets {
    fn of(config: &CheckConfig) -> Secrets {
        let redactors = (config.endpoints.iter()).map(|e| e.audit.auth.redactor.clone());
        Secrets(redactors.collect())
    }

    fn scrub(&self, text: &str) -> String {
        self.0
            .iter()
            .fold(text.to_string(), |text, redactor| redactor.scrub(&text))
    }

    fn error(&self, err: Error) -> Error {
        self.0.iter().fold(err, scrubbed)
    }
}

/// The command: validate, measure and judge, write the verdict, and the exit code.
pub async fn execute(args: &CheckArgs, env: EnvLookup<'_>) -> Result<i32> {
    let config = CheckConfig::from_args(args, env)?;
    let secrets = Secrets::of(&config);
    let stop = stop_on_ctrl_c();
    let report = run(&config, stop.clone())
        .await
        .map_err(|e| secrets.error(e))?;
    let interrupted = stop.load(Ordering::Relaxed);
    write_verdict(&config, &report, interrupted, env, &secrets)?;
    Ok(if interrupted {
        exit::INTERRUPTED
    } else {
        exit_code(&report)
    })
}

/// Measures every endpoint and judges it: the one `CheckReport` of the run.
pub async fn run(config: &CheckConfig, stop: Arc<AtomicBool>) -> Result<CheckReport> {
    let progress = Progress::new(config.quiet);
    let measured = measure(config, &progress, stop).await?;
    let baseline = (config.baseline.as_ref()).map(|b| (b.origin.as_str(), &b.run));
    evaluate(
        measured,
        baseline,
        config.max_regression_percent,
        acks::today(),
    )
}

/// Writes the report where asked (the main format, then every export), the GitHub step
/// summary and the next baseline.
fn write_verdict(
    config: &CheckConfig,
    report: &CheckReport,
    interrupted: bool,
    env: EnvLookup<'_>,
    secrets: &Secrets,
) -> Result<()> {
    let progress = Progress::new(config.quiet);
    let scrub = |text: &str| secrets.scrub(text);
    output::write(report, &config.outputs, &scrub, &progress)?;
    let summary = env("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty());
    let mut markdown = report.render(Format::Markdown)?;
    let overflow = (config.outputs.format == Format::Github)
        .then(|| github::overflow_markdown(report))
        .flatten();
    if let Some(rest) = &overflow {
        markdown = format!("{markdown}\n{rest}");
        if summary.is_none() {
            progress::warning(&format!(
                "{} annotation(s) past GitHub's {} per step were not printed: set \
                 GITHUB_STEP_SUMMARY (GitHub Actions does) to get them in the step summary",
                github::overflow_count(report),
                github::MAX_ANNOTATIONS
            ));
        }
    }
    if let Some(path) = summary
        && let Err(e) = append_step_summary(&path, &scrub(&markdown))
    {
        // The verdict is already out; a missing summary must not change the exit code.
        progress::warning(&e.message);
    }
    if interrupted {
        progress.status(&format!(
            "interrupted: {} of {} endpoint(s) measured",
            report.endpoints.len(),
            config.endpoints.len()
        ));
    }
    match &config.write_baseline {
        Some(path) if report.valid && !interrupted => {
            write_atomically(path, &scrub(&report.render(Format::Json)?))
        }
        Some(path) => {
            progress::warning(&format!(
                "not writing the baseline {}: a run whose numbers are not all valid is no \
                 baseline",
                path.display()
            ));
            Ok(())
        }
        None => Ok(()),
    }
}

/// Appends the Markdown verdict to the GitHub Actions step summary.
fn append_step_summary(path: &str, markdown: &str) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::usage(format!("cannot open GITHUB_STEP_SUMMARY {path}: {e}")))?;
    writeln!(file, "{markdown}")
        .map_err(|e| Error::usage(format!("cannot write GITHUB_STEP_SUMMARY {path}: {e}")))
}

#[cfg(test)]
mod tests;
