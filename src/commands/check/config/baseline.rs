//! The `--baseline` run, read before measuring, and its check against the endpoints.

use super::schema::Endpoint;
use crate::commands::check::previous_run::PreviousRun;
use crate::error::{Error, Result};

/// The `--baseline` run, read before measuring.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The path as given, for the report.
    pub origin: String,
    pub run: PreviousRun,
}

impl Baseline {
    /// Refuses the baseline of another endpoint set: one in which none of the endpoints
    /// to check is found (by name, or by method, path and query for an audit report).
    /// Some missing is normal (an endpoint added on the branch); all missing is the wrong
    /// file.
    pub fn check_endpoints(&self, endpoints: &[Endpoint]) -> Result<()> {
        let found = endpoints.iter().any(|e| {
            let request = &e.audit.request;
            (self.run)
                .find(&e.name, request.method.as_str(), request.url.as_str())
                .is_some()
        });
        if found || endpoints.is_empty() {
            return Ok(());
        }
        let names = |names: Vec<String>| names.join(", ");
        let theirs: Vec<String> = (self.run.entries.iter())
            .map(|e| {
                e.name
                    .clone()
                    .unwrap_or_else(|| format!("{} {}", e.method, e.path))
            })
            .collect();
        Err(Error::usage(format!(
            "--baseline {} is the baseline of another endpoint set: it has {}, none of {}",
            self.origin,
            names(theirs),
            names(endpoints.iter().map(|e| e.name.clone()).collect())
        ))
        .with_hint(
            "pass the baseline written by pgcost check --write-baseline with this pgcost.toml",
        ))
    }
}
