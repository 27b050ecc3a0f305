//! Screening (`pgcost survey`): one route warmed up, then its burst read from
//! pg_stat_statements alone, right before and right after it, with no settle wait.
//! pg_stat_statements is updated as each statement ends (docs/postgres.md), so the burst's
//! statements, rows returned, blocks and times are complete at once; transactions and the
//! table counters are published late, and are left to the exact windows.

use std::time::Instant;

use crate::config::AuditConfig;
use crate::error::Result;
use crate::measure::{Boundaries, Boundary, Burst, Meter, Notes, Window};
use pgcost_core::snapshot::{self, DatabaseStats, Snapshot};

/// The read that opens a screening window: pg_stat_statements now, without tables.
pub(super) async fn opening_read(meter: &mut Meter) -> Result<Boundaries> {
    Ok(vec![edge(Some(statements_read(meter).await?), None)])
}

/// The read that closes the screening window `opened` opened, with the statements whose
/// texts changed since named.
pub(super) async fn closing_read(meter: &mut Meter, opened: &Boundaries) -> Result<Boundaries> {
    let mut after = statements_read(meter).await?;
    let before = opened.first().and_then(|b| b.start.as_ref());
    let start_calls = before.map(|b| snapshot::calls(&b.statements));
    meter
        .source
        .name_changed(&start_calls.unwrap_or_default(), &mut after)
        .await?;
    Ok(vec![edge(None, Some(after))])
}

/// The screening window of `config`'s burst: its statement figures, with no background
/// (judged from the database counters, which a screening has not).
pub(super) fn window(
    meter: &Meter,
    config: &AuditConfig,
    (opened, closed): (&Boundaries, &Boundaries),
    burst: &Burst,
    notes: Notes,
) -> Window {
    let (opened, closed) = (&opened[0], &closed[0]);
    let mut window = meter.measured(config, opened, burst, closed, None, notes);
    window.context.background = None;
    window
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
