//! Screening (`pgcost survey`): one route warmed up, then its burst read from
//! pg_stat_statements alone, right before and right after it, with no settle wait.
//! pg_stat_statements is updated as each statement ends (docs/postgres.md), so the burst's
//! statements, rows returned, blocks and times are complete at once; transactions and the
//! table counters are published late, and are left to the exact windows.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::config::AuditConfig;
use crate::error::Result;
use crate::measure::{Boundary, Meter, Meters, Notes};
use crate::progress::Progress;
use pgcost_core::plan::Plans;
use pgcost_core::report::Report;
use pgcost_core::snapshot::{self, DatabaseStats, Snapshot};

/// The meters every route's screening reads, opened once.
pub struct Screen {
    meters: Meters,
}

impl Screen {
    /// Connects as `config` says; `None` when pg_stat_statements cannot be read, or the
    /// request touches several databases or replicas (a screening reads one database).
    pub async fn open(config: &AuditConfig, progress: &Progress) -> Result<Option<Screen>> {
        if !config.more_dbs.is_empty() || !config.replicas.is_empty() {
            return Ok(None);
        }
        let meters = Meters::open(config, progress).await?;
        Ok((meters.first().reads_statements()).then_some(Screen { meters }))
    }

    /// Warms the route up, then sends its burst between two reads of pg_stat_statements.
    /// The report has every statement figure of the burst and no database or table figure
    /// (they are 0): only the statement figures and findings are to be read from it.
    pub async fn route(
        &mut self,
        config: &AuditConfig,
        progress: &Progress,
        stop: &Arc<AtomicBool>,
    ) -> Result<Report> {
        let driver = super::driver(config)?;
        // As an exact window's: the credentials must count, checked before the warm-up.
        let credentials = super::credentials::probe(config).await?;
        let endpoint = (config, &driver);
        let (warmed, tags) =
            super::warm_up_sampled(&self.meters, endpoint, progress, stop, 1).await?;
        let meter = self.meters.first_mut();
        let before = statements_read(meter).await?;
        let opened = edge(Some(before.clone()), None);
        let burst = meter.burst(config, &driver, progress, stop).await;
        let interrupted = stop.load(Ordering::Relaxed);
        let mut after = statements_read(meter).await?;
        let start_calls = snapshot::calls(&before.statements);
        meter.source.name_changed(&start_calls, &mut after).await?;
        let closed = edge(None, Some(after));
        let notes = Notes {
            warmed,
            tags,
            invalid_reasons: credentials.invalid_reason.into_iter().collect(),
            warnings: credentials.warning.into_iter().collect(),
            ..Notes::default()
        };
        let mut window = meter.measured(config, &opened, &burst, &closed, interrupted, None, notes);
        // The background is judged from the database counters, which a screening has not.
        window.context.background = None;
        Ok(window.report(&Plans::default()))
    }
}

/// pg_stat_statements (and its info view, for evictions) now, with the database's
/// counters left at 0: they are not published yet.
async fn statements_read(meter: &mut Meter) -> Result<Snapshot> {
    let snapshot = meter.source.snapshot().await?;
    Ok(Snapshot {
        database: DatabaseStats::default(),
        ..snapshot
    })
}

/// A boundary of a screening window: the snapshot that opens it (`start`) or closes it
/// (`end`), read at once, without tables.
fn edge(start: Option<Snapshot>, end: Option<Snapshot>) -> Boundary {
    let now = Some(Instant::now());
    Boundary {
        start_at: start.as_ref().and(now),
        end_at: end.as_ref().and(now),
        end,
        start,
        ..Boundary::default()
    }
}
