//! The control windows of `--control` (docs/background.md): a quiet stretch measured by
//! the meter before anything is sent, and another after the last burst, sized so that the
//! corrected figures come with an uncertainty within 15% (or `--max-duration` runs out).
//! Both are read second by second for the background's bursts and period.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::background::{SAMPLE_EVERY, active_since};
use super::meter::{Meter, Window};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::postgres::settle::{Probe, Shortcut};
use crate::progress::Progress;
use pgcost_core::background::sizing::{self, Burst};
use pgcost_core::background::{self, Control, series};
use pgcost_core::delta;
use pgcost_core::report::model::figure::PerFigure;
use pgcost_core::report::model::invalid::Invalid;
use pgcost_core::report::model::notes::Note;
use pgcost_core::report::window_counts;
use pgcost_core::snapshot::Snapshot;

/// The control window's sub-windows: `pg_stat_statements` counts at once, so a read each
/// second gives the background's statements second by second, its bursts and its period.
const SUB_WINDOW: Duration = Duration::from_secs(1);
/// The least a measured window's closing settle wait is taken to add, as a burst is sized
/// (its wait before the control window, when longer, is taken instead).
const WINDOW_OVERHEAD: Duration = Duration::from_secs(3);

impl Meter {
    /// The control window: settles (the app's earlier counters must not land in it), then
    /// counts what moves over `--control` with no request from pgcost, and remembers the
    /// backends that did something meanwhile. Returns why its counts cannot be trusted.
    pub async fn control(
        &mut self,
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<Vec<Invalid>> {
        let Some(length) = self.watch.options.control else {
            return Ok(Vec::new());
        };
        let opened_at = self.watch.opened_at;
        let settle = self
            .settle(
                progress,
                ("settling before the control window", Shortcut::Any),
                stop,
                opened_at,
            )
            .await?;
        self.watch.settle_seconds = settle.waited.as_secs_f64();
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
                let counts = window_counts(&w.delta, self.reads_statements());
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

    /// With `--control`: the requests `config`'s burst should send instead of `-n`, and the
    /// note that says so. The endpoint's own figures per request come from the span between
    /// the first control window's closing snapshot and `opened` (the window's opening one,
    /// settled), which held the warm-ups (`warmed`: their requests and seconds, summed) and
    /// the background, taken out at the control window's rates. The time left is
    /// `--max-duration`'s, once `spent` (bursts sized before this one) and a control window
    /// after the burst are counted.
    pub fn sized_burst(
        &self,
        config: &AuditConfig,
        (requests, seconds): (u64, f64),
        opened: Option<&Snapshot>,
        spent: Duration,
    ) -> Option<(u64, Note)> {
        let control = self.watch.control.as_ref()?;
        let (ended_at, ended) = self.watch.control_end.as_ref()?;
        if seconds <= 0.0 || requests == 0 {
            return None;
        }
        let mut span = delta::delta(ended, opened?);
        self.watch.split(&mut span);
        let span_seconds = ended_at.elapsed().as_secs_f64();
        let counts = window_counts(&span, self.reads_statements());
        let c = control.counts;
        let own = |count: i64, background: i64| {
            let rate = background::rate(background, control.seconds);
            (count as f64 - rate * span_seconds).max(0.0) / requests as f64
        };
        let requests_per_second = requests as f64 / seconds;
        let overhead = WINDOW_OVERHEAD.max(Duration::from_secs_f64(self.watch.settle_seconds));
        let left = (self.watch.options.max_duration)
            .saturating_sub(self.watch.opened_at.elapsed())
            .saturating_sub(spent + overhead)
            .saturating_sub(Duration::from_secs_f64(control.seconds));
        let burst = Burst {
            own: PerFigure::from_fn(|f| Some(own(counts.get(f)?, c.get(f)?))),
            requests_per_second,
            overhead_seconds: overhead.as_secs_f64(),
            flush_interval_seconds: background::flush_interval_seconds(
                self.source.server.version_num,
            ),
            requested: config.requests,
            most: (left.as_secs_f64() * requests_per_second) as u64,
        };
        let sent = sizing::requests_for(control, &burst)?;
        let note = Note::BurstSized {
            requested: config.requests,
            sent,
            background_per_second: c
                .statements
                .map_or(0.0, |s| background::rate(s, control.seconds)),
        };
        Some((sent, note))
    }

    /// Counts what moves over `length` (whole periods of the background once one shows)
    /// with no request from pgcost, one sub-window at a time.
    async fn quiet_window(
        &mut self,
        length: Duration,
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<(Control, Vec<Invalid>)> {
        let spinner = progress.spinner(format!(
            "control window: {:.1} s with no request from pgcost",
            length.as_secs_f64()
        ));
        let (start_at, start) = (Instant::now(), self.source.snapshot().await?);
        let first = self.source.activity().await?;
        let wanted = (length.as_secs_f64() / SUB_WINDOW.as_secs_f64()).ceil() as usize;
        let (mut pids, mut subs, mut statements) = (BTreeSet::new(), Vec::new(), Vec::new());
        let (mut last_at, mut last) = (start_at, start.clone());
        while subs.len() < series::whole_periods(&statements, wanted, 2 * wanted) {
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
                let counts = window_counts(&sub, self.reads_statements());
                statements.extend(counts.statements);
                subs.push(counts);
                (last_at, last) = (at, snapshot);
            }
        }
        spinner.finish_and_clear();
        if stop.load(Ordering::Relaxed) {
            return Err(Error::interrupted());
        }
        if self.watch.control_end.is_none() {
            self.watch.control_end = Some((last_at, last.clone()));
        }
        let mut window = delta::delta(&start, &last);
        let reasons = (window.invalid_reasons.iter())
            .map(|r| r.within("control window"))
            .collect();
        self.watch.split(&mut window);
        self.watch.others.background_pids.extend(pids);
        let control = Control {
            seconds: last_at.duration_since(start_at).as_secs_f64(),
            counts: window_counts(&window, self.reads_statements()),
            subs,
            joins: Vec::new(),
        };
        Ok((control, reasons))
    }
}
