//! Ticks that know which object they hold: each visible object of a class with its handle,
//! in one pass in memory order or across rayon's threads. The World's `tick_with` and
//! `par_tick_with` record their commands on these.
//!
//! Every parallel tick splits its class by work: [`par_chunks`] cuts the live bitmap into
//! chunks of consecutive words that hold about equal numbers of awake objects, a few per
//! thread, so 1,000 heavy objects in one slab spread over every core as a million light
//! ones do.

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
    /// [`par_tick`](Self::par_tick) splits: a chunk is a run of the class's cells holding
    /// about an even share of its awake objects (a few chunks a thread, none smaller than
    /// 32 objects but the last), numbered in memory order from 0. For each chunk the task
    /// that takes it calls `begin(chunk)` once, then `f` with the state `begin` returned
    /// for each of the chunk's objects in memory order, then drops the state. The state is
    /// a per-task scratch (a command queue) that needs no lock while the chunk is walked.
    /// Chunks run in any order, on any thread; every chunk holds an object.
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
    /// arena.par_tick_chunks::<u32, _>(|_chunk| Count(0, &total), |count, _h, v| {
    ///     *v += 1;
    ///     count.0 += 1;
    /// });
    /// assert_eq!(*total.lock().unwrap(), 5000);
    /// assert_eq!(arena.get(handles[4999]), Some(&5000));
    /// ```
    pub fn par_tick_chunks<T: Send + 'static, S>(
        &mut self,
        begin: impl Fn(usize) -> S + Sync + Send,
        f: impl Fn(&mut S, Handle<T>, &mut T) + Sync + Send,
    ) {
        let Some(id) = self.class_of::<T>() else { return };
        let entry = &mut self.classes[id.index()];
        entry.note_all();
        let entry = SharedEntry(&*entry);
        let live = entry.get().live();
        par_chunks(live, entry.get().dormancy().words(0, live.len()), |chunk, first, words, dormant| {
            let mut state = begin(chunk);
            // SAFETY: `entry` is class `T`'s; `words` are its bitmap's words from `first`,
            // and the chunks do not overlap, so each `&mut T` goes to one task; `&mut self`
            // keeps every other access out.
            unsafe {
                visit_handles::<T>(entry.get().geometry(), first, words, dormant, &mut |h, t| f(&mut state, h, t))
            };
        });
    }
}

/// How many chunks a parallel tick cuts a class into per rayon thread, at most: enough that
/// a thread whose chunks held cheaper objects finds more to steal.
const CHUNKS_PER_THREAD: usize = 8;

/// The most chunks a parallel tick makes, whatever the thread count: the cuts live on the
/// stack (a warm frame allocates nothing), 2 KiB of them.
const MAX_CHUNKS: usize = 256;

/// The fewest awake objects in a chunk of a parallel tick (but the last): a class of a few
/// light objects is not spread over tasks that cost more than ticking it.
const MIN_CHUNK: usize = 32;

/// Cuts the live bitmap `live` less `dormant` (its dormancy words; missing ones are all
/// awake) into chunks of consecutive words that hold about equal numbers of awake objects,
/// and calls `f(chunk, first, words, dormant)` for each across rayon's threads: the chunk's
/// number (in memory order, from 0), its first word's index, its live words, and the
/// dormancy words beside them. Every chunk holds an awake object; the chunks do not
/// overlap. One chunk runs on this thread, without rayon.
///
/// The cut costs one pass of popcounts over the bitmap (a word per 64 cells).
pub(super) fn par_chunks(live: &[u64], dormant: &[u64], f: impl Fn(usize, usize, &[u64], &[u64]) + Sync + Send) {
    let most = rayon::current_num_threads().saturating_mul(CHUNKS_PER_THREAD).min(MAX_CHUNKS);
    let cuts = Cuts::of(live, dormant, most);
    let cuts = cuts.as_slice();
    let visit = |chunk: usize| {
        let (start, end) = (cuts[chunk], cuts[chunk + 1]);
        f(chunk, start, &live[start..end], dormant.get(start..end.min(dormant.len())).unwrap_or(&[]));
    };
    match cuts.len() {
        0 => {}
        2 => visit(0),
        n => (0..n - 1).into_par_iter().for_each(visit),
    }
}

/// Where [`par_chunks`] cuts a bitmap: the first word of each chunk, then the bitmap's
/// length.
struct Cuts {
    at: [usize; MAX_CHUNKS + 1],
    len: usize,
}

impl Cuts {
    /// The cuts of `live` less `dormant` into at most `most` (≤ [`MAX_CHUNKS`]) chunks,
    /// each of at least [`MIN_CHUNK`] awake objects but the last; none if no object is
    /// awake.
    ///
    /// A cut follows the word where the running count passes the next share and precedes
    /// more awake objects, so no chunk is empty (a word that passes two shares makes one
    /// cut: a chunk fewer).
    fn of(live: &[u64], dormant: &[u64], most: usize) -> Self {
        let mut cuts = Cuts { at: [0; MAX_CHUNKS + 1], len: 0 };
        let awake = |w: usize| (live[w] & !dormant.get(w).copied().unwrap_or(0)).count_ones() as usize;
        let total: usize = (0..live.len()).map(awake).sum();
        let chunks = most.min(MAX_CHUNKS).min(total.div_ceil(MIN_CHUNK));
        if chunks == 0 {
            return cuts;
        }
        cuts.push(0);
        let mut seen = 0;
        for w in 0..live.len() {
            let n = awake(w);
            seen += n;
            if seen == total {
                break;
            }
            if n > 0 && seen * chunks >= cuts.len * total {
                cuts.push(w + 1);
            }
        }
        cuts.push(live.len());
        cuts
    }

    fn push(&mut self, word: usize) {
        self.at[self.len] = word;
        self.len += 1;
    }

    fn as_slice(&self) -> &[usize] {
        &self.at[..self.len]
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

#[cfg(test)]
mod tests {
    use super::{Cuts, MIN_CHUNK};

    fn cuts(live: &[u64], dormant: &[u64], most: usize) -> Vec<usize> {
        Cuts::of(live, dormant, most).as_slice().to_vec()
    }

    /// The awake objects of each chunk that `cuts` makes.
    fn shares(live: &[u64], dormant: &[u64], cuts: &[usize]) -> Vec<usize> {
        let awake = |w: usize| (live[w] & !dormant.get(w).copied().unwrap_or(0)).count_ones() as usize;
        cuts.windows(2).map(|c| (c[0]..c[1]).map(awake).sum()).collect()
    }

    #[test]
    fn one_slab_of_objects_is_cut_into_even_chunks() {
        // 1,000 objects in 16 words (one default slab), 16 chunks at most.
        let mut live = vec![u64::MAX; 16];
        live[15] = (1 << 40) - 1;
        let at = cuts(&live, &[], 16);
        assert_eq!((at[0], *at.last().unwrap()), (0, 16));
        assert!(at.windows(2).all(|c| c[0] < c[1]), "increasing: {at:?}");
        let shares = shares(&live, &[], &at);
        assert_eq!(shares.iter().sum::<usize>(), 1000);
        assert!(shares.len() >= 8, "{shares:?}");
        assert!(shares.iter().all(|&n| n > 0 && n <= 2 * 1000 / shares.len() + 64), "{shares:?}");
    }

    #[test]
    fn chunks_follow_the_objects_not_the_words() {
        // 100 empty words, 4 full ones, 1,000 empty, then one object every other word.
        let mut live = vec![0u64; 100];
        live.extend([u64::MAX; 4]);
        live.extend(vec![0; 1000]);
        live.extend((0..512).map(|w| u64::from(w % 2 == 0)));
        let at = cuts(&live, &[], 8);
        let shares = shares(&live, &[], &at);
        assert_eq!(shares.iter().sum::<usize>(), 256 + 256);
        assert!(shares.iter().all(|&n| n > 0), "no empty chunk: {shares:?}");
        // The 256 objects of the four full words get about half the chunks, not one.
        assert!(at.iter().filter(|&&c| (100..=104).contains(&c)).count() >= 3, "{at:?}");
    }

    #[test]
    fn dormant_objects_are_not_counted_and_few_objects_make_one_chunk() {
        let live = vec![u64::MAX; 4];
        // All but one word dormant: its 64 awake objects make one chunk (chunks are whole
        // words), which the dormant words around it join.
        let dormant = [u64::MAX, 0, u64::MAX, u64::MAX];
        assert_eq!(cuts(&live, &dormant, 16), [0, 4]);
        // Awake, the four words make four chunks.
        assert_eq!(cuts(&live, &[], 16), [0, 1, 2, 3, 4]);
        assert!(cuts(&live, &[u64::MAX; 4], 16).is_empty(), "nothing awake, no chunk");
        assert_eq!(cuts(&[0b111], &[], 16), [0, 1], "fewer than {MIN_CHUNK}: one chunk");
        assert!(cuts(&[], &[], 16).is_empty());
    }
}
