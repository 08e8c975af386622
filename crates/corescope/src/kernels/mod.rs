//! Measured loops whose work per iteration is known exactly (checked in the
//! generated assembly), shared by the clock and the probes. A kernel only
//! computes: it neither times, pins nor records (the probes and the harness do).
//!
//! - `chains`: the dependent integer / FP chains of seed 000 (compute, sharing,
//!   workload, the clock's calibration of the cost model, drift);
//! - `clock_chain`: the add chain of known latency that measures the core clock;
//! - `stream`: read / write / copy / triad over a block (memory, numa, workload);
//! - `chase`: the dependent pointer chase (memory, numa, spin);
//! - `ports`: throughput-bound L1 loads and integer ALU chains (sharing);
//! - `buffer`: the page-aligned blocks they run over, with or without huge pages;
//! - `spin_loops`: seed 003's wait loops with read counting (spin), on a lock
//!   word that `futex` parks on.

pub mod buffer;
pub mod chains;
pub mod chase;
pub mod clock_chain;
mod futex;
pub mod ports;
pub mod spin_loops;
pub mod stream;
