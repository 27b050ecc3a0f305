//! What pgcost says on stderr while it works: spinners and counters on a terminal, status
//! lines anywhere, and all of it silent under `-q`; warnings always print.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Hands out progress indicators, all hidden when stderr is not a terminal or when quiet,
/// and prints status lines unless quiet.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
    quiet: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            quiet,
        }
    }

    /// Nothing shown, no status line printed.
    pub fn hidden() -> Progress {
        Progress {
            enabled: false,
            quiet: true,
        }
    }

    /// Prints one status line on stderr, unless quiet (`-q` silences all but errors).
    pub fn status(&self, line: &str) {
        if !self.quiet {
            print_stderr(line);
        }
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

/// Prints a warning on stderr, also under `-q`: something the user asked for did not
/// happen, though the run went on.
pub fn warning(line: &str) {
    print_stderr(&format!("warning: {line}"));
}

/// Prints an error line on stderr, as given, also under `-q`.
pub fn error(line: &str) {
    print_stderr(line);
}

/// One line on stderr. A closed stderr is ignored rather than a panic.
fn print_stderr(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
