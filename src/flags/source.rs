//! The source group (`--source`, `--no-tags`): where the app's code is, and whether to read
//! the tags of its SQL comments, so that findings name the file and line to open.

use std::path::PathBuf;

use clap::Args;

/// `--source`, in `audit`, `measure`, `ramp`, `scale`, `survey` (with the findings) and
/// `check` (beside `source` in pgcost.toml, which it overrides).
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    /// The app's source tree: each finding names the model or entity that declares its
    /// tables (Rails, Django, SQLAlchemy, TypeORM, Sequelize, Prisma, Laravel, JPA), and
    /// the line that holds its SQL when the source writes it out (`pgcost docs source`).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,

    /// Do not sample pg_stat_activity for the tags of the app's SQL comments (route,
    /// controller, file:line) during the warm-up and the burst (`pgcost docs tags`); `ramp`
    /// names no statement, so it samples none either way.
    #[arg(long)]
    pub no_tags: bool,
}
