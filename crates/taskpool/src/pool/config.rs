//! What a user describes: a [`Family`] of indices and the [`PoolConfig`] a
//! pool is built with.

#[cfg(doc)]
use super::Pool;
use super::{DEFAULT_MAX_THREADS, DEFAULT_STACK_SIZE_BYTES, MAX_FAMILY_LEN, MAX_THREADS_LIMIT};
use crate::error::PoolError;
use crate::free_list::FreeList;

/// A family of SVP threads: the indices `start, start + step, …` below `limit`.
///
/// `block` bounds how many of its indices run at the same time; 0 means no
/// bound beyond the pool's `max_threads` (every index may get its own worker,
/// as in seed 000's runtime).
///
/// # Examples
/// ```
/// let family = taskpool::Family { start: 2, limit: 11, step: 3, block: 0 };
/// assert_eq!(family.indices().collect::<Vec<_>>(), [2, 5, 8]);
/// assert_eq!(family.len(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family {
    /// First index.
    pub start: usize,
    /// Indices are below `limit` (exclusive).
    pub limit: usize,
    /// Distance between consecutive indices; must be at least 1.
    pub step: usize,
    /// Most indices running at once; 0 = no limit.
    pub block: usize,
}

impl Family {
    /// The indices `start..limit`, step 1, no block limit.
    pub const fn new(start: usize, limit: usize) -> Self {
        Family {
            start,
            limit,
            step: 1,
            block: 0,
        }
    }

    /// The same family with another step.
    pub const fn with_step(self, step: usize) -> Self {
        Family { step, ..self }
    }

    /// The same family with another block (0 = no limit).
    pub const fn with_block(self, block: usize) -> Self {
        Family { block, ..self }
    }

    /// Number of indices; 0 when `limit <= start` or when `step` is 0 (a
    /// family that `create` rejects).
    pub const fn len(&self) -> usize {
        if self.step == 0 || self.limit <= self.start {
            0
        } else {
            (self.limit - self.start - 1) / self.step + 1
        }
    }

    /// Whether the family has no index.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The family's indices in increasing order (the order of a sequential run).
    pub fn indices(&self) -> impl Iterator<Item = usize> {
        (self.start..self.limit)
            .step_by(self.step.max(1))
            .take(self.len())
    }

    /// Checks the family and returns its length.
    pub(super) fn validate(&self) -> Result<usize, PoolError> {
        if self.step == 0 {
            return Err(PoolError::ZeroStep {
                start: self.start,
                limit: self.limit,
            });
        }
        let count = self.len();
        if count > MAX_FAMILY_LEN {
            return Err(PoolError::FamilyTooLarge {
                count,
                max: MAX_FAMILY_LEN,
            });
        }
        Ok(count)
    }
}

/// How a [`Pool`] is built. Start from [`PoolConfig::new`] or `default()`.
///
/// # Examples
/// ```
/// use taskpool::{FreeList, PoolConfig};
/// let config = PoolConfig::new(FreeList::LockFree).with_max_threads(8).with_max_idle(4);
/// assert_eq!(config.max_threads, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolConfig {
    /// How the list of idle workers is guarded.
    pub free_list: FreeList,
    /// Most worker threads alive at once (0 = run every family on its creator).
    pub max_threads: usize,
    /// Most idle workers kept; a worker finishing while this many are idle
    /// exits (the seed's "maximum pool size"). `None` = `max_threads`.
    pub max_idle: Option<usize>,
    /// Stack size of each worker thread, in bytes (rounded up to whole pages).
    pub stack_size_bytes: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::new(FreeList::Mutex)
    }
}

impl PoolConfig {
    /// Defaults ([`DEFAULT_MAX_THREADS`], [`DEFAULT_STACK_SIZE_BYTES`], no
    /// separate idle limit) with the given free list.
    pub const fn new(free_list: FreeList) -> Self {
        PoolConfig {
            free_list,
            max_threads: DEFAULT_MAX_THREADS,
            max_idle: None,
            stack_size_bytes: DEFAULT_STACK_SIZE_BYTES,
        }
    }

    /// One thread per CPU, the creating thread included: `cpus − 1` workers
    /// (none on one CPU), every one kept when idle.
    ///
    /// The setting for nested, recursive families (divide and conquer): a
    /// family with no block hires a worker per index while workers can be had,
    /// so under the default cap a recursion of a few levels starts hundreds of
    /// threads that share a few CPUs and wake each other through the free list.
    /// With one thread per CPU a family that finds no idle worker runs its
    /// indices on its creator, as a work-stealing pool of one thread per CPU
    /// does, and the seed's design (pthreads, families, the free list) is
    /// unchanged.
    ///
    /// ```
    /// use taskpool::{FreeList, PoolConfig};
    /// assert_eq!(PoolConfig::one_per_cpu(FreeList::Mutex, 8).max_threads, 7);
    /// assert_eq!(PoolConfig::one_per_cpu(FreeList::Mutex, 1).max_threads, 0);
    /// ```
    pub const fn one_per_cpu(free_list: FreeList, cpus: usize) -> Self {
        PoolConfig::new(free_list).with_max_threads(cpus.saturating_sub(1))
    }

    /// Sets [`max_threads`](Self::max_threads).
    pub const fn with_max_threads(self, max_threads: usize) -> Self {
        PoolConfig {
            max_threads,
            ..self
        }
    }

    /// Sets [`max_idle`](Self::max_idle).
    pub const fn with_max_idle(self, max_idle: usize) -> Self {
        PoolConfig {
            max_idle: Some(max_idle),
            ..self
        }
    }

    /// Sets [`stack_size_bytes`](Self::stack_size_bytes).
    pub const fn with_stack_size_bytes(self, stack_size_bytes: usize) -> Self {
        PoolConfig {
            stack_size_bytes,
            ..self
        }
    }

    /// Checks the limits; returns `(max_idle, stack size rounded to pages)`.
    pub(super) fn validate(&self) -> Result<(usize, usize), PoolError> {
        if self.max_threads > MAX_THREADS_LIMIT {
            return Err(PoolError::TooManyThreads {
                requested: self.max_threads,
                limit: MAX_THREADS_LIMIT,
            });
        }
        let max_idle = self.max_idle.unwrap_or(self.max_threads);
        if max_idle > self.max_threads {
            return Err(PoolError::IdleAboveMax {
                max_idle,
                max_threads: self.max_threads,
            });
        }
        if self.stack_size_bytes < libc::PTHREAD_STACK_MIN {
            return Err(PoolError::StackTooSmall {
                requested: self.stack_size_bytes,
                minimum: libc::PTHREAD_STACK_MIN,
            });
        }
        Ok((max_idle, round_to_pages(self.stack_size_bytes)))
    }
}

/// Rounds `bytes` up to a multiple of the page size (some libcs reject other
/// stack sizes with `EINVAL`).
pub(super) fn round_to_pages(bytes: usize) -> usize {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = usize::try_from(page)
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096);
    bytes.div_ceil(page).saturating_mul(page)
}
