//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::Duration;

/// Generous deadline for a test body: only a deadlock takes this long.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and returns its result, or panics if it has
/// not finished by `deadline` (a deadlock) or if it panicked.
pub fn with_deadline<R: Send + 'static>(
    what: &str,
    deadline: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(deadline) {
        Ok(()) => handle.join().expect("test body panicked"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked before sending: surface its panic.
            match handle.join() {
                Ok(r) => r,
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {deadline:?} (deadlock?)")
        }
    }
}

/// A small deterministic generator (splitmix64) for choices made inside
/// test threads.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
