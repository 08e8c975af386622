//! The `corescope` binary: parse the command line, call the library, print errors.
//!
//! Exit status: 0 success; 1 an error (one line on stderr); 2 a command line clap
//! rejects; 3 `fleet report --check` found a bad node (its lines on stdout);
//! 130 / 143 / 129 a run stopped by SIGINT / SIGTERM / SIGHUP (the run file and the
//! HTML hold what was measured); 141 stdout was a pipe that closed (quietly, as a
//! program killed by SIGPIPE would report in a shell).

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// What a shell reports for a program that SIGPIPE ended (128 + 13).
const EXIT_BROKEN_PIPE: u8 = 141;
/// Longest error message printed (a quoted 1 MB name is cut).
const MAX_MESSAGE_CHARS: usize = 4000;

fn main() -> ExitCode {
    let cli = corescope::cli::Cli::parse();
    match corescope::app::main_with(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::from(EXIT_BROKEN_PIPE);
            }
            // `fleet report --check`: the lines are on stdout already.
            if e.downcast_ref::<corescope::fleet::BadNodes>().is_some() {
                return ExitCode::from(corescope::fleet::EXIT_BAD_NODES);
            }
            if let Some(i) = e.downcast_ref::<corescope::interrupt::Interrupted>() {
                let _ = writeln!(std::io::stderr(), "corescope: {i}");
                return ExitCode::from(corescope::interrupt::exit_code(i.0));
            }
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
            // Messages quote input (a CPU list, a series name from a run file):
            // control characters escaped (newlines of multi-line help kept),
            // length bounded.
            let msg = corescope::render::clean(&msg, MAX_MESSAGE_CHARS, true);
            // stderr may be closed too: nothing more to say then.
            let _ = writeln!(std::io::stderr(), "corescope: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the error is a write to a pipe whose reader went away.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
