//! Control messages between ranks ("pong now", "carry on", "stop"): a tag of their
//! own and a wait that sleeps rather than spins. The driver and the ping-pong both
//! use them; neither imports the other for it.

use ::mpi::topology::Process;
use ::mpi::traits::*;
use std::time::Duration;

/// Tag of control messages ("pong now" / "carry on"); data messages use tag 0.
pub const TAG_CTRL: ::mpi::Tag = 77;

/// Wait for a one-byte control message from `from` without spinning: probe,
/// sleep 200 µs, repeat. Returns the byte.
pub fn wait_ctrl(from: &Process<'_>) -> u8 {
    loop {
        if from.immediate_probe_with_tag(TAG_CTRL).is_some() {
            let mut b = [0u8];
            from.receive_into_with_tag(&mut b[..], TAG_CTRL);
            return b[0];
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}
