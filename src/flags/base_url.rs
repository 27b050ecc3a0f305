//! The base-URL group (`--base-url`): the app's origin that relative paths are sent to,
//! shared by `check` (an override of pgcost.toml's) and `survey` (required).

use clap::Args;

/// `--base-url`.
#[derive(Debug, Clone, Args)]
pub struct BaseUrlArgs {
    /// Use this base URL instead of the file's base_url, e.g. for an app on another port.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}
