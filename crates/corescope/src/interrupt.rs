//! SIGINT / SIGTERM / SIGHUP as a flag: `corescope run` installs the handlers, the runner
//! polls [`requested`] before each case, stops, marks the probe `interrupted`,
//! and the command writes the run file and the HTML before exiting 128 + signal.
//!
//! A second signal while the first is being handled does what the signal would
//! have done without us (the process ends at once): a stuck case can always be
//! stopped. The handlers only store into atomics (async-signal-safe); the
//! registration is `signal-hook`'s, which needs no `unsafe` here.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The first termination signal received, 0 while none.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Set with the first signal; arms the default action for the next one.
static ARMED: AtomicBool = AtomicBool::new(false);

/// The signals that stop a run: SIGHUP (the terminal closed, an ssh session
/// dropped) is treated as SIGTERM is, so the probe in progress is recorded as
/// interrupted and the lock is released.
pub const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Catch SIGINT, SIGTERM and SIGHUP from now on (idempotent in effect: installing twice
/// only adds handlers that do the same).
pub fn install() -> std::io::Result<()> {
    for sig in SIGNALS {
        // The default action first, so it sees the flag as the previous signal
        // left it: the first signal only sets the flags, the second ends us.
        signal_hook::flag::register_conditional_default(sig, &ARMED)?;
        signal_hook::flag::register_usize(sig, &SIGNAL, sig as usize)?;
        signal_hook::flag::register(sig, &ARMED)?;
    }
    Ok(())
}

/// The signal asked to stop (`SIGINT` = 2, `SIGTERM` = 15, `SIGHUP` = 1), if one arrived.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => i32::try_from(s).ok(),
    }
}

/// Its name for messages (`SIGINT`).
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The exit status of a run stopped by `sig`, as a shell reports it (130, 143, 129).
pub fn exit_code(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(1)
}

/// A run that stopped because of a signal: what `main` turns into its exit code.
#[derive(Debug, thiserror::Error)]
#[error("stopped by {}; the run file holds what was measured", name(*.0))]
pub struct Interrupted(pub i32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(exit_code(libc::SIGHUP), 129);
        assert_eq!(name(libc::SIGHUP), "SIGHUP");
        assert_eq!(requested(), None);
    }
}
