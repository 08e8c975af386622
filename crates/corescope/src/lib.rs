//! corescope: characterize a multicore, multithreaded machine the way systems
//! researchers do by hand — placement, throughput and bandwidth vs threads, the
//! cost of thread primitives, coherence — and compare machines side by side.
//!
//! Layout (see `DESIGN.md`): `topology` asks the OS; `placement` is pure;
//! `affinity` pins; `clock` times; `runner` owns threads and budgets; `probes`
//! own kernels and sweeps; `model` is the run file; `store` reads and writes it;
//! `render` shows it.

// The crate's MSRV is 1.89 (AVX-512 intrinsics of the peak probe); its code keeps
// `a % b == 0`, which that MSRV's clippy would rewrite to `is_multiple_of`.
#![allow(clippy::manual_is_multiple_of)]

pub mod affinity;
pub mod analysis;
pub mod app;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod counters;
pub mod crosscheck;
pub mod doctor;
pub mod drift;
pub mod estimate;
pub mod fleet;
pub mod harness;
pub mod input;
pub mod interrupt;
pub mod kernels;
pub mod measured_topology;
pub mod memguard;
pub mod model;
pub mod mpi;
pub mod placement;
pub mod probes;
pub mod reference;
pub mod render;
pub mod runner;
pub mod session;
pub mod state;
pub mod stats;
pub mod store;
pub mod timestamp;
pub mod topo_export;
pub mod topology;
pub mod units;
