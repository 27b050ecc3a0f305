//! Progress lines on stderr: shown on a terminal, silent otherwise.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Hands out progress indicators, all hidden when stderr is not a terminal or when quiet.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
        }
    }

    pub fn hidden() -> Progress {
        Progress { enabled: false }
    }

    pub fn spinner(&self, message: String) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new_spinner();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }

    pub fn counter(&self, message: &str, total: u64) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} ({per_sec}, {eta})")
                .expect("static template"),
        );
        bar.set_message(message.to_string());
        bar
    }
}

/// Prints one status line on stderr. A closed stderr is ignored rather than a panic.
pub fn status(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
