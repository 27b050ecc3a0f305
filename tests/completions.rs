//! `pgcost completions` and `pgcost man`: generated from the command-line definition,
//! printed on stdout, covering every subcommand.

mod support;

use support::pgcost;

const SUBCOMMANDS: [&str; 6] = ["audit", "demo", "check", "ramp", "completions", "man"];

fn stdout(args: &[&str]) -> String {
    let output = pgcost().args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    assert!(output.stderr.is_empty(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn bash_completion_completes_every_subcommand_and_flag() {
    let script = stdout(&["completions", "bash"]);
    assert!(script.contains("complete -F _pgcost"), "{script}");
    for name in SUBCOMMANDS {
        assert!(script.contains(name), "{name} missing");
    }
    for flag in [
        "--url",
        "--format",
        "--max-regression",
        "--bearer-file",
        "--step-duration",
    ] {
        assert!(script.contains(flag), "{flag} missing");
    }
    assert!(script.contains("html"), "the html format is completed");
}

#[test]
fn every_shell_gets_a_script() {
    for (shell, marker) in [
        ("zsh", "#compdef pgcost"),
        ("fish", "complete -c pgcost"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[pgcost]"),
    ] {
        let script = stdout(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: {marker} missing");
        assert!(script.contains("settle-timeout"), "{shell}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let output = pgcost().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("invalid value 'tcsh'"), "{stderr}");
    assert!(
        stderr.contains("bash"),
        "the possible values are listed: {stderr}"
    );
}

#[test]
fn the_man_page_covers_every_subcommand() {
    let page = stdout(&["man"]);
    assert!(page.starts_with(".ie"), "{}", &page[..80.min(page.len())]);
    assert!(page.contains(".TH pgcost 1"), "{page}");
    for name in SUBCOMMANDS {
        let heading = format!(".SH \"PGCOST {}\"", name.to_uppercase());
        assert!(page.contains(&heading), "{heading} missing");
    }
    // Options of each subcommand, not only the top-level list; roff escapes the dashes.
    for flag in [
        "\\-\\-url",
        "\\-\\-config",
        "\\-\\-serve",
        "\\-\\-write\\-baseline",
    ] {
        assert!(page.contains(flag), "{flag} missing");
    }
    assert!(page.contains("Exit codes"), "the exit codes");
}
