//! What the bench files share: the 64-byte projectile, the churn workload, the peers'
//! churn benches. Each bench file uses part of it.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use respawn::{Object, Poolable, Trace};
use slab::Slab;
use slotmap::{DefaultKey, SlotMap};

/// A tiny xorshift64: reproducible indices without the rand crate, the same sequence for
/// every peer.
pub struct XorShift(u64);

impl XorShift {
    pub fn new() -> Self {
        Self(0x9E37_79B9_7F4A_7C15)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // The modulo bias is below 1e-14 for the sizes used here.
        (self.0 % n as u64) as usize
    }
}

/// The object every peer stores: 64 bytes, one cache line.
#[repr(C)]
#[derive(Clone, Copy, Debug, Trace, Object)]
pub struct Projectile {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
    pub life: f32,
    pub id: u32,
    _pad: [u8; 32],
}

const _: () = assert!(std::mem::size_of::<Projectile>() == 64);

impl Projectile {
    pub fn new(id: u32) -> Self {
        let v = (id % 97) as f32 * 0.01;
        Self { pos: [0.0; 3], vel: [1.0 + v, 0.5 - v, v], life: 10.0, id, _pad: [0; 32] }
    }
}

/// Looks at a removed object, so that no peer's removal can be optimised away.
#[inline(always)]
pub fn consume(p: &Projectile) {
    black_box(p.id);
}

pub const CHURN_LIVE: usize = 10_000;
/// Length of the pre-generated index sequence (a power of two, walked cyclically).
pub const CHURN_SEQ: usize = 1 << 16;

/// The indices (into the live-key list) of the objects removed, in order.
pub fn churn_sequence() -> Vec<u32> {
    let mut rng = XorShift::new();
    (0..CHURN_SEQ).map(|_| rng.below(CHURN_LIVE) as u32).collect()
}

/// Times `iters` remove+insert pairs; `pair(i, p)` removes the object under live index `i`
/// and puts `p` in its place. `pos` carries the position in the sequence across calls.
#[inline(always)]
pub fn churn_loop(seq: &[u32], pos: &mut usize, iters: u64, mut pair: impl FnMut(usize, Projectile)) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let k = *pos;
        *pos = k.wrapping_add(1);
        pair(seq[k & (CHURN_SEQ - 1)] as usize, Projectile::new(k as u32));
    }
    start.elapsed()
}

/// The peers' churn benches — `slab`, `slotmap`, `floor` ([`Floor`]: respawn's invariants
/// alone) and `box` — in `g`, over the sequence `seq`.
pub fn bench_churn_peers(g: &mut BenchmarkGroup<'_, WallTime>, seq: &[u32]) {
    {
        let mut state: Option<(Slab<Projectile>, Vec<usize>, usize)> = None;
        g.bench_function("slab", |b| {
            let (slab, live, pos) = state.get_or_insert_with(|| {
                let mut slab = Slab::with_capacity(CHURN_LIVE);
                let live = (0..CHURN_LIVE as u32).map(|i| slab.insert(Projectile::new(i))).collect();
                (slab, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&slab.remove(live[i]));
                    live[i] = slab.insert(p);
                })
            });
        });
    }

    {
        let mut state: Option<(SlotMap<DefaultKey, Projectile>, Vec<DefaultKey>, usize)> = None;
        g.bench_function("slotmap", |b| {
            let (map, live, pos) = state.get_or_insert_with(|| {
                let mut map = SlotMap::with_capacity(CHURN_LIVE);
                let live = (0..CHURN_LIVE as u32).map(|i| map.insert(Projectile::new(i))).collect();
                (map, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&map.remove(live[i]).expect("live key"));
                    live[i] = map.insert(p);
                })
            });
        });
    }

    {
        let mut state: Option<(Floor<Projectile>, Vec<FloorKey>, usize)> = None;
        g.bench_function("floor", |b| {
            let (floor, live, pos) = state.get_or_insert_with(|| {
                let mut floor = Floor::new();
                let live = (0..CHURN_LIVE as u32).map(|i| floor.insert(Projectile::new(i))).collect();
                (floor, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&floor.remove(live[i]).expect("live key"));
                    live[i] = floor.insert(p);
                })
            });
        });
    }

    {
        // `Option` so the old box is freed before the new one is allocated.
        let mut state: Option<(Vec<Option<Box<Projectile>>>, usize)> = None;
        g.bench_function("box", |b| {
            let (boxes, pos) = state.get_or_insert_with(|| {
                ((0..CHURN_LIVE as u32).map(|i| Some(Box::new(Projectile::new(i)))).collect(), 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    let old = boxes[i].take().expect("live box");
                    consume(&old);
                    drop(old);
                    boxes[i] = Some(Box::new(p));
                })
            });
        });
    }
}

/// The floor: the least a container keeping respawn's per-object invariants does for an
/// insert and a remove, with none of its features — a hand-written peer that says how
/// close to slab the design can come, so that the gap between it and `ClassStore` is what
/// respawn's features cost and the gap between it and slab is what the design costs.
///
/// What it keeps of respawn: an 8-byte handle of index and generation that never resolves
/// to a later object (a generation per slot, retired at the ceiling); a 16-byte hot slot
/// (generation, flags, class, one cold word, a root count) apart from the object, whose
/// cell is found by arithmetic, so the two loads are independent; a refusal of vacant,
/// hidden and rooted objects; a live bitmap kept for `tick`'s one pass; vacant slots
/// reused last in, first out. What it leaves out: classes (one type, no range or
/// directory), atomics (the collector's threads read respawn's slots), returned cells, end
/// listeners, dormancy, the write barrier, sub-object links and permanent objects.
pub struct Floor<T> {
    slots: Vec<FloorSlot>,
    cells: Vec<std::mem::MaybeUninit<T>>,
    live: Vec<u64>,
    free: Vec<u32>,
}

/// [`Floor`]'s slot: respawn's `Slot` without atomics.
#[repr(C)]
struct FloorSlot {
    generation: u32,
    flags: u16,
    class: u16,
    outer: u32,
    roots: u32,
}

const _: () = assert!(std::mem::size_of::<FloorSlot>() == 16);

/// [`Floor`]'s handle: index and generation, 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloorKey {
    index: u32,
    generation: std::num::NonZeroU32,
}

impl<T> Floor<T> {
    const VACANT: u16 = 1;
    const HIDDEN: u16 = 2;
    const ROOT_SET: u16 = 4;
    /// Cells added at a time, as a slab would.
    const GROW: usize = 1024;

    pub fn new() -> Self {
        Self { slots: Vec::new(), cells: Vec::new(), live: Vec::new(), free: Vec::new() }
    }

    /// Places `value` and returns its key.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> FloorKey {
        let index = match self.free.pop() {
            Some(index) => index,
            None => self.grow(),
        };
        let n = index as usize;
        // SAFETY: every index on `free` is below the length of all three vectors.
        unsafe {
            self.cells.get_unchecked_mut(n).write(value);
            let slot = self.slots.get_unchecked_mut(n);
            slot.flags = 0;
            *self.live.get_unchecked_mut(n >> 6) |= 1 << (n & 63);
            FloorKey { index, generation: std::num::NonZeroU32::new_unchecked(slot.generation) }
        }
    }

    /// Moves the object `key` names out, if it resolves and may be removed.
    #[inline(always)]
    pub fn remove(&mut self, key: FloorKey) -> Option<T> {
        let n = key.index as usize;
        let slot = self.slots.get_mut(n)?;
        let refused = Self::VACANT | Self::HIDDEN | Self::ROOT_SET;
        if slot.flags & refused != 0 || slot.generation != key.generation.get() || slot.roots != 0 {
            return None;
        }
        // SAFETY: a slot that is not vacant holds an initialised object in its cell.
        let value = unsafe { self.cells.get_unchecked(n).assume_init_read() };
        slot.flags = Self::VACANT;
        // SAFETY: `live` covers every slot.
        unsafe { *self.live.get_unchecked_mut(n >> 6) &= !(1 << (n & 63)) };
        if slot.generation == u32::MAX {
            // Retired: no later handle may carry a wrapped generation.
            return Some(value);
        }
        slot.generation += 1;
        self.free.push(key.index);
        Some(value)
    }

    /// The object `key` names, if it resolves.
    #[inline(always)]
    pub fn get(&self, key: FloorKey) -> Option<&T> {
        // SAFETY: a slot that is neither vacant nor hidden holds an initialised object.
        unsafe { resolve(&self.slots, &self.cells, key, Self::VACANT | Self::HIDDEN) }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> u32 {
        let first = self.slots.len();
        let next = first + Self::GROW;
        self.cells.resize_with(next, std::mem::MaybeUninit::uninit);
        self.slots.resize_with(next, || FloorSlot { generation: 1, flags: Self::VACANT, class: 0, outer: 0, roots: 0 });
        self.live.resize(next / 64, 0);
        self.free.extend((first as u32 + 1..next as u32).rev());
        first as u32
    }
}

impl<T> Default for Floor<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Floor<T> {
    fn drop(&mut self) {
        for (n, slot) in self.slots.iter().enumerate() {
            if slot.flags & Self::VACANT == 0 {
                // SAFETY: a slot that is not vacant holds an initialised object.
                unsafe { self.cells[n].assume_init_drop() };
            }
        }
    }
}

/// The object `key` names, if its slot's generation matches and none of `refused` is set
/// in its flags: the two floors' `get`.
///
/// # Safety
/// A slot with none of `refused` set holds an initialised object in its cell.
#[inline(always)]
unsafe fn resolve<'a, T>(
    slots: &[FloorSlot],
    cells: &'a [std::mem::MaybeUninit<T>],
    key: FloorKey,
    refused: u16,
) -> Option<&'a T> {
    let n = key.index as usize;
    let slot = slots.get(n)?;
    if slot.flags & refused != 0 || slot.generation != key.generation.get() {
        return None;
    }
    // SAFETY: the caller's contract; `slots` and `cells` have one entry per index.
    Some(unsafe { cells.get_unchecked(n).assume_init_ref() })
}

/// The reuse floor: the least a `Reuse` pool keeping respawn's per-object invariants does
/// for a destroy and a spawn — [`Floor`]'s container with the pool's semantics, hand-written
/// — so that the gap between it and the `World`'s `Reuse` pair is what respawn's layering
/// costs, and the gap between it and [`Floor`] is what `Reuse` costs.
///
/// What it keeps: [`Floor`]'s slot, handle, refusals (vacant, hidden, rooted), generation
/// ceiling and live bitmap; the object stays in its cell when it is destroyed (reset by the
/// class's hooks, not dropped) and the next spawn hands it out again, the most recently
/// kept first (its cell is the warmest); a kept slot is vacant and in the pool, so no
/// handle resolves to it; the hooks of [`Poolable`], called statically: `on_release` and
/// `reset` on destroy, the spawn's `init` and then `on_spawn` on spawn, `create` when
/// nothing is kept (a miss, out of line); the pool's counts: spawns, misses, objects in
/// use and their peak. What it leaves out: [`Floor`]'s omissions (classes, atomics,
/// listeners, dormancy, the write barrier, sub-objects, permanent objects), and of the
/// pool's: workers, magazines and the depot (every object is built on a miss), the `max`
/// with its overflow objects (a pool that only grows by misses needs no test of it on
/// destroy), the other policies, and returning cells to the arena.
pub struct ReuseFloor<T> {
    slots: Vec<FloorSlot>,
    cells: Vec<std::mem::MaybeUninit<T>>,
    live: Vec<u64>,
    /// The indices of the objects kept for the next spawns, the most recent last.
    kept: Vec<u32>,
    /// Cells below `built` have held an object; the rest are uninitialised.
    built: u32,
    spawns: u64,
    misses: u64,
    in_use: usize,
    peak: usize,
}

impl<T> ReuseFloor<T> {
    const VACANT: u16 = 1;
    const HIDDEN: u16 = 2;
    const ROOT_SET: u16 = 4;
    /// With `VACANT`: the slot's object is kept in its cell for the next spawn.
    const IN_POOL: u16 = 8;
    /// Cells added at a time.
    const GROW: usize = 1024;
}

impl<T: Poolable> ReuseFloor<T> {
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            cells: Vec::new(),
            live: Vec::new(),
            kept: Vec::new(),
            built: 0,
            spawns: 0,
            misses: 0,
            in_use: 0,
            peak: 0,
        }
    }

    /// Hands out the most recently kept object (built by `T::create` if none is kept):
    /// `init` runs on it, then `on_spawn`.
    #[inline(always)]
    pub fn spawn(&mut self, init: impl FnOnce(&mut T)) -> FloorKey {
        let index = match self.kept.pop() {
            Some(index) => index,
            None => self.miss(),
        };
        let n = index as usize;
        // SAFETY: every index on `kept` (and the one `miss` returns) is below the length of
        // all three vectors.
        let (slot, word) = unsafe { (self.slots.get_unchecked_mut(n), self.live.get_unchecked_mut(n >> 6)) };
        slot.flags = 0;
        *word |= 1 << (n & 63);
        // SAFETY: generations start at 1 and only grow (a slot retires at the ceiling).
        let key = FloorKey { index, generation: unsafe { std::num::NonZeroU32::new_unchecked(slot.generation) } };
        // SAFETY: a kept cell holds an initialised object (`destroy` leaves it there, `miss`
        // builds one), live again now; `&mut self` makes this the one reference.
        let object = unsafe { self.cells.get_unchecked_mut(n).assume_init_mut() };
        init(object);
        object.on_spawn();
        self.spawns += 1;
        self.in_use += 1;
        self.peak = self.peak.max(self.in_use);
        key
    }

    /// Takes back the object `key` names, if it resolves and may be destroyed: its hooks
    /// run, its handles stop resolving, and it waits in its cell for the next spawn.
    #[inline(always)]
    pub fn destroy(&mut self, key: FloorKey) -> bool {
        let n = key.index as usize;
        let Some(slot) = self.slots.get_mut(n) else { return false };
        let refused = Self::VACANT | Self::HIDDEN | Self::ROOT_SET;
        if slot.flags & refused != 0 || slot.generation != key.generation.get() || slot.roots != 0 {
            return false;
        }
        // SAFETY: a slot that is not vacant holds an initialised object in its cell, and
        // `&mut self` makes this the one reference.
        let object = unsafe { self.cells.get_unchecked_mut(n).assume_init_mut() };
        object.on_release();
        object.reset();
        // SAFETY: `live` covers every slot.
        unsafe { *self.live.get_unchecked_mut(n >> 6) &= !(1 << (n & 63)) };
        self.in_use -= 1;
        if slot.generation == u32::MAX {
            // Retired: no later handle may carry a wrapped generation, so the object goes.
            slot.flags = Self::VACANT;
            // SAFETY: the object is initialised (above) and no slot names it any more:
            // this is its one drop.
            unsafe { self.cells.get_unchecked_mut(n).assume_init_drop() };
            return true;
        }
        slot.flags = Self::VACANT | Self::IN_POOL;
        slot.generation += 1;
        self.kept.push(key.index);
        true
    }

    /// The object `key` names, if it resolves.
    #[inline(always)]
    pub fn get(&self, key: FloorKey) -> Option<&T> {
        // SAFETY: a slot that is neither vacant nor hidden holds an initialised object.
        unsafe { resolve(&self.slots, &self.cells, key, Self::VACANT | Self::HIDDEN) }
    }

    /// Spawns so far.
    pub fn spawns(&self) -> u64 {
        self.spawns
    }

    /// Spawns that found nothing kept and built their object.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Destroys so far: every destroyed object was spawned.
    pub fn released(&self) -> u64 {
        self.spawns - self.in_use as u64
    }

    /// Objects spawned and not destroyed.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// The most objects in use at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Objects kept for the next spawns.
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    /// A spawn with nothing kept: builds an object by `T::create` in the next unused cell
    /// (growing the vectors when there is none) and returns its index, its slot vacant and
    /// in the pool, as a kept one's.
    #[cold]
    #[inline(never)]
    fn miss(&mut self) -> u32 {
        // Built before a cell is taken: a panicking `create` takes nothing.
        let value = T::create();
        let n = self.built as usize;
        if n == self.slots.len() {
            let next = n + Self::GROW;
            self.cells.resize_with(next, std::mem::MaybeUninit::uninit);
            self.slots.resize_with(next, || FloorSlot {
                generation: 1,
                flags: Self::VACANT,
                class: 0,
                outer: 0,
                roots: 0,
            });
            self.live.resize(next / 64, 0);
        }
        self.cells[n].write(value);
        self.slots[n].flags = Self::VACANT | Self::IN_POOL;
        self.built += 1;
        self.misses += 1;
        n as u32
    }
}

impl<T: Poolable> Default for ReuseFloor<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for ReuseFloor<T> {
    fn drop(&mut self) {
        // Live and kept objects alike: a slot that is vacant and not in the pool (unused or
        // retired) holds none.
        for (n, slot) in self.slots.iter().enumerate() {
            if slot.flags & Self::VACANT == 0 || slot.flags & Self::IN_POOL != 0 {
                // SAFETY: a live slot's cell and a kept slot's cell hold an initialised object.
                unsafe { self.cells[n].assume_init_drop() };
            }
        }
    }
}
