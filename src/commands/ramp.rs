//! `pgcost ramp`: raise the load step by step, find the knee, and name the wall.

use crate::commands::audit;
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::flags::RampArgs;
use crate::measure::ramp::RampPlan;
use crate::measure::ramp::step::Length;
use crate::postgres::conninfo::EnvLookup;
use crate::progress::Progress;
use crate::render::format::RAMP_FORMATS;
use crate::values::{parse_percent, parse_positive_duration};

/// The command: validate the flags, ramp, render, and the exit code.
pub async fn execute(args: &RampArgs, env: EnvLookup<'_>) -> Result<i32> {
    let plan = plan_from_args(args)?;
    let config = AuditConfig::from_args(&args.audit, env)?;
    (config.outputs.within(RAMP_FORMATS)).map_err(|message| {
        Error::usage(message).with_hint("a ramp has no findings to write as SARIF")
    })?;
    let measured = async |progress: &Progress, stop| {
        crate::measure::ramp(&config, &plan, progress, stop).await
    };
    audit::run(&config, measured, |report| report.valid).await
}

/// The ramp's own flags, checked.
pub fn plan_from_args(args: &RampArgs) -> Result<RampPlan> {
    let background = &args.audit.background;
    if background.control.is_some() || !background.app_roles.is_empty() {
        return Err(Error::usage(
            "pgcost ramp does not take --app-role, --control or --max-background yet: its \
             steps read pg_stat_statements of every role",
        ));
    }
    let steps = args.steps.as_deref().map(parse_steps).transpose()?;
    let rates = args.rates.as_deref().map(parse_rates).transpose()?;
    let length = match args.step_requests {
        Some(0) => return Err(Error::usage("--step-requests must be at least 1")),
        Some(n) => Length::Requests(n),
        None => Length::Time(parse_positive_duration(
            "--step-duration",
            &args.step_duration,
        )?),
    };
    let max_errors = parse_percent(&args.max_errors).map_err(|_| {
        Error::usage(format!(
            "--max-errors {:?} is not a percentage",
            args.max_errors
        ))
    })?;
    Ok(RampPlan {
        steps,
        rates,
        length,
        max_errors: max_errors / 100.0,
        max_p99: (args.max_p99.as_deref())
            .map(|text| parse_positive_duration("--max-p99", text))
            .transpose()?,
        sample_interval: parse_positive_duration("--sample-interval", &args.sample_interval)?,
        pids: args.pids.clone(),
    })
}

/// `1,2,4,8`: positive concurrencies, ascending.
fn parse_steps(text: &str) -> Result<Vec<u32>> {
    let steps: Vec<u32> = text
        .split(',')
        .map(|part| part.trim().parse::<u32>().ok().filter(|c| *c > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Error::usage(format!("--steps {text:?} is not a list of concurrencies"))
                .with_hint("e.g. --steps 1,2,4,8,16")
        })?;
    check_ascending("--steps", text, &steps)?;
    Ok(steps)
}

/// A ramp raises the load: each step above the one before, or the knee means nothing.
fn check_ascending<T: PartialOrd>(flag: &str, text: &str, values: &[T]) -> Result<()> {
    if values.windows(2).all(|pair| pair[0] < pair[1]) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{flag} {text:?} does not ascend: a ramp raises the load"
    ))
    .with_hint(format!(
        "list each step above the one before, e.g. {flag} 1,2,4,8"
    )))
}

/// `100,200,400`: positive arrival rates per second, ascending.
fn parse_rates(text: &str) -> Result<Vec<f64>> {
    let rates: Vec<f64> = text
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0)
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Error::usage(format!("--rate {text:?} is not a list of rates per second"))
                .with_hint("e.g. --rate 100,200,400")
        })?;
    check_ascending("--rate", text, &rates)?;
    Ok(rates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_positive_concurrencies() {
        assert_eq!(parse_steps("1, 2,4").unwrap(), [1, 2, 4]);
        assert!(parse_steps("1,0").is_err());
        assert!(parse_steps("1,x").is_err());
        assert!(parse_steps("").is_err());
        assert_eq!(parse_rates("100, 250.5").unwrap(), [100.0, 250.5]);
        assert!(parse_rates("100,-1").is_err());
    }

    #[test]
    fn steps_and_rates_must_ascend() {
        for text in ["4,2", "1,2,2", "8,1,16"] {
            let err = parse_steps(text).unwrap_err();
            assert_eq!(err.exit_code(), 2);
            assert!(err.message.contains("does not ascend"), "{}", err.message);
        }
        assert_eq!(parse_steps("3").unwrap(), [3]);
        let err = parse_rates("200,100").unwrap_err();
        assert!(err.message.contains("--rate"), "{}", err.message);
        assert!(parse_rates("100,100").is_err());
    }
}
