//! The `corescope` binary: parse the command line, call the library, print errors.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = corescope::cli::Cli::parse();
    match corescope::app::main_with(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("corescope: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
