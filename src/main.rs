//! Entry point: builds the runtime, runs the command, maps errors to exit codes.

use clap::Parser;

fn main() {
    let cli = pgcost::flags::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            pgcost::progress::error(&format!("error: cannot start the async runtime: {e}"));
            std::process::exit(pgcost::error::exit::USAGE);
        }
    };
    let code = runtime
        .block_on(pgcost::commands::run(cli))
        .unwrap_or_else(|err| {
            eprintln!("error: {err}");
            for cause in err.causes() {
                eprintln!("  caused by: {cause}");
            }
            if let Some(hint) = &err.hint {
                eprintln!("hint: {hint}");
            }
            err.exit_code()
        });
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::exit(code);
}
