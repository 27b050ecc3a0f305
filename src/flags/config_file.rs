//! `--config`: the pgcost.toml that `check` reads its endpoints from and `survey` its
//! `[survey]` section from.

use std::path::PathBuf;

use clap::Args;

/// The file `check` and `survey` read (each command sets its default and help).
#[derive(Debug, Clone, Args)]
pub struct ConfigFileArgs {
    /// The pgcost.toml to read.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// The file both commands look for in the working directory.
pub const DEFAULT_CONFIG: &str = "pgcost.toml";
