//! Files an endpoint names, read from the directory of pgcost.toml.

use std::path::Path;

use bytes::Bytes;

use super::schema::EndpointTable;
use crate::error::{Error, Result};
use crate::values::read_body_file;

/// The request body: `body`, or the contents of `body_file`.
pub(super) fn body(table: &EndpointTable, base_dir: &Path) -> Result<Option<Bytes>> {
    match (&table.body, &table.body_file) {
        (Some(_), Some(_)) => Err(Error::usage("has both body and body_file; keep one")),
        (Some(text), None) => Ok(Some(Bytes::from(text.clone()))),
        (None, Some(path)) => read_body_file("body_file", &base_dir.join(path)).map(Some),
        (None, None) => Ok(None),
    }
}
