//! What can stop a tuning, typed; worded here and carried out of the probe as a
//! [`ProbeError::Tune`](crate::probes::ProbeError::Tune).

use super::{describe, EVENT_SIZES};
use hspc::{Config, ConfigError};

/// Why a tuning stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TuneError {
    /// `--event-bytes 0`.
    #[error("--event-bytes 0: an event needs at least 1 byte")]
    NoEventBytes,
    /// More bytes per event than the largest size Stage One moves.
    #[error("--event-bytes {0}: at most {max} bytes", max = EVENT_SIZES[EVENT_SIZES.len() - 1])]
    EventBytesOver(usize),
    /// hspc refused a configuration the tuner made.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A thread of a run panicked: which one (`the producer`, `p7/p8: the consumer`…).
    #[error("{0} panicked")]
    Panicked(&'static str),
    /// A run's events did not all arrive in order.
    #[error("{run}: {got} of {sent} events arrived, {bad} out of order")]
    Lost {
        /// The run: its configuration, or the roadmap's line.
        run: String,
        /// Events the consumer received.
        got: u64,
        /// Events the producer sent.
        sent: u64,
        /// Events out of order.
        bad: u64,
    },
    /// A cut Stage Two run's profile is not a clean prefix of the stream.
    #[error("{}: {got} of {sent} events arrived, {bad} bad", describe(config))]
    CutProfile {
        /// The channel's configuration.
        config: Config,
        /// Events profiled.
        got: u64,
        /// Events sent.
        sent: u64,
        /// Returns that did not match their call.
        bad: u64,
    },
    /// A Stage Two run's profile differs from the single-thread one.
    #[error(
        "{}: the consumer's profile differs from the single-thread one ({got} of {expected} events, {bad} bad)",
        describe(config)
    )]
    ProfileDiffers {
        /// The channel's configuration.
        config: Config,
        /// Events profiled.
        got: u64,
        /// Events of the single-thread profile.
        expected: u64,
        /// Returns that did not match their call.
        bad: u64,
    },
    /// The roadmap has no memory layout for a step (`this step`, `p7`).
    #[error("no layout for {0}")]
    NoLayout(&'static str),
    /// Settling met a row without a channel configuration.
    #[error("settling a row without a configuration")]
    Unconfigured,
    /// Two single-thread runs built different profiles.
    #[error("the single-thread profile changed between runs")]
    ReferenceChanged,
    /// The single-thread profile is empty or its returns do not match its calls.
    #[error("the single-thread profile is inconsistent")]
    ReferenceInconsistent,
}
