//! The stress lane's machinery: CPU hogs (busy loops at twice the cores, stopped on drop,
//! also when the test panics), how a report under them is judged against the truth, and
//! the tally each case prints at its end.

use std::fmt::Write as _;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;

/// One set of hogs at a time in this process: two tests under hogs at once would double
/// the load each of them claims to run under.
static ONE_SET_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A whole number from the environment variable `name`, or `default`.
pub fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => (text.trim().parse())
            .unwrap_or_else(|_| panic!("{name}={text:?}: a whole number, please")),
        Err(_) => default,
    }
}

/// The load average as `/proc/loadavg` gives it: over 1, 5 and 15 minutes.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Busy loops that keep every core of the machine wanted twice over, in one process group
/// of their own. Dropping the value kills the group; a loop also stops by itself once this
/// process is gone (killed by a timeout before any drop could run).
pub struct CpuHogs {
    hogs: Vec<Child>,
    group: Pid,
    started: Instant,
    _one_set_at_a_time: MutexGuard<'static, ()>,
}

impl CpuHogs {
    /// Starts `PGCOST_STRESS_HOGS` busy loops, by default twice the cores this process may
    /// run on, and prints the load average before they start.
    pub fn start() -> CpuHogs {
        let lock = (ONE_SET_AT_A_TIME.lock()).unwrap_or_else(|poisoned| poisoned.into_inner());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let count = env_count("PGCOST_STRESS_HOGS", 2 * cores);
        let before = load_average();
        // Spins in user space, as `while :; do :; done` does, and asks every ~0.1 s (100,000
        // turns) whether this process is still there: `kill -0` fails once it has exited.
        let script = format!(
            "while kill -0 {} 2>/dev/null; do i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; done",
            std::process::id()
        );
        let mut hogs: Vec<Child> = Vec::new();
        for _ in 0..count {
            // The first loop leads the group, the others join it.
            let leader = hogs.first().map_or(0, |first| first.id() as i32);
            let hog = Command::new("sh")
                .args(["-c", &script])
                .process_group(leader)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("sh runs a busy loop");
            hogs.push(hog);
        }
        let group = Pid::from_raw(hogs.first().map_or(0, |first| first.id() as i32));
        eprintln!(
            "stress: {count} CPU hogs on {cores} cores (process group {group}); load average \
             before them: {before}"
        );
        CpuHogs {
            hogs,
            group,
            started: Instant::now(),
            _one_set_at_a_time: lock,
        }
    }
}

impl Drop for CpuHogs {
    fn drop(&mut self) {
        if !self.hogs.is_empty() {
            let _ = killpg(self.group, Signal::SIGKILL);
        }
        for hog in &mut self.hogs {
            let _ = hog.kill();
            let _ = hog.wait();
        }
        eprintln!(
            "stress: {} CPU hogs stopped after {:.0} s; load average: {}",
            self.hogs.len(),
            self.started.elapsed().as_secs_f64(),
            load_average()
        );
    }
}

/// What one report under stress said, against the truth.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Valid and right: exact figures, or (a ramp) a wall the truth allows.
    Right(String),
    /// `valid: false`, with its reasons: honest.
    NotValid(Vec<String>),
    /// Valid, and a figure or a verdict the truth contradicts: the one outcome the lane
    /// exists to catch.
    Wrong(String),
    /// No report to judge, or one that breaks its own contract (no reason, a wrong exit).
    Failed(String),
}

/// What one request costs by construction, as an audit report's `per_request` says it.
#[derive(Debug, Clone, Copy)]
pub struct Truth {
    pub transactions: f64,
    pub statements: f64,
    pub rows_read: f64,
    pub rows_returned: f64,
}

/// Judges one audit report (JSON): not valid with at least one reason, or valid and every
/// figure of `truth` exact, with no new connection.
pub fn judge_audit(report: &Value, truth: &Truth) -> Outcome {
    match report["valid"].as_bool() {
        None => Outcome::Failed(format!("no `valid` in {report}")),
        Some(false) => not_valid(report),
        Some(true) => {
            let p = &report["per_request"];
            let expected = [
                ("transactions", truth.transactions),
                ("statements", truth.statements),
                ("rows_read", truth.rows_read),
                ("rows_returned", truth.rows_returned),
                ("new_sessions", 0.0),
            ];
            let off: Vec<String> = (expected.iter())
                .filter(|(key, value)| p[*key].as_f64() != Some(*value))
                .map(|(key, value)| format!("{key} {} (truth {value})", p[*key]))
                .collect();
            match off.is_empty() {
                true => Outcome::Right(measured_again(report)),
                false => Outcome::Wrong(format!("{}; {}", off.join(", "), how_measured(report))),
            }
        }
    }
}

/// Why the right window was measured more than once, if it was: empty when the first
/// window was kept.
fn measured_again(report: &Value) -> String {
    let reasons: Vec<&str> = (report["windows"]["reasons"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    .collect();
    match reasons.is_empty() {
        true => String::new(),
        false => format!("measured again after: {}", reasons.join(" | ")),
    }
}

/// How a report's window was reached and measured, for the reader of a wrong figure: the
/// warm-up, the settle waits around the burst, windows discarded, and the notes' codes.
fn how_measured(report: &Value) -> String {
    let seconds = |v: &Value| v.as_f64().map_or("?".into(), |s| format!("{s:.1} s"));
    let (load, settle) = (&report["load"], &report["settle"]);
    let warmup = &load["warmup_done"];
    let codes: Vec<&str> = (report["notes"].as_array().into_iter().flatten())
        .filter_map(|n| n["code"].as_str())
        .collect();
    format!(
        "warm-up {} requests in {} ({} slices, steady {}), opening settle {}, burst {} at \
         c={}, closing settle {}, {} window(s) discarded, notes {codes:?}",
        warmup["requests"],
        seconds(&warmup["seconds"]),
        warmup["slices"],
        warmup["steady"],
        seconds(&settle["before_seconds"]),
        seconds(&load["wall_seconds"]),
        load["concurrency"],
        seconds(&settle["after_seconds"]),
        report["windows"]["discarded"],
    )
}

/// A report that says it is not valid: honest when it gives a reason.
pub fn not_valid(report: &Value) -> Outcome {
    let reasons: Vec<String> = (report["invalid_reasons"].as_array().into_iter().flatten())
        .map(|r| format!("{}: {}", r["code"], r["message"]))
        .collect();
    match reasons.is_empty() {
        true => Outcome::Failed("not valid, with no reason given".into()),
        false => Outcome::NotValid(reasons),
    }
}

/// The JSON document a run of the binary printed, after checking that its exit code says
/// what its `valid` says (0 valid, 3 not valid); an `Outcome::Failed` when it does not.
pub fn json_of(what: &str, output: &std::process::Output) -> Result<Value, Outcome> {
    let code = output.status.code();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let document: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| Outcome::Failed(format!("{what}: exit {code:?}, no JSON ({e}): {stderr}")))?;
    let all_valid = valid_everywhere(&document);
    let expected = if all_valid { Some(0) } else { Some(3) };
    if code != expected {
        return Err(Outcome::Failed(format!(
            "{what}: exit {code:?} with every report valid: {all_valid}: {stderr}"
        )));
    }
    Ok(document)
}

/// `valid` of a report, or of every pipeline of a demo document.
fn valid_everywhere(document: &Value) -> bool {
    match document["pipelines"].as_object() {
        Some(pipelines) => pipelines.values().all(|r| r["valid"] == true),
        None => document["valid"] == true,
    }
}

/// One case of the stress lane: its runs happen under CPU hogs, started with it and
/// stopped by [`StressCase::finish`] (or when it is dropped, on a panic), and their
/// outcomes are tallied.
pub struct StressCase {
    tally: Mutex<Tally>,
    hogs: Option<CpuHogs>,
}

impl StressCase {
    /// Starts the hogs. `right` names a right outcome in the summary: `exact`, `app or
    /// inconclusive`.
    pub fn start(case: &'static str, right: &'static str) -> StressCase {
        let hogs = CpuHogs::start();
        StressCase {
            tally: Mutex::new(Tally::new(case, right)),
            hogs: Some(hogs),
        }
    }

    /// One run's outcomes (a demo run has one per pipeline), printed as they come.
    pub fn record(&self, run: &str, took: Duration, outcomes: Vec<(String, Outcome)>) {
        let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        tally.record(run, took, outcomes);
    }

    /// Stops the hogs, prints the summary, and fails the test if any report was valid and
    /// wrong, or a run gave no report to judge.
    pub fn finish(mut self) {
        drop(self.hogs.take());
        let tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        let summary = tally.summary();
        println!("{summary}");
        let bad = tally.count(|o| matches!(o, Outcome::Wrong(_) | Outcome::Failed(_)));
        assert_eq!(bad, 0, "valid and wrong, or no report:\n{summary}");
    }
}

/// The outcomes of one case, and its summary.
struct Tally {
    case: &'static str,
    /// What a right outcome is called in the summary: `exact`, `app or inconclusive`.
    right: &'static str,
    runs: usize,
    outcomes: Vec<(String, Outcome)>,
    started: Instant,
}

impl Tally {
    fn new(case: &'static str, right: &'static str) -> Tally {
        Tally {
            case,
            right,
            runs: 0,
            outcomes: Vec::new(),
            started: Instant::now(),
        }
    }

    fn record(&mut self, run: &str, took: Duration, outcomes: Vec<(String, Outcome)>) {
        self.runs += 1;
        let shown: Vec<String> = (outcomes.iter())
            .map(|(what, outcome)| format!("{what}: {}", describe(outcome, self.right)))
            .collect();
        eprintln!(
            "stress {} {run} ({:.0} s): {}",
            self.case,
            took.as_secs_f64(),
            shown.join("; ")
        );
        self.outcomes.extend(outcomes);
    }

    fn count(&self, kind: fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|(_, o)| kind(o)).count()
    }

    /// One line (runs, right, not valid, wrong, failed, seconds), then the not-valid
    /// reasons, the wrong figures and the failures, one a line.
    fn summary(&self) -> String {
        let mut text = format!(
            "stress {}: {} runs, {} reports: {} {}, {} flagged not valid, {} wrong, {} failed; \
             {:.0} s; load average {}",
            self.case,
            self.runs,
            self.outcomes.len(),
            self.count(|o| matches!(o, Outcome::Right(_))),
            self.right,
            self.count(|o| matches!(o, Outcome::NotValid(_))),
            self.count(|o| matches!(o, Outcome::Wrong(_))),
            self.count(|o| matches!(o, Outcome::Failed(_))),
            self.started.elapsed().as_secs_f64(),
            load_average()
        );
        for (what, outcome) in &self.outcomes {
            if !matches!(outcome, Outcome::Right(detail) if detail.is_empty()) {
                let _ = write!(text, "\n  {what}: {}", describe(outcome, self.right));
            }
        }
        text
    }
}

fn describe(outcome: &Outcome, right: &str) -> String {
    match outcome {
        Outcome::Right(detail) if detail.is_empty() => right.into(),
        Outcome::Right(detail) => format!("{right} ({detail})"),
        Outcome::NotValid(reasons) => format!("not valid: {}", reasons.join(" | ")),
        Outcome::Wrong(figures) => format!("VALID AND WRONG: {figures}"),
        Outcome::Failed(why) => format!("FAILED: {why}"),
    }
}

/// Runs `jobs` jobs on `lanes` threads at once, each lane taking the next job when its
/// last one is done: `job(lane, i)` for every i in 0..jobs.
pub fn in_lanes(jobs: usize, lanes: usize, job: impl Fn(usize, usize) + Sync) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let job = &job;
    let next = &next;
    std::thread::scope(|scope| {
        for lane in 0..lanes.clamp(1, jobs.max(1)) {
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if i >= jobs {
                        break;
                    }
                    job(lane, i);
                }
            });
        }
    });
}
