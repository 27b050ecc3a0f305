//! The background group: other traffic on the audited database (`--app-role`,
//! `--control`, `--max-background`; docs/background.md).

use clap::Args;

/// Other traffic on the audited database (`pgcost docs background`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Background traffic")]
pub struct BackgroundArgs {
    /// Count only this role's statements (repeatable): other roles' statements are shown as
    /// background, and the settle waits do not wait for their backends.
    #[arg(long = "app-role", value_name = "NAME")]
    pub app_roles: Vec<String>,

    /// Measure a quiet window this long first (before the warm-up, or the command), with no
    /// request from pgcost: its rates (transactions, rows read, statements per second) are
    /// the background, subtracted from the measured window, with their uncertainty. E.g. 10s.
    #[arg(long, value_name = "DURATION")]
    pub control: Option<String>,

    /// Without --control: the report is not valid when the background statements in the
    /// window (their rate after the burst, over the window) are more than this share of
    /// the rest. With --control: above it, a note says so; the figures stand when their
    /// uncertainty is within 15%.
    #[arg(long, value_name = "PERCENT", default_value = "5%")]
    pub max_background: String,

    /// With --control: the longest the run may take, from the first control window to the
    /// end of the second (after the burst). The burst (audit) and the second window are
    /// lengthened until every corrected figure is within ±15% or this runs out.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "3m",
        requires = "control"
    )]
    pub max_duration: String,
}
