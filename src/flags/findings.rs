//! The findings group: what the analysis after the window does (`--no-findings`,
//! `--no-plans`, `--threshold`).

use clap::Args;

/// `--no-plans` alone: `check` takes it without the rest of the findings group (its
/// thresholds are in pgcost.toml).
#[derive(Debug, Clone, Args)]
pub struct PlansArgs {
    /// Do not fetch the plans (EXPLAIN, never run) of the findings' and the top statements
    /// after the measured window; `per_row_subquery`, judged from the plans, then says
    /// nothing.
    #[arg(long)]
    pub no_plans: bool,
}

/// The findings and the plans of `audit`, `ramp` and `measure`.
#[derive(Debug, Clone, Args)]
pub struct FindingsArgs {
    /// Skip the analysis that names waste (collection-to-boolean, N+1, ...).
    #[arg(long)]
    pub no_findings: bool,

    #[command(flatten)]
    pub plans: PlansArgs,

    #[command(flatten)]
    pub source: super::SourceArgs,

    /// Change a finding threshold, NAME=VALUE (repeatable), e.g.
    /// collection_min_rows_per_call=20. Names are listed in `pgcost docs findings`.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub thresholds: Vec<String>,
}
