//! Threads for the probes: the team (a gate, pinning, repetitions, deadlines and
//! counters; `team`) and the pair helpers of the two-thread probes (`pair`). The
//! runner decides what to run; the harness runs threads and stamps time.

pub mod pair;
pub mod team;
