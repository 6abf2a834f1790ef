//! A class's collector entry ([`CollectorEntry`]): the part of the class's record the
//! collector (`respawn-gc`) writes when the class registers with it, and reads when it
//! marks, purges and destroys.

use std::any::TypeId;
use std::fmt;

/// A class's trace function: reads the object at the first pointer and reports the handles
/// it holds to the collector's tracer at the second (`respawn-gc`'s `Tracer`).
///
/// # Safety
/// The first pointer is a live object of the entry's type, shared for the call; the second
/// is what the collector that made the entry passes there ([`CollectorEntry::new`]).
pub type TraceFn = unsafe fn(*const u8, *mut ());

/// A class's object hook: `begin_destroy` or `finish_destroy`, on the object at the pointer.
///
/// # Safety
/// The pointer is a live object of the entry's type, lent to the call alone.
pub type ObjectFn = unsafe fn(*mut u8);

/// A class's readiness test: `is_ready_for_finish_destroy`, on the object at the pointer.
///
/// # Safety
/// As [`ObjectFn`].
pub type ReadyFn = unsafe fn(*mut u8) -> bool;

/// A class's entry points for the collector, type-erased (its vtable), and the two facts the
/// collector keeps about the class. Kept in the class's record beside its storage, so that
/// one index by the handle's class finds both ([`Arena::collector_entry`]). The arena
/// stores it and never calls it.
///
/// An entry is made for one type ([`new`](Self::new), unsafe: its functions must take that
/// type's objects), and [`Arena::set_collector_entry`] refuses it for a class of another
/// type; so an entry can be copied, changed with [`with_owned`](Self::with_owned) and
/// [`with_clustered`](Self::with_clustered) and set again, safely.
///
/// [`Arena::collector_entry`]: crate::Arena::collector_entry
/// [`Arena::set_collector_entry`]: crate::Arena::set_collector_entry
#[derive(Clone, Copy)]
pub struct CollectorEntry {
    type_id: TypeId,
    type_name: &'static str,
    trace: Option<TraceFn>,
    begin_destroy: ObjectFn,
    is_ready: ReadyFn,
    finish_destroy: ObjectFn,
    owned: bool,
    clustered: bool,
}

impl CollectorEntry {
    /// The entry of `T`'s class: `trace` (`None` when `T`'s objects hold no handle: they
    /// are never scanned) and the three destroy hooks. Not owned, not clustered.
    ///
    /// # Safety
    /// Each function must be sound to call with a pointer to a live `T` that the caller
    /// holds (shared for `trace`, exclusively for the others), and `trace`'s second
    /// argument must be whatever the collector that calls it passes there.
    pub unsafe fn new<T: 'static>(
        trace: Option<TraceFn>,
        begin_destroy: ObjectFn,
        is_ready: ReadyFn,
        finish_destroy: ObjectFn,
    ) -> Self {
        Self {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            trace,
            begin_destroy,
            is_ready,
            finish_destroy,
            owned: false,
            clustered: false,
        }
    }

    /// The type the entry's functions take.
    #[inline]
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The name of the type the entry's functions take.
    #[inline]
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The class's trace function; `None` for a class whose objects are never scanned.
    #[inline(always)]
    pub fn trace(&self) -> Option<TraceFn> {
        self.trace
    }

    /// The class's `begin_destroy`.
    #[inline]
    pub fn begin_destroy(&self) -> ObjectFn {
        self.begin_destroy
    }

    /// The class's `is_ready_for_finish_destroy`.
    #[inline]
    pub fn is_ready(&self) -> ReadyFn {
        self.is_ready
    }

    /// The class's `finish_destroy`.
    #[inline]
    pub fn finish_destroy(&self) -> ObjectFn {
        self.finish_destroy
    }

    /// Whether the class's objects are owned by the game: every one that is not garbage is
    /// a root (`respawn-gc`'s `Lifetime::Owned`).
    #[inline(always)]
    pub fn owned(&self) -> bool {
        self.owned
    }

    /// Whether some object of the class joined a cluster once: a mark visits its objects to
    /// look their cluster up, even when the class has nothing to trace.
    #[inline(always)]
    pub fn clustered(&self) -> bool {
        self.clustered
    }

    /// The entry, owned or not.
    #[must_use]
    pub fn with_owned(self, owned: bool) -> Self {
        Self { owned, ..self }
    }

    /// The entry, clustered or not.
    #[must_use]
    pub fn with_clustered(self, clustered: bool) -> Self {
        Self { clustered, ..self }
    }
}

impl fmt::Debug for CollectorEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollectorEntry")
            .field("type", &self.type_name)
            .field("traced", &self.trace.is_some())
            .field("owned", &self.owned)
            .field("clustered", &self.clustered)
            .finish_non_exhaustive()
    }
}
