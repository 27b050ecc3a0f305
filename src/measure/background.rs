//! Other traffic on the target, the I/O side: the app roles resolved, the control window
//! (a quiet window before the warm-up, no request from pgcost), the backends sampled
//! during the burst, and what the report's background section is built from. The
//! arithmetic is `pgcost_core::background`'s; the rules are in docs/background.md.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::postgres::settle::Others;
use crate::postgres::stats_connection::{Mode, StatsConnection};
use crate::postgres::views::{Activity, Backend};
use pgcost_core::background::{self, Control, Input, Options, OtherRole, Tail};
use pgcost_core::delta::WindowDelta;
use pgcost_core::snapshot::{Snapshot, StatementKey};

/// How often the control window and the burst read `pg_stat_activity`.
pub(super) const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// Each statement's calls once the last response came in, and when they were read.
pub type TailStart = (Instant, BTreeMap<StatementKey, i64>);

/// What one target's meter knows of other traffic.
#[derive(Debug, Clone)]
pub struct Watch {
    pub options: Options,
    /// The backends the settle waits leave out.
    pub others: Others,
    /// The oids of `--app-role`: the statements that count. Empty: all do.
    app_oids: BTreeSet<u32>,
    role_names: BTreeMap<u32, String>,
    /// The control window's counts, once measured.
    pub control: Option<Control>,
    /// How long the settle wait before the control window took: what a window's closing
    /// settle wait is expected to take, as a burst is sized.
    pub settle_seconds: f64,
    /// The snapshot that closed the first control window, and when: from it to the
    /// opening snapshot of the first window, the warm-ups ran.
    pub control_end: Option<(Instant, Snapshot)>,
    /// When the meter opened: pgcost had sent nothing before.
    pub opened_at: Instant,
}

impl Watch {
    /// Resolves `--app-role` over `source`; an unknown role, or `--control` where the
    /// statistics are read through the target, is a setup error.
    pub async fn open(options: &Options, source: &StatsConnection) -> Result<Watch> {
        if options.control.is_some() && source.mode == Mode::Target {
            return Err(Error::usage(
                "--control needs the statistics read over the admin database: read through the \
                 target, pgcost's own reads in the control window would be taken for background",
            )
            .with_hint("check the warnings about --admin-db, and fix the admin database"));
        }
        let mut watch = Watch {
            options: options.clone(),
            others: Others {
                app_roles: options.app_roles.clone(),
                ..Others::default()
            },
            app_oids: BTreeSet::new(),
            role_names: BTreeMap::new(),
            control: None,
            settle_seconds: 0.0,
            control_end: None,
            opened_at: Instant::now(),
        };
        if options.app_roles.is_empty() {
            return Ok(watch);
        }
        watch.role_names = source.roles().await?;
        for role in &options.app_roles {
            let oid = watch.role_names.iter().find(|(_, name)| *name == role);
            let Some((oid, _)) = oid else {
                return Err(Error::usage(format!(
                    "--app-role {role:?}: no such role on the server"
                ))
                .with_hint("give the role the app connects as, as its database URL names it"));
            };
            watch.app_oids.insert(*oid);
        }
        Ok(watch)
    }

    /// With `--app-role`, takes other roles' statements out of `window`, and returns them.
    pub fn split(&self, window: &mut WindowDelta) -> Vec<OtherRole> {
        if self.app_oids.is_empty() {
            return Vec::new();
        }
        let statements = std::mem::take(&mut window.statements);
        let (app, others) = background::split_by_role(statements, &self.app_oids, &self.role_names);
        window.statements = app;
        others
    }

    /// True for a statement of the app's roles (every role's without `--app-role`).
    pub fn is_app(&self, key: &StatementKey) -> bool {
        self.app_oids.is_empty() || self.app_oids.contains(&key.userid)
    }

    /// The app roles' statements from the `tail` snapshot (read after the burst) to the
    /// window's closing one, `end` read at `end_at`: background, with pgcost quiet.
    pub fn tail(
        &self,
        tail: Option<&TailStart>,
        end: Option<&Snapshot>,
        end_at: Option<Instant>,
    ) -> Option<Tail> {
        let ((at, tail), end, end_at) = (tail?, end?, end_at?);
        let statements = (end.statements.iter())
            .filter(|(key, _)| key.toplevel != Some(false) && self.is_app(key))
            .map(|(key, s)| (s.calls - tail.get(key).copied().unwrap_or(0)).max(0))
            .sum();
        Some(Tail {
            seconds: end_at.saturating_duration_since(*at).as_secs_f64(),
            statements,
        })
    }

    /// What the report's background section is built from, for a window of
    /// `window_seconds` in which the backends `seen` did something of their own.
    pub fn input(
        &self,
        window_seconds: f64,
        seen: &BTreeMap<i32, Backend>,
        other_roles: Vec<OtherRole>,
        version_num: i32,
        tail: Option<Tail>,
    ) -> Input {
        Input {
            tail,
            options: self.options.clone(),
            other_roles,
            control: self.control.clone(),
            window_seconds,
            flush_interval_seconds: background::flush_interval_seconds(version_num),
            other_backends: seen
                .values()
                .map(|b| format!("pid {} ({})", b.pid, b.who()))
                .collect(),
        }
    }
}

/// The client backends of `activity` that changed state after the server's clock read
/// `since`, or are busy: they did something in the control window.
pub(super) fn active_since(activity: &Activity, since: f64) -> Vec<i32> {
    (activity.backends.iter())
        .filter(|b| b.backend_type == "client backend")
        .filter(|b| b.state != "idle" || activity.server_now - b.idle_seconds > since)
        .map(|b| b.pid)
        .collect()
}

/// Samples the target's client backends while the burst runs (admin mode only: in target
/// mode every sample would land in the measured counters): the most connected at once,
/// the busy backends of roles outside `--app-role`, and a snapshot read once the last
/// response came in (the tail: `pg_stat_statements` counts at once, so every statement
/// it gains before the window closes is background).
pub async fn sample_burst(
    source: &StatsConnection,
    done: &AtomicBool,
    others: &Others,
) -> (Option<i64>, BTreeMap<i32, Backend>, Option<TailStart>) {
    let mut seen = BTreeMap::new();
    if source.mode != Mode::Admin {
        return (None, seen, None);
    }
    let mut peak = None;
    while !done.load(Ordering::Relaxed) {
        if let Ok(activity) = source.backends().await {
            let clients = (activity.backends.iter()).filter(|b| b.backend_type == "client backend");
            peak = Some(peak.unwrap_or(0).max(clients.clone().count() as i64));
            let busy = clients.filter(|b| b.state != "idle" && others.other_role(b));
            seen.extend(busy.map(|b| (b.pid, b.clone())));
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
    let tail = source.statement_calls().await.ok();
    (peak, seen, tail.map(|s| (Instant::now(), s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend(pid: i32, state: &str, idle_seconds: f64) -> Backend {
        Backend {
            pid,
            backend_type: "client backend".into(),
            state: state.into(),
            idle_seconds,
            ..Backend::default()
        }
    }

    #[test]
    fn a_backend_that_moved_in_the_control_window_is_background() {
        let activity = Activity {
            server_now: 1010.0,
            backends: vec![
                backend(1, "idle", 30.0),   // idle since before the window
                backend(2, "idle", 0.02),   // went idle again just now
                backend(3, "active", 40.0), // busy in a long statement
                Backend {
                    backend_type: "walsender".into(),
                    ..backend(4, "active", 0.0)
                },
            ],
        };
        assert_eq!(active_since(&activity, 1000.0), vec![2, 3]);
    }
}
