//! The one runner of every measured window: it executes a [`Plan`] step by step, and owns
//! what the steps share: the meters of every database, the progress lines, Ctrl-C, the
//! settle waits (a window's closing boundary opens the next one when nothing was sent
//! between them) and the retries (a discarded window's steps run again). Commands build
//! plans and read the reports.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::auth::{self, redact::command_line};
use crate::config::AuditConfig;
use crate::error::{Error, Result};
use crate::http::connection::Driver;
use crate::measure::external::{self, COMMAND_METHOD, Load};
use crate::measure::plan::{self, Plan, Step};
use crate::measure::ramp::Stepper;
use crate::measure::retry::{self, Attempts, Checked, Judged};
use crate::measure::{Boundaries, Burst, Ends, Meter, Meters, Notes, Window};
use crate::measure::{credentials, screen, steady, tags};
use crate::postgres::settle::Outcome;
use crate::progress::Progress;
use pgcost_core::delta::WindowDelta;
use pgcost_core::plan::Plans;
use pgcost_core::report::Report;
use pgcost_core::report::model::invalid::Invalid;
use pgcost_core::report::model::notes::Note;
use pgcost_core::snapshot::TableStats;

/// One endpoint the plan's steps name by its index.
struct Endpoint {
    config: AuditConfig,
    /// The load driver of its warm-ups and bursts; `None` for a command's load.
    driver: Option<Arc<Driver>>,
    /// The report of its unauthenticated run, to set beside its own.
    unauthenticated: Option<Report>,
    /// What the run learnt of it outside its windows.
    notes: Notes,
    /// The least slices its next warm-up compares (more after a one-off).
    min_slices: u32,
    attempts: Attempts,
}

/// The last load sent: pgcost's burst or the command's (none for a ramp's steps), when
/// its last response came in, and whether Ctrl-C cut it short.
struct Sent {
    burst: Option<Burst>,
    ended: Instant,
    interrupted: bool,
}

impl Sent {
    fn burst(&self) -> &Burst {
        self.burst.as_ref().expect("a burst, not a ramp's steps")
    }
}

/// Runs the plans of one measurement over the same meters.
pub struct Runner<'a> {
    meters: Meters,
    progress: &'a Progress,
    stop: Arc<AtomicBool>,
    endpoints: Vec<Endpoint>,
    /// The user's load command (`pgcost measure`).
    command: Option<Load<'a>>,
    /// The ramp's steps (`pgcost ramp`).
    ramp: Option<Stepper<'a>>,
    /// Told when an endpoint's turn begins.
    on_begin: Box<dyn FnMut(usize) + Send + Sync + 'a>,
    /// Why the control window's counts cannot be trusted, for every report.
    control: Vec<Invalid>,
    /// The boundary that opened the current window.
    opened: Option<Boundaries>,
    sent: Option<Sent>,
    /// The boundary that closed the last window.
    closed: Option<Boundaries>,
    /// The closing boundary of the last kept window, while nothing was sent since, and
    /// when the app went quiet: the next window opens on it.
    kept_closed: Option<(Boundaries, Instant)>,
    /// The windows kept in the current plan.
    windows: Vec<Window>,
    /// With `--allow-writes`: each table's counters and the next transaction id before
    /// anything was sent (`Step::MarkWrites`).
    marked: Option<(BTreeMap<String, TableStats>, i64)>,
    /// The tables read by the last closing boundary, while the run is marked.
    last_tables: Option<BTreeMap<String, TableStats>>,
}

impl<'a> Runner<'a> {
    /// Connects to every database of the first endpoint; all of them must share the
    /// database, the admin database and the settle timeout. `None` without endpoints.
    pub async fn open(
        configs: &[AuditConfig],
        progress: &'a Progress,
        stop: Arc<AtomicBool>,
    ) -> Result<Option<Runner<'a>>> {
        let Some(first) = super::one_database(configs)? else {
            return Ok(None);
        };
        let meters = Meters::open(first, progress).await?;
        Ok(Some(Runner::over(meters, configs, progress, stop)?))
    }

    /// A runner over `meters`, already open.
    pub fn over(
        meters: Meters,
        configs: &[AuditConfig],
        progress: &'a Progress,
        stop: Arc<AtomicBool>,
    ) -> Result<Runner<'a>> {
        let endpoints = configs
            .iter()
            .map(|config| Ok(Endpoint::new(config.clone(), Some(super::driver(config)?))))
            .collect::<Result<Vec<_>>>()?;
        Ok(Runner {
            meters,
            progress,
            stop,
            endpoints,
            command: None,
            ramp: None,
            on_begin: Box::new(|_| {}),
            control: Vec::new(),
            opened: None,
            sent: None,
            closed: None,
            kept_closed: None,
            windows: Vec::new(),
            marked: None,
            last_tables: None,
        })
    }

    /// A runner of the user's load `command`, measured as `config` says.
    pub async fn of_command(
        config: &AuditConfig,
        command: Load<'a>,
        progress: &'a Progress,
        stop: Arc<AtomicBool>,
    ) -> Result<Runner<'a>> {
        let meters = Meters::open(config, progress).await?;
        let mut runner = Runner::over(meters, &[], progress, stop)?;
        runner.endpoints = vec![Endpoint::new(config.clone(), None)];
        runner.command = Some(command);
        Ok(runner)
    }

    /// A runner of `stepper`'s ramp, its boundaries read by `meter`: the ramp reads the
    /// whole window with [`Runner::into_ramp`].
    pub fn of_ramp(
        meter: Meter,
        config: &AuditConfig,
        stepper: Stepper<'a>,
        progress: &'a Progress,
        stop: Arc<AtomicBool>,
    ) -> Result<Runner<'a>> {
        let configs = std::slice::from_ref(config);
        let mut runner = Runner::over(Meters::single(meter), configs, progress, stop)?;
        runner.ramp = Some(stepper);
        Ok(runner)
    }

    /// The ramp's steps once its plan ran, the whole window's counters (the tool's own
    /// footprint taken out) and the settle waits that opened and closed it.
    pub fn into_ramp(self) -> (Stepper<'a>, WindowDelta, [Outcome; 2]) {
        let stepper = self.ramp.expect("a ramp");
        let (opened, closed) = (self.opened.expect("an open window"), self.closed);
        let closed = closed.expect("a closed window");
        let whole = self.meters.first().window(&opened[0], &closed[0]);
        let settles = [opened[0].settle.clone(), closed[0].settle.clone()];
        (stepper, whole, settles)
    }

    /// Tells `on_begin(i)` when endpoint `i`'s turn begins (`Step::Begin`).
    pub fn on_begin(mut self, on_begin: impl FnMut(usize) + Send + Sync + 'a) -> Self {
        self.on_begin = Box::new(on_begin);
        self
    }

    /// Sets the report of endpoint `i`'s unauthenticated run beside its own.
    pub fn beside(mut self, i: usize, unauthenticated: Report) -> Self {
        self.endpoints[i].unauthenticated = Some(unauthenticated);
        self
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Executes `plan`, and returns the reports of the windows it kept, in order. Once a
    /// window is kept and Ctrl-C came, the steps left are skipped (that report says so),
    /// but for the plans, which are then not fetched.
    pub async fn run(&mut self, plan: &Plan) -> Result<Vec<Report>> {
        self.windows.clear();
        let mut steps: std::collections::VecDeque<Step> = plan.steps.iter().copied().collect();
        while let Some(step) = steps.pop_front() {
            if self.stopped() && !self.windows.is_empty() && step != Step::Plans {
                continue;
            }
            if let Some(again) = self.step(step).await? {
                for step in plan::retry(again).into_iter().rev() {
                    steps.push_front(step);
                }
            }
        }
        let windows = std::mem::take(&mut self.windows);
        let mut reports = match plan.steps.contains(&Step::Plans) {
            true => self.reports_with_plans(&windows).await,
            false => (windows.iter())
                .map(|w| w.report(&Plans::default()))
                .collect(),
        };
        if let Some(note) = self.writes_named().await? {
            let allowed = |r: &Report| {
                r.notes
                    .iter()
                    .any(|n| matches!(n, Note::WritesAllowed { .. }))
            };
            for report in reports.iter_mut().filter(|r| allowed(r)) {
                report.notes.push(note.clone());
            }
        }
        Ok(reports)
    }

    /// With `--allow-writes`, before anything is sent: each table's counters and the next
    /// transaction id.
    async fn mark_writes(&mut self) -> Result<()> {
        if !self.endpoints.iter().any(|e| e.config.allow_writes) {
            return Ok(());
        }
        let source = &mut self.meters.first_mut().source;
        let tables = source.tables().await?;
        self.marked = Some((tables, source.next_xid().await?));
        Ok(())
    }

    /// What the run wrote since [`Runner::mark_writes`]: each table's rows to the close of
    /// the last window (settled, read by its closing boundary), and the transaction ids;
    /// `None` without a mark or a closed window.
    async fn writes_named(&mut self) -> Result<Option<Note>> {
        let (Some((before, from)), Some(after)) = (self.marked.take(), self.last_tables.take())
        else {
            return Ok(None);
        };
        let to = self.meters.first().source.next_xid().await?;
        Ok(Some(pgcost_core::run_writes::named(
            &before, &after, from, to,
        )))
    }

    /// One step; `Some(i)` when endpoint `i`'s window is to be measured again.
    async fn step(&mut self, step: Step) -> Result<Option<usize>> {
        let (progress, stop) = (self.progress, &self.stop.clone());
        match step {
            Step::MarkWrites => self.mark_writes().await?,
            Step::Control => self.control = self.meters.control(progress, stop).await?,
            Step::Begin(i) => (self.on_begin)(i),
            Step::Probe(i) => self.probe(i).await?,
            Step::WarmUp(i) => self.warm_up(i).await?,
            Step::WarmUpFixed(i) => {
                self.kept_closed = None;
                let Endpoint { config, driver, .. } = &self.endpoints[i];
                let driver = driver.as_ref().expect("an endpoint of pgcost's own burst");
                steady::send(config, driver, progress, stop).await?;
            }
            Step::Open => self.open_window().await?,
            Step::SizeBursts => self.size_bursts(),
            Step::WarmIfCold(i) => self.warm_if_cold(i).await?,
            Step::Burst(i) => {
                let Endpoint { config, driver, .. } = &self.endpoints[i];
                let driver = driver.as_ref().expect("an endpoint of pgcost's own burst");
                let burst = self.meters.burst(config, driver, progress, stop).await;
                let (ended, interrupted) = (burst.ended, burst.interrupted);
                let burst = Some(burst);
                self.sent = Some(Sent {
                    burst,
                    ended,
                    interrupted,
                });
            }
            Step::Ramp(i) => {
                let Endpoint { config, driver, .. } = &self.endpoints[i];
                let driver = driver.as_ref().expect("an endpoint of pgcost's own burst");
                let own_pid = self.meters.first().own_target_pid();
                let stepper = self.ramp.as_mut().expect("a ramp to run");
                let ended = (stepper.run((config, driver), own_pid, progress, stop)).await?;
                let interrupted = self.stopped();
                self.sent = Some(Sent {
                    burst: None,
                    ended,
                    interrupted,
                });
            }
            Step::Command(i) => self.command(i).await?,
            Step::Close => {
                let sent = self.sent.as_ref().expect("a burst before its close");
                let ends = Ends::burst(sent.interrupted);
                let ended = sent.ended;
                let closed = self.meters.close(ends, progress, stop, ended).await?;
                if self.marked.is_some() {
                    self.last_tables = Some(closed[0].tables.clone());
                }
                self.closed = Some(closed);
            }
            Step::Check(i) => return Ok(self.check(i)),
            Step::Keep(i) => self.keep_command(i),
            Step::Read => self.read().await?,
            Step::Screened(i) => self.screened(i),
            Step::ControlAfter => {
                let interrupted = self.sent.as_ref().is_some_and(|s| s.interrupted);
                if !interrupted && !self.stopped() {
                    let windows = &mut self.windows;
                    self.meters.control_after(windows, progress, stop).await?;
                }
            }
            Step::Plans => {}
        }
        Ok(None)
    }

    /// Before every warm-up, so outside every window: the credentials must count.
    async fn probe(&mut self, i: usize) -> Result<()> {
        let note = credentials::probe(&self.endpoints[i].config).await?;
        self.endpoints[i].notes = Notes {
            invalid_reasons: (self.control.iter().cloned())
                .chain(note.invalid_reason)
                .collect(),
            warnings: note.warning.into_iter().collect(),
            ..Notes::default()
        };
        Ok(())
    }

    /// Warms endpoint `i` up (see `steady`), sampling its tags meanwhile; a window opened
    /// before is closed to traffic now, so the next opens with a wait of its own.
    async fn warm_up(&mut self, i: usize) -> Result<()> {
        self.kept_closed = None;
        let (progress, stop) = (self.progress, &self.stop);
        let endpoint = &mut self.endpoints[i];
        let min_slices = std::mem::replace(&mut endpoint.min_slices, 1);
        let driver = endpoint
            .driver
            .as_ref()
            .expect("an endpoint of pgcost's own burst");
        let config = &endpoint.config;
        let warm_up = steady::warm_up(&self.meters, config, driver, progress, stop, min_slices);
        let source = &self.meters.first().source;
        let (warmed, sampled) = tags::during(source, config.tags, warm_up).await;
        endpoint.notes.warmed = warmed?;
        endpoint.notes.tags = tags::merged(endpoint.notes.tags.take(), sampled.as_ref());
        Ok(())
    }

    /// The boundary that opens a window: on the last kept window's closing one, when
    /// nothing was sent since; else after a settle wait of its own.
    async fn open_window(&mut self) -> Result<()> {
        let (progress, stop) = (self.progress, &self.stop);
        self.opened = Some(match self.kept_closed.take() {
            Some((mut closed, quiet_since)) => {
                (self
                    .meters
                    .open_after(&mut closed, progress, stop, quiet_since))
                .await?;
                closed
            }
            None => {
                self.meters
                    .open_window(progress, stop, Instant::now())
                    .await?
            }
        });
        Ok(())
    }

    /// With `--control`, each endpoint's burst raised past `-n` where the background would
    /// leave its figures too uncertain, within the time `--max-duration` leaves
    /// (docs/background.md); the note goes to the endpoint's report. The endpoints' own
    /// figures are read over all their warm-ups, up to the window just opened.
    fn size_bursts(&mut self) {
        let warmed = self
            .endpoints
            .iter()
            .filter_map(|e| e.notes.warmed.as_ref());
        let warm = warmed.fold((0, 0.0), |(r, s), w| (r + w.requests, s + w.seconds));
        let opened = (self.opened.as_ref())
            .and_then(|o| o.first())
            .and_then(|b| b.start.as_ref());
        let mut spent = Duration::ZERO;
        for endpoint in &mut self.endpoints {
            let config = &mut endpoint.config;
            let meter = self.meters.first();
            if let Some((requests, note)) = meter.sized_burst(config, warm, opened, spent) {
                config.requests = requests;
                endpoint.notes.warnings.push(note);
            }
            if warm.1 > 0.0 {
                spent += Duration::from_secs_f64(config.requests as f64 * warm.1 / warm.0 as f64);
            }
        }
    }

    /// Warms endpoint `i` up again, right before its window, when app connections opened
    /// since its warm-up, which have not run its statements; then opens the window.
    async fn warm_if_cold(&mut self, i: usize) -> Result<()> {
        let Some(cold) = self.cold_connections(i) else {
            return Ok(());
        };
        let config = &self.endpoints[i].config;
        if !config.quiet {
            self.progress.status(&format!(
                "{cold} app connection(s) opened since the warm-up of {}: warming it up again",
                auth::redact::url(&config.request.url)
            ));
        }
        self.warm_up(i).await?;
        self.open_window().await
    }

    /// How many app connections the open window opens on that were not there when
    /// endpoint `i`'s warm-up ended, when there are any: a backend born after the warm-up
    /// is not warm (its plans, its caches of the catalog).
    fn cold_connections(&self, i: usize) -> Option<usize> {
        let warmed = &self.endpoints[i].notes.warmed.as_ref()?.pids;
        let opened = self.opened.as_ref()?.first()?;
        let cold = opened.start_pids.as_ref()?.difference(warmed).count();
        (!warmed.is_empty() && cold > 0).then_some(cold)
    }

    /// Endpoint `i`'s window judged (see `retry`): kept, or `Some(i)` to measure it again.
    fn check(&mut self, i: usize) -> Option<usize> {
        let stopped = self.stopped();
        let endpoint = &mut self.endpoints[i];
        let sent = self.sent.as_ref().expect("a burst before its check");
        let judged = Judged {
            config: &endpoint.config,
            unauthenticated: &endpoint.unauthenticated,
            opened: self.opened.as_ref().expect("an open window"),
            burst: sent.burst(),
            closed: self.closed.as_ref().expect("a closed window"),
            stopped,
        };
        let checked = retry::check(
            &self.meters,
            judged,
            &mut endpoint.notes,
            &mut endpoint.attempts,
        );
        match checked {
            Checked::Kept(window) => {
                self.keep(*window);
                None
            }
            Checked::Again { reason, min_slices } => {
                endpoint.min_slices = min_slices;
                let config = &endpoint.config;
                if !config.quiet {
                    self.progress.status(&format!(
                        "{reason}: measuring the window again ({} of {})",
                        endpoint.notes.windows.discarded, config.retries
                    ));
                }
                Some(i)
            }
        }
    }

    /// Keeps `window`; the boundary that closed it opens the next window.
    fn keep(&mut self, window: Window) {
        self.windows.push(window);
        let closed = self.closed.take().expect("a closed window");
        let ended = self.sent.as_ref().map_or_else(Instant::now, |s| s.ended);
        self.kept_closed = Some((closed, ended));
    }

    /// Runs the user's command as endpoint `i`'s burst, and reads its count: the endpoint's
    /// requests from then on, and why its window cannot be trusted, if anything.
    async fn command(&mut self, i: usize) -> Result<()> {
        if self.stopped() {
            // Ctrl-C during the first wait: the command never started.
            return Err(Error::interrupted());
        }
        let load = self.command.as_ref().expect("a command to run");
        let endpoint = &mut self.endpoints[i];
        let (progress, stop) = (self.progress, &self.stop);
        let ran = external::run_command(&endpoint.config, load, &self.meters, progress, stop);
        let (ran, counted, burst) = ran.await?;
        endpoint.config.requests = counted.requests;
        let invalid = external::invalid_reasons(&ran, counted, load.count);
        endpoint.notes.invalid_reasons = self.control.iter().cloned().chain(invalid).collect();
        self.sent = Some(Sent {
            ended: burst.ended,
            burst: Some(burst),
            interrupted: ran.interrupted,
        });
        Ok(())
    }

    /// Keeps the command's window as it is, with what its churn added.
    fn keep_command(&mut self, i: usize) {
        let endpoint = &self.endpoints[i];
        let config = &endpoint.config;
        let sent = self.sent.as_ref().expect("a command before its window");
        let edges = (
            self.opened.as_ref().expect("an open window"),
            self.closed.as_ref().expect("a closed window"),
        );
        let invalid = endpoint.notes.invalid_reasons.clone();
        let notes = external::notes(&self.meters, config, edges, invalid);
        let mut window = (self.meters).measured(config, edges, sent.burst(), None, notes);
        window.context.target.method = COMMAND_METHOD.into();
        let load = self.command.as_ref().expect("a command to run");
        window.context.target.url = command_line(load.command);
        self.keep(window);
    }

    /// pg_stat_statements read at once: it opens the screening window, or closes the one
    /// open.
    async fn read(&mut self) -> Result<()> {
        let meter = self.meters.first_mut();
        match self.opened.take() {
            Some(opened) if self.sent.is_some() => {
                let closed = screen::closing_read(meter, &opened).await?;
                (self.opened, self.closed) = (Some(opened), Some(closed));
            }
            _ => {
                self.sent = None;
                self.opened = Some(screen::opening_read(meter).await?);
            }
        }
        Ok(())
    }

    /// Keeps endpoint `i`'s screening window: the statement figures of its burst.
    fn screened(&mut self, i: usize) {
        let endpoint = &self.endpoints[i];
        let sent = self.sent.take().expect("a burst before its window");
        let (opened, closed) = (self.opened.take(), self.closed.take());
        let (opened, closed) = (
            opened.expect("an open window"),
            closed.expect("a closed window"),
        );
        let window = screen::window(
            self.meters.first(),
            &endpoint.config,
            (&opened, &closed),
            sent.burst(),
            endpoint.notes.clone(),
        );
        self.windows.push(window);
    }

    /// The reports of `windows`, with the plans of their statements when the first
    /// endpoint asks for them (see [`super::reports_with_plans`]).
    async fn reports_with_plans(&self, windows: &[Window]) -> Vec<Report> {
        let Some(first) = self.endpoints.first() else {
            return Vec::new();
        };
        super::reports_with_plans(&first.config, windows, self.progress, &self.stop).await
    }
}

impl Endpoint {
    fn new(config: AuditConfig, driver: Option<Arc<Driver>>) -> Endpoint {
        Endpoint {
            config,
            driver,
            unauthenticated: None,
            notes: Notes::default(),
            min_slices: 1,
            attempts: Attempts::default(),
        }
    }
}
