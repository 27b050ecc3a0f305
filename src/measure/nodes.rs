//! Every database a request touches (`--db` repeated), measured in the same window: one
//! [`Meter`] per database, each settled by its own rules, driven through the same
//! boundaries; the hot standbys the app reads from (`--replica`) are nodes too, after the
//! databases; and the window's report built from all of them.

use pgcost_core::report::model::invalid::Invalid;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::connection::Driver;
use crate::measure::meter::{Boundary, Burst, Ends, Meter, NodeWindow, Notes, Window};
use crate::measure::pgbouncer::{self, Bouncer};
use crate::progress::Progress;
use pgcost_core::churn::Churn;
use pgcost_core::delta::WindowDelta;
use pgcost_core::load::LoadResult;
use pgcost_core::nodes;
use pgcost_core::replica::moved_nothing_warning;
use pgcost_core::report::model::notes::Note;
use pgcost_core::report::{Context, Report};

/// The boundaries of every database at one edge of a window, in the order of `--db`.
pub type Boundaries = Vec<Boundary>;

/// The meters of the databases of one request: the first `--db` first, the replicas last.
pub struct Meters {
    meters: Vec<Meter>,
    /// PgBouncer in front of the first database (`--pgbouncer`), read at the same
    /// boundaries.
    bouncer: Option<Bouncer>,
}

impl Meters {
    /// Connects to every database the request touches. A database that does not exist, or
    /// whose pg_stat_statements cannot be read when another's can, is a setup error.
    pub async fn open(config: &AuditConfig, progress: &Progress) -> Result<Meters> {
        let mut meters = Vec::with_capacity(1 + config.more_dbs.len() + config.replicas.len());
        let several = !config.more_dbs.is_empty() || !config.replicas.is_empty();
        for target in std::iter::once(&config.db).chain(&config.more_dbs) {
            let meter = Meter::open(config, target, progress).await;
            meters.push(meter.map_err(|e| in_database(several, &target.dbname, e))?);
        }
        for target in &config.replicas {
            let meter = Meter::open(config, target, progress).await;
            let in_replica = |error: Error| Error {
                message: format!("replica {}: {}", target.redacted(), error.message),
                ..error
            };
            meters.push(meter.map_err(in_replica)?.into_replica());
        }
        let readable = |m: &&Meter| m.reads_statements();
        if let (Some(can), Some(cannot)) = (
            meters.iter().find(readable),
            meters.iter().find(|m| !m.reads_statements()),
        ) {
            return Err(Error::database(format!(
                "pg_stat_statements cannot be read for the database {:?} (it can for {:?}): \
                 the sum of the databases' statements would be wrong",
                cannot.node_name().name,
                can.node_name().name
            ))
            .with_hint(
                "check the warnings above, or run CREATE EXTENSION pg_stat_statements; in that \
                 database and GRANT pg_read_all_stats to its role; a standby takes the \
                 extension from its primary, but needs pg_stat_statements in its own \
                 shared_preload_libraries",
            ));
        }
        let bouncer = match &config.pgbouncer {
            Some(admin) => Some(Bouncer::open(admin, &config.db.dbname).await?),
            None => None,
        };
        Ok(Meters { meters, bouncer })
    }

    /// One database's meter alone, with no PgBouncer (a ramp reads the pooler per step).
    pub fn single(meter: Meter) -> Meters {
        Meters {
            meters: vec![meter],
            bouncer: None,
        }
    }

    /// The first database's meter.
    pub fn first(&self) -> &Meter {
        &self.meters[0]
    }

    /// The first database's meter, to read (`measure::screen`).
    pub fn first_mut(&mut self) -> &mut Meter {
        &mut self.meters[0]
    }

    /// PgBouncer, when `--pgbouncer` names its console.
    pub fn bouncer(&self) -> Option<&Bouncer> {
        self.bouncer.as_ref()
    }

    /// The control window (`--control`), over the first database (the only one it takes):
    /// why its counts cannot be trusted, if anything.
    pub async fn control(
        &mut self,
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<Vec<Invalid>> {
        self.meters[0].control(progress, stop).await
    }

    /// [`Meter::control_after`], over the first database.
    pub async fn control_after(
        &mut self,
        windows: &mut [Window],
        progress: &Progress,
        stop: &AtomicBool,
    ) -> Result<()> {
        self.meters[0].control_after(windows, progress, stop).await
    }

    /// The boundary that opens a window on every database, with none open before: all
    /// settle, then all open.
    pub async fn open_window(
        &mut self,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<Boundaries> {
        let mut boundaries = (self.close(Ends::Nothing, progress, stop, quiet_since)).await?;
        self.open_after(&mut boundaries, progress, stop, quiet_since)
            .await?;
        Ok(boundaries)
    }

    /// [`Meter::close`] for every database, in turn: the app is quiet meanwhile, and each
    /// database's wait is its own.
    pub async fn close(
        &mut self,
        ends: Ends,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<Boundaries> {
        let mut boundaries = Vec::with_capacity(self.meters.len());
        let several = self.meters.len() > 1;
        for meter in &mut self.meters {
            let boundary = (meter.close(ends, progress, stop, quiet_since).await)
                .map_err(|e| in_database(several, &meter.node_name().name, e))?;
            boundaries.push(boundary);
        }
        if let Some(bouncer) = self.bouncer.as_ref().filter(|_| ends != Ends::Nothing) {
            bouncer.closed().await?;
        }
        Ok(boundaries)
    }

    /// [`Meter::open_after`] for every database.
    pub async fn open_after(
        &mut self,
        boundaries: &mut Boundaries,
        progress: &Progress,
        stop: &AtomicBool,
        quiet_since: Instant,
    ) -> Result<()> {
        let several = self.meters.len() > 1;
        for (meter, boundary) in self.meters.iter_mut().zip(boundaries.iter_mut()) {
            (meter
                .open_after(boundary, progress, stop, quiet_since)
                .await)
                .map_err(|e| in_database(several, &meter.node_name().name, e))?;
        }
        if let Some(bouncer) = &self.bouncer {
            bouncer.opened().await?;
        }
        Ok(())
    }

    /// The app connections that opened or closed in the window, in every database.
    pub fn churn(&self, opened: &Boundaries, closed: &Boundaries) -> Churn {
        let each = self.edges(opened, closed).map(|(m, o, c)| m.churn(o, c));
        each.fold(Churn::default(), |sum, churn| Churn {
            opened: sum.opened + churn.opened,
            closed: sum.closed + churn.closed,
        })
    }

    /// Transactions beyond the top-level statements of the window, in every database.
    pub fn uncounted_extra(&self, opened: &Boundaries, closed: &Boundaries) -> Option<i64> {
        let extras: Vec<i64> = (self.edges(opened, closed))
            .filter_map(|(m, o, c)| m.uncounted(&m.window(o, c)).map(|(extra, _, _)| extra))
            .collect();
        (!extras.is_empty()).then(|| extras.iter().sum())
    }

    fn edges<'a>(
        &'a self,
        opened: &'a Boundaries,
        closed: &'a Boundaries,
    ) -> impl Iterator<Item = (&'a Meter, &'a Boundary, &'a Boundary)> {
        (self.meters.iter().zip(opened).zip(closed)).map(|((m, o), c)| (m, o, c))
    }

    /// Sends the measured burst, sampling the first database's backends meanwhile.
    pub async fn burst(
        &self,
        config: &AuditConfig,
        driver: &Arc<Driver>,
        progress: &Progress,
        stop: &Arc<AtomicBool>,
    ) -> Burst {
        let burst = self.meters[0].burst(config, driver, progress, stop);
        pgbouncer::sampled(self.bouncer.as_ref(), burst).await
    }

    /// What the window's report is built from (see [`Meter::measured`]): with several
    /// databases, each one's window and their sum; PgBouncer's own statements left out.
    pub fn measured(
        &self,
        config: &AuditConfig,
        edges: (&Boundaries, &Boundaries),
        burst: &Burst,
        unauthenticated: Option<Report>,
        notes: Notes,
    ) -> Window {
        let mut window = self.measured_databases(config, edges, burst, unauthenticated, notes);
        if let Some(bouncer) = &self.bouncer {
            bouncer.apply(&mut window);
        }
        window
    }

    fn measured_databases(
        &self,
        config: &AuditConfig,
        (opened, closed): (&Boundaries, &Boundaries),
        burst: &Burst,
        unauthenticated: Option<Report>,
        notes: Notes,
    ) -> Window {
        let unmeasured = self.unmeasured(opened, closed, config.requests);
        let mut window = if let [meter] = self.meters.as_slice() {
            let (o, c) = (&opened[0], &closed[0]);
            meter.measured(config, o, burst, c, unauthenticated, notes)
        } else {
            let nodes: Vec<NodeWindow> = (self.edges(opened, closed))
                .map(|(m, o, c)| {
                    let window = m.measured(config, o, burst, c, None, notes.clone());
                    NodeWindow {
                        name: m.node_name(),
                        delta: window.delta,
                        context: window.context,
                    }
                })
                .collect();
            let named: Vec<_> = nodes.iter().map(|n| (&n.name, &n.delta)).collect();
            Window {
                delta: nodes::merge(&named),
                load: burst.load.clone(),
                context: total_context(&nodes, unauthenticated),
                nodes,
                pgbouncer: None,
            }
        };
        window.context.warnings.extend(unmeasured);
        let moved = moved_nothing(&window.delta, &window.context, &burst.load);
        window.context.warnings.extend(moved);
        window
    }

    /// The lines about the databases that moved in the window without being measured,
    /// once per server.
    fn unmeasured(&self, opened: &Boundaries, closed: &Boundaries, requests: u64) -> Vec<Note> {
        let measured: Vec<&str> = self.meters.iter().map(|m| m.name()).collect();
        let mut servers = Vec::new();
        let mut lines = Vec::new();
        for (meter, o, c) in self.edges(opened, closed) {
            let server = meter.server();
            if servers.contains(&server) {
                continue;
            }
            let warned = meter.unmeasured(o, c, &measured, requests);
            if !warned.is_empty() || o.traffic_start.is_some() {
                servers.push(server);
            }
            lines.extend(warned);
        }
        lines
    }
}

/// The line about a successful burst that moved no counter of any node (`delta`, their
/// sum), when nothing else makes the window not valid.
fn moved_nothing(delta: &WindowDelta, context: &Context, load: &LoadResult) -> Option<Note> {
    let valid = delta.invalid_reasons.is_empty() && context.invalid_reasons.is_empty();
    valid.then(|| moved_nothing_warning(delta, load)).flatten()
}

/// `error` saying which database it is about, when there are `several`.
fn in_database(several: bool, name: &str, error: Error) -> Error {
    match several {
        true => Error {
            message: format!("database {name:?}: {}", error.message),
            ..error
        },
        false => error,
    }
}

/// The context of the databases' sum: the first database's, with every database's
/// warnings and reasons (each once), the longest waits, and statement figures only when
/// every database has them.
fn total_context(nodes: &[NodeWindow], unauthenticated: Option<Report>) -> Context {
    let mut context = nodes[0].context.clone();
    context.unauthenticated = unauthenticated;
    for node in &nodes[1..] {
        let other = &node.context;
        for line in &other.warnings {
            if !context.warnings.contains(line) {
                context.warnings.push(line.clone());
            }
        }
        for line in &other.invalid_reasons {
            if !context.invalid_reasons.contains(line) {
                context.invalid_reasons.push(line.clone());
            }
        }
        let settle = &mut context.settle;
        settle.before_seconds = settle.before_seconds.max(other.settle.before_seconds);
        settle.after_seconds = settle.after_seconds.max(other.settle.after_seconds);
        settle.timed_out |= other.settle.timed_out;
        context.statements_available &= other.statements_available;
    }
    context
}
