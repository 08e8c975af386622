//! Threads for the probes: the team (a gate, pinning, repetitions, deadlines and
//! counters; `team`), the pair helpers of the two-thread probes (`pair`), the
//! SPSC transfer harness with the channel crates it compares (`spsc`, shared by
//! the `channel` probe and the tuner), and a thread's stack shifted by a fixed
//! offset (`stack`, the tuner's seed 004 `p4_adjuststack`), and variants raced in
//! rotated rounds (`race`, the tuner's settling). The runner decides
//! what to run; the harness runs threads and stamps time.

pub mod pair;
pub mod race;
pub mod spsc;
pub mod stack;
pub mod team;
