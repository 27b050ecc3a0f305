//! `pgcost demo`: a throwaway cluster, the bundled demo API, and an audit of each of its
//! three permission pipelines in shared settle windows, compared side by side. Everything
//! is removed afterwards, also on Ctrl-C or on error.

pub mod api;
pub mod ramps;
mod setup;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::error::{Error, Result, exit};
use crate::flags::DemoArgs;
use crate::output;
use crate::progress::Progress;
use crate::render::format::{DEMO_FORMATS, Outputs};
use crate::values::{check_counts, parse_duration};
use api::Pipeline;
use pgcost_core::report::Report;
// The demo's document is in the model and its views in render/; the tests reach them
// through the command too.
pub use crate::render::demo::render_comparison;
pub use pgcost_core::demo::{Demo, DemoReport, Pipelines};
pub use setup::{DB, Environment, TENANT_ID, USER_ID, audit_config, setup};

/// `pgcost demo`'s flags, checked.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    pub serve: bool,
    pub ramp: bool,
    pub requests: u64,
    pub concurrency: u32,
    pub cache_ttl: Duration,
    /// `--format` and `-o`, and every `--export`.
    pub outputs: Outputs,
    pub quiet: bool,
}

impl DemoConfig {
    pub fn from_args(args: &DemoArgs) -> Result<DemoConfig> {
        let cache_ttl = parse_duration("--cache-ttl", &args.cache_ttl)?;
        let requests = (args.burst.count.requests).unwrap_or(crate::flags::DEFAULT_REQUESTS);
        let concurrency = args.burst.concurrency;
        check_counts(requests, concurrency)?;
        Ok(DemoConfig {
            serve: args.serve,
            ramp: args.ramp,
            requests,
            concurrency,
            cache_ttl,
            outputs: crate::config::outputs_from_args(&args.output, DEMO_FORMATS)?,
            quiet: args.output.quiet,
        })
    }
}

/// The command. Dropping the demo on Ctrl-C stops the API and the cluster and removes its
/// files.
pub async fn execute(args: &DemoArgs) -> Result<i32> {
    let config = DemoConfig::from_args(args)?;
    if config.serve {
        return serve(&config).await;
    }
    tokio::select! {
        result = run(&config) => result,
        _ = tokio::signal::ctrl_c() => {
            Progress::new(config.quiet).status("interrupted: the demo cluster was stopped and removed");
            Ok(exit::INTERRUPTED)
        }
    }
}

async fn run(config: &DemoConfig) -> Result<i32> {
    let progress = Progress::new(config.quiet);
    let env = setup(config.cache_ttl, &progress).await?;
    let report = audit_all(&env, config.requests, config.concurrency, &progress).await?;
    let ramps = if config.ramp {
        Some(ramps::ramp_pipelines(&env, &progress).await?)
    } else {
        None
    };
    drop(env);
    let demo = Demo {
        report: &report,
        ramps: ramps.as_ref(),
    };
    output::write(&demo, &config.outputs, &|text| text.to_string(), &progress)?;
    Ok(if report.valid() {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// `--serve`: set everything up, say how to reach it, and stay up until Ctrl-C.
async fn serve(config: &DemoConfig) -> Result<i32> {
    let env = setup(config.cache_ttl, &Progress::new(config.quiet)).await?;
    let mut out = String::new();
    out.push_str(&format!("database  {}\n", env.db_url));
    for pipeline in Pipeline::ALL {
        out.push_str(&format!(
            "api       {:<7} {}\n",
            pipeline.name(),
            env.api.url(pipeline)
        ));
    }
    out.push_str(&format!("token     {}\n", env.token));
    out.push_str(&format!(
        "\nIn another terminal:\n  pgcost audit --db {} --url '{}' -H 'Authorization: Bearer {}'\n\nCtrl-C stops the demo and removes everything.\n",
        env.db_url,
        env.api.url(Pipeline::Naive),
        env.token
    ));
    output::print_stdout(&out)?;
    let _ = tokio::signal::ctrl_c().await;
    drop(env);
    Ok(exit::OK)
}

/// The order of the measured windows. The cached pipeline goes first: its warm-up fills
/// the per-process cache, and its burst must come before that cache's TTL (15 s by
/// default) runs out, which it would not after two more windows of about 11 s each.
const MEASURED_ORDER: [Pipeline; 3] = [Pipeline::Cached, Pipeline::Naive, Pipeline::Exists];

/// Audits the three pipelines of a running demo in one sequence of shared settle waits:
/// four waits for three windows, instead of six.
pub async fn audit_all(
    env: &Environment,
    requests: u64,
    concurrency: u32,
    progress: &Progress,
) -> Result<DemoReport> {
    let configs = MEASURED_ORDER
        .iter()
        .map(|&pipeline| audit_config(env, pipeline, requests, concurrency))
        .collect::<Result<Vec<_>>>()?;
    progress
        .status("warming up the three pipelines, then measuring each between shared settle waits");
    let stop = Arc::new(AtomicBool::new(false));
    let reports = crate::measure::run_sequence(&configs, progress, stop, |i| {
        let pipeline = MEASURED_ORDER[i];
        progress.status(&format!(
            "auditing the {} pipeline: {}",
            pipeline.name(),
            env.api.url(pipeline)
        ));
    })
    .await?;
    // In MEASURED_ORDER.
    let [cached, naive, exists]: [Report; 3] = reports
        .try_into()
        .map_err(|_| Error::usage("the demo measured fewer than three pipelines"))?;
    Ok(DemoReport {
        pipelines: Pipelines {
            naive,
            exists,
            cached,
        },
    })
}
