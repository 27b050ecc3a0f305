//! Windows without churn, plan changes or one-offs: the check of a closed window, which
//! the runner measures again (warm-up, opening boundary, burst, closing boundary) when an
//! app connection opened or closed inside it, a statement's plan changed between the halves
//! of its burst, or a few requests did what the others did not, up to `--retries` times.
//! The rules are `pgcost_core::churn`'s, `pgcost_core::steady`'s and `pgcost_core::one_off`'s.

use crate::config::AuditConfig;
use crate::measure::steady;
use crate::measure::{Boundaries, Burst, Meters, Notes, Window};
use pgcost_core::churn::{self, Churn, ChurnVerdict};
use pgcost_core::delta::WindowDelta;
use pgcost_core::one_off::{self, OddEvents};
use pgcost_core::plan::Plans;
use pgcost_core::report::Report;
use pgcost_core::report::model::figures::Figures;
use pgcost_core::report::model::invalid::{Code, Invalid};
use pgcost_core::report::model::notes::Note;

/// Why a window is measured again.
enum Discard {
    Churn(Churn),
    /// Statements whose rows or blocks per call changed between the burst's halves.
    Plans(Vec<pgcost_core::steady::Change>),
    /// Events only a few requests had.
    OneOffs(Vec<OddEvents>),
}

/// What one endpoint's windows so far left for the next check: the one-offs of each, while
/// every window had some (the app's own rare work shows in every window, in the same
/// counters; a one-off does not).
#[derive(Default)]
pub struct Attempts {
    odd_windows: Vec<OddWindow>,
}

/// The verdict on a window.
pub enum Checked {
    /// The window to report.
    Kept(Box<Window>),
    /// Measure it again: why, and how many slices the next warm-up compares at least.
    Again { reason: String, min_slices: u32 },
}

/// One window to judge: the endpoint's, between two boundaries, with its burst.
pub struct Judged<'a> {
    pub config: &'a AuditConfig,
    /// The report of its unauthenticated run, to set beside its own.
    pub unauthenticated: &'a Option<Report>,
    pub opened: &'a Boundaries,
    pub burst: &'a Burst,
    pub closed: &'a Boundaries,
    /// Whether Ctrl-C came since (no retry then).
    pub stopped: bool,
}

/// Judges a window. A window in which app connections opened or closed, or in which a
/// statement's plan changed between the halves of the burst, or a few requests did what the
/// others did not, is measured again (after a new warm-up), when its report is otherwise
/// valid and retries are left: `notes` (what the run learnt of the endpoint) then count the
/// discarded window. When none are left, the last window stands, and its report says what
/// the churn added, or names the statements whose plans changed, or the one-offs; the app's
/// rare work is taken out of its figures. A connection per request is the endpoint's cost,
/// never retried.
pub fn check(
    meter: &Meters,
    judged: Judged<'_>,
    notes: &mut Notes,
    attempts: &mut Attempts,
) -> Checked {
    let Judged {
        config,
        opened,
        burst,
        closed,
        ..
    } = judged;
    let edges = (opened, closed);
    let report = |notes: Notes| {
        let unauthenticated = judged.unauthenticated.clone();
        meter.measured(config, edges, burst, unauthenticated, notes)
    };
    let first = report(notes.clone());
    let Some(discard) = discard_of(meter, config, (opened, burst, closed), &first) else {
        return Checked::Kept(Box::new(first));
    };
    let odd_windows = &mut attempts.odd_windows;
    let odd_window = |odd: &[OddEvents]| OddWindow::of(odd, &first, edges);
    // A one-off does not come back in the next window; the app's rare work does (a
    // token touched once a minute, a heartbeat): measuring again cannot remove it.
    let recurs = matches!(&discard, Discard::OneOffs(odd)
        if odd_windows.last().is_some_and(|w| one_off::same_counters(&w.odd, odd)));
    // Plans are not fetched yet: they do not decide validity.
    let retry = first.report(&Plans::default()).valid
        && !burst.interrupted
        && !judged.stopped
        && !recurs
        && notes.windows.discarded < config.retries;
    if !retry {
        if let Discard::OneOffs(odd) = &discard {
            odd_windows.push(odd_window(odd));
        }
        let base = notes.clone();
        let (notes, rare) = kept(meter, config, edges, base, (&discard, odd_windows, recurs));
        return Checked::Kept(Box::new(match rare {
            Some(rare) => without_rare(report(notes), &rare),
            None => report(notes),
        }));
    }
    let reason = discard.reason(config.requests);
    // After a one-off, the next warm-up compares more slices before it trusts them.
    let min_slices = match discard {
        Discard::OneOffs(odd) => {
            odd_windows.push(odd_window(&odd));
            steady::MIN_SLICES_AFTER_ONE_OFF
        }
        _ => {
            odd_windows.clear();
            1
        }
    };
    notes.windows.discarded += 1;
    notes.windows.reasons.push(reason.clone());
    Checked::Again { reason, min_slices }
}

/// The notes of a window kept though it would be measured again: what its churn added,
/// the statements whose plans changed, or its one-offs (the windows that had them, the
/// last included, and whether they `recur`); and, when they are the app's rare work, its
/// part of the window, to take out of the figures.
fn kept(
    meter: &Meters,
    config: &AuditConfig,
    edges: (&Boundaries, &Boundaries),
    base: Notes,
    (discard, odd_windows, recur): (&Discard, &[OddWindow], bool),
) -> (Notes, Option<RarePart>) {
    match discard {
        Discard::Churn(c) => (with_unclean_warning(meter, config, edges, base, *c), None),
        Discard::Plans(changes) => {
            let notes = steady::with_plan_warning(base, changes, edges, config.retries);
            (notes, None)
        }
        Discard::OneOffs(_) => with_one_offs(base, odd_windows, config, recur),
    }
}

/// The app's rare work in the kept window: its events, and its part of the window's
/// counters (of the sum, and of each database's own part).
struct RarePart {
    odd: Vec<OddEvents>,
    delta: WindowDelta,
}

/// `window` with its rare work taken out: every figure is the requests' own. A database's
/// own part whose rare work cannot be told apart keeps it, and the window is not valid.
fn without_rare(mut window: Window, rare: &RarePart) -> Window {
    let requests = window.context.requests;
    window.delta = one_off::regular_part(&window.delta, &rare.delta);
    for node in &mut window.nodes {
        match one_off::rare_part(&node.delta, &rare.odd, requests) {
            Ok(part) => node.delta = one_off::regular_part(&node.delta, &part),
            Err(why) => (window.context.invalid_reasons)
                .push(inseparable(&format!("database {}", node.name.name), &why)),
        }
    }
    window
}

/// Why a window whose rare work cannot be told apart from the requests' is not valid.
fn inseparable(of: &str, why: &str) -> Invalid {
    let message = format!(
        "the app's rare work came back in the same counters, but its part of {of} cannot be \
         told apart from the requests' ({why}): the figures would include it (the note \
         rare_events names its events and how often they came)"
    );
    Invalid::new(Code::OneOffsInEveryWindow, message)
}

/// The window's one-offs, when they can be told: not when other traffic shares its
/// counters (other backends seen, or a background subtracted with `--control`), nor when
/// the report is not valid anyway.
fn one_offs(
    meter: &Meters,
    window: &Window,
    (opened, closed): (&Boundaries, &Boundaries),
    requests: u64,
) -> Vec<OddEvents> {
    let quiet = window.context.background.as_ref().is_none_or(|b| {
        b.options.control.is_none() && b.other_backends.is_empty() && b.other_roles.is_empty()
    });
    let valid =
        window.context.invalid_reasons.is_empty() && window.delta.invalid_reasons.is_empty();
    if !quiet || !valid || window.load.sent != requests {
        return Vec::new();
    }
    let mut odd = one_off::odd_events(&window.delta, requests);
    if let (Some(opened), Some(closed)) = (opened.first(), closed.first()) {
        odd.extend(meter.first().odd_catalog_scans(opened, closed, requests));
    }
    odd
}

/// A window with one-offs: the events, the window's headline figures and its length.
struct OddWindow {
    odd: Vec<OddEvents>,
    figures: Figures,
    /// The window's counters, for the part the rare work did.
    delta: WindowDelta,
    /// The window's length, from its boundaries.
    seconds: Option<f64>,
    /// Its burst's length, where the boundaries did not time it.
    burst_seconds: f64,
}

impl OddWindow {
    fn of(
        odd: &[OddEvents],
        window: &Window,
        (opened, closed): (&Boundaries, &Boundaries),
    ) -> Self {
        let start = opened.first().and_then(|b| b.start_at);
        let end = closed.first().and_then(|b| b.end_at);
        OddWindow {
            odd: odd.to_vec(),
            figures: figures(window),
            delta: window.delta.clone(),
            seconds: start
                .zip(end)
                .map(|(s, e)| e.saturating_duration_since(s).as_secs_f64()),
            burst_seconds: window.load.wall.as_secs_f64(),
        }
    }
}

/// `notes` once the last window had one-offs and is kept: when the last two windows had
/// them in the same counters, they are the app's own rare work, kept in the figures with a
/// note (the spread and the rate are theirs); when they disagree, the figures cannot be
/// trusted. Kept as soon as they `recur`; else not retried for another reason (an invalid
/// report, Ctrl-C): that reason stands.
fn with_one_offs(
    mut notes: Notes,
    windows: &[OddWindow],
    config: &AuditConfig,
    recur: bool,
) -> (Notes, Option<RarePart>) {
    let Some(kept) = windows.last() else {
        return (notes, None);
    };
    let last = &kept.odd;
    if !recur && notes.windows.discarded < config.retries {
        return (notes, None);
    }
    let requests = config.requests;
    let rows = one_off::rows_per_request(last, requests);
    let odd: Vec<Vec<OddEvents>> = windows.iter().map(|w| w.odd.clone()).collect();
    if one_off::apps_own(&odd) {
        let figures: Vec<Figures> = windows.iter().rev().take(2).map(|w| w.figures).collect();
        let timed: Vec<(&[OddEvents], f64)> = (windows.iter().rev().take(2))
            .map(|w| w.seconds.map(|s| (&w.odd[..], s)))
            .collect::<Option<_>>()
            .unwrap_or_default();
        let part = one_off::rare_part(&kept.delta, last, requests);
        let rare = match &part {
            Ok(delta) => Some(RarePart {
                odd: last.clone(),
                delta: delta.clone(),
            }),
            Err(why) => {
                (notes.invalid_reasons).push(inseparable("the window", why));
                None
            }
        };
        notes
            .warnings
            .push(Note::RareEvents(Box::new(one_off::RareWork {
                windows: windows.len() as u32,
                requests,
                rows_read_per_request: rows,
                events: last.clone(),
                spread: one_off::spread(&figures),
                per_minute: one_off::per_minute(&timed),
                taken_out: (part.ok()).map(|delta| {
                    let seconds = kept.seconds.unwrap_or(kept.burst_seconds);
                    one_off::rare_cost(&delta, last, seconds)
                }),
            })));
        return (notes, rare);
    }
    let message = format!(
        "a few requests did what the others did not, in every window within --retries {} \
         ({}){}: a plan switch, a cache refill or a backend that was not warm, most likely \
         on a busy machine; measure again when the machine is quieter, or raise --retries \
         and --warmup",
        config.retries,
        one_off::describe(last, requests),
        match rows > 0.0 {
            true => format!("; rows read include {rows:.3} per request from them"),
            false => String::new(),
        }
    );
    (notes.invalid_reasons).push(Invalid::new(Code::OneOffsInEveryWindow, message));
    (notes, None)
}

/// The headline figures of a window's report, before plans.
fn figures(window: &Window) -> Figures {
    Figures::of(&window.report(&Plans::default()))
}

/// Why the window between `opened` and `closed` must be measured again, if it must: churn
/// (but not a connection per request, the endpoint's own cost), a plan change between the
/// burst's halves, or one-offs.
fn discard_of(
    meter: &Meters,
    config: &AuditConfig,
    (opened, burst, closed): (&Boundaries, &Burst, &Boundaries),
    window: &Window,
) -> Option<Discard> {
    match churn::judge(meter.churn(opened, closed), config.requests) {
        ChurnVerdict::Churned(churned) => Some(Discard::Churn(churned)),
        ChurnVerdict::ConnectionPerRequest => None,
        ChurnVerdict::Clean => match steady::plan_changes(opened, burst, closed) {
            changes if !changes.is_empty() => Some(Discard::Plans(changes)),
            _ => match one_offs(meter, window, (opened, closed), config.requests) {
                odd if odd.is_empty() => None,
                odd => Some(Discard::OneOffs(odd)),
            },
        },
    }
}

impl Discard {
    /// Why the window was measured again, for the report.
    fn reason(&self, requests: u64) -> String {
        match self {
            Discard::Churn(churned) => churn::discard_reason(*churned),
            Discard::Plans(changes) => steady::discard_reason(changes),
            Discard::OneOffs(odd) => format!(
                "a few requests did what the others did not: {}",
                one_off::describe(odd, requests)
            ),
        }
    }
}

/// `notes` with the line that says what the churn of the kept window added.
pub(crate) fn with_unclean_warning(
    meter: &Meters,
    config: &AuditConfig,
    (opened, closed): (&Boundaries, &Boundaries),
    mut notes: Notes,
    churned: Churn,
) -> Notes {
    let uncounted = meter.uncounted_extra(opened, closed);
    notes.warnings.push(churn::unclean_warning(
        churned,
        config.retries,
        uncounted,
        config.requests,
    ));
    notes
}
