//! What the collector knows of an object: the handles it holds ([`Trace`], reported to a
//! [`Tracer`]) and its lifecycle hooks ([`Object`]); and, per class, both erased: the
//! class's [`CollectorEntry`], kept in its record in the arena.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::marker::PhantomData;
use std::time::Duration;

use respawn_allocator::prefetch;
use respawn_arena::{CollectorEntries, CollectorEntry, Handle, ObjectFlags, ObjectTable, RawHandle, Slot, TraceFn};

use crate::frontier::Frontier;

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

    /// Starts loading what [`trace`](Self::trace) will read for this value's handles (the
    /// slots they name): a container calls it on the elements a few ahead of the one it
    /// traces, so that their cache misses overlap instead of following one another. A hint:
    /// it reports nothing and reads only the value. The default does nothing; a
    /// [`Handle`]'s starts loading its slot.
    #[inline(always)]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        let _ = tracer;
    }
}

/// A class the collector manages: traced, with UE's lifecycle hooks, each a no-op by
/// default. `#[derive(Object)]` writes the empty impl.
///
/// When the collector ends an object (unreachable, marked as garbage, or destroyed now) it
/// calls, in order: [`begin_destroy`](Self::begin_destroy) once; then
/// [`is_ready_for_finish_destroy`](Self::is_ready_for_finish_destroy) on this and later
/// purge steps until it says `true`; then [`finish_destroy`](Self::finish_destroy); then
/// drops the object in place and frees its cell (vacant, or returned to the class's owner). Dropping the
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

/// What a [`Trace`] impl reports handles to. Made by the collector; a trace impl only calls
/// [`handle`](Self::handle) and [`trace`](Self::trace).
pub struct Tracer<'a> {
    table: &'a ObjectTable,
    /// The class records, for their collector entries.
    classes: CollectorEntries<'a>,
    pub(crate) stack: &'a mut LocalStack,
    spill: &'a Frontier<'a>,
    /// One thread marks: claim with a plain load and store instead of an atomic RMW.
    exclusive: bool,
    /// Outside a collection only ([`Tracer::recording`]): the handles reported go here and
    /// nothing is claimed, so a diagnostic reads the collector's edges without a flag write.
    record: Option<&'a mut Vec<RawHandle>>,
    /// Set only for the length of a [`call_prefetch`]: the class's trace function then
    /// calls `Trace::prefetch`, not `trace`.
    prefetching: bool,
}

impl std::fmt::Debug for Tracer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer").field("stack", &self.stack.len).field("exclusive", &self.exclusive).finish()
    }
}

/// Flags that stop a claim: an object is claimed only if `MAYBE_UNREACHABLE` is its only bit
/// of these — white and `Live`. (Garbage keeps nothing; an `Unreachable` object was decided
/// and hidden by an incremental mark's gather already.)
const CLAIM_MASK: ObjectFlags = ObjectFlags::MAYBE_UNREACHABLE.union(ObjectFlags::LIFECYCLE);

impl<'a> Tracer<'a> {
    /// A marking task's tracer: claims go on `stack`, and its older half spills to `spill`
    /// when it fills. `exclusive`: one thread marks, so claims need no atomic RMW.
    pub(crate) fn claiming(
        table: &'a ObjectTable,
        classes: CollectorEntries<'a>,
        stack: &'a mut LocalStack,
        spill: &'a Frontier<'a>,
        exclusive: bool,
    ) -> Self {
        Tracer { table, classes, stack, spill, exclusive, record: None, prefetching: false }
    }

    /// A tracer that claims nothing: every handle reported to it is appended to `edges`
    /// (the diagnostics of `crate::why`, which must leave the flags alone). `stack` and
    /// `spill` are never written.
    pub(crate) fn recording(
        table: &'a ObjectTable,
        classes: CollectorEntries<'a>,
        stack: &'a mut LocalStack,
        spill: &'a Frontier<'a>,
        edges: &'a mut Vec<RawHandle>,
    ) -> Self {
        Tracer { table, classes, stack, spill, exclusive: true, record: Some(edges), prefetching: false }
    }

    /// Reports a handle the value holds: if it names an object this collection has not
    /// reached yet, the object is kept and will be traced in turn. Stale handles and
    /// handles to garbage are ignored (garbage is never kept alive by a reference).
    #[inline]
    pub fn handle(&mut self, raw: RawHandle) {
        if let Some(edges) = &mut self.record {
            edges.push(raw);
            return;
        }
        if let Some(slot) = self.slot_of(raw) {
            self.claim(raw.index(), slot);
        }
    }

    /// Starts loading the slot `raw` names (see [`Trace::prefetch`]).
    #[inline]
    pub(crate) fn prefetch_slot(&self, raw: RawHandle) {
        if let Some(slot) = self.table.slot(raw.index()) {
            prefetch(std::ptr::from_ref(slot).cast());
        }
    }

    /// The slot `raw` names if its generation still matches (stale handles name none).
    #[inline]
    pub(crate) fn slot_of(&self, raw: RawHandle) -> Option<&'a Slot> {
        self.table.slot(raw.index()).filter(|slot| slot.generation() == raw.generation().get())
    }

    /// Traces a field: calls its `trace` unless its type's `NEEDS_TRACE` is `false`.
    #[inline]
    pub fn trace<T: Trace + ?Sized>(&mut self, value: &T) {
        if T::NEEDS_TRACE {
            value.trace(self);
        }
    }

    /// Clears `MAYBE_UNREACHABLE` on slot `index` if it is set (and the object is not
    /// garbage); the clearer pushes the object. Returns whether this call claimed it.
    #[inline]
    pub(crate) fn claim(&mut self, index: u32, slot: &Slot) -> bool {
        let flags = slot.flags();
        if flags & CLAIM_MASK != ObjectFlags::MAYBE_UNREACHABLE {
            return false;
        }
        if self.exclusive {
            slot.overwrite_flags(flags - ObjectFlags::MAYBE_UNREACHABLE);
        } else if !slot.remove_flags(ObjectFlags::MAYBE_UNREACHABLE).contains(ObjectFlags::MAYBE_UNREACHABLE) {
            return false; // another task claimed it between our load and our RMW
        }
        // An object with nothing to follow (a leaf class, no owner, no cluster) is kept by
        // the cleared flag alone: no need to push and visit it.
        if flags.contains(ObjectFlags::HAS_OUTER) || self.followed(slot.class()) {
            // The slot is in cache now; its object is not, and the visit will need it.
            // Start that load while the current object's other handles are claimed.
            if let Some(cell) = self.table.cell(index) {
                prefetch(cell.as_ptr());
            }
            self.push(index);
        }
        true
    }

    /// Whether a claimed object of `class` needs a visit: its class traces, or has had
    /// cluster members (an object of a class the collector does not know is visited too).
    #[inline]
    fn followed(&self, class: u16) -> bool {
        match self.classes.get(usize::from(class)) {
            Some(class) => class.trace().is_some() || class.clustered(),
            None => true,
        }
    }

    /// Claims an object named by slot index alone (an `outer` link: the arena keeps those
    /// pointing at live owners).
    #[inline]
    pub(crate) fn claim_index(&mut self, index: u32) {
        if let Some(slot) = self.table.slot(index) {
            self.claim(index, slot);
        }
    }

    #[inline]
    fn push(&mut self, index: u32) {
        let stack = &mut *self.stack;
        if stack.len == LOCAL {
            // Spill the older half: the newer half is what we are about to walk (warm).
            self.spill.push(&stack.items[..LOCAL / 2]);
            stack.items.copy_within(LOCAL / 2.., 0);
            stack.len = LOCAL - LOCAL / 2;
        }
        stack.items[stack.len] = index;
        stack.len += 1;
    }
}

/// Entries in a task's own stack before it spills half to the next frontier.
const LOCAL: usize = 1024;

/// A task's own depth-first stack.
pub(crate) struct LocalStack {
    len: usize,
    items: [u32; LOCAL],
}

impl LocalStack {
    pub(crate) fn new() -> Self {
        Self { len: 0, items: [0; LOCAL] }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.len = self.len.checked_sub(1)?;
        Some(self.items[self.len])
    }

    /// The entries not yet popped, oldest first.
    pub(crate) fn as_slice(&self) -> &[u32] {
        &self.items[..self.len]
    }
}

/// A class's trace function: `T::trace`, or `T::prefetch` for a tracer in prefetch mode
/// ([`call_prefetch`]).
///
/// # Safety
/// `p` points to a live `T` that nobody mutates for the call's duration, and `tracer` is a
/// `&mut Tracer` passed by [`call_trace`].
unsafe fn trace_as<T: Trace>(p: *const u8, tracer: *mut ()) {
    // SAFETY: as the function's contract says. The tracer's lifetime is erased on the way
    // through the entry; `T::trace` takes a tracer of any lifetime, and can put nothing of
    // its own into it (its fields are private; it only reports handles).
    let (value, tracer) = unsafe { (&*p.cast::<T>(), &mut *tracer.cast::<Tracer<'_>>()) };
    if tracer.prefetching {
        value.prefetch(tracer);
    } else {
        value.trace(tracer);
    }
}

/// Calls a class's trace function (from its [`CollectorEntry`]) on the object at `p` in
/// prefetch mode: the object's [`Trace::prefetch`] runs, not its `trace` (one function
/// per class serves both, so the class record holds one). Reports nothing.
///
/// # Safety
/// As [`call_trace`].
#[inline(always)]
pub(crate) unsafe fn call_prefetch(trace: TraceFn, p: *const u8, tracer: &mut Tracer<'_>) {
    tracer.prefetching = true;
    // SAFETY: the caller's contract; `trace_as` reads the mode off the tracer.
    unsafe { call_trace(trace, p, tracer) };
    tracer.prefetching = false;
}

/// Calls a class's trace function (from its [`CollectorEntry`]) on the object at `p`.
///
/// # Safety
/// `trace` is the entry of the class of the live object at `p`, which nobody mutates for
/// the call's duration.
#[inline(always)]
pub(crate) unsafe fn call_trace(trace: TraceFn, p: *const u8, tracer: &mut Tracer<'_>) {
    // SAFETY: as the function's contract says; the tracer goes through as `trace_as` takes
    // it.
    unsafe { trace(p, std::ptr::from_mut(tracer).cast()) }
}

/// # Safety
/// `p` points to a live `T` the caller holds exclusively.
unsafe fn begin_destroy_as<T: Object>(p: *mut u8) {
    // SAFETY: as the function's contract says.
    unsafe { (*p.cast::<T>()).begin_destroy() }
}

/// # Safety
/// As [`begin_destroy_as`].
unsafe fn is_ready_as<T: Object>(p: *mut u8) -> bool {
    // SAFETY: as the function's contract says.
    unsafe { (*p.cast::<T>()).is_ready_for_finish_destroy() }
}

/// # Safety
/// As [`begin_destroy_as`].
unsafe fn finish_destroy_as<T: Object>(p: *mut u8) {
    // SAFETY: as the function's contract says.
    unsafe { (*p.cast::<T>()).finish_destroy() }
}

/// `T`'s collector entry; `owned`: its [`Lifetime`](crate::Lifetime) is `Owned`.
pub(crate) fn entry_of<T: Object>(owned: bool) -> CollectorEntry {
    let trace = T::NEEDS_TRACE.then_some(trace_as::<T> as TraceFn);
    // SAFETY: each function takes a live `T` as its contract says; `trace` takes the tracer
    // `call_trace` passes, and only the collector calls the entry, through `call_trace`.
    let entry =
        unsafe { CollectorEntry::new::<T>(trace, begin_destroy_as::<T>, is_ready_as::<T>, finish_destroy_as::<T>) };
    entry.with_owned(owned)
}

// SAFETY: a handle is the thing being traced; visiting it is rule 1 itself.
unsafe impl<T> Trace for Handle<T> {
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        tracer.handle(self.raw());
    }

    #[inline]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        tracer.prefetch_slot(self.raw());
    }
}

// SAFETY: as for `Handle`.
unsafe impl Trace for RawHandle {
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        tracer.handle(*self);
    }

    #[inline]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        tracer.prefetch_slot(*self);
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

    #[inline]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        if let Some(value) = self {
            value.prefetch(tracer);
        }
    }
}

/// How many elements ahead of the one it traces a slice prefetches ([`Trace::prefetch`]).
const PREFETCH_AHEAD: usize = 8;

// SAFETY: visits every element; needs tracing exactly when `T` does. (Prefetching reports
// nothing.)
unsafe impl<T: Trace> Trace for [T] {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        if T::NEEDS_TRACE {
            self.prefetch(tracer);
            for (i, value) in self.iter().enumerate() {
                if let Some(ahead) = self.get(i + PREFETCH_AHEAD) {
                    ahead.prefetch(tracer);
                }
                value.trace(tracer);
            }
        }
    }

    /// The first elements': what tracing the slice reads first.
    #[inline]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        if T::NEEDS_TRACE {
            for value in self.iter().take(PREFETCH_AHEAD) {
                value.prefetch(tracer);
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

    #[inline]
    fn prefetch(&self, tracer: &Tracer<'_>) {
        self.as_slice().prefetch(tracer);
    }
}

// SAFETY: as for slices.
unsafe impl<T: Trace> Trace for Vec<T> {
    const NEEDS_TRACE: bool = T::NEEDS_TRACE;
    #[inline]
    fn trace(&self, tracer: &mut Tracer<'_>) {
        self.as_slice().trace(tracer);
    }

    /// The buffer's first line: its elements live apart from the vector.
    #[inline]
    fn prefetch(&self, _: &Tracer<'_>) {
        if T::NEEDS_TRACE {
            prefetch(self.as_ptr().cast());
        }
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

    /// The boxed value's first line: it lives apart from the box.
    #[inline]
    fn prefetch(&self, _: &Tracer<'_>) {
        if T::NEEDS_TRACE {
            prefetch(std::ptr::from_ref::<T>(&**self).cast());
        }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::AtomicU32;

    use respawn_arena::{Arena, Handle, RawHandle};

    use super::{LocalStack, Trace, Tracer};
    use crate::frontier::Frontier;

    #[derive(crate::Trace)]
    struct Node {
        edges: Vec<Handle<u32>>,
        next: Option<Box<Handle<u32>>>,
        pair: [Handle<u32>; 2],
        shape: Shape,
    }

    #[derive(crate::Trace)]
    enum Shape {
        Empty,
        One(Handle<u32>),
        Many { all: Vec<Handle<u32>> },
    }

    /// The handles `report` gives a recording tracer over `arena`.
    fn recorded(arena: &Arena, report: impl FnOnce(&mut Tracer<'_>)) -> Vec<RawHandle> {
        let (mut stack, mut edges) = (LocalStack::new(), Vec::new());
        let nothing: [AtomicU32; 0] = [];
        let spill = Frontier::new(&nothing);
        report(&mut Tracer::recording(arena.table(), arena.collector_entries(), &mut stack, &spill, &mut edges));
        edges
    }

    /// `prefetch` is a hint: through every container the derive and the library cover, it
    /// reports no handle, while `trace` of the same values reports each one, in order.
    #[test]
    fn prefetch_reports_nothing_and_trace_reports_every_handle() {
        let mut arena = Arena::new();
        let h: Vec<Handle<u32>> = (0..12).map(|i| arena.insert(i)).collect();
        let node = Node {
            edges: h[..9].to_vec(),
            next: Some(Box::new(h[9])),
            pair: [h[10], h[11]],
            shape: Shape::Many { all: vec![h[0], h[1]] },
        };
        let one = Shape::One(h[3]);
        assert!(recorded(&arena, |t| {
            node.prefetch(t);
            one.prefetch(t);
            Shape::Empty.prefetch(t);
        })
        .is_empty());
        let traced = recorded(&arena, |t| {
            node.trace(t);
            one.trace(t);
        });
        let mut expected: Vec<RawHandle> = h.iter().map(|h| h.raw()).collect();
        expected.extend([h[0].raw(), h[1].raw(), h[3].raw()]);
        assert_eq!(traced, expected);
    }
}
