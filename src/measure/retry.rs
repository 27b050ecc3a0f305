//! Windows without churn: one endpoint measured from an open window, and measured again
//! (warm-up, opening boundary, burst, closing boundary) when an app connection opened or
//! closed inside it, up to `--retries` times. The rules are `cost::churn`'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::config::AuditConfig;
use crate::cost::churn::{self, Churn, ChurnVerdict, Windows};
use crate::cost::plan::Plans;
use crate::cost::report::Report;
use crate::error::Result;
use crate::http::connection::Driver;
use crate::measure::{Boundaries, Meters, Notes, Window, warm_up};
use crate::progress::Progress;

/// One endpoint of a sequence, ready for its burst.
pub struct Endpoint<'a> {
    pub config: &'a AuditConfig,
    pub driver: &'a Arc<Driver>,
    /// The report of its unauthenticated run, to set beside its own.
    pub unauthenticated: Option<Report>,
    /// What the run learnt of it before the warm-up.
    pub notes: Notes,
}

/// The reported window of one endpoint.
pub struct Measured {
    pub window: Window,
    /// The boundary that closed the reported window; the next window is not open yet.
    pub closed: Boundaries,
    /// When the endpoint's last burst ended.
    pub quiet_since: Instant,
}

/// Measures `endpoint` from the window `opened` opened. A window in which app connections
/// opened or closed is discarded and measured again, when its report is otherwise valid
/// and retries are left; when none are left, the last window stands, and its report says
/// what the churn added. A connection per request is the endpoint's cost, never retried.
pub async fn measure(
    meter: &mut Meters,
    endpoint: Endpoint<'_>,
    mut opened: Boundaries,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<Measured> {
    let config = endpoint.config;
    let mut windows = Windows::default();
    loop {
        let burst = meter.burst(config, endpoint.driver, progress, stop).await;
        let interrupted = stop.load(Ordering::Relaxed);
        let closed = meter
            .close(true, interrupted, progress, stop, burst.ended)
            .await?;
        let verdict = churn::judge(meter.churn(&opened, &closed), config.requests);
        let notes = Notes {
            windows: windows.clone(),
            ..endpoint.notes.clone()
        };
        let report = |notes: Notes| {
            let unauthenticated = endpoint.unauthenticated.clone();
            meter.measured(
                config,
                (&opened, &closed),
                &burst,
                interrupted,
                unauthenticated,
                notes,
            )
        };
        let first = report(notes.clone());
        let churned = match verdict {
            ChurnVerdict::Churned(churned) => churned,
            ChurnVerdict::Clean | ChurnVerdict::ConnectionPerRequest => {
                return Ok(measured(first, closed, burst.ended));
            }
        };
        // Plans are not fetched yet: they do not decide validity.
        let retry = first.report(&Plans::default()).valid
            && !interrupted
            && !stop.load(Ordering::Relaxed)
            && windows.discarded < config.retries;
        if !retry {
            let notes = with_unclean_warning(meter, config, (&opened, &closed), notes, churned);
            let warned = report(notes);
            return Ok(measured(warned, closed, burst.ended));
        }
        windows.discarded += 1;
        windows.reasons.push(churn::discard_reason(churned));
        if !config.quiet {
            progress.status(&format!(
                "{}: measuring the window again ({} of {})",
                churn::discard_reason(churned),
                windows.discarded,
                config.retries
            ));
        }
        warm_up(config, endpoint.driver, progress, stop).await?;
        opened = meter
            .boundary((false, true, false), progress, stop, Instant::now())
            .await?;
    }
}

fn measured(window: Window, closed: Boundaries, quiet_since: Instant) -> Measured {
    Measured {
        window,
        closed,
        quiet_since,
    }
}

/// `notes` with the line that says what the churn of the kept window added.
pub(crate) fn with_unclean_warning(
    meter: &Meters,
    config: &AuditConfig,
    (opened, closed): (&Boundaries, &Boundaries),
    mut notes: Notes,
    churned: Churn,
) -> Notes {
    let uncounted = meter.uncounted_extra(opened, closed);
    notes.warnings.push(churn::unclean_warning(
        churned,
        config.retries,
        uncounted,
        config.requests,
    ));
    notes
}
