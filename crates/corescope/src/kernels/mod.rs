//! Measured loops whose work per iteration is known exactly (checked in the
//! generated assembly), shared by the clock and the probes.

pub mod clock_chain;
