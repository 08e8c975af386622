//! Why a `pool` case failed, typed: a runtime that could not be built, a kernel
//! that returned an error, a result that does not match its check.

use taskpool::{KernelError, PoolError};

/// Why a `pool` case failed (carried out of the probe as `ProbeError::Pool`).
#[derive(Debug, thiserror::Error)]
pub enum PoolFailure {
    /// taskpool refused the pool's configuration.
    #[error("taskpool: {0}")]
    Taskpool(#[source] PoolError),
    /// rayon could not build its thread pool.
    #[error("rayon: {0}")]
    Rayon(#[source] rayon::ThreadPoolBuildError),
    /// An FFT call returned an error.
    #[error("fft: {0}")]
    Fft(#[source] KernelError),
    /// The untimed recursive matmul returned an error.
    #[error("rmatmul (warm-up): {0}")]
    RmatmulWarmup(#[source] KernelError),
    /// The timed recursive matmul returned an error.
    #[error("rmatmul: {0}")]
    Rmatmul(#[source] KernelError),
    /// An FFT's result is farther than the tolerance from the direct DFT.
    #[error("fft size {log2}: error {error} against the direct DFT")]
    FftInaccurate {
        /// The transform's size, as a power of two.
        log2: u32,
        /// Largest absolute difference from the direct DFT.
        error: f64,
    },
    /// An FFT with a cutoff gave another result than the sequential transform.
    #[error("{series} cutoff {cutoff}: result differs from the sequential transform")]
    CutoffDiffers {
        /// The case's series (`fft-cutoff/rayon`).
        series: String,
        /// Points of the largest sub-transform run sequentially.
        cutoff: usize,
    },
    /// An entry of a recursive matmul's product differs from its dot product.
    #[error(
        "rmatmul N = {order}, k = {levels}: entry ({i}, {j}) differs from its dot product by {diff}"
    )]
    EntryDiffers {
        /// The matrices' order.
        order: usize,
        /// Levels of recursion.
        levels: u32,
        /// The entry's row.
        i: usize,
        /// The entry's column.
        j: usize,
        /// Its absolute difference from the dot product.
        diff: f64,
    },
}
