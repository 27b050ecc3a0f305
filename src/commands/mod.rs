//! One module per command, each of the same shape: a config validated from the flags →
//! `run` → a report → an exporter → an exit code.

pub mod audit;
pub mod check;
pub mod completions;
pub mod demo;
pub mod docs;
pub mod explain;
pub mod man;
pub mod measure;
pub mod ramp;
pub mod scale;
pub mod survey;
pub mod survey_auth;
pub mod survey_config;
pub mod survey_graphql;
pub mod survey_measure;
pub mod survey_production;

use crate::error::Result;
use crate::flags::{Cli, Command};

/// Runs the command the user asked for and returns its exit code.
pub async fn run(cli: Cli) -> Result<i32> {
    let env = |name: &str| std::env::var(name).ok();
    match cli.command {
        Command::Audit(args) => audit::execute(&args, &env).await,
        Command::Demo(args) => demo::execute(&args).await,
        Command::Check(args) => check::execute(&args, &env).await,
        Command::Measure(args) => measure::execute(&args, &env).await,
        Command::Ramp(args) => ramp::execute(&args, &env).await,
        Command::Scale(args) => scale::execute(&args, &env).await,
        Command::Survey(args) => survey::execute(&args, &env).await,
        Command::Completions(args) => completions::execute(&args),
        Command::Man => man::execute(),
        Command::Explain(args) => explain::execute(&args),
        Command::Docs(args) => docs::execute(args.topic.as_deref()),
    }
}
