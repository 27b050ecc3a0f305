//! The plan of a measurement: the steps the runner (`measure::runner`) takes, in order.
//! Every command builds its plan and reads the reports the runner returns; the runner owns
//! the meters, progress, Ctrl-C, the settle waits and the retries.

use std::fmt;

/// One step of a plan. `usize` is an endpoint's index among the runner's endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// With `--allow-writes`, before anything is sent: each table's counters and the next
    /// transaction id, from which the run's writes are named after its last window.
    MarkWrites,
    /// The control window (`--control`), before anything is sent; a no-op without it.
    Control,
    /// The caller told that endpoint `i`'s turn begins (a status line).
    Begin(usize),
    /// Endpoint `i`'s credentials proved to count, before its warm-up.
    Probe(usize),
    /// Endpoint `i` warmed up to a steady state, its tags sampled meanwhile.
    WarmUp(usize),
    /// Endpoint `i`'s `--warmup` requests, with no steady state to reach (a ramp).
    WarmUpFixed(usize),
    /// The settled boundary that opens a window on every database: the one that closed
    /// the last kept window when nothing was sent since (one settle wait between two
    /// windows), else a settle wait of its own.
    Open,
    /// Every endpoint's burst sized to the background's rates (`--control`).
    SizeBursts,
    /// Endpoint `i` warmed up again, and a window opened, when app connections opened
    /// since its warm-up (a backend born after it is not warm).
    WarmIfCold(usize),
    /// Endpoint `i`'s burst, its backends, tags and mid-burst statements sampled.
    Burst(usize),
    /// The ramp's steps, endpoint `i`'s load raised step by step (`pgcost ramp`).
    Ramp(usize),
    /// The user's load command as endpoint `i`'s burst, and the count it reports
    /// (`pgcost measure`).
    Command(usize),
    /// The settled boundary that closes the burst's window.
    Close,
    /// Endpoint `i`'s window judged: kept, or, after churn, a plan change or one-offs,
    /// measured again (warm-up, open, burst, close, check) up to `--retries` times.
    Check(usize),
    /// Endpoint `i`'s window kept as it is, with what its churn added (a command cannot
    /// be sent again).
    Keep(usize),
    /// pg_stat_statements read at once, with no settle wait: it opens the screening
    /// window, or closes it (`pgcost survey`).
    Read,
    /// Endpoint `i`'s screening window kept: its statement figures only.
    Screened(usize),
    /// The second control window, after the last window (`--control`).
    ControlAfter,
    /// The plans of the statements the reports name, fetched after the last window.
    Plans,
}

/// The steps of one run of the runner, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub steps: Vec<Step>,
}

impl Plan {
    /// `audit`, `check`, `scale`, `demo` and the survey's exact windows: `endpoints`
    /// measured in one sequence of shared settle waits (N + 1 instead of 2N). Every
    /// endpoint is warmed up first; then each boundary closes one window and opens the next.
    pub fn sequence(endpoints: usize) -> Plan {
        let mut steps = vec![Step::MarkWrites, Step::Control];
        steps.extend((0..endpoints).map(Step::Probe));
        steps.extend((0..endpoints).map(Step::WarmUp));
        steps.extend([Step::Open, Step::SizeBursts]);
        for i in 0..endpoints {
            if i > 0 {
                steps.push(Step::Open);
            }
            steps.extend([Step::Begin(i), Step::WarmIfCold(i)]);
            steps.extend([Step::Burst(i), Step::Close, Step::Check(i)]);
        }
        steps.extend([Step::ControlAfter, Step::Plans]);
        Plan { steps }
    }

    /// `pgcost measure`: the window around the user's load command.
    pub fn command() -> Plan {
        let steps = [
            Step::Control,
            Step::Open,
            Step::Command(0),
            Step::Close,
            Step::Keep(0),
        ];
        let steps = steps.into_iter().chain([Step::ControlAfter, Step::Plans]);
        Plan {
            steps: steps.collect(),
        }
    }

    /// The survey's screening of endpoint `i`: warmed up, then its burst between two reads
    /// of pg_stat_statements, with no settle wait.
    pub fn screening(i: usize) -> Plan {
        let steps = [Step::Begin(i), Step::Probe(i), Step::WarmUp(i), Step::Read];
        let steps = steps
            .into_iter()
            .chain([Step::Burst(i), Step::Read, Step::Screened(i)]);
        Plan {
            steps: steps.collect(),
        }
    }
}

impl Plan {
    /// `pgcost ramp`: one window around all its steps, for the whole ramp's
    /// `pg_stat_database` totals; each step reads pg_stat_statements itself.
    pub fn ramp() -> Plan {
        let steps = [
            Step::MarkWrites,
            Step::WarmUpFixed(0),
            Step::Open,
            Step::Ramp(0),
            Step::Close,
        ];
        Plan {
            steps: steps.to_vec(),
        }
    }
}

/// What a retry of endpoint `i` runs after its window was discarded: it is warmed up
/// again, and its window opened, sent, closed and judged again.
pub fn retry(i: usize) -> [Step; 5] {
    [
        Step::WarmUp(i),
        Step::Open,
        Step::Burst(i),
        Step::Close,
        Step::Check(i),
    ]
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::MarkWrites => write!(f, "mark writes"),
            Step::Control => write!(f, "control window"),
            Step::Begin(i) => write!(f, "begin {i}"),
            Step::Probe(i) => write!(f, "probe {i}"),
            Step::WarmUp(i) => write!(f, "warm up {i}"),
            Step::WarmUpFixed(i) => write!(f, "warm up {i} (--warmup requests)"),
            Step::Ramp(i) => write!(f, "ramp {i}"),
            Step::Open => write!(f, "open"),
            Step::SizeBursts => write!(f, "size bursts"),
            Step::WarmIfCold(i) => write!(f, "warm up {i} if cold"),
            Step::Burst(i) => write!(f, "burst {i}"),
            Step::Command(i) => write!(f, "command {i}"),
            Step::Close => write!(f, "close"),
            Step::Check(i) => write!(f, "check {i}"),
            Step::Keep(i) => write!(f, "keep {i}"),
            Step::Read => write!(f, "read"),
            Step::Screened(i) => write!(f, "screened {i}"),
            Step::ControlAfter => write!(f, "control window after"),
            Step::Plans => write!(f, "plans"),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps: Vec<String> = self.steps.iter().map(Step::to_string).collect();
        write!(f, "{}", steps.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_endpoint_is_one_window_between_two_settle_waits() {
        assert_eq!(
            Plan::sequence(1).to_string(),
            "mark writes, control window, probe 0, warm up 0, open, size bursts, begin 0, \
             warm up 0 if cold, burst 0, close, check 0, control window after, plans"
        );
    }

    #[test]
    fn a_sequence_shares_the_boundary_between_two_windows() {
        let plan = Plan::sequence(2).to_string();
        assert_eq!(
            plan,
            "mark writes, control window, probe 0, probe 1, warm up 0, warm up 1, open, \
             size bursts, \
             begin 0, warm up 0 if cold, burst 0, close, check 0, open, \
             begin 1, warm up 1 if cold, burst 1, close, check 1, control window after, plans"
        );
        let five = Plan::sequence(5);
        let opens = five.steps.iter().filter(|s| **s == Step::Open).count();
        let closes = five.steps.iter().filter(|s| **s == Step::Close).count();
        assert_eq!(
            (opens, closes),
            (5, 5),
            "N + 1 settle waits: closes share the opens'"
        );
    }

    #[test]
    fn a_command_window_is_kept_as_it_is() {
        assert_eq!(
            Plan::command().to_string(),
            "control window, open, command 0, close, keep 0, control window after, plans"
        );
    }

    #[test]
    fn a_screening_reads_without_settling_and_fetches_no_plan() {
        assert_eq!(
            Plan::screening(3).to_string(),
            "begin 3, probe 3, warm up 3, read, burst 3, read, screened 3"
        );
    }

    #[test]
    fn a_ramp_is_one_window_around_its_steps() {
        assert_eq!(
            Plan::ramp().to_string(),
            "mark writes, warm up 0 (--warmup requests), open, ramp 0, close"
        );
    }

    #[test]
    fn a_retry_warms_up_and_measures_the_window_again() {
        let steps: Vec<String> = retry(1).iter().map(Step::to_string).collect();
        assert_eq!(steps, ["warm up 1", "open", "burst 1", "close", "check 1"]);
    }
}
