//! The per-object flag word.

use bitflags::bitflags;

bitflags! {
    /// An object's flags, one atomic `u16` in its slot (UE's `EObjectFlags` /
    /// `EInternalObjectFlags`, the subset the object machinery needs).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct ObjectFlags: u16 {
        /// Manually added to the root set ([`Arena::add_to_root`](crate::Arena::add_to_root)).
        const ROOT_SET = 1 << 0;
        /// Not (yet) reached by the collector's current mark; transient within a collection.
        const UNREACHABLE = 1 << 1;
        /// Marked as garbage (UE's PendingKill): handles stop resolving, the next
        /// collection purges it even if referenced.
        const GARBAGE = 1 << 2;
        /// Sitting in its pool, ready to be spawned again: handles do not resolve.
        const IN_POOL = 1 << 3;
        /// Being built by a precreation worker.
        const ASYNC = 1 << 4;
        /// Resides in the permanent pool; the collector disregards it.
        const PERMANENT = 1 << 5;
        /// Root of a cluster.
        const CLUSTER_ROOT = 1 << 6;
        /// Kept by its cluster in the current collection.
        const REACHABLE_IN_CLUSTER = 1 << 7;
        /// The slot holds no object. Set and cleared by the arena alone.
        const VACANT = 1 << 8;
        /// The object owns sub-objects (objects whose `outer` it is). Kept by the arena
        /// alone, in step with its sub-object lists.
        const HAS_SUBOBJECTS = 1 << 9;
        /// The collector ran the object's `begin_destroy`; it waits for `finish_destroy`
        /// and its final free (UE's `RF_BeginDestroyed`). Marks ignore it.
        const BEGIN_DESTROYED = 1 << 10;
        /// Member of a collector cluster (which one, the collector records apart: the slot
        /// keeps only hot data). Cleared with the rest when the object is released.
        const IN_CLUSTER = 1 << 11;
        /// The object is a sub-object: its slot's `outer` names an owner. Kept by the arena
        /// alone, in step with `outer`, so that a release learns from its one flag load
        /// whether it has links to cut (with `HAS_SUBOBJECTS`), without loading `outer`.
        const HAS_OUTER = 1 << 12;
        /// Not reached yet by the collector's running mark (its *white*; UE 5.4's
        /// `MaybeUnreachable`). Set on every object the mark may collect when it begins,
        /// cleared as the mark reaches it. Unlike `UNREACHABLE` it hides nothing, so an
        /// incremental mark can leave it set between frames while the game uses every
        /// object; the objects still carrying it when the mark ends are flagged
        /// `UNREACHABLE` and purged. The collector's alone.
        const MAYBE_UNREACHABLE = 1 << 13;
        /// The class's end listeners have been told that the object is ending
        /// ([`Arena::notify_end`](crate::Arena::notify_end), ahead of its release), so its
        /// release tells them nothing more. Kept by the arena alone; cleared with the rest
        /// when the slot is released.
        const END_NOTIFIED = 1 << 14;
    }
}

impl ObjectFlags {
    /// Flags that stop a handle from resolving.
    pub const HIDDEN: Self = Self::VACANT.union(Self::GARBAGE).union(Self::UNREACHABLE).union(Self::IN_POOL);
    /// Flags that only change under `&mut Arena`: the slot's occupancy, the flags that
    /// decide whether the object is ticked (the arena keeps its live bitmaps in step when
    /// [`Arena::set_flags`](crate::Arena::set_flags) changes them), the sub-object mark and
    /// the end listeners' mark.
    /// The atomic [`Slot::insert_flags`](crate::Slot::insert_flags) refuses them.
    ///
    /// `UNREACHABLE` and `MAYBE_UNREACHABLE` are not among them: the collector sets and
    /// clears them atomically from many threads during a mark (`MAYBE_UNREACHABLE` hides
    /// nothing, so no live bit is kept in step with it), and flags the objects it finds
    /// unreachable `UNREACHABLE` through `set_flags`.
    pub const MEMBERSHIP: Self = Self::VACANT
        .union(Self::GARBAGE)
        .union(Self::IN_POOL)
        .union(Self::HAS_SUBOBJECTS)
        .union(Self::HAS_OUTER)
        .union(Self::END_NOTIFIED);
    /// Flags no caller may set or clear: the arena keeps them.
    pub const ARENA_OWNED: Self =
        Self::VACANT.union(Self::HAS_SUBOBJECTS).union(Self::HAS_OUTER).union(Self::END_NOTIFIED);
    /// Flags that send a release down its cold path: links to cut (an owner, or a
    /// sub-object).
    pub const LINKED: Self = Self::HAS_SUBOBJECTS.union(Self::HAS_OUTER);
}
