//! The control window of `--control` (docs/background.md): a quiet stretch measured by the
//! meter before anything is sent, whose rates are the background subtracted later, read
//! second by second for the background's bursts and period.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::background::{SAMPLE_EVERY, active_since};
use super::meter::Meter;
use crate::cost::background::{Control, Counts, series};
use crate::cost::delta;
use crate::error::{Error, Result};
use crate::postgres::settle::Probe;
use crate::progress::Progress;

/// The control window's sub-windows: `pg_stat_statements` counts at once, so a read each
/// second gives the background's statements second by second, its bursts and its period.
const SUB_WINDOW: Duration = Duration::from_secs(1);

impl Meter {
    /// The control window: settles (the app's earlier counters must not land in it), then
    /// counts what moves over `--control` with no request from pgcost, and remembers the
    /// backends that did something meanwhile. Returns why its counts cannot be trusted.
    pub async fn control(&mut self, progress: &Progress, stop: &AtomicBool) -> Result<Vec<String>> {
        let Some(length) = self.watch.options.control else {
            return Ok(Vec::new());
        };
        let opened_at = self.watch.opened_at;
        let settle = self
            .settle(
                progress,
                "settling before the control window",
                stop,
                opened_at,
            )
            .await?;
        let mut reasons = Vec::new();
        if settle.timed_out {
            reasons.push(self.settle_reason("before the control window", &settle));
        }
        let spinner = progress.spinner(format!(
            "control window: {:.1} s with no request from pgcost",
            length.as_secs_f64()
        ));
        let (start_at, start) = (Instant::now(), self.source.snapshot().await?);
        let first = self.source.activity().await?;
        let wanted = (length.as_secs_f64() / SUB_WINDOW.as_secs_f64()).ceil() as usize;
        let (mut pids, mut series, mut subs) = (BTreeSet::new(), Vec::new(), 0);
        let (mut last_at, mut last) = (start_at, start.clone());
        // Whole sub-windows, and whole periods of the background once one shows.
        while subs < series::whole_periods(&series, wanted, 2 * wanted) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let next = SUB_WINDOW.saturating_sub(last_at.elapsed());
            tokio::time::sleep(SAMPLE_EVERY.min(next)).await;
            pids.extend(active_since(
                &self.source.activity().await?,
                first.server_now,
            ));
            if last_at.elapsed() >= SUB_WINDOW {
                let (at, snapshot) = (Instant::now(), self.source.snapshot().await?);
                let mut sub = delta::delta(&last, &snapshot);
                self.watch.split(&mut sub);
                let counts = Counts::of(&sub, self.reads_statements());
                series.extend(counts.statements);
                subs += 1;
                (last_at, last) = (at, snapshot);
            }
        }
        let (end_at, end) = (last_at, last);
        spinner.finish_and_clear();
        if stop.load(Ordering::Relaxed) {
            return Err(Error::interrupted());
        }
        let mut window = delta::delta(&start, &end);
        reasons.extend(
            window
                .invalid_reasons
                .iter()
                .map(|r| format!("control window: {r}")),
        );
        self.watch.split(&mut window);
        self.watch.control = Some(Control {
            seconds: end_at.duration_since(start_at).as_secs_f64(),
            counts: Counts::of(&window, self.reads_statements()),
            series,
        });
        self.watch.others.background_pids.extend(pids);
        Ok(reasons)
    }
}
