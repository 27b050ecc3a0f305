//! `pgcost explain KIND`: the full advice for one kind of finding, as `rustc --explain`
//! prints the long form of an error.

use crate::error::{Result, exit};
use crate::flags::ExplainArgs;
use crate::output;
use pgcost_core::findings::{self, FindingKind};

/// The validated request: which kind to explain.
pub struct ExplainConfig {
    pub kind: FindingKind,
}

impl ExplainConfig {
    pub fn from_args(args: &ExplainArgs) -> ExplainConfig {
        ExplainConfig { kind: args.kind }
    }
}

/// The command: the advice of one kind, on stdout.
pub fn execute(args: &ExplainArgs) -> Result<i32> {
    let config = ExplainConfig::from_args(args);
    output::print_stdout(&run(&config))?;
    Ok(exit::OK)
}

/// The text `pgcost explain` prints.
pub fn run(config: &ExplainConfig) -> String {
    findings::explain(config.kind)
}
