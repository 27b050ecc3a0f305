//! The files an endpoint names, as paths under the directory of pgcost.toml.

use std::path::{Path, PathBuf};

use super::schema::EndpointTable;
use crate::error::{Error, Result};

/// The request body: `body`, or `body_file` under `base_dir` (read by the load group's
/// check, as `--body-file` is).
pub(super) fn body(
    table: &EndpointTable,
    base_dir: &Path,
) -> Result<(Option<String>, Option<PathBuf>)> {
    match (&table.body, &table.body_file) {
        (Some(_), Some(_)) => Err(Error::usage("has both body and body_file; keep one")),
        (body, file) => Ok((body.clone(), file.as_ref().map(|p| base_dir.join(p)))),
    }
}
