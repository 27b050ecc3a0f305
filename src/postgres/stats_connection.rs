//! The connection that reads the statistics views, and the tool's own footprint.
//!
//! Normally the cluster-wide views are read over a connection to another database
//! (`--admin-db`), so the tool's queries never touch the target's counters. When that is
//! impossible, they are read over a connection to the target itself, every operation is
//! made to flush its own counters at once, and its measured footprint is subtracted.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio_postgres::Client;

use crate::error::{Error, Result};
use crate::postgres::conninfo::DbTarget;
use crate::postgres::settle::{ClockAnchor, Others, Probe};
use crate::postgres::views::{self, Activity, ServerInfo, StatementsLayout};
use pgcost_core::delta::DatabaseDelta;
use pgcost_core::nodes::DatabaseTraffic;
use pgcost_core::one_off::CatalogRead;
use pgcost_core::report::model::counters::Counter;
use pgcost_core::report::model::notes::Note;
use pgcost_core::snapshot::{self, DatabaseStats, Snapshot, StatementKey, TableStats};

/// Where the statistics are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Mode {
    /// Over a connection to another database of the cluster.
    Admin,
    /// Over a connection to the target database (fallback).
    Target,
}

impl Mode {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The tool's own cost per operation on the target database, in target mode.
#[derive(Debug, Clone, Default)]
pub struct Footprint {
    pub per_snapshot: DatabaseDelta,
    pub per_poll: DatabaseDelta,
}

/// The connection that reads the statistics views, and what it learnt of the server.
pub struct StatsConnection {
    reader: Client,
    pub mode: Mode,
    target: DbTarget,
    pub server: ServerInfo,
    pub oid: u32,
    pub layout: Option<StatementsLayout>,
    pub extension_version: Option<String>,
    /// Operations run on the target since the last reset (target mode only).
    polls: i64,
    pub footprint: Option<Footprint>,
    pub warnings: Vec<Note>,
    admin_db: String,
    /// Query texts read so far, by entry.
    texts: BTreeMap<StatementKey, String>,
    /// The connection to the target that reads `pg_stat_user_tables` (admin mode, PG 15+).
    table_reader: Option<TableReader>,
    /// The catalog scans read with the tables at the last boundary, until taken.
    catalog: Option<CatalogRead>,
}

/// A connection to the target kept for reading `pg_stat_user_tables` at every boundary. It
/// publishes its own counters before each read returns, so they fall between two windows
/// without a settle wait; settling and pool sampling leave its backend out.
struct TableReader {
    client: Client,
    pid: i32,
    /// The system catalog relations' names, read when it connected.
    catalog_names: BTreeMap<u32, String>,
}

/// Opens the reading connection: to the admin database when it can serve, else to the
/// target. Returns it with its mode and the pg_stat_statements version it sees.
async fn connect_reader(
    target: &DbTarget,
    admin_db: &str,
    warnings: &mut Vec<Note>,
) -> Result<(Client, Mode, Option<String>)> {
    // The target must be reachable whatever happens; this also checks the credentials.
    let target_client = views::connect(target).await?;
    let target_extension = views::statements_extension(&target_client).await?;
    if admin_db == target.dbname {
        warnings.push(Note::AdminDbIsTarget {
            admin_db: admin_db.to_string(),
        });
        return Ok((target_client, Mode::Target, target_extension));
    }
    match views::connect(&target.with_dbname(admin_db)).await {
        Ok(client) => {
            let ext = views::statements_extension(&client).await?;
            if ext.is_none() && target_extension.is_some() {
                warnings.push(Note::AdminDbLacksPgStatStatements {
                    admin_db: admin_db.to_string(),
                });
                drop(client);
                Ok((target_client, Mode::Target, target_extension))
            } else {
                drop(target_client);
                Ok((client, Mode::Admin, ext))
            }
        }
        Err(err) => {
            warnings.push(Note::AdminDbUnreachable {
                admin_db: admin_db.to_string(),
                error: err.message,
            });
            Ok((target_client, Mode::Target, target_extension))
        }
    }
}

/// Refuses a server whose counters do not count, and warns about what limits the figures.
fn check_server(server: &ServerInfo, warnings: &mut Vec<Note>) -> Result<()> {
    if !server.track_counts {
        return Err(
            Error::database("track_counts is off, so pg_stat_database does not count")
                .with_hint("set track_counts = on in postgresql.conf and reload"),
        );
    }
    if !server.shared_memory_stats() {
        warnings.push(Note::ServerOlderThan15 {
            version: server.version.clone(),
        });
    }
    if !server.read_all_stats {
        warnings.push(Note::RoleCannotReadAllStats {
            role: server.role.clone(),
        });
    }
    Ok(())
}

/// The column layout of pg_stat_statements, or `None` (with a warning saying how to fix
/// it) when statement figures are unavailable.
fn statements_layout(
    server: &ServerInfo,
    extension_version: Option<&str>,
    warnings: &mut Vec<Note>,
) -> Option<StatementsLayout> {
    if !server.preloads_statements {
        warnings.push(Note::PgStatStatementsNotLoaded);
        return None;
    }
    let Some(version) = extension_version else {
        warnings.push(Note::PgStatStatementsExtensionMissing);
        return None;
    };
    if server.compute_query_id == "off" {
        warnings.push(Note::ComputeQueryIdOff);
    }
    let layout = StatementsLayout::for_version(version);
    if layout.is_some_and(StatementsLayout::has_plan_time) && !server.track_planning {
        warnings.push(Note::TrackPlanningOff);
    }
    layout
}

impl StatsConnection {
    /// Connects, learns what the server offers, and picks where to read statistics.
    pub async fn open(target: &DbTarget, admin_db: &str) -> Result<StatsConnection> {
        let mut warnings = Vec::new();
        let (reader, mode, reader_extension) =
            connect_reader(target, admin_db, &mut warnings).await?;
        let server = views::server_info(&reader, &target.dbname).await?;
        let oid = server.target_oid.ok_or_else(|| {
            Error::database(format!("database {:?} does not exist", target.dbname))
        })?;
        check_server(&server, &mut warnings)?;
        let layout = statements_layout(&server, reader_extension.as_deref(), &mut warnings);
        Ok(StatsConnection {
            reader,
            mode,
            target: target.clone(),
            server,
            oid,
            layout,
            extension_version: reader_extension,
            polls: 0,
            footprint: None,
            warnings,
            admin_db: admin_db.to_string(),
            texts: BTreeMap::new(),
            table_reader: None,
            catalog: None,
        })
    }

    /// Ends an operation on the target: its own counters must be published at once, so
    /// that its footprint is constant and measurable.
    async fn end_own_operation(&mut self) -> Result<()> {
        if self.mode == Mode::Admin {
            return Ok(());
        }
        if self.server.shared_memory_stats() {
            views::force_own_flush(&self.reader).await
        } else {
            tokio::time::sleep(Duration::from_millis(550)).await;
            Ok(())
        }
    }

    /// Each `pg_stat_statements` entry's calls, without texts or anything else: the
    /// burst's tail (admin mode, where reading moves no counter of the target).
    pub async fn statement_calls(&self) -> Result<BTreeMap<StatementKey, i64>> {
        let statements = self.statements_now().await?.unwrap_or_default();
        Ok(snapshot::calls(&statements))
    }

    /// Reads `pg_stat_database`, `pg_stat_statements` and its info view.
    pub async fn snapshot(&mut self) -> Result<Snapshot> {
        if self.mode == Mode::Target && !self.server.shared_memory_stats() {
            tokio::time::sleep(Duration::from_millis(550)).await;
        }
        let server_started = Some(views::server_started(&self.reader).await?);
        let database = views::read_database(&self.reader, &self.server, self.oid).await?;
        let (statements, statements_info) = match self.layout {
            Some(layout) => {
                // Texts cost most of the read (they live in a file, and can be kilobytes
                // each); admin mode names only the entries that changed, afterwards. Target
                // mode keeps one read per snapshot, the operation its footprint calibrates.
                let with_texts = self.mode == Mode::Target;
                let statements =
                    views::read_statements(&self.reader, layout, self.oid, with_texts).await?;
                let info = if layout.has_info() {
                    Some(views::read_statements_info(&self.reader).await?)
                } else {
                    None
                };
                (statements, info)
            }
            None => (BTreeMap::new(), None),
        };
        self.end_own_operation().await?;
        Ok(Snapshot {
            database,
            statements,
            statements_info,
            tables: BTreeMap::new(),
            server_started,
        })
    }

    /// Fills in the texts of the entries of `end` that changed since the window opened
    /// (`start_calls`), in one read of those entries. Texts are kept for the rest of the run.
    /// Admin mode only: target-mode snapshots read the texts themselves.
    pub async fn name_changed(
        &mut self,
        start_calls: &BTreeMap<StatementKey, i64>,
        end: &mut Snapshot,
    ) -> Result<()> {
        if self.mode == Mode::Target {
            return Ok(());
        }
        let changed = snapshot::changed_unnamed(start_calls, &end.statements);
        let mut missing: Vec<i64> = changed
            .iter()
            .filter(|k| !self.texts.contains_key(k))
            .map(|k| k.queryid)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if let Some(layout) = self.layout.filter(|_| !missing.is_empty()) {
            let texts =
                views::read_statement_texts(&self.reader, layout, self.oid, &missing).await?;
            self.texts.extend(texts);
        }
        let mut unavailable = 0usize;
        for key in changed {
            if let Some(stats) = end.statements.get_mut(&key) {
                stats.query = match self.texts.get(&key) {
                    Some(text) => text.clone(),
                    None => {
                        unavailable += 1;
                        views::UNAVAILABLE_TEXT.to_string()
                    }
                };
            }
        }
        if unavailable > 0 {
            (self.warnings).push(Note::StatementTextsUnavailable {
                entries: unavailable,
            });
        }
        Ok(())
    }

    /// Measures the tool's own footprint on the target (target mode only), and returns the
    /// "before" snapshot. The app must be idle and settled.
    pub async fn calibrated_before(&mut self) -> Result<Snapshot> {
        if self.mode == Mode::Admin {
            return self.snapshot().await;
        }
        // Warm this backend's catalog caches, so that every later operation costs the same.
        self.snapshot().await?;
        self.activity().await?;
        let first = self.snapshot().await?;
        let second = self.snapshot().await?;
        self.activity().await?;
        let third = self.snapshot().await?;
        let per_snapshot = pgcost_core::delta::delta(&first, &second).database;
        let two = pgcost_core::delta::delta(&second, &third).database;
        let per_poll = two.minus(&per_snapshot);
        self.footprint = Some(Footprint {
            per_snapshot,
            per_poll,
        });
        self.polls = 0;
        Ok(third)
    }

    /// The footprint of this tool inside the window that started with the calibrated
    /// "before" snapshot.
    pub fn own_footprint(&self) -> Option<DatabaseDelta> {
        self.footprint
            .as_ref()
            .map(|f| f.per_snapshot.plus(&f.per_poll.times(self.polls)))
    }

    /// Reads `pg_stat_user_tables` outside the measured window. In admin mode the read goes
    /// over a connection to the target; on PG 15+ that connection publishes its own counters
    /// before this returns (see [`StatsConnection::tables_flush_themselves`]), before 15 it
    /// is short-lived and this returns once its backend has exited.
    pub async fn tables(&mut self) -> Result<BTreeMap<String, TableStats>> {
        match self.mode {
            Mode::Target => views::read_tables(&self.reader).await,
            Mode::Admin if self.tables_flush_themselves() => self.tables_then_flush().await,
            Mode::Admin => self.tables_over_short_connection().await,
        }
    }

    /// True when a table read leaves nothing pending in the target, so no settle wait is
    /// needed after it: admin mode on PG 15+, where a backend can be made to flush at once.
    pub fn tables_flush_themselves(&self) -> bool {
        self.mode == Mode::Admin && self.server.version_num >= 150000
    }

    /// The pid of the tool's own table reader in the target, or 0 (no backend has pid 0).
    /// The backend pid of pgcost's own table reader on the target; 0 when there is none.
    pub fn own_target_pid(&self) -> i32 {
        self.table_reader.as_ref().map_or(0, |r| r.pid)
    }

    async fn tables_then_flush(&mut self) -> Result<BTreeMap<String, TableStats>> {
        if self
            .table_reader
            .as_ref()
            .is_none_or(|reader| reader.client.is_closed())
        {
            let client = views::connect(&self.target).await?;
            let pid = views::backend_pid(&client).await?;
            let catalog_names = views::read_catalog_names(&client).await?;
            // Its first read caches what it needs: later reads touch no catalog at all.
            views::read_catalog_scans(&client).await?;
            self.table_reader = Some(TableReader {
                client,
                pid,
                catalog_names,
            });
        }
        let reader = &self.table_reader.as_ref().expect("opened above").client;
        // Closes the window before: the app's catalog scans since the last boundary.
        let closes = views::read_catalog_scans(reader).await?;
        let tables = views::read_tables(reader).await?;
        // Everything this backend did, its connection included, is published before the
        // window opens...
        views::flush_own_counters_now(reader).await?;
        // ...so the catalog scans that open the next window include this boundary's own.
        let opens = views::read_catalog_scans(reader).await?;
        views::flush_own_counters_now(reader).await?;
        self.catalog = Some(CatalogRead { closes, opens });
        Ok(tables)
    }

    /// The catalog scans read with the tables at the last boundary (PG 15+, admin mode),
    /// taken: `None` where they are not read.
    pub fn take_catalog(&mut self) -> Option<CatalogRead> {
        self.catalog.take()
    }

    /// The system catalog relations' names, by oid, once the tables have been read.
    pub fn catalog_names(&self) -> Option<&BTreeMap<u32, String>> {
        self.table_reader.as_ref().map(|r| &r.catalog_names)
    }

    async fn tables_over_short_connection(&mut self) -> Result<BTreeMap<String, TableStats>> {
        let client = views::connect(&self.target).await?;
        let pid = views::backend_pid(&client).await?;
        let tables = views::read_tables(&client).await?;
        drop(client);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let activity = views::read_activity(&self.reader, self.oid, 0).await?;
            if !activity.backends.iter().any(|b| b.pid == pid) {
                break;
            }
            if Instant::now() > deadline {
                return Err(Error::database(format!(
                    "the tool's own connection to the target (pid {pid}) did not exit within 10 s"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(tables)
    }

    /// Opens the reading connection again after it dropped, and tells whether the server
    /// restarted meanwhile (its start time moved since `started`).
    pub async fn reconnect_after_loss(&mut self, started: &Option<String>) -> Result<bool> {
        let target = match self.mode {
            Mode::Admin => self.target.with_dbname(&self.admin_db),
            Mode::Target => self.target.clone(),
        };
        let mut last = None;
        // A restarting server refuses connections for a moment.
        for _ in 0..40 {
            match views::connect(&target).await {
                Ok(client) => {
                    self.reader = client;
                    // A restart ended the table reader's backend too.
                    self.table_reader = None;
                    let now = views::server_started(&self.reader).await?;
                    return Ok(started.as_deref() != Some(now.as_str()));
                }
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Err(last.expect("at least one attempt"))
    }

    /// The pids of the app's connections to the target now: client backends (and those
    /// whose type is hidden), the tool's own left out. A pid that appears or goes between
    /// the two edges of a window is a connection that opened or closed inside it.
    /// Backends of roles outside `--app-role` (`others`) are left out.
    pub async fn app_pids(&self, others: &Others) -> Result<std::collections::BTreeSet<i32>> {
        let activity = self.backends().await?;
        Ok(activity
            .backends
            .iter()
            .filter(|b| matches!(b.backend_type.as_str(), "client backend" | ""))
            .filter(|b| !others.other_role(b))
            .map(|b| b.pid)
            .collect())
    }

    /// The target's backends now, pgcost's own left out; for samplers (in target mode the
    /// read lands in the target's counters, and the footprint does not account for it).
    pub async fn backends(&self) -> Result<Activity> {
        views::read_activity(&self.reader, self.oid, self.own_target_pid()).await
    }

    /// One read of the target's backends and their statements, for tags; `None` in target
    /// mode, where the read would land in the measured counters.
    pub async fn tag_sample(&self) -> Result<Option<Vec<pgcost_core::tags::Sample>>> {
        if self.mode != Mode::Admin {
            return Ok(None);
        }
        let (version, oid, own) = (self.server.version_num, self.oid, self.own_target_pid());
        crate::postgres::tags::read(&self.reader, version, oid, own)
            .await
            .map(Some)
    }

    /// Every role's name, by oid.
    pub async fn roles(&self) -> Result<BTreeMap<u32, String>> {
        views::read_roles(&self.reader).await
    }

    /// The server's clock beside pgcost's, to read before traffic whose counters a settle
    /// wait will be for (see [`ClockAnchor`]). Read over the same view as the waits.
    pub async fn clock_anchor(&mut self) -> Result<ClockAnchor> {
        let local = Instant::now();
        let activity = self.activity().await?;
        Ok(ClockAnchor {
            local,
            server: activity.server_now,
        })
    }

    /// Every database's traffic on the server, read over the admin connection; `None` in
    /// target mode, where the read would land in the measured counters.
    pub async fn databases(&self) -> Result<Option<BTreeMap<String, DatabaseTraffic>>> {
        match self.mode {
            Mode::Admin => views::read_databases(&self.reader).await.map(Some),
            Mode::Target => Ok(None),
        }
    }

    /// The database pgcost's own statistics connection is on, in admin mode.
    pub fn admin_db(&self) -> Option<&str> {
        (self.mode == Mode::Admin).then_some(self.admin_db.as_str())
    }

    /// The server's recovery state, for a replica (read over the statistics connection).
    pub async fn recovery(&self) -> Result<pgcost_core::replica::Recovery> {
        crate::postgres::recovery::read(&self.reader).await
    }

    /// pg_stat_statements now, without texts, for comparisons that need no settle wait
    /// (`measure::steady`); `None` without the extension. In target mode the read lands
    /// in the target's counters: outside a window only.
    pub async fn statements_now(
        &self,
    ) -> Result<Option<BTreeMap<StatementKey, pgcost_core::snapshot::StatementStats>>> {
        match self.layout {
            Some(layout) => views::read_statements(&self.reader, layout, self.oid, false)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// The next transaction id the server will give, with its epoch.
    pub async fn next_xid(&self) -> Result<i64> {
        views::next_xid(&self.reader).await
    }

    /// Client backends on the target now, for pool headroom.
    pub async fn client_backends(&self) -> Result<i64> {
        views::count_client_backends(&self.reader, self.oid, self.own_target_pid()).await
    }
}

impl Probe for StatsConnection {
    async fn activity(&mut self) -> Result<Activity> {
        let activity = views::read_activity(&self.reader, self.oid, self.own_target_pid()).await?;
        if self.mode == Mode::Target {
            self.polls += 1;
            self.end_own_operation().await?;
        }
        Ok(activity)
    }

    async fn counters(&mut self) -> Result<DatabaseStats> {
        views::read_database(&self.reader, &self.server, self.oid).await
    }
}
