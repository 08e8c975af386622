//! corescope: characterize a multicore machine.
