//! What a release of a class's object must stop for, beyond the object's own flags.

use crate::class::dormancy::Dormancy;
use crate::class::listeners::{ErasedListener, Heard, Listeners};
use crate::class::{EndedCells, Freed};

/// A class's reactions to its objects' beginnings, ends and changes: where ended cells go,
/// who is told, which objects sleep, what the collector's write barrier noted.
pub(super) struct Reactions {
    /// Where the class's cells go when their objects end.
    pub(super) ended_cells: EndedCells,
    /// Cells whose objects ended, waiting for the class's owner
    /// ([`Arena::drain_returned`](crate::Arena::drain_returned)); empty unless the class's
    /// cells are [`EndedCells::Returned`] or `ReturnedUndropped`.
    pub(super) returned: Vec<Freed>,
    /// What a spawn or a release must stop for beyond the object's own flags and
    /// generation, as [`Hooks`] bits: returned cells, spawn and end listeners, dormant
    /// objects. Kept in step with them by every method that changes one, so that a spawn or
    /// a release of a class with none — nearly every one — tests one byte instead of
    /// several fields.
    pub(super) hooks: u8,
    /// Closures told of each object's beginning and end
    /// ([`Arena::add_spawn_listener`](crate::Arena::add_spawn_listener),
    /// [`Arena::add_end_listener`](crate::Arena::add_end_listener)); empty for most
    /// classes.
    pub(super) listeners: Listeners,
    /// One bit per cell number, set while the cell's object is dormant: `tick` walks
    /// `live & !dormant` ([`Arena::set_dormant`](crate::Arena::set_dormant)).
    pub(super) dormancy: Dormancy,
    /// Whether the collector's write barrier notes this class's objects when they are made
    /// live or lent mutably (an incremental mark is running and the class is traced): see
    /// [`Arena::set_barrier`](crate::Arena::set_barrier).
    pub(super) barrier: bool,
    /// What the barrier noted since the collector last drained it, as slot indices: each
    /// an object made live, lent mutably, rooted, re-flagged or given an owner.
    pub(super) noted: Vec<u32>,
    /// Every live object of the class was lent mutably (`tick`, `par_tick`, `retain`)
    /// since the collector last drained the barrier.
    pub(super) noted_all: bool,
}

/// The bits of [`Reactions::hooks`].
pub(super) struct Hooks;

impl Hooks {
    /// The class's ended cells are returned to its owner, not put on the vacant list.
    pub(super) const RETURNED: u8 = 1;
    /// The class has end listeners, told before a release changes anything.
    pub(super) const LISTENING: u8 = 2;
    /// Some object of the class is dormant: a release wakes its cell.
    pub(super) const DORMANT: u8 = 4;
    /// What a release in place (a deactivation, a keep, a destroy) stops for.
    pub(super) const RELEASE: u8 = Self::LISTENING | Self::DORMANT;
    /// The class has spawn listeners, told once a spawn is complete.
    pub(super) const SPAWNING: u8 = 8;
}

impl Reactions {
    pub(super) fn new(barrier: bool) -> Self {
        Self {
            ended_cells: EndedCells::Vacant,
            returned: Vec::new(),
            hooks: 0,
            listeners: Listeners::default(),
            dormancy: Dormancy::default(),
            barrier,
            noted: Vec::new(),
            noted_all: false,
        }
    }

    /// The [`hooks`](Self::hooks) the class's returned cells, listeners and dormancy call
    /// for now.
    pub(super) fn hooks_now(&self) -> u8 {
        let mut hooks = 0;
        if self.ended_cells != EndedCells::Vacant {
            hooks |= Hooks::RETURNED;
        }
        if self.listeners.listening_to_ends() {
            hooks |= Hooks::LISTENING;
        }
        if self.listeners.listening_to_spawns() {
            hooks |= Hooks::SPAWNING;
        }
        if self.dormancy.any() {
            hooks |= Hooks::DORMANT;
        }
        hooks
    }

    fn sync_hooks(&mut self) {
        self.hooks = self.hooks_now();
    }

    pub(super) fn set_ended_cells(&mut self, way: EndedCells) {
        self.ended_cells = way;
        self.sync_hooks();
    }

    /// Makes cell `n`'s object dormant or awake (`live_words`: the live bitmap's length).
    pub(super) fn set_dormant(&mut self, n: u32, dormant: bool, live_words: usize) {
        self.dormancy.set(n, dormant, live_words);
        self.sync_hooks();
    }

    /// Cell `n`'s object ended: its cell's next object starts awake. For a class with a
    /// dormant object.
    pub(super) fn wake_ended(&mut self, n: u32) {
        self.dormancy.ended(n);
        self.sync_hooks();
    }

    pub(super) fn add_listener(&mut self, heard: Heard, listener: ErasedListener) -> u32 {
        let n = self.listeners.add(heard, listener);
        self.sync_hooks();
        n
    }

    pub(super) fn remove_listener(&mut self, n: u32) -> bool {
        let removed = self.listeners.remove(n);
        self.sync_hooks();
        removed
    }

    pub(super) fn set_barrier(&mut self, on: bool) {
        self.barrier = on;
        self.noted.clear();
        self.noted_all = false;
    }

    /// Notes slot `index` for the collector's write barrier (the caller checked that it
    /// is on, or that the note must be taken whatever the class: a root, an owner, flags).
    #[cold]
    #[inline(never)]
    pub(super) fn note(&mut self, index: u32) {
        self.noted.push(index);
    }

    /// Notes every live object of the class, if the barrier is on for it: a `tick` lends
    /// them all at once, and one flag says so more cheaply than a note each.
    #[inline]
    pub(super) fn note_all(&mut self) {
        if self.barrier {
            self.noted_all = true;
        }
    }
}
