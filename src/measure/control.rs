//! The control windows of `--control` (docs/background.md): a quiet stretch measured by
//! the meter before anything is sent, and another after the last burst, sized so that the
//! corrected figures come with an uncertainty within 15% (or `--max-duration` runs out).
//! Both are read second by second for the background's bursts and period.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::background::{SAMPLE_EVERY, active_since};
use super::meter::{Meter, Window};
use crate::cost::background::{self, Control, Counts, series};
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
        let (control, window_reasons) = self.quiet_window(length, progress, stop).await?;
        reasons.extend(window_reasons);
        self.watch.control = Some(control);
        Ok(reasons)
    }

    /// The control window after the last burst (its closing settle wait already passed):
    /// as long as the one before, or as long as the windows' figures need for an
    /// uncertainty within 15%, within `--max-duration`; then merged with the one before
    /// into every window's background; why its counts cannot be trusted goes into every
    /// window's reasons.
    pub async fn control_after(
        &mut self,
        windows: &mut [Window],
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<()> {
        let Some(before) = self.watch.control.clone() else {
            return Ok(());
        };
        let needed = (windows.iter())
            .filter_map(|w| {
                let input = w.context.background.as_ref()?;
                let counts = Counts::of(&w.delta, self.reads_statements());
                Some(background::control_needed(input, counts).unwrap_or(before.seconds))
            })
            .fold(0.0, f64::max);
        let left = (self.watch.options.max_duration)
            .saturating_sub(self.watch.opened_at.elapsed())
            .as_secs_f64();
        let length = (needed - before.seconds).max(before.seconds).min(left);
        if length < SUB_WINDOW.as_secs_f64() || stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let after = self.quiet_window(Duration::from_secs_f64(length), progress, stop);
        let (after, reasons) = match after.await {
            Ok(after) => after,
            // Interrupted: the windows stand with the first control window alone.
            Err(_) if stop.load(Ordering::Relaxed) => return Ok(()),
            Err(e) => return Err(e),
        };
        let merged = before.merged(&after);
        for window in windows.iter_mut() {
            let context = &mut window.context;
            if let Some(input) = context.background.as_mut() {
                input.control = Some(merged.clone());
                context.invalid_reasons.extend(reasons.iter().cloned());
            }
        }
        self.watch.control = Some(merged);
        Ok(())
    }

    /// Counts what moves over `length` (whole periods of the background once one shows)
    /// with no request from pgcost, one sub-window at a time.
    async fn quiet_window(
        &mut self,
        length: Duration,
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<(Control, Vec<String>)> {
        let spinner = progress.spinner(format!(
            "control window: {:.1} s with no request from pgcost",
            length.as_secs_f64()
        ));
        let (start_at, start) = (Instant::now(), self.source.snapshot().await?);
        let first = self.source.activity().await?;
        let wanted = (length.as_secs_f64() / SUB_WINDOW.as_secs_f64()).ceil() as usize;
        let (mut pids, mut series, mut subs) = (BTreeSet::new(), Vec::new(), 0);
        let (mut last_at, mut last) = (start_at, start.clone());
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
                series.extend(Counts::of(&sub, self.reads_statements()).statements);
                (last_at, last, subs) = (at, snapshot, subs + 1);
            }
        }
        spinner.finish_and_clear();
        if stop.load(Ordering::Relaxed) {
            return Err(Error::interrupted());
        }
        let mut window = delta::delta(&start, &last);
        let reasons = (window.invalid_reasons.iter())
            .map(|r| format!("control window: {r}"))
            .collect();
        self.watch.split(&mut window);
        self.watch.others.background_pids.extend(pids);
        let control = Control {
            seconds: last_at.duration_since(start_at).as_secs_f64(),
            counts: Counts::of(&window, self.reads_statements()),
            series,
        };
        Ok((control, reasons))
    }
}
