//! A ramp's verdict read as the tests read it: the wall they expect, an honest
//! "undecided" that a busy machine may give (then the ramp runs again), or a wrong wall.

use serde_json::Value;

/// How many times a test ramps before an undecided verdict fails it.
pub const ATTEMPTS: usize = 3;

/// True when the ramp named `want`. False when a busy machine left it honestly undecided:
/// `inconclusive`, or the load generator with the host saturated. Any other wall is wrong and fails the test at once, since a
/// loaded machine may leave a ramp undecided, never name the wrong wall.
pub fn named(report: &Value, want: &str, shown: &str, attempt: usize) -> bool {
    let verdict = &report["verdict"];
    let wall = verdict["wall"].as_str().unwrap_or_default();
    if wall == want {
        return true;
    }
    let undecided = match wall {
        "inconclusive" => true,
        "load_generator" => verdict["saturated"] == "host",
        _ => false,
    };
    assert!(undecided, "wrong wall {wall:?}, want {want:?}: {shown}");
    assert!(
        attempt < ATTEMPTS,
        "{ATTEMPTS} ramps, none decided (last {wall:?}), want {want:?}: {shown}"
    );
    println!("attempt {attempt} undecided ({wall}), ramping again: {shown}");
    false
}
