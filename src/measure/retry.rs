//! Windows without churn or plan changes: one endpoint measured from an open window, and
//! measured again (warm-up, opening boundary, burst, closing boundary) when an app
//! connection opened or closed inside it, or a statement's plan changed between the halves
//! of its burst, up to `--retries` times. The rules are `cost::churn`'s and `cost::steady`'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::config::AuditConfig;
use crate::cost::churn::{self, Churn, ChurnVerdict};
use crate::cost::plan::Plans;
use crate::cost::report::Report;
use crate::error::Result;
use crate::http::connection::Driver;
use crate::measure::steady;
use crate::measure::{Boundaries, Meters, Notes, Window};
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

/// Why a window is measured again.
enum Discard {
    Churn(Churn),
    /// Statements whose rows or blocks per call changed between the burst's halves.
    Plans(Vec<crate::cost::steady::Change>),
}

/// Measures `endpoint` from the window `opened` opened. A window in which app connections
/// opened or closed, or in which a statement's plan changed between the halves of the
/// burst, is discarded and measured again (after a new warm-up), when its report is
/// otherwise valid and retries are left; when none are left, the last window stands, and
/// its report says what the churn added, or names the statements whose plans changed. A
/// connection per request is the endpoint's cost, never retried.
pub async fn measure(
    meter: &mut Meters,
    endpoint: Endpoint<'_>,
    mut opened: Boundaries,
    progress: &Progress,
    stop: &Arc<AtomicBool>,
) -> Result<Measured> {
    let config = endpoint.config;
    let mut base = endpoint.notes.clone();
    loop {
        let burst = meter.burst(config, endpoint.driver, progress, stop).await;
        let interrupted = stop.load(Ordering::Relaxed);
        let closed = meter
            .close(true, interrupted, progress, stop, burst.ended)
            .await?;
        let edges = (&opened, &closed);
        let report = |notes: Notes| {
            let unauthenticated = endpoint.unauthenticated.clone();
            meter.measured(config, edges, &burst, interrupted, unauthenticated, notes)
        };
        let first = report(base.clone());
        let discard = match churn::judge(meter.churn(&opened, &closed), config.requests) {
            ChurnVerdict::Churned(churned) => Discard::Churn(churned),
            ChurnVerdict::ConnectionPerRequest => return Ok(measured(first, closed, burst.ended)),
            ChurnVerdict::Clean => match steady::plan_changes(&opened, &burst, &closed) {
                changes if changes.is_empty() => return Ok(measured(first, closed, burst.ended)),
                changes => Discard::Plans(changes),
            },
        };
        // Plans are not fetched yet: they do not decide validity.
        let retry = first.report(&Plans::default()).valid
            && !interrupted
            && !stop.load(Ordering::Relaxed)
            && base.windows.discarded < config.retries;
        if !retry {
            let notes = match &discard {
                Discard::Churn(c) => with_unclean_warning(meter, config, edges, base, *c),
                Discard::Plans(changes) => {
                    steady::with_plan_warning(base, changes, edges, config.retries)
                }
            };
            return Ok(measured(report(notes), closed, burst.ended));
        }
        let reason = match &discard {
            Discard::Churn(churned) => churn::discard_reason(*churned),
            Discard::Plans(changes) => steady::discard_reason(changes),
        };
        base.windows.discarded += 1;
        base.windows.reasons.push(reason.clone());
        if !config.quiet {
            progress.status(&format!(
                "{reason}: measuring the window again ({} of {})",
                base.windows.discarded, config.retries
            ));
        }
        let meters = &*meter;
        base.warmed = steady::warm_up(meters, config, endpoint.driver, progress, stop).await?;
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
