//! PgBouncer around a measured window (`--pgbouncer`): `SHOW STATS` and `SHOW POOLS` read
//! at the window's boundaries, `SHOW POOLS` sampled while the load runs, and PgBouncer's
//! own statements taken out of the window before its report is built.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::meter::Window;
use crate::error::{Error, Result};
use crate::postgres::conninfo::DbTarget;
use crate::postgres::pgbouncer::Console;
use pgcost_core::pgbouncer::{self, PgBouncerFigures, Reading, Settings};

/// How often `SHOW POOLS` is read while the load runs.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

/// The readings of the open window.
#[derive(Default)]
struct State {
    start: Option<(Reading, Instant)>,
    end: Option<(Reading, Instant)>,
    /// Most clients waiting at once in the samples since the window opened.
    max_cl_waiting: i64,
}

/// The admin console of the PgBouncer in front of the target, and the open window's
/// readings.
pub struct Bouncer {
    console: Console,
    /// The PgBouncer database (pool) in front of the target database.
    pub database: String,
    settings: Settings,
    state: Mutex<State>,
}

impl Bouncer {
    /// Connects to the console at `admin`, and finds the pool of the target `dbname`.
    pub async fn open(admin: &DbTarget, dbname: &str) -> Result<Bouncer> {
        let console = Console::open(admin).await?;
        let entries = console.databases().await?;
        let database = pgbouncer::pool_database(&entries, dbname).map_err(|why| {
            Error::usage(format!("--pgbouncer: {why}")).with_hint(
                "name the PgBouncer database in --db's database name, as the app connects to it",
            )
        })?;
        let settings = console.settings().await?;
        Ok(Bouncer {
            console,
            database,
            settings,
            state: Mutex::new(State::default()),
        })
    }

    /// Reads the console where a window opens.
    pub async fn opened(&self) -> Result<()> {
        let reading = self.console.read().await?;
        let mut state = self.state.lock().expect("not poisoned");
        *state = State {
            start: Some((reading, Instant::now())),
            ..State::default()
        };
        Ok(())
    }

    /// Reads the console where a window closes.
    pub async fn closed(&self) -> Result<()> {
        let reading = self.console.read().await?;
        self.state.lock().expect("not poisoned").end = Some((reading, Instant::now()));
        Ok(())
    }

    /// Samples `SHOW POOLS` until `done`, keeping the most clients waiting at once. A
    /// failed sample is skipped: the readings at the boundaries still count.
    pub async fn sample_until(&self, done: &AtomicBool) {
        let mut peak = 0;
        while !done.load(Ordering::Relaxed) {
            if let Ok(pools) = self.console.pools().await {
                let reading = Reading {
                    stats: Vec::new(),
                    pools,
                };
                peak = peak.max(reading.cl_waiting(&self.database));
            }
            tokio::time::sleep(SAMPLE_INTERVAL).await;
        }
        let mut state = self.state.lock().expect("not poisoned");
        state.max_cl_waiting = state.max_cl_waiting.max(peak);
    }

    /// Takes PgBouncer's own statements out of `window`, says so, and sets PgBouncer's
    /// figures of the window beside it.
    pub fn apply(&self, window: &mut Window) {
        let state = self.state.lock().expect("not poisoned");
        let (Some((before, opened)), Some((after, closed))) = (&state.start, &state.end) else {
            return;
        };
        let requests = window.context.requests;
        let servers = before
            .servers(&self.database)
            .max(after.servers(&self.database));
        let seconds = closed.duration_since(*opened).as_secs_f64();
        let bound = pgbouncer::max_checks(&self.settings, servers, seconds);
        let own = pgbouncer::recognise(&window.delta.statements, &self.settings, bound);
        let warnings = pgbouncer::exclude(&mut window.delta, &own, &self.settings, requests);
        if let Some(first) = window.nodes.first_mut() {
            pgbouncer::exclude(&mut first.delta, &own, &self.settings, requests);
        }
        window.context.warnings.extend(warnings);
        window.pgbouncer = pgbouncer::figures(
            &self.database,
            (before, after),
            state.max_cl_waiting,
            requests,
            own.calls(),
        );
    }

    /// The pool's figures between two readings, per request of `requests`.
    pub fn figures(
        &self,
        readings: (&Reading, &Reading),
        max_cl_waiting: i64,
        requests: u64,
    ) -> Option<PgBouncerFigures> {
        pgbouncer::figures(&self.database, readings, max_cl_waiting, requests, 0)
    }

    /// A ramp step's figures: read before, sample during `load`, read after.
    pub async fn around<T>(
        &self,
        load: impl Future<Output = T>,
    ) -> Result<(T, Reading, Reading, i64)> {
        let before = self.console.read().await?;
        let out = sampled(Some(self), load).await;
        let after = self.console.read().await?;
        let peak = std::mem::take(&mut self.state.lock().expect("not poisoned").max_cl_waiting);
        Ok((out, before, after, peak))
    }
}

/// Runs `load` while `bouncer`, if any, samples its pools.
pub async fn sampled<T>(bouncer: Option<&Bouncer>, load: impl Future<Output = T>) -> T {
    let Some(bouncer) = bouncer else {
        return load.await;
    };
    let done = AtomicBool::new(false);
    let run = async {
        let out = load.await;
        done.store(true, Ordering::Relaxed);
        out
    };
    let (out, ()) = tokio::join!(run, bouncer.sample_until(&done));
    out
}
