//! Ticks that know which object they hold: each visible object of a class with its handle,
//! in one pass in memory order or slab by slab across rayon's threads. The World's
//! `tick_with` and `par_tick_with` record their commands on these.

use std::num::NonZeroU32;

use rayon::prelude::*;

use super::Arena;
use crate::class::{ClassEntry, Geometry};
use crate::{Handle, RawHandle};

impl Arena {
    /// Calls `f` with every visible, awake object of class `T` and its handle, in memory
    /// order: the aggregated [`tick`](Self::tick) for code that acts on the object by name
    /// (destroys it, records it). Dormant objects are skipped, as by `tick`. Costs one more load per object than `tick`: the slot's generation.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, Handle};
    ///
    /// let mut arena = Arena::new();
    /// let a = arena.insert(1u32);
    /// let b = arena.insert(2u32);
    /// let mut seen: Vec<Handle<u32>> = Vec::new();
    /// arena.tick_handles::<u32>(|h, v| {
    ///     *v *= 10;
    ///     seen.push(h);
    /// });
    /// assert_eq!(seen, [a, b]);
    /// assert_eq!(arena.get(b), Some(&20));
    /// ```
    pub fn tick_handles<T: 'static>(&mut self, mut f: impl FnMut(Handle<T>, &mut T)) {
        let Some(id) = self.class_of::<T>() else { return };
        let entry = &mut self.classes[id.index()];
        entry.note_all();
        let entry = &*entry;
        let dormant = entry.dormancy().words(0, entry.live().len());
        // SAFETY: `entry` is class `T`'s, the words are its whole live bitmap from word 0, and
        // `&mut self` makes every object ours for the call.
        unsafe { visit_handles::<T>(entry.geometry(), 0, entry.live(), dormant, &mut f) };
    }

    /// [`tick_handles`](Self::tick_handles) split across rayon's threads chunk by chunk, as
    /// [`par_tick`](Self::par_tick) splits: a chunk is one slab's cells (64 cells, for
    /// slabs smaller than that), numbered in memory order from 0. For each chunk that holds
    /// a visible object, the task that takes it calls `begin(chunk)` once, then `f` with the
    /// state `begin` returned for each of the chunk's objects in memory order, then drops
    /// the state. The state is a per-task scratch (a command queue) that needs no lock
    /// while the chunk is walked. Chunks run in any order, on any thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let handles: Vec<_> = (0..5000u32).map(|i| arena.insert(i)).collect();
    /// // Each chunk counts its objects in a local, and adds the count once at its end.
    /// let total = Mutex::new(0);
    /// struct Count<'a>(u32, &'a Mutex<u32>);
    /// impl Drop for Count<'_> {
    ///     fn drop(&mut self) {
    ///         *self.1.lock().unwrap() += self.0;
    ///     }
    /// }
    /// arena.par_tick_slabs::<u32, _>(|_chunk| Count(0, &total), |count, _h, v| {
    ///     *v += 1;
    ///     count.0 += 1;
    /// });
    /// assert_eq!(*total.lock().unwrap(), 5000);
    /// assert_eq!(arena.get(handles[4999]), Some(&5000));
    /// ```
    pub fn par_tick_slabs<T: Send + 'static, S>(
        &mut self,
        begin: impl Fn(usize) -> S + Sync + Send,
        f: impl Fn(&mut S, Handle<T>, &mut T) + Sync + Send,
    ) {
        let Some(id) = self.class_of::<T>() else { return };
        let entry = &mut self.classes[id.index()];
        entry.note_all();
        let entry = SharedEntry(&*entry);
        let words_per_slab = (entry.get().geometry().cells_per_slab() / 64).max(1);
        entry.get().live().par_chunks(words_per_slab).enumerate().for_each(|(chunk, words)| {
            if words.iter().all(|&w| w == 0) {
                return;
            }
            let mut state = begin(chunk);
            let first = chunk * words_per_slab;
            let dormant = entry.get().dormancy().words(first, words.len());
            // SAFETY: `entry` is class `T`'s; `words` are its bitmap's words from
            // `chunk × words_per_slab`, and each live bit lies in exactly one chunk, so each
            // `&mut T` goes to one task; `&mut self` keeps every other access out.
            unsafe {
                visit_handles::<T>(entry.get().geometry(), first, words, dormant, &mut |h, t| f(&mut state, h, t))
            };
        });
    }
}

/// A class entry shared read-only with rayon's tasks.
struct SharedEntry<'a>(&'a ClassEntry);

// SAFETY: the tasks read the entry's geometry (shift, start, capacity, addressing, range)
// and its live and dormancy bitmaps, which nothing changes while the arena is borrowed mutably by the tick,
// and load the slots' generations, which are atomics. They never touch its returned cells, its
// listeners or its lists, the parts that are not `Sync`.
unsafe impl Sync for SharedEntry<'_> {}

impl<'a> SharedEntry<'a> {
    /// The entry (a method, so that closures capture the whole `Sync` wrapper).
    fn get(&self) -> &'a ClassEntry {
        self.0
    }
}

/// Calls `f` with the handle and the object of every set bit of `words` that is clear in
/// `dormant`, whose first words are word `first_word` on of the live and dormancy bitmaps
/// of the class at `geometry` (`dormant` may be shorter: the words beyond it are awake).
///
/// # Safety
/// `geometry` is class `T`'s and `words` are its live bitmap's words from `first_word`; the
/// caller holds exclusive access to every object whose bit is set in `words`.
#[inline]
unsafe fn visit_handles<T>(
    geometry: &Geometry,
    first_word: usize,
    words: &[u64],
    dormant: &[u64],
    f: &mut impl FnMut(Handle<T>, &mut T),
) {
    for (w, &word) in words.iter().enumerate() {
        // Dormant objects are skipped, as by `tick` (a class with none has no words).
        let mut bits = word & !dormant.get(w).copied().unwrap_or(0);
        while bits != 0 {
            let n = ((first_word + w) * 64) as u32 + bits.trailing_zeros();
            bits &= bits - 1;
            let generation = NonZeroU32::new(geometry.slot(n).generation()).expect("live slots have a generation");
            let handle = Handle::from_raw(RawHandle::new(geometry.slot_of(n), generation));
            // SAFETY: the live bit says cell `n` holds a visible `T` in a slab the class owns;
            // the caller's exclusive access, and one visit per bit, lend it once.
            f(handle, unsafe { &mut *geometry.cell_of::<T>(n).cast::<T>() });
        }
    }
}
