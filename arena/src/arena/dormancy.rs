//! Tick control in the arena (UE's `FTickFunction`): dormant objects, which the aggregated
//! tick skips, and a budgeted round-robin tick.
//!
//! A class keeps a second bitmap beside its live bitmap, one bit per cell number, set while
//! the cell's object is dormant. `tick` and `par_tick` walk `live & !dormant` a word at a
//! time, so a dormant object costs the tick its bit in a word it reads anyway, never a load
//! of the object. The bitmap is allocated on the class's first dormant object; a class that
//! never had one walks an empty slice. Dormancy ends with the object: the release clears the
//! bit, behind one test of the class's dormant count (zero for most classes), so the next
//! object in the cell starts awake.
//!
//! Dormant objects are alive in every other sense: handles resolve, `iter`, `iter_mut`,
//! `retain` and the collector's [`live_indices`](Arena::live_indices) see them, and the
//! collector keeps or purges them as any other object.

use super::{is_permanent, Arena, ArenaError};
use crate::class::ClassEntry;
use crate::RawHandle;

/// Where a [budgeted tick](Arena::tick_budgeted) of one class goes on: the next cell to
/// visit, and how many passes over the class it has finished.
///
/// Start with `TickCursor::default()` and keep it between frames, one per class (a cursor
/// holds a cell number: used with another class, it is just a place to start from).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TickCursor {
    next: u32,
    cycles: u64,
}

impl TickCursor {
    /// A cursor at the start of a class, with no cycle done.
    pub const fn new() -> Self {
        Self { next: 0, cycles: 0 }
    }

    /// Passes over the class finished: each ends when a budgeted tick reaches the class's
    /// last awake object.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The cell number the next budgeted tick starts at: the awake object it found next
    /// when its budget ran out, or 0 at a cycle's start.
    pub fn position(&self) -> u32 {
        self.next
    }
}

impl Arena {
    /// Makes the object `raw` names dormant (`true`) or wakes it (`false`): a dormant object
    /// is skipped by [`tick`](Self::tick), [`par_tick`](Self::par_tick) and
    /// [`tick_budgeted`](Self::tick_budgeted), and is otherwise alive — its handles resolve,
    /// [`iter`](Self::iter) and [`iter_mut`](Self::iter_mut) visit it, the collector keeps
    /// it while it is reachable. Dormancy ends with the object: whatever reuses its cell
    /// starts awake. Setting what is already set changes nothing.
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`] or [`ArenaError::Hidden`] (the handle must
    /// resolve), or [`ArenaError::Permanent`] for an object of the permanent pool (which no
    /// tick visits).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, ArenaError};
    ///
    /// let mut arena = Arena::new();
    /// let asleep = arena.insert(1u32);
    /// let awake = arena.insert(2u32);
    /// arena.set_dormant(asleep.raw(), true)?;
    ///
    /// let mut seen = Vec::new();
    /// arena.tick::<u32>(|v| seen.push(*v));
    /// assert_eq!(seen, [2], "the tick skips it");
    /// assert_eq!(arena.get(asleep), Some(&1), "it resolves all the same");
    /// assert_eq!(arena.iter::<u32>().count(), 2, "and iter sees it");
    /// assert_eq!(arena.stats::<u32>().unwrap().dormant, 1);
    ///
    /// arena.remove(asleep);
    /// assert!(matches!(arena.set_dormant(asleep.raw(), false), Err(ArenaError::Stale)));
    /// let reborn = arena.insert(3u32); // the same cell, reused
    /// assert!(!arena.is_dormant(reborn.raw()), "dormancy ended with the object");
    /// # let _ = awake;
    /// # Ok::<(), ArenaError>(())
    /// ```
    pub fn set_dormant(&mut self, raw: RawHandle, dormant: bool) -> Result<(), ArenaError> {
        let class = self.table.resolve(raw)?.class();
        if is_permanent(&self.table, raw.index()) {
            return Err(ArenaError::Permanent);
        }
        let entry = &mut self.classes[usize::from(class)];
        let n = raw.index() - entry.geometry().start();
        entry.set_dormant(n, dormant);
        Ok(())
    }

    /// Whether `raw` resolves to a dormant object (see [`set_dormant`](Self::set_dormant)).
    pub fn is_dormant(&self, raw: RawHandle) -> bool {
        let Ok(slot) = self.table.resolve(raw) else { return false };
        let entry = &self.classes[usize::from(slot.class())];
        let n = entry.geometry().number(raw.index());
        n < entry.geometry().capacity() && entry.dormancy().contains(n)
    }

    /// Ticks at most `budget` awake objects of class `T`, in memory order, starting where
    /// `cursor` stopped: a budgeted round-robin, which spreads one pass over the class
    /// across frames. Returns how many were ticked.
    ///
    /// The walk starts at the cursor's cell and ticks each awake object it finds until the
    /// budget is spent; the cursor then moves to the next awake object. When the walk
    /// reaches the end of the class instead, a *cycle* ends ([`TickCursor::cycles`]) and the
    /// cursor goes back to the class's start for the next call. So:
    /// - within one cycle no object is ticked twice (the cursor only moves forward, and a
    ///   cell that is reused behind it waits for the next cycle);
    /// - every object that stays alive and awake for a whole cycle is ticked exactly once
    ///   in it (objects spawned ahead of the cursor are ticked in the cycle, behind it in
    ///   the next one);
    /// - with `a` awake objects and no change, a cycle takes `max(1, ceil(a / budget))`
    ///   calls, each ticking `budget` objects but the last.
    ///
    /// A `budget` of 0 ticks nothing and leaves the cursor where it is.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, TickCursor};
    ///
    /// let mut arena = Arena::new();
    /// for v in 0..10u32 {
    ///     arena.insert(v);
    /// }
    /// let mut cursor = TickCursor::new();
    /// let mut seen = Vec::new();
    /// for _ in 0..3 {
    ///     arena.tick_budgeted::<u32>(&mut cursor, 4, |v| seen.push(*v));
    /// }
    /// assert_eq!(seen, (0..10).collect::<Vec<_>>(), "4 + 4 + 2: one cycle in three frames");
    /// assert_eq!(cursor.cycles(), 1);
    /// ```
    pub fn tick_budgeted<T: 'static>(
        &mut self,
        cursor: &mut TickCursor,
        budget: usize,
        mut f: impl FnMut(&mut T),
    ) -> usize {
        if budget == 0 {
            return 0;
        }
        let Some(id) = self.class_of::<T>() else {
            // No object at all: the walk reaches the end at once.
            *cursor = TickCursor { next: 0, cycles: cursor.cycles + 1 };
            return 0;
        };
        let entry = &mut self.classes[id.index()];
        entry.note_all();
        // SAFETY: `entry` is class `T`'s, and `&mut self` makes every object ours.
        unsafe { visit_budgeted::<T>(entry, cursor, budget, &mut f) }
    }
}

/// The walk of [`Arena::tick_budgeted`] over `entry`'s awake objects (`budget > 0`).
///
/// # Safety
/// `entry` is class `T`'s, and the caller holds exclusive access to its objects.
unsafe fn visit_budgeted<T>(
    entry: &ClassEntry,
    cursor: &mut TickCursor,
    budget: usize,
    f: &mut impl FnMut(&mut T),
) -> usize {
    debug_assert!(budget > 0, "a budgeted walk ticks something");
    let live = entry.live();
    let dormant = entry.dormancy().words(0, live.len());
    let mut ticked = 0;
    let mut w = (cursor.next >> 6) as usize;
    // The first word's cells below the cursor were visited (or skipped) already.
    let mut from = !0u64 << (cursor.next & 63);
    while w < live.len() {
        let mut bits = live[w] & !dormant.get(w).copied().unwrap_or(0) & from;
        from = !0;
        while bits != 0 {
            let n = (w * 64) as u32 + bits.trailing_zeros();
            bits &= bits - 1;
            if ticked == budget {
                // The budget is spent and an awake object remains: the next call starts here.
                cursor.next = n;
                return ticked;
            }
            // SAFETY: the live bit says the cell holds a live `T` of the class (the caller's
            // contract), which the caller lets us lend once: the walk visits each bit once.
            f(unsafe { &mut *entry.geometry().cell_ptr(n).cast::<T>() });
            ticked += 1;
        }
        w += 1;
    }
    *cursor = TickCursor { next: 0, cycles: cursor.cycles + 1 };
    ticked
}
