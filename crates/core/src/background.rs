//! Other traffic on the audited database, pure: the options (`--app-role`, `--control`,
//! `--max-background`), other roles' statements set apart, the control window's rates,
//! what is subtracted from the window and how far off it may be, and the verdict. The
//! rules are written out in docs/background.md.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::delta::StatementDelta;
pub use crate::report::model::background::{Background, OtherRole};
use crate::report::model::figure::{Figure, PerFigure};
use crate::report::model::invalid::{Code, Invalid};
use crate::report::model::notes::{Note, RoleCalls};

pub mod series;
pub mod sizing;

/// `--max-background` by default: 5% of the signal.
pub const DEFAULT_MAX_SHARE: f64 = 0.05;
/// The counting noise of the control window is given at this many standard deviations.
pub const NOISE_SIGMAS: f64 = 3.0;
/// With `--control`, a corrected figure whose uncertainty is more than this share of it
/// is not an answer: the report is not valid, and says how long a control window would
/// give one.
pub const UNCERTAINTY_TARGET: f64 = 0.15;

/// `--max-duration` by default: the control windows are sized within this.
pub const DEFAULT_MAX_DURATION: Duration = Duration::from_secs(180);

/// The options of background traffic, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `--app-role`: only these roles' statements are the app's. Empty: every role's are.
    pub app_roles: Vec<String>,
    /// `--control`: the quiet window measured before the warm-up.
    pub control: Option<Duration>,
    /// `--max-background`, as a fraction of the signal.
    pub max_share: f64,
    /// `--max-duration`: the control window after the burst is sized (for an uncertainty
    /// within [`UNCERTAINTY_TARGET`]) only as long as the run stays within this.
    pub max_duration: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            app_roles: Vec::new(),
            control: None,
            max_share: DEFAULT_MAX_SHARE,
            max_duration: DEFAULT_MAX_DURATION,
        }
    }
}

/// Splits a window's statements into the app roles' (`app_oids`) and the other roles',
/// summed by role (named by `names`, or by oid when unknown).
pub fn split_by_role(
    statements: Vec<StatementDelta>,
    app_oids: &BTreeSet<u32>,
    names: &BTreeMap<u32, String>,
) -> (Vec<StatementDelta>, Vec<OtherRole>) {
    let (app, others): (Vec<_>, Vec<_>) =
        (statements.into_iter()).partition(|s| app_oids.contains(&s.key.userid));
    let mut by_role: BTreeMap<String, OtherRole> = BTreeMap::new();
    for s in others {
        let role = names.get(&s.key.userid).cloned();
        let role = role.unwrap_or_else(|| format!("oid {}", s.key.userid));
        let entry = by_role.entry(role.clone()).or_insert(OtherRole {
            role,
            calls: 0,
            rows: 0,
            entries: 0,
        });
        entry.entries += 1;
        if s.key.toplevel != Some(false) {
            entry.calls += s.calls;
            entry.rows += s.rows;
        }
    }
    (app, by_role.into_values().collect())
}

/// The figures the background is subtracted from: those the figure table marks
/// `subtracted`, in its order.
pub fn subtracted() -> impl Iterator<Item = Figure> {
    Figure::ALL.into_iter().filter(|f| f.spec().subtracted)
}

/// A window's totals of the [`subtracted`] figures, as the report counts them (see
/// `report::build::window_counts`); the other figures unset.
pub type Counts = PerFigure<i64>;

/// What the control window counted, with no request from pgcost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Control {
    /// Its length, between its two snapshots.
    pub seconds: f64,
    pub counts: Counts,
    /// The counts of its consecutive sub-windows, `pg_stat_statements` read about once a
    /// second (`pg_stat_database`: a backend's counts may land one sub-window late, which
    /// the held edges of [`uncertainty`] cover).
    pub subs: Vec<Counts>,
    /// Where the sub-windows join windows apart in time: the sub-window at each index
    /// begins the window after a burst. Empty for one window.
    pub joins: Vec<usize>,
}

impl Control {
    /// The mean length of a sub-window.
    pub fn sub_seconds(&self) -> f64 {
        self.seconds / self.subs.len().max(1) as f64
    }

    /// `figure`'s count in each sub-window; empty where they did not count it.
    pub fn series(&self, figure: Figure) -> Vec<i64> {
        self.subs.iter().filter_map(|c| c.get(figure)).collect()
    }

    /// The background's period, from the sub-windows; `None` when it has none.
    pub fn period_seconds(&self) -> Option<f64> {
        // Statements count at once; without pg_stat_statements, transactions say it.
        let statements = self.series(Figure::Statements);
        let series = match statements.is_empty() {
            true => self.series(Figure::Transactions),
            false => statements,
        };
        series::period(&series).map(|p| p as f64 * self.sub_seconds())
    }

    /// A series of this window's sub-windows, cut where it joins windows apart in time.
    pub fn segments<'a>(&self, series: &'a [i64]) -> Vec<&'a [i64]> {
        let mut segments = Vec::new();
        let mut start = 0;
        for &join in self.joins.iter().filter(|&&j| j > 0 && j < series.len()) {
            segments.push(&series[start..join]);
            start = join;
        }
        segments.push(&series[start..]);
        segments
    }

    /// This window and `after` (the one after the burst) as one: lengths and counts
    /// summed, sub-windows one after the other, and a join between them.
    pub fn merged(&self, after: &Control) -> Control {
        let subs = self.subs.len();
        let joins = (self.joins.iter().copied())
            .chain([subs])
            .chain(after.joins.iter().map(|j| j + subs))
            .collect();
        Control {
            seconds: self.seconds + after.seconds,
            counts: PerFigure::from_fn(|f| Some(self.counts.get(f)? + after.counts.get(f)?)),
            subs: [self.subs.as_slice(), &after.subs].concat(),
            joins,
        }
    }
}

/// How long the control windows must be, together, for every corrected figure of a window
/// that counted `measured` to be within [`UNCERTAINTY_TARGET`]: the
/// longest any figure needs (the length it has when all already are). `None` when a
/// figure's edges alone are too uncertain: only more requests help then.
pub fn control_needed(input: &Input, measured: Counts) -> Option<f64> {
    let control = input.control.as_ref()?;
    let mut needed = control.seconds;
    for f in figures(input, control, measured) {
        needed = needed.max(f.control_needed(control.seconds)?);
    }
    Some(needed)
}

/// The app roles' statements between a snapshot read after the last response and the
/// window's closing one: background, counted while pgcost sent nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tail {
    pub seconds: f64,
    pub statements: i64,
}

/// Everything the report needs about other traffic, gathered by the measurement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    pub options: Options,
    pub other_roles: Vec<OtherRole>,
    pub control: Option<Control>,
    /// Seconds between the measured window's two snapshots.
    pub window_seconds: f64,
    /// How long an active backend may hold counters: `PGSTAT_MIN_INTERVAL`, 1 s on
    /// PG 15+ (0.5 s, the collector's interval, before).
    pub flush_interval_seconds: f64,
    /// Client backends that did something in the window while pgcost sent nothing, or
    /// that belong to a role outside `--app-role`, each as `pid 123 (role x)`.
    pub other_backends: Vec<String>,
    /// The window's tail after the burst (admin mode); `None` where not read.
    pub tail: Option<Tail>,
}

/// How long an active backend may hold its pg_stat_database counters on a server of
/// `version_num`: `PGSTAT_MIN_INTERVAL`, 1 s on PG 15+ (0.5 s, the collector's interval,
/// before).
pub fn flush_interval_seconds(version_num: i32) -> f64 {
    if version_num >= 150000 { 1.0 } else { 0.5 }
}

/// The rate of `count` over `seconds` (0 for an empty window).
pub fn rate(count: i64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// How far the background expected over a window of `window_seconds` may be from the
/// truth, as a window total, for a figure the control window counted `count` of, in
/// `events` transactions (or statements) over `control_seconds`:
/// - counting noise: [`NOISE_SIGMAS`] Poisson deviations of the control count, scaled to
///   the window; a count of zero is taken as up to 3 (its 95% upper limit);
/// - when `held` (pg_stat_database, PG 15+), up to `held` seconds of the background that
///   active backends had not yet published at the edges of either window.
pub fn uncertainty(
    count: i64,
    events: i64,
    control_seconds: f64,
    window_seconds: f64,
    held: Option<f64>,
) -> f64 {
    if control_seconds <= 0.0 {
        return 0.0;
    }
    let scale = window_seconds / control_seconds;
    let noise = if events > 0 {
        NOISE_SIGMAS * count as f64 / (events as f64).sqrt() * scale
    } else if count == 0 {
        3.0 * scale
    } else {
        0.0
    };
    let unpublished = held.map_or(0.0, |seconds| {
        rate(count, control_seconds) * seconds * (1.0 + scale)
    });
    noise + unpublished
}

/// The background over the `signal` (window total minus the background); `None` when the
/// signal is not positive.
pub fn share(background: f64, signal: f64) -> Option<f64> {
    (signal > 0.0).then(|| background / signal)
}

/// True when the background is more than `max_share` of the signal.
pub fn too_loud(background: f64, signal: f64, max_share: f64) -> bool {
    background > 0.0 && share(background, signal).is_none_or(|s| s > max_share)
}

/// The report's section, and what it changes in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessed {
    /// `None` when neither `--app-role` nor `--control` was given.
    pub background: Option<Background>,
    /// The corrected per-request figures, with `--control`.
    pub corrected: Option<PerFigure<f64>>,
    pub invalid_reasons: Vec<Invalid>,
    pub warnings: Vec<Note>,
}

/// One figure's correction: window totals.
struct Correction {
    figure: Figure,
    measured: i64,
    subtracted: f64,
    uncertainty: f64,
    /// The part of `uncertainty` a longer control window does not shrink.
    fixed: f64,
}

impl Correction {
    /// What is left of the figure once the background is subtracted: the requests'.
    fn signal(&self) -> f64 {
        (self.measured as f64 - self.subtracted).max(0.0)
    }

    /// How long control windows (now `control_seconds`) would bring its uncertainty within
    /// [`UNCERTAINTY_TARGET`] of its signal: see [`series::control_seconds_for`].
    fn control_needed(&self, control_seconds: f64) -> Option<f64> {
        let target = UNCERTAINTY_TARGET * self.signal();
        series::control_seconds_for(self.uncertainty, self.fixed, target, control_seconds)
    }
}

/// Assesses the background of a window whose counts were `measured`, over `requests`.
pub fn assess(input: &Input, measured: Counts, requests: u64) -> Assessed {
    let options = &input.options;
    let mut warnings = Vec::new();
    if input.control.is_none() && !input.other_backends.is_empty() {
        warnings.push(unsubtracted_warning(input));
    }
    if !input.other_roles.is_empty() {
        warnings.push(other_roles_line(&input.other_roles));
    }
    let shown = !options.app_roles.is_empty() || input.control.is_some();
    let mut background = shown.then(|| Background {
        app_roles: options.app_roles.clone(),
        other_roles: input.other_roles.clone(),
        other_backends: input.other_backends.clone(),
        measured_window_seconds: input.window_seconds,
        max_background: options.max_share,
        ..Background::default()
    });
    let (Some(control), Some(section)) = (&input.control, background.as_mut()) else {
        return Assessed {
            background,
            corrected: None,
            invalid_reasons: plain_reasons(input, measured),
            warnings,
        };
    };
    let figures = figures(input, control, measured);
    let n = requests.max(1) as f64;
    let of = |figure| figures.iter().find(|f| f.figure == figure);
    let per = |value: fn(&Correction) -> f64| PerFigure::from_fn(|f| of(f).map(|c| value(c) / n));
    let per_second = |f| control.counts.get(f).map(|c| rate(c, control.seconds));
    section.window_seconds = Some(control.seconds);
    section.set_per_second(PerFigure::from_fn(per_second));
    section.subtracted = Some(per(|f| f.subtracted));
    section.uncertainty = Some(per(|f| f.uncertainty));
    section.share = Some(PerFigure::from_fn(|f| {
        of(f).and_then(|c| share(c.subtracted, c.signal()))
    }));
    section.period_seconds = control.period_seconds();
    let loudest = (figures.iter())
        .filter_map(|f| share(f.subtracted, f.signal()).map(|s| (f.figure.label(), s)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((figure, loudest)) = loudest.filter(|(_, s)| *s > options.max_share) {
        warnings.push(Note::BackgroundSubtracted {
            figure: figure.into(),
            share: loudest,
            max_share: options.max_share,
            period_seconds: section.period_seconds,
        });
    }
    let invalid_reasons = (figures.iter())
        .filter(|f| too_uncertain(f.uncertainty, f.signal()))
        .map(|f| too_uncertain_reason(f, control, requests))
        .collect();
    Assessed {
        corrected: Some(per(Correction::signal)),
        background,
        invalid_reasons,
        warnings,
    }
}

/// The [`subtracted`] figures both windows counted (statements only with
/// pg_stat_statements).
fn figures(input: &Input, control: &Control, measured: Counts) -> Vec<Correction> {
    let (c, seconds, window) = (control.counts, control.seconds, input.window_seconds);
    let correction = |figure| {
        let (measured, count) = (measured.get(figure)?, c.get(figure)?);
        // Rows read come in transactions, whose count sets their noise; pg_stat_statements
        // counts at once: nothing is held back at the edges.
        let (events, held) = match figure {
            Figure::Statements => (count, None),
            _ => (c.transactions?, Some(input.flush_interval_seconds)),
        };
        let mut correction = Correction {
            figure,
            measured,
            subtracted: rate(count, seconds) * window,
            uncertainty: uncertainty(count, events, seconds, window, held),
            fixed: held.map_or(0.0, |held| rate(count, seconds) * held),
        };
        in_bursts(&mut correction, &control.series(figure), control, window);
        Some(correction)
    };
    subtracted().filter_map(correction).collect()
}

/// A background in bursts varies more than a Poisson stream of its events: the control
/// window's sub-windows of the figure (`series`) say how much, when they say more. The
/// part held back at the edges (pg_stat_database) stays on top.
fn in_bursts(figure: &mut Correction, series: &[i64], control: &Control, window: f64) {
    let sub = control.sub_seconds();
    if series.is_empty() || sub <= 0.0 {
        return;
    }
    let segments = control.segments(series);
    let edges = series::edge_spread(&segments, (window / sub).ceil() as usize);
    let bursts = series::uncertainty(&segments, sub, window, NOISE_SIGMAS);
    let held = figure.fixed * (1.0 + window / control.seconds.max(f64::MIN_POSITIVE));
    let noise = figure.uncertainty - held;
    if bursts > noise {
        figure.uncertainty = bursts + held;
        figure.fixed += edges;
    }
}

/// Without `--control`: the background statements the window holds, estimated from its
/// tail's rate over the whole window and bounded from above by the counting noise of so
/// short a tail ([`NOISE_SIGMAS`] Poisson deviations), when that bound is more than
/// `--max-background` of the rest. A tail that saw none leaves nothing to bound.
fn plain_reasons(input: &Input, measured: Counts) -> Vec<Invalid> {
    let (Some(tail), Some(statements), None) = (input.tail, measured.statements, &input.control)
    else {
        return Vec::new();
    };
    if tail.statements <= 0 {
        return Vec::new();
    }
    let window = input.window_seconds;
    let expected = rate(tail.statements, tail.seconds) * window;
    let bound =
        expected + uncertainty(tail.statements, tail.statements, tail.seconds, window, None);
    let max = input.options.max_share;
    if !too_loud(bound, statements as f64 - bound, max) {
        return Vec::new();
    }
    let rest = |background: f64| match share(background, statements as f64 - background) {
        Some(s) => format!("{:.0}% of the rest", s * 100.0),
        None => "all of them".into(),
    };
    let seen = format!(
        "background in the window: {} statement(s) ran in the {:.1} s after the last response, \
         while pgcost sent nothing",
        tail.statements, tail.seconds,
    );
    let mut how_much = format!(
        "so about {expected:.0} of the window's {statements} statements are not the requests' \
         ({}",
        rest(expected)
    );
    if !too_loud(expected, statements as f64 - expected, max) {
        let most = format!("{bound:.0} possible ({}", rest(bound));
        how_much += &format!("), and so short a count leaves up to {most}");
    }
    let message = format!(
        "{seen}, {how_much}, more than --max-background {}); measure it and subtract it with \
         --control 10s (give --app-role ROLE too when it runs as another role)",
        percent(max),
    );
    vec![Invalid::new(Code::BackgroundTooLoud, message)]
}

/// True when an uncertainty is more than [`UNCERTAINTY_TARGET`] of the corrected signal.
pub fn too_uncertain(uncertainty: f64, signal: f64) -> bool {
    uncertainty > UNCERTAINTY_TARGET * signal.max(0.0)
}

fn too_uncertain_reason(f: &Correction, control: &Control, requests: u64) -> Invalid {
    let (signal, needed) = (f.signal(), f.control_needed(control.seconds));
    let period = control
        .period_seconds()
        .map(|p| format!(", a period of {p:.1} s"))
        .unwrap_or_default();
    let message = format!(
        "the background leaves {} uncertain by ± {:.1} against {:.1} from the requests (more \
         than {}): {:.1} expected from the {:.1} s control window{period}; {}",
        f.figure.label(),
        f.uncertainty,
        signal,
        percent(UNCERTAINTY_TARGET),
        f.subtracted,
        control.seconds,
        match needed {
            Some(seconds) => format!(
                "control windows of about {:.0} s in all would give an answer (these had \
                 {:.1} s before and after the burst, within --max-duration): raise \
                 --max-duration by about {:.0} s, or stop the other traffic",
                seconds.ceil(),
                control.seconds,
                (seconds - control.seconds).max(0.0).ceil()
            ),
            None => match sizing::requests_needed(f.fixed, signal, requests) {
                Some(n) => format!(
                    "its edges alone are too uncertain beside the signal of {requests} \
                     requests: about {n} requests would give an answer (pgcost sizes the burst \
                     within --max-duration: raise it, or give -n {n}), or stop the other traffic"
                ),
                None => "its edges alone are too uncertain beside the signal: send more \
                         requests (-n), or stop the other traffic"
                    .into(),
            },
        },
    );
    Invalid::new(Code::BackgroundTooUncertain, message)
}

fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 1000.0).round() / 10.0)
}

/// Without `--control`: the other backends' work is in the pg_stat_database figures.
fn unsubtracted_warning(input: &Input) -> Note {
    let app_roles = &input.options.app_roles;
    Note::BackgroundNotSubtracted {
        backends: input.other_backends.clone(),
        app_roles: !app_roles.is_empty(),
        shares_app_role: (input.other_backends.iter()).any(|b| {
            app_roles
                .iter()
                .any(|r| b.contains(&format!("(role {r})")) || b.contains(&format!("(role {r},")))
        }),
    }
}

fn other_roles_line(others: &[OtherRole]) -> Note {
    Note::OtherRolesStatements {
        roles: (others.iter())
            .map(|o| RoleCalls {
                role: o.role.clone(),
                calls: o.calls,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
