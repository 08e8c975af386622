//! Error types of the pool and of the kernels.

/// Why a pool could not be built or a family could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// The family's step is 0, so its index range would never end.
    #[error("family step is 0 (start {start}, limit {limit}): use a step of at least 1")]
    ZeroStep {
        /// First index of the rejected family.
        start: usize,
        /// Limit (exclusive) of the rejected family.
        limit: usize,
    },
    /// The family has more indices than the runtime's counters can track.
    #[error(
        "family has {count} indices, more than the supported {max}: split it into several families"
    )]
    FamilyTooLarge {
        /// Indices in the rejected family.
        count: usize,
        /// Largest supported number of indices.
        max: usize,
    },
    /// The requested worker stack is smaller than the system allows.
    #[error("worker stack of {requested} bytes is below the system minimum of {minimum} bytes (PTHREAD_STACK_MIN): ask for more")]
    StackTooSmall {
        /// Requested stack size in bytes.
        requested: usize,
        /// `PTHREAD_STACK_MIN` of this system, in bytes.
        minimum: usize,
    },
    /// More worker threads were requested than the pool supports.
    #[error("max_threads {requested} exceeds the supported limit of {limit}: lower it")]
    TooManyThreads {
        /// Requested `max_threads`.
        requested: usize,
        /// Largest supported `max_threads`.
        limit: usize,
    },
    /// More idle workers were allowed than workers may exist.
    #[error("max_idle {max_idle} exceeds max_threads {max_threads}: idle workers are a subset of all workers, lower max_idle")]
    IdleAboveMax {
        /// Requested `max_idle`.
        max_idle: usize,
        /// Requested `max_threads`.
        max_threads: usize,
    },
}

/// Why a kernel refused its inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The FFT length is not a power of two (or is 0).
    #[error("FFT length {len} is not a power of two: use 2^s points")]
    NotPowerOfTwo {
        /// The rejected length.
        len: usize,
    },
    /// Input and output buffers differ in length.
    #[error("input has {input} elements but output has {output}: give buffers of equal length")]
    LengthMismatch {
        /// Length of the input buffer.
        input: usize,
        /// Length of the output buffer.
        output: usize,
    },
    /// Matrices of different orders were combined.
    #[error("matrix orders differ: A is {a}x{a}, B is {b}x{b}, C is {c}x{c}")]
    OrderMismatch {
        /// Order of A.
        a: usize,
        /// Order of B.
        b: usize,
        /// Order of C.
        c: usize,
    },
    /// The matrix order cannot be halved `levels` times.
    #[error("matrix order {n} is not divisible by 2^{levels}: use an order that is a multiple of {}, or fewer recursion levels", 1usize.checked_shl(*levels).unwrap_or(0))]
    NotDivisible {
        /// Matrix order.
        n: usize,
        /// Requested recursion levels.
        levels: u32,
    },
}
