//! `pgcost scale`: one URL template measured at several values of one parameter, in one
//! sequence of shared settle waits (as `check` measures its endpoints), each figure fitted
//! over the values, and the findings the slopes prove.

use crate::commands::audit;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::flags::ScaleArgs;
use crate::measure;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::{self, Progress};
use crate::values::parse_url;
use pgcost_core::scale::{self, ScaleReport, Template};

/// The placeholder of `--url`.
pub const PLACEHOLDER: &str = "n";

/// The points to measure: each value and the audit configuration of its URL.
#[derive(Debug, Clone)]
pub struct ScalePlan {
    pub template: Template,
    pub points: Vec<(u64, AuditConfig)>,
}

/// The command: validate the flags, measure every point, fit, render, and the exit code.
pub async fn execute(args: &ScaleArgs, env: EnvLookup<'_>) -> Result<i32> {
    let values = parse_values("--values", &args.values)?;
    if args.audit.auth.compare_unauthenticated {
        return Err(Error::usage(
            "pgcost scale does not take --compare-unauthenticated: audit the endpoint for that",
        ));
    }
    check_template("--url", &args.audit.url, PLACEHOLDER)?;
    let mut first = args.audit.clone();
    first.url = substitute(&args.audit.url, PLACEHOLDER, values[0]);
    let config = AuditConfig::from_args(&first, env)?;
    let plan = plan(&config, &args.audit.url, PLACEHOLDER, &values)?;
    let measured = async |progress: &Progress, stop| measure_points(&plan, progress, stop).await;
    audit::run(&config, measured, |report| report.valid).await
}

/// One configuration per value: `config`, validated once, with each value's URL.
pub fn plan(
    config: &AuditConfig,
    template: &str,
    param: &str,
    values: &[u64],
) -> Result<ScalePlan> {
    let points = values
        .iter()
        .map(|&n| {
            let mut point = config.clone();
            point.request.url = parse_url(&substitute(template, param, n))?;
            Ok((n, point))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ScalePlan {
        template: Template {
            method: config.request.method.to_string(),
            url: template.to_string(),
            param: param.to_string(),
        },
        points,
    })
}

/// Measures every point between shared settle waits (N + 1 for N values) and fits them.
/// After an interrupted burst, the points measured so far.
pub async fn measure_points(
    plan: &ScalePlan,
    progress: &Progress,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<ScaleReport> {
    let configs: Vec<AuditConfig> = plan.points.iter().map(|(_, c)| c.clone()).collect();
    let total = configs.len();
    progress.status(&format!(
        "warming up {total} point(s), then measuring each between shared settle waits"
    ));
    let reports = measure::measure_sequence(&configs, progress, stop, |i| {
        let (n, _) = &plan.points[i];
        progress.status(&format!(
            "measuring {}/{total}: {} = {n}",
            i + 1,
            plan.template.param
        ));
    })
    .await?;
    let measured: Vec<_> = (plan.points.iter().map(|(n, _)| *n)).zip(reports).collect();
    Ok(scale::build(plan.template.clone(), &measured))
}

/// `template` with `{param}` replaced by `n`.
pub fn substitute(template: &str, param: &str, n: u64) -> String {
    template.replace(&format!("{{{param}}}"), &n.to_string())
}

/// `{param}` appears exactly once in `template`; `what` names it in the error.
pub fn check_template(what: &str, template: &str, param: &str) -> Result<()> {
    let placeholder = format!("{{{param}}}");
    match template.matches(&placeholder).count() {
        1 => Ok(()),
        0 => Err(Error::usage(format!(
            "{what} {template:?} has no {placeholder}: nothing would vary between the points"
        ))
        .with_hint(format!(
            "put {placeholder} where the page size goes, e.g. \
             http://127.0.0.1:3000/issues.json?limit={placeholder}"
        ))),
        times => Err(Error::usage(format!(
            "{what} {template:?} has {placeholder} {times} times; it takes one"
        ))
        .with_hint("one parameter varies; write the others out")),
    }
}

/// `5,25,50`: distinct non-negative integers, at least two, sorted ascending. Two values
/// fit any line exactly, so a warning asks for a third.
pub fn parse_values(what: &str, text: &str) -> Result<Vec<u64>> {
    let values: Vec<u64> = text
        .split(',')
        .map(|part| part.trim().parse::<u64>().ok())
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Error::usage(format!(
                "{what} {text:?} is not a list of non-negative integers"
            ))
            .with_hint(format!("e.g. {what} 5,25,50"))
        })?;
    check_values(what, values)
}

/// The values, sorted; distinct and at least two.
pub fn check_values(what: &str, mut values: Vec<u64>) -> Result<Vec<u64>> {
    values.sort_unstable();
    if let Some(pair) = values.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(Error::usage(format!(
            "{what} repeats the value {}: each point needs its own size",
            pair[0]
        ))
        .with_hint(format!("e.g. {what} 5,25,50")));
    }
    if values.len() < 2 {
        return Err(Error::usage(format!(
            "{what} needs at least two values to fit a line, got {}",
            values.len()
        ))
        .with_hint(format!("three are better, e.g. {what} 5,25,50")));
    }
    if values.len() == 2 {
        progress::warning(&format!(
            "{what}: two values fit any line exactly, so r² is 1 whatever; a third value \
             tests the line"
        ));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_distinct_non_negative_integers_sorted() {
        assert_eq!(parse_values("--values", "25, 5,50").unwrap(), [5, 25, 50]);
        assert_eq!(parse_values("--values", "0,10").unwrap(), [0, 10]);
        for bad in ["5,x", "-1,5,6", "5", "", "5,5,10", "2.5,5"] {
            let err = parse_values("--values", bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}");
            assert!(err.hint.is_some(), "{bad}");
        }
        let err = parse_values("--values", "5,10,5").unwrap_err();
        assert!(
            err.message.contains("repeats the value 5"),
            "{}",
            err.message
        );
    }

    #[test]
    fn the_placeholder_appears_exactly_once() {
        check_template("--url", "http://h/issues?limit={n}", "n").unwrap();
        check_template("--url", "http://h/pages/{n}/items", "n").unwrap();
        let none = check_template("--url", "http://h/issues", "n").unwrap_err();
        assert!(none.message.contains("has no {n}"), "{}", none.message);
        let twice = check_template("--url", "http://h/{n}?limit={n}", "n").unwrap_err();
        assert!(twice.message.contains("2 times"), "{}", twice.message);
        assert_eq!(
            substitute("http://h/issues?limit={n}", "n", 25),
            "http://h/issues?limit=25"
        );
    }
}
