//! The `corescope` binary: parse the command line, call the library, print errors.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = corescope::cli::Cli::parse();
    match corescope::app::main_with(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The chain of causes, leaving out a cause whose text an outer
            // message already quotes (one clear line, no repetition).
            let mut msg = String::new();
            for cause in e.chain() {
                let c = cause.to_string();
                if !msg.contains(&c) {
                    if !msg.is_empty() {
                        msg.push_str(": ");
                    }
                    msg.push_str(&c);
                }
            }
            eprintln!("corescope: error: {msg}");
            std::process::ExitCode::FAILURE
        }
    }
}
