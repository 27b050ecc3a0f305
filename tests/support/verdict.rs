//! A ramp's verdict read as the tests read it: the wall they expect, an honest
//! "undecided" that a busy machine may give (then the ramp runs again), or a wrong wall.

use serde_json::Value;

/// How many times a test ramps before an undecided verdict fails it.
pub const ATTEMPTS: usize = 3;

/// Runs `ramp` (its report, and the text to show with it) until the verdict names `want`,
/// at most [`ATTEMPTS`] times, and gives that report.
pub fn until_named(want: &str, mut ramp: impl FnMut() -> (Value, String)) -> (Value, String) {
    for attempt in 1..=ATTEMPTS {
        let (report, shown) = ramp();
        if named(&report, want, &shown, attempt) {
            return (report, shown);
        }
    }
    unreachable!("named fails the last attempt")
}

/// True when the ramp named `want`. False when a busy machine left it honestly undecided:
/// `inconclusive`, or `host` (this machine saturated by other work). Any other wall is wrong
/// and fails the test at once, since a loaded machine may leave a ramp undecided, never
/// name the wrong wall.
fn named(report: &Value, want: &str, shown: &str, attempt: usize) -> bool {
    let verdict = &report["verdict"];
    let wall = verdict["wall"].as_str().unwrap_or_default();
    if wall == want {
        return true;
    }
    let undecided = wall == "inconclusive" || wall == "host";
    assert!(undecided, "wrong wall {wall:?}, want {want:?}: {shown}");
    assert!(
        attempt < ATTEMPTS,
        "{ATTEMPTS} ramps, none decided (last {wall:?}), want {want:?}: {shown}"
    );
    println!("attempt {attempt} undecided ({wall}), ramping again: {shown}");
    false
}
