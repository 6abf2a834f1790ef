//! What the collector knows of an object: the handles it holds ([`Trace`]) and its
//! lifecycle hooks ([`Object`]).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::marker::PhantomData;
use std::time::Duration;

use respawn_arena::{Handle, RawHandle};

pub use crate::mark::Tracer;

/// A type whose values may hold [`Handle`]s the collector must follow: the reference token
/// stream of UE's garbage collector, written by `#[derive(Trace)]`.
///
/// # Safety
///
/// Implementors promise the collector the following. Breaking a rule never makes a respawn
/// handle dangle (handles are generational: at worst one goes stale too early), but the
/// collector's guarantee that *an object reachable from a root survives* rests on them, and
/// code built on that guarantee may rely on it for soundness (a cache of cell addresses, a
/// pool's `Purge` pipeline).
///
/// 1. `trace` passes every handle the value holds that must keep its object alive to
///    [`Tracer::handle`] (or a field holding it to [`Tracer::trace`]). Handles it leaves out
///    are weak: their objects may be purged while the handle is held.
/// 2. If `NEEDS_TRACE` is `false`, no value of the type ever holds such a handle, so the
///    collector may skip it (and every container of it) without calling `trace`.
/// 3. `trace` reads the value and nothing else: no locks, no allocation, no access to the
///    collector or the arena, no interior mutation. It is called from several threads at
///    once, for different objects, while the collector holds the arena exclusively.
/// 4. `trace` does not panic.
/// 5. The handles `trace` reports change only through `&mut` access to the value: no
///    interior mutability over traced handles (a `Cell<Handle<_>>`, a `Mutex<Vec<Handle<_>>>`
///    an `&Heap` could write). An incremental mark learns of stores from the heap's write
///    barrier, which notes every object lent mutably (see
///    [`GcSettings::incremental_mark_budget`](crate::GcSettings::incremental_mark_budget)); a
///    store it cannot see could get a reachable object purged.
///
/// Handles held in local variables are not seen by the collector (as in UE): keep what must
/// survive a collection in a traced field or behind a [`Root`](respawn_arena::Root).
pub unsafe trait Trace {
    /// Whether a value may hold a handle. `false` lets the collector skip values of this
    /// type without a call: leaf classes are never scanned.
    const NEEDS_TRACE: bool = true;

    /// Visits the handles this value holds.
    fn trace(&self, tracer: &mut Tracer<'_>);
}

/// A class the collector manages: traced, with UE's lifecycle hooks, each a no-op by
/// default. `#[derive(Object)]` writes the empty impl.
///
/// When the collector ends an object (unreachable, marked as garbage, or destroyed now) it
/// calls, in order: [`begin_destroy`](Self::begin_destroy) once; then
/// [`is_ready_for_finish_destroy`](Self::is_ready_for_finish_destroy) on this and later
/// purge steps until it says `true`; then [`finish_destroy`](Self::finish_destroy); then
/// drops the object in place and hands its cell to the class's free route. Dropping the
/// whole heap drops the objects still in it without calling the hooks.
///
/// How long a class's objects live is its [`Lifetime`](crate::Lifetime), set per class on
/// the heap, not here: in a bare [`Heap`](crate::Heap) every class is collected (kept while
/// a root reaches it), and in a World every class is owned (kept until destroyed) unless
/// its builder declares it collected.
pub trait Object: Trace + Send + Sync + 'static {
    /// The object's last chance to release outside resources; handles to it no longer
    /// resolve.
    fn begin_destroy(&mut self) {}

    /// Whether asynchronous clean-up started by `begin_destroy` (a GPU resource, a file) is
    /// done. Until it is, the object waits in the purge.
    fn is_ready_for_finish_destroy(&mut self) -> bool {
        true
    }

    /// Runs right before the object is dropped.
    fn finish_destroy(&mut self) {}

    /// The object's `Drop` must run on the game thread: with
    /// [`GcSettings::async_purge`](crate::GcSettings::async_purge) on, a pooled class
    /// that says `true` here keeps dropping its ended objects in the purge, not on its
    /// pool's workers.
    const DROP_ON_GAME_THREAD: bool = false;
}

// SAFETY: a handle is the thing being traced; visiting it is rule 1 itself.
unsafe impl<T> Trace for Handle<T> {
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        tracer.handle(self.raw());
    }
}

// SAFETY: as for `Handle`.
unsafe impl Trace for RawHandle {
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        tracer.handle(*self);
    }
}

/// Values that hold no handle: never scanned.
macro_rules! leaf {
    ($($t:ty),* $(,)?) => {$(
        // SAFETY: the type holds no handle (rule 2), and `trace` does nothing.
        unsafe impl Trace for $t {
            const NEEDS_TRACE: bool = false;
            #[inline]
            fn trace(&self, _: &mut Tracer<'_>) {}
        }
    )*};
}

leaf!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    String,
    str,
    Duration,
    std::num::NonZeroU32,
    std::num::NonZeroU64,
    std::num::NonZeroUsize,
);

// SAFETY: a `&'static str` holds no handle.
unsafe impl Trace for &'static str {
    const NEEDS_TRACE: bool = false;
    #[inline]
    fn trace(&self, _: &mut Tracer<'_>) {}
}

// SAFETY: holds no value at all.
unsafe impl<T: ?Sized> Trace for PhantomData<T> {
    const NEEDS_TRACE: bool = false;
    #[inline]
    fn trace(&self, _: &mut Tracer<'_>) {}
}

// SAFETY: visits the value when there is one; needs tracing exactly when `T` does.
unsafe impl<T: Trace> Trace for Option<T> {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        if let Some(value) = self {
            tracer.trace(value);
        }
    }
}

// SAFETY: visits every element; needs tracing exactly when `T` does.
unsafe impl<T: Trace> Trace for [T] {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        if T::NEEDS_TRACE {
            for value in self {
                value.trace(tracer);
            }
        }
    }
}

// SAFETY: as for slices.
unsafe impl<T: Trace, const N: usize> Trace for [T; N] {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        self.as_slice().trace(tracer);
    }
}

// SAFETY: as for slices.
unsafe impl<T: Trace> Trace for Vec<T> {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        self.as_slice().trace(tracer);
    }
}

// SAFETY: visits both halves of the ring, every element once.
unsafe impl<T: Trace> Trace for VecDeque<T> {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        let (a, b) = self.as_slices();
        a.trace(tracer);
        b.trace(tracer);
    }
}

// SAFETY: visits the boxed value; needs tracing exactly when it does.
unsafe impl<T: Trace + ?Sized> Trace for Box<T> {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        (**self).trace(tracer);
    }
}

// SAFETY: visits every value; keys are not traced (a handle used as a key is weak, as the
// type's docs say), so only the values decide `NEEDS_TRACE`.
unsafe impl<K, V: Trace, S> Trace for HashMap<K, V, S> {
    const NEEDS_TRACE: bool = V::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        if V::NEEDS_TRACE {
            for value in self.values() {
                value.trace(tracer);
            }
        }
    }
}

// SAFETY: as for `HashMap`.
unsafe impl<K, V: Trace> Trace for BTreeMap<K, V> {
    const NEEDS_TRACE: bool = V::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        if V::NEEDS_TRACE {
            for value in self.values() {
                value.trace(tracer);
            }
        }
    }
}

macro_rules! tuple {
    ($($name:ident)+) => {
        // SAFETY: visits every element; needs tracing when any element does.
        unsafe impl<$($name: Trace),+> Trace for ($($name,)+) {
            const NEEDS_TRACE: bool = false $(|| $name::NEEDS_TRACE)+;
            #[inline]
            #[allow(non_snake_case)]
            fn trace(&self, tracer: &mut Tracer<'_>) {
                let ($($name,)+) = self;
                $(tracer.trace($name);)+
            }
        }
    };
}

tuple!(A);
tuple!(A B);
tuple!(A B C);
tuple!(A B C D);
tuple!(A B C D E);
tuple!(A B C D E F);
tuple!(A B C D E F G);
tuple!(A B C D E F G H);
