//! The scope API: families whose closures borrow from the caller's stack,
//! all synced before [`Pool::scope`] returns.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::resume_unwind;

use super::family::{erase, FamilyCore};
use super::stats::Counters;
use super::worker::Inner;
use super::{Family, Pool};
use crate::error::PoolError;
use crate::sync::{lock, Arc, Mutex};

/// A scoped family's closure, boxed, with its lifetime erased so that the
/// [`Scope`] holds no `'scope` data (which would make it outlive itself for
/// the drop checker, as in `std::thread::Scope`).
///
/// # Invariant
/// Built from `Box::into_raw` of a closure that lives for `'scope`; dropped
/// (which frees the box) before [`Pool::scope`] returns, and only after its
/// family finished.
pub(super) struct OwnedBody(*mut (dyn Fn(usize) + Send + Sync + 'static));

// SAFETY: the pointee is `Send + Sync`; the pointer is an owning box.
unsafe impl Send for OwnedBody {}
// SAFETY: as for `Send`.
unsafe impl Sync for OwnedBody {}

impl OwnedBody {
    pub(super) fn new<'scope>(body: Box<dyn Fn(usize) + Send + Sync + 'scope>) -> Self {
        let ptr: *mut (dyn Fn(usize) + Send + Sync + 'scope) = Box::into_raw(body);
        // SAFETY: same fat pointer, only the lifetime bound changes; the
        // invariant keeps every use inside 'scope.
        OwnedBody(unsafe {
            std::mem::transmute::<
                *mut (dyn Fn(usize) + Send + Sync + 'scope),
                *mut (dyn Fn(usize) + Send + Sync + 'static),
            >(ptr)
        })
    }

    pub(super) fn as_body(&self) -> &(dyn Fn(usize) + Sync) {
        // SAFETY: the box is alive until `self` drops.
        unsafe { &*self.0 }
    }
}

impl Drop for OwnedBody {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from `Box::into_raw` and is freed only here;
        // by the invariant we are still inside 'scope and the family is done.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// A family and its closure, owned by the scope until the family finished.
pub(super) struct ScopeEntry {
    pub(super) core: Arc<FamilyCore>,
    /// Held only to be dropped after the family finished.
    pub(super) _body: OwnedBody,
}

/// Families created here may borrow anything that outlives the scope; see
/// [`Pool::scope`].
pub struct Scope<'scope, 'env: 'scope> {
    pub(super) pool: &'env Pool,
    pub(super) families: Mutex<Vec<ScopeEntry>>,
    /// Invariance over 'scope, as in `std::thread::Scope`.
    pub(super) scope: PhantomData<&'scope mut &'scope ()>,
    pub(super) env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Creates a family whose closure may borrow from outside the scope;
    /// returns at once (see [`Pool::create`]).
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn create<F>(
        &'scope self,
        family: Family,
        body: F,
    ) -> Result<ScopedFamily<'scope, 'env>, PoolError>
    where
        F: Fn(usize) + Send + Sync + 'scope,
    {
        let count = family.validate()?;
        let body = OwnedBody::new(Box::new(body));
        let core = Arc::new(FamilyCore::new(&family, count, erase(body.as_body())));
        // Owned by the scope before any worker can call it.
        lock(&self.families).push(ScopeEntry {
            core: Arc::clone(&core),
            _body: body,
        });
        Counters::add(&self.pool.inner.counters.families, 1);
        Inner::dispatch(&self.pool.inner, &core, core.places);
        Ok(ScopedFamily { core, scope: self })
    }

    /// Runs a family to completion (see [`Pool::run`]).
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn run<F>(&self, family: Family, body: F) -> Result<(), PoolError>
    where
        F: Fn(usize) + Sync,
    {
        self.pool.run(family, body)
    }

    /// The pool the scope runs on.
    pub fn pool(&self) -> &'env Pool {
        self.pool
    }
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("pending_families", &lock(&self.families).len())
            .finish_non_exhaustive()
    }
}

/// A family created in a [`Scope`]. Dropping it does not wait: the scope
/// syncs it at its end.
#[must_use = "a scoped family is synced at the end of the scope at the latest; call sync() to wait earlier"]
pub struct ScopedFamily<'scope, 'env> {
    pub(super) core: Arc<FamilyCore>,
    pub(super) scope: &'scope Scope<'scope, 'env>,
}

impl ScopedFamily<'_, '_> {
    /// Waits for every index of the family, running those no worker took.
    ///
    /// # Panics
    /// Resumes the first panic of the family's closure.
    pub fn sync(self) {
        if let Err(payload) = self.try_sync() {
            resume_unwind(payload);
        }
    }

    /// Like [`sync`](Self::sync) but returns the panic payload instead.
    pub fn try_sync(self) -> Result<(), Box<dyn Any + Send + 'static>> {
        let outcome = self.scope.pool.finish(&self.core);
        let entry = {
            let mut families = lock(&self.scope.families);
            families
                .iter()
                .rposition(|e| Arc::ptr_eq(&e.core, &self.core))
                .map(|at| families.swap_remove(at))
        };
        // Drop the closure outside the lock (its destructor may do anything).
        drop(entry);
        outcome
    }

    /// Number of indices of the family.
    pub fn len(&self) -> usize {
        self.core.count
    }

    /// Whether the family has no index.
    pub fn is_empty(&self) -> bool {
        self.core.count == 0
    }
}

impl std::fmt::Debug for ScopedFamily<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedFamily")
            .field("len", &self.core.count)
            .finish_non_exhaustive()
    }
}
