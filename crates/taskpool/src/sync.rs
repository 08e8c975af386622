//! The one place the crate imports its synchronisation primitives from.
//!
//! Under `cfg(loom)` every atomic, lock, condition variable and worker thread
//! comes from [loom](https://docs.rs/loom), so the model checker can explore
//! the interleavings of the same code that ships (`tests/loom.rs`,
//! `docs/verification.md`); otherwise they come from `std` and pthreads.
//! Code elsewhere in the crate must not name `std::sync`, `core::sync::atomic`
//! or a pthread function.

#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;

#[cfg(not(loom))]
pub(crate) use std::hint::spin_loop;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;

// loom's `Mutex::try_lock` reports with std's error type too.
pub(crate) use std::sync::TryLockError;

/// Locks `mutex`, ignoring poisoning.
///
/// The crate's mutexes guard only its own bookkeeping and user closures never
/// run while one is held, so a poisoned lock still guards consistent data.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits on `condvar`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar
        .wait(guard)
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Joinable worker threads: pthreads, or loom's modelled threads under `cfg(loom)`.
pub(crate) mod thread {
    /// A joinable thread, joined or detached exactly once.
    #[cfg(not(loom))]
    pub(crate) type Handle = libc::pthread_t;
    /// A joinable thread, joined or detached exactly once.
    #[cfg(loom)]
    pub(crate) type Handle = loom::thread::JoinHandle<()>;

    /// The entry point of a thread, as `pthread_create` takes it.
    pub(crate) type Main = extern "C" fn(*mut libc::c_void) -> *mut libc::c_void;

    /// Starts a thread with a stack of `stack_size_bytes` that runs `main(arg)`;
    /// returns the error number of `pthread_create` if it fails.
    ///
    /// Under Miri, which runs `pthread_create` but not the attribute calls
    /// outside std (and has no stack size to set), the thread gets the
    /// default attributes.
    ///
    /// # Safety
    /// `arg` must be fit to be handed to `main` on another thread; `main` owns
    /// it only if this returns `Ok`.
    #[cfg(not(loom))]
    pub(crate) unsafe fn spawn(
        stack_size_bytes: usize,
        main: Main,
        arg: *mut libc::c_void,
    ) -> Result<Handle, i32> {
        #[cfg(miri)]
        {
            let _ = stack_size_bytes;
            // SAFETY: null attributes are the defaults; `arg` as promised by
            // the caller.
            unsafe { create(std::ptr::null(), main, arg) }
        }
        #[cfg(not(miri))]
        {
            let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
            // SAFETY: pthread_attr_init initialises the object `attr` points to.
            let rc = unsafe { libc::pthread_attr_init(attr.as_mut_ptr()) };
            if rc != 0 {
                return Err(rc);
            }
            // SAFETY: `attr` was initialised above; the pool passes a size
            // rounded to pages and at least PTHREAD_STACK_MIN
            // (`PoolConfig::validate`).
            let rc =
                unsafe { libc::pthread_attr_setstacksize(attr.as_mut_ptr(), stack_size_bytes) };
            let created = if rc == 0 {
                // SAFETY: `attr` is initialised; `arg` as promised by the caller.
                unsafe { create(attr.as_ptr(), main, arg) }
            } else {
                Err(rc)
            };
            // SAFETY: `attr` is initialised and no longer needed
            // (pthread_create copies what it needs).
            unsafe { libc::pthread_attr_destroy(attr.as_mut_ptr()) };
            created
        }
    }

    /// `pthread_create` with the attributes `attr` (null = defaults).
    ///
    /// # Safety
    /// `attr` is null or initialised; `arg` as for [`spawn`].
    #[cfg(not(loom))]
    unsafe fn create(
        attr: *const libc::pthread_attr_t,
        main: Main,
        arg: *mut libc::c_void,
    ) -> Result<Handle, i32> {
        let mut thread = std::mem::MaybeUninit::<libc::pthread_t>::uninit();
        // SAFETY: `thread` is writable, `attr` is null or initialised, and
        // `arg` may go to `main` on another thread (the caller's contract).
        let rc = unsafe { libc::pthread_create(thread.as_mut_ptr(), attr, main, arg) };
        if rc != 0 {
            return Err(rc);
        }
        // SAFETY: pthread_create returned 0, so it wrote the thread id.
        Ok(unsafe { thread.assume_init() })
    }

    /// Under loom: a modelled thread with loom's own stack (the size is
    /// ignored); it cannot fail.
    ///
    /// # Safety
    /// As for the pthread version.
    #[cfg(loom)]
    pub(crate) unsafe fn spawn(
        _stack_size_bytes: usize,
        main: Main,
        arg: *mut libc::c_void,
    ) -> Result<Handle, i32> {
        /// `arg`, carried to the new thread.
        struct Arg(*mut libc::c_void);
        // SAFETY: the caller guarantees that `arg` may go to another thread.
        unsafe impl Send for Arg {}
        impl Arg {
            fn into_raw(self) -> *mut libc::c_void {
                self.0
            }
        }
        let arg = Arg(arg);
        Ok(loom::thread::spawn(move || {
            main(arg.into_raw());
        }))
    }

    /// Waits for `thread` to exit.
    pub(crate) fn join(thread: Handle) {
        #[cfg(not(loom))]
        {
            // SAFETY: a `Handle` is a joinable thread, joined or detached
            // once: it is consumed here.
            let rc = unsafe { libc::pthread_join(thread, std::ptr::null_mut()) };
            debug_assert_eq!(rc, 0, "pthread_join of a worker");
        }
        #[cfg(loom)]
        {
            let joined = thread.join();
            debug_assert!(joined.is_ok(), "a worker panicked");
        }
    }

    /// Lets `thread` free its resources when it exits, without a join.
    pub(crate) fn detach(thread: Handle) {
        #[cfg(not(loom))]
        {
            // SAFETY: a `Handle` is a joinable thread, joined or detached
            // once: it is consumed here.
            unsafe { libc::pthread_detach(thread) };
        }
        #[cfg(loom)]
        drop(thread);
    }

    /// Whether `thread` is the calling thread.
    pub(crate) fn is_current(thread: &Handle) -> bool {
        #[cfg(all(not(loom), not(miri)))]
        {
            // SAFETY: pthread_self has no preconditions; both are valid ids.
            unsafe { libc::pthread_equal(*thread, libc::pthread_self()) != 0 }
        }
        // Miri has no `pthread_equal`; its thread ids are plain integers.
        #[cfg(all(not(loom), miri))]
        {
            // SAFETY: pthread_self has no preconditions.
            *thread == unsafe { libc::pthread_self() }
        }
        #[cfg(loom)]
        {
            thread.thread().id() == loom::thread::current().id()
        }
    }
}

/// Keeps a hot word alone on its cache line(s): crossbeam-utils' `CachePadded`, the
/// one padding type of the workspace (128 bytes on x86_64 and aarch64, where the
/// spatial prefetcher pulls lines in pairs; its documentation gives the per-target
/// sizes and sources). Under loom it wraps loom's atomics the same way.
pub(crate) use crossbeam_utils::CachePadded as Padded;
