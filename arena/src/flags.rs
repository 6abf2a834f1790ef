//! The per-object flag word: the object's [`Lifecycle`] in its three low bits, and
//! independent flags above them.

use std::fmt;

use bitflags::bitflags;

/// Where an object is in its life: one field of its flag word, changed only by named
/// transitions (UE keeps these as independent bits: `RF_BeginDestroyed`,
/// `EInternalObjectFlags::Garbage`, `Unreachable`, `Async`…; here one state holds at a
/// time, so no combination needs policing).
///
/// ```text
///   Live ── mark_as_garbage ──► Garbage ── revive ──► Live
///   Live | Garbage ── gather (the collector's verdict) ──► Unreachable ── revive ──► Live
///   Live | Garbage | Unreachable ── begin_destroy ──► Destroying
///   Live | Destroying ── release ──► Vacant, Lent (returned to the class's owner) or Retired
///   Live ── deactivate ──► InPool        Vacant ── take_cell ──► Lent
///   InPool | Lent ── activate ──► Live   InPool | Lent ── recycle ──► Vacant ── occupy ──► Live
/// ```
///
/// The first four states have an object in the cell; the last four do not (their bit 2 is
/// set, so "vacant" is one bit test). Every state but `Live` hides the object from handles.
///
/// The states are ordered as the diagram reads, so `state <= Lifecycle::Garbage` asks "an
/// object a mark judges" in one compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Lifecycle {
    /// Alive and visible: handles resolve, ticks and iteration visit it.
    Live = 0,
    /// Marked as garbage (UE's `MarkAsGarbage`, formerly PendingKill): handles stop
    /// resolving, references to it keep nothing, and the next collection purges it — unless
    /// it is revived first.
    Garbage = 1,
    /// The collector found it unreachable (or garbage) and queued it for the purge. A root
    /// taken on it before its purge keeps it, and the next collection revives it (`Live`).
    Unreachable = 2,
    /// The collector ran its `begin_destroy` (UE's `RF_BeginDestroyed`): it waits for
    /// `finish_destroy` and its final free. Marks ignore it.
    Destroying = 3,
    /// No object: the slot is free for its class's next one.
    Vacant = 4,
    /// No live object: the cell sits in its class's pool, reset, ready to be spawned again.
    InPool = 5,
    /// No object the arena can see: the cell is lent out — taken by a precreation worker,
    /// or returned to the class's owner — until it is activated or given back.
    Lent = 6,
    /// No object, for good: the slot reached the generation ceiling and is never reused.
    Retired = 7,
}

impl Lifecycle {
    const ALL: [Self; 8] = [
        Self::Live,
        Self::Garbage,
        Self::Unreachable,
        Self::Destroying,
        Self::Vacant,
        Self::InPool,
        Self::Lent,
        Self::Retired,
    ];

    /// Whether the cell holds no object (vacant, pooled, lent or retired).
    #[inline(always)]
    pub const fn is_vacant(self) -> bool {
        self as u16 & VACANT_BIT != 0
    }

    /// Whether the object is on its way out — garbage, found unreachable, or being
    /// destroyed — so that a reference to it keeps nothing alive (UE's `IsValid` is false).
    #[inline]
    pub const fn is_ending(self) -> bool {
        matches!(self, Self::Garbage | Self::Unreachable | Self::Destroying)
    }

    /// Whether the object may move from `self` to `to` under
    /// [`Arena::set_lifecycle`](crate::Arena::set_lifecycle): the first three lines of the
    /// type's diagram. (The vacant states are the arena's own: it enters and leaves them as
    /// it releases, deactivates, lends and fills cells.)
    pub const fn may_become(self, to: Self) -> bool {
        matches!(
            (self, to),
            (Self::Live, Self::Garbage)
                | (Self::Garbage | Self::Unreachable, Self::Live)
                | (Self::Live | Self::Garbage, Self::Unreachable)
                | (Self::Live | Self::Garbage | Self::Unreachable, Self::Destroying)
        )
    }

    /// The state as flag bits (the lifecycle field alone).
    #[inline(always)]
    pub const fn flags(self) -> ObjectFlags {
        ObjectFlags::from_bits_retain(self as u16)
    }
}

/// The lifecycle bit every vacant state has.
const VACANT_BIT: u16 = 0b100;

bitflags! {
    /// An object's flag word, one atomic `u16` in its slot (UE's `EObjectFlags` /
    /// `EInternalObjectFlags`, the subset the object machinery needs): the object's
    /// [`Lifecycle`] in [`LIFECYCLE`](Self::LIFECYCLE), the bits below it, and independent
    /// flags above. Bits 10 to 15 are free.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct ObjectFlags: u16 {
        /// The [`Lifecycle`] field (three bits; read it with
        /// [`lifecycle`](ObjectFlags::lifecycle)). Not a flag: the arena alone writes it.
        const LIFECYCLE = 0b111;
        /// Manually added to the root set ([`Arena::add_to_root`](crate::Arena::add_to_root)).
        const ROOT_SET = 1 << 3;
        /// Resides in the permanent pool; the collector disregards it.
        const PERMANENT = 1 << 4;
        /// The object owns sub-objects (objects whose `outer` it is). Kept by the arena
        /// alone, in step with its sub-object lists.
        const HAS_SUBOBJECTS = 1 << 5;
        /// The object is a sub-object: its slot's `outer` names an owner. Kept by the arena
        /// alone, in step with `outer`, so that a release learns from its one flag load
        /// whether it has links to cut (with `HAS_SUBOBJECTS`), without loading `outer`.
        const HAS_OUTER = 1 << 6;
        /// Not reached yet by the collector's running mark (its *white*; UE 5.4's
        /// `MaybeUnreachable`). Set on every object the mark may collect when it begins,
        /// cleared as the mark reaches it. It hides nothing, so an incremental mark can
        /// leave it set between frames while the game uses every object; the objects still
        /// carrying it when the mark ends are found [`Unreachable`](Lifecycle::Unreachable)
        /// and purged. The collector's alone. It lives here, beside the generation every
        /// claim reads anyway: a per-class bitmap measured slower (`benches/LOG.md`).
        const MAYBE_UNREACHABLE = 1 << 7;
        /// The class's end listeners have been told that the object is ending
        /// ([`Arena::notify_end`](crate::Arena::notify_end), ahead of its release), so its
        /// release tells them nothing more. Kept by the arena alone; cleared with the rest
        /// when the slot is released.
        const END_NOTIFIED = 1 << 8;
        /// Kept, and traced, by every collection whose
        /// [`keep_flags`](https://docs.rs/respawn-gc/latest/respawn_gc/struct.CollectOptions.html)
        /// name it, referenced or not (UE's `RF_Standalone`). The game's to set and clear.
        const STANDALONE = 1 << 9;
    }
}

impl ObjectFlags {
    /// Flags that stop a handle from resolving: every lifecycle state but `Live`.
    pub const HIDDEN: Self = Self::LIFECYCLE;
    /// The bit every vacant lifecycle state has: a slot whose flags intersect it holds no
    /// object. (A mask for the hot paths; [`Lifecycle::is_vacant`] says the same.)
    pub const VACANT: Self = Self::from_bits_retain(VACANT_BIT);
    /// Flags that only change under `&mut Arena`: the lifecycle (it decides whether the
    /// object is ticked, and the arena keeps its live bitmaps in step when
    /// [`Arena::set_lifecycle`](crate::Arena::set_lifecycle) changes it), the sub-object
    /// marks and the end listeners' mark. The atomic
    /// [`Slot::insert_flags`](crate::Slot::insert_flags) refuses them.
    ///
    /// `MAYBE_UNREACHABLE` is not among them: the collector sets and clears it atomically
    /// from many threads during a mark (it hides nothing, so no live bit is kept in step).
    pub const MEMBERSHIP: Self =
        Self::LIFECYCLE.union(Self::HAS_SUBOBJECTS).union(Self::HAS_OUTER).union(Self::END_NOTIFIED);
    /// Flags no caller may set or clear through
    /// [`Arena::set_flags`](crate::Arena::set_flags): the arena keeps them.
    pub const ARENA_OWNED: Self = Self::MEMBERSHIP;
    /// Flags that send a release down its cold path: links to cut (an owner, or a
    /// sub-object).
    pub const LINKED: Self = Self::HAS_SUBOBJECTS.union(Self::HAS_OUTER);

    /// The object's lifecycle state.
    #[inline(always)]
    pub const fn lifecycle(self) -> Lifecycle {
        Lifecycle::ALL[(self.bits() & Self::LIFECYCLE.bits()) as usize]
    }

    /// Whether the slot holds no object (its lifecycle is one of the vacant states).
    #[inline(always)]
    pub const fn is_vacant(self) -> bool {
        self.bits() & VACANT_BIT != 0
    }

    /// These flags with their lifecycle field set to `state`.
    #[inline(always)]
    pub const fn with_lifecycle(self, state: Lifecycle) -> Self {
        Self::from_bits_retain((self.bits() & !Self::LIFECYCLE.bits()) | state as u16)
    }

    /// The flags beside the lifecycle field.
    #[inline]
    fn others(self) -> Self {
        self.difference(Self::LIFECYCLE)
    }
}

impl fmt::Debug for ObjectFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.lifecycle())?;
        for (name, _) in self.others().iter_names() {
            write!(f, " | {name}")?;
        }
        let unknown = self.others().bits() & !Self::all().bits();
        if unknown != 0 {
            write!(f, " | {unknown:#x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Lifecycle, ObjectFlags};

    #[test]
    fn the_lifecycle_field_round_trips_every_state() {
        for state in Lifecycle::ALL {
            let flags = ObjectFlags::ROOT_SET.with_lifecycle(state);
            assert_eq!(flags.lifecycle(), state);
            assert!(flags.contains(ObjectFlags::ROOT_SET), "{state:?} clobbered a flag");
            assert_eq!(flags.is_vacant(), state.is_vacant());
            assert_eq!(flags.intersects(ObjectFlags::HIDDEN), state != Lifecycle::Live);
            assert_eq!(state.is_vacant(), matches!(state as u8, 4..=7));
        }
    }

    #[test]
    fn transitions_stay_among_occupied_states() {
        for from in Lifecycle::ALL {
            for to in Lifecycle::ALL {
                if from.may_become(to) {
                    assert!(!from.is_vacant() && !to.is_vacant(), "{from:?} -> {to:?}");
                    assert_ne!(from, to);
                }
            }
        }
        assert!(Lifecycle::Live.may_become(Lifecycle::Garbage));
        assert!(Lifecycle::Unreachable.may_become(Lifecycle::Live));
        assert!(!Lifecycle::Destroying.may_become(Lifecycle::Live), "a begun destroy is never undone");
        assert!(!Lifecycle::Unreachable.may_become(Lifecycle::Garbage));
    }

    #[test]
    fn six_bits_are_free() {
        assert_eq!(ObjectFlags::all().bits().count_ones(), 10);
        assert_eq!(ObjectFlags::all().bits().leading_zeros(), 6);
    }

    #[test]
    fn debug_names_the_state_then_the_flags() {
        let flags = ObjectFlags::ROOT_SET.with_lifecycle(Lifecycle::Garbage);
        assert_eq!(format!("{flags:?}"), "Garbage | ROOT_SET");
        assert_eq!(format!("{:?}", ObjectFlags::empty()), "Live");
    }
}
