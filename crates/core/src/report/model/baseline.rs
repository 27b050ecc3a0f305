//! The unauthenticated baseline beside the authenticated run (`report.baseline`): plain
//! data, read off two reports' figures.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Report;
use super::figures::Figures;

/// Both runs side by side (`report.baseline`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Baseline {
    /// The burst sent without any credentials.
    pub unauthenticated: Figures,
    /// The unauthenticated run's responses per HTTP status (401 and 403 expected).
    pub unauthenticated_status: BTreeMap<String, u64>,
    /// The authenticated run: the report's own figures, repeated for the comparison.
    pub authenticated: Figures,
    /// `authenticated` minus `unauthenticated`: what everything after authentication
    /// costs per request (and, for `rps` and `latency_p50_ms`, in speed).
    pub after_authentication: Figures,
}

impl Baseline {
    pub fn compare(unauthenticated: &Report, authenticated: Figures) -> Baseline {
        let without = Figures::of(unauthenticated).compared();
        let with = authenticated.compared();
        Baseline {
            unauthenticated: without,
            unauthenticated_status: unauthenticated.load.status.clone(),
            authenticated: with,
            after_authentication: with.minus(&without),
        }
    }
}
