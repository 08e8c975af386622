//! The errors of the channel's calls.

use core::fmt;

#[cfg(doc)]
use super::{Consumer, Producer};

/// [`Producer::try_push`] failed; the event is given back.
///
/// ```
/// use hspc::TryPushError;
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(16))?; // 2 slots
/// tx.try_push(1).unwrap();
/// tx.try_push(2).unwrap();
/// assert!(matches!(tx.try_push(3), Err(TryPushError::Full(3))));
/// drop(rx);
/// assert!(matches!(tx.try_push(3), Err(TryPushError::Disconnected(3))));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryPushError<T> {
    /// No free slot now.
    #[error("the channel is full")]
    Full(T),
    /// No free slot, and the consumer is gone: no slot will ever free up.
    #[error("the consumer was dropped")]
    Disconnected(T),
}

/// [`Producer::push`] failed; the event is given back.
///
/// ```
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
/// drop(rx);
/// tx.push(1).unwrap(); // a free slot: accepted (and lost)
/// assert!(matches!(tx.push(2), Err(hspc::PushError::Disconnected(2))));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PushError<T> {
    /// The channel was full and the consumer is gone.
    #[error("the consumer was dropped")]
    Disconnected(T),
}

/// [`Consumer::try_pop`] found no event.
///
/// ```
/// use hspc::TryPopError;
/// let (tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
/// assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
/// drop(tx);
/// assert_eq!(rx.try_pop(), Err(TryPopError::Disconnected));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TryPopError {
    /// No event now.
    #[error("the channel is empty")]
    Empty,
    /// No event, and the producer is gone: the stream has ended.
    #[error("the producer was dropped and every event was received")]
    Disconnected,
}

/// [`Consumer::pop`] found the end of the stream.
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
/// tx.push(5).unwrap();
/// drop(tx);
/// assert_eq!(rx.pop(), Ok(5)); // everything pushed arrives first
/// assert_eq!(rx.pop(), Err(hspc::PopError::Disconnected));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PopError {
    /// The producer is gone and every event was received.
    #[error("the producer was dropped and every event was received")]
    Disconnected,
}

/// A blocking slice transfer stopped because the other half was dropped.
///
/// ```
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(16))?; // 2 slots
/// drop(rx);
/// let err = tx.push_slice(&[1, 2, 3]).unwrap_err();
/// assert_eq!(err.transferred, 2);
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the other half of the channel was dropped after {transferred} events of the slice")]
pub struct SliceError {
    /// Events of the slice transferred before the end.
    pub transferred: usize,
}

impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryPushError::Full(_) => "Full(..)",
            TryPushError::Disconnected(_) => "Disconnected(..)",
        })
    }
}

impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Disconnected(..)")
    }
}

impl<T> TryPushError<T> {
    /// The event that was not sent.
    ///
    /// ```
    /// let (mut tx, _rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
    /// tx.try_push(1).unwrap();
    /// assert_eq!(tx.try_push(2).unwrap_err().into_inner(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TryPushError::Full(v) | TryPushError::Disconnected(v) => v,
        }
    }
}

impl<T> PushError<T> {
    /// The event that was not sent.
    ///
    /// ```
    /// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
    /// drop(rx);
    /// tx.push(1).unwrap();
    /// assert_eq!(tx.push(2).unwrap_err().into_inner(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            PushError::Disconnected(v) => v,
        }
    }
}
