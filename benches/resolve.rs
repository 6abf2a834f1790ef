//! What one handle resolve costs in memory traffic, beside the peers: a plain binary
//! (`harness = false`, no criterion) for `perf stat` and cachegrind, where criterion's own
//! work would drown the figures.
//!
//! ```text
//! resolve <peer> <mode> <live> <ops>
//!   peer: vec | slab | slotmap | box | floor (respawn's per-object invariants alone, hand-written:
//!         `common::Floor`) | reusefloor (the same with a `Reuse` pool's semantics,
//!         hand-written: `common::ReuseFloor`) | store | arena | world (a `Reuse` pool's
//!         spawn/destroy) | view (the same through `World::pool_mut`) | pop (a `Purge` pool
//!         without workers, prefilled: each spawn pops a ready object; cachegrind runs only)
//!         | miss (the same pool not prefilled: each spawn misses and builds inline)
//!   mode: chase  — `ops` lookups, each one's key chosen by the object the one before read:
//!                  a chain, so the time per op is the latency of one resolve (a container
//!                  whose resolve takes two *dependent* misses, `box`, pays two latencies;
//!                  one that issues its two loads independently, respawn, pays about one)
//!         churn  — `ops` remove + insert pairs at random live keys (the `churn` bench's
//!                  workload, at any size)
//!         burst  — whole rounds (at least `ops` pairs): every live object removed in
//!                  insertion order, then as many inserted (the `burst` bench's workload)
//! ```
//!
//! ```text
//! resolve alternate <churn|burst> <live> <slice> <rounds> <peer> <peer>...
//! ```
//!
//! runs the peers in turn, `slice` pairs (`burst`: whole rounds) each, `rounds` times, and
//! prints each one's median time per pair and its median ratio to the first peer within
//! the same round: the figure to trust on a machine whose speed drifts from second to
//! second (as this VM's does: one criterion run can put slab at 11 ns and the next at 18).
//!
//! Otherwise it prints the nanoseconds per op of the measured loop. `scripts/misses.sh` runs it under
//! cachegrind twice (`ops` and 0, so set-up cancels out) and prints instructions and cache
//! misses per op; `benches/LOG.md` has the figures. Under `cargo bench` (which passes
//! `--bench`) it runs every peer once, small, as a smoke test.

use std::hint::black_box;
use std::mem;
use std::time::Instant;

use respawn::{Arena, Handle};
use respawn::{GcSettings, Policy, PoolConfig, Poolable, World};
use slab::Slab;
use slotmap::{DefaultKey, SlotMap};

mod common;
use common::{Floor, FloorKey, Projectile, ReuseFloor, XorShift};

/// The random key positions, a power of two long.
const SEQ: usize = 1 << 20;

/// One peer's container and its live keys.
trait Peer {
    /// What names an object: a handle, a key, an index.
    type Key: Copy;
    fn fill(live: usize) -> Self;
    /// The key of the object under live position `i`.
    fn key(&self, i: usize) -> Self::Key;
    /// The id of the object `k` names (a resolve and one load from the object).
    ///
    /// Every peer's `read`, `take` and `put` is `#[inline(always)]`, so each is measured
    /// inlined into the loop, as criterion's closures inline them (left to the compiler,
    /// it inlined slab's and not respawn's, charging one side a call per operation).
    fn read(&mut self, k: Self::Key) -> u32;
    /// Removes the object under live position `i` (reading it).
    fn take(&mut self, i: usize);
    /// Inserts `p` under live position `i`, whose object was taken.
    fn put(&mut self, i: usize, p: Projectile);
}

struct DenseVec(Vec<Projectile>);
impl Peer for DenseVec {
    type Key = usize;
    fn fill(live: usize) -> Self {
        Self((0..live as u32).map(Projectile::new).collect())
    }
    fn key(&self, i: usize) -> usize {
        i
    }
    #[inline(always)]
    fn read(&mut self, i: usize) -> u32 {
        self.0[i].id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0[i].id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.0[i] = p;
    }
}

struct Boxes(Vec<Option<Box<Projectile>>>);
impl Peer for Boxes {
    type Key = usize;
    fn fill(live: usize) -> Self {
        Self((0..live as u32).map(|i| Some(Box::new(Projectile::new(i)))).collect())
    }
    fn key(&self, i: usize) -> usize {
        i
    }
    #[inline(always)]
    fn read(&mut self, i: usize) -> u32 {
        self.0[i].as_ref().expect("live box").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        let old = self.0[i].take().expect("live box");
        black_box(old.id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.0[i] = Some(Box::new(p));
    }
}

struct SlabPeer(Slab<Projectile>, Vec<usize>);
impl Peer for SlabPeer {
    type Key = usize;
    fn fill(live: usize) -> Self {
        let mut slab = Slab::with_capacity(live);
        let keys = (0..live as u32).map(|i| slab.insert(Projectile::new(i))).collect();
        Self(slab, keys)
    }
    fn key(&self, i: usize) -> usize {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, k: usize) -> u32 {
        self.0[k].id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0.remove(self.1[i]).id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.insert(p);
    }
}

struct SlotMapPeer(SlotMap<DefaultKey, Projectile>, Vec<DefaultKey>);
impl Peer for SlotMapPeer {
    type Key = DefaultKey;
    fn fill(live: usize) -> Self {
        let mut map = SlotMap::with_capacity(live);
        let keys = (0..live as u32).map(|i| map.insert(Projectile::new(i))).collect();
        Self(map, keys)
    }
    fn key(&self, i: usize) -> DefaultKey {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, k: DefaultKey) -> u32 {
        self.0[k].id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0.remove(self.1[i]).expect("live key").id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.insert(p);
    }
}

/// [`Floor`]: respawn's per-object invariants and nothing else, the bound below `store`.
struct FloorPeer(Floor<Projectile>, Vec<FloorKey>);
impl Peer for FloorPeer {
    type Key = FloorKey;
    fn fill(live: usize) -> Self {
        let mut floor = Floor::new();
        let keys = (0..live as u32).map(|i| floor.insert(Projectile::new(i))).collect();
        Self(floor, keys)
    }
    fn key(&self, i: usize) -> FloorKey {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, k: FloorKey) -> u32 {
        self.0.get(k).expect("live key").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0.remove(self.1[i]).expect("live key").id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.insert(p);
    }
}

/// [`ReuseFloor`]: a `Reuse` pool's per-object work hand-written over [`Floor`]'s container,
/// the bound below `world` and `view`. Filled as [`WorldPeer`] is: the live objects, and a
/// magazine-load of destroyed ones waiting for the first spawns.
struct ReuseFloorPeer(ReuseFloor<Projectile>, Vec<FloorKey>);
impl Peer for ReuseFloorPeer {
    type Key = FloorKey;
    fn fill(live: usize) -> Self {
        let mut pool = ReuseFloor::new();
        let spawn = |pool: &mut ReuseFloor<Projectile>, i: u32| pool.spawn(move |q| *q = Projectile::new(i));
        let keys = (0..live as u32).map(|i| spawn(&mut pool, i)).collect();
        for k in (0..2048).map(|i| spawn(&mut pool, i)).collect::<Vec<_>>() {
            assert!(pool.destroy(k), "live key");
        }
        Self(pool, keys)
    }
    fn key(&self, i: usize) -> FloorKey {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, k: FloorKey) -> u32 {
        self.0.get(k).expect("live key").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        // `on_release` reads the object, as the other peers' `take` does.
        assert!(self.0.destroy(self.1[i]), "live key");
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.spawn(move |q| *q = p);
    }
}

/// `Arena::get` / `remove` / `insert`: the class found from the handle on every call.
struct ArenaPeer(Arena, Vec<Handle<Projectile>>);
impl Peer for ArenaPeer {
    type Key = Handle<Projectile>;
    fn fill(live: usize) -> Self {
        let mut arena = Arena::new();
        let keys = (0..live as u32).map(|i| arena.insert(Projectile::new(i))).collect();
        Self(arena, keys)
    }
    fn key(&self, i: usize) -> Handle<Projectile> {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, h: Handle<Projectile>) -> u32 {
        self.0.get(h).expect("live handle").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0.remove(self.1[i]).expect("live handle").id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.insert(p);
    }
}

/// The same through `ClassStore` (`Arena::store_mut`, taken once per run), the typed view a
/// game holds.
struct StorePeer<'a>(respawn::arena::ClassStore<'a, Projectile>, Vec<Handle<Projectile>>);
impl Peer for StorePeer<'_> {
    type Key = Handle<Projectile>;
    fn fill(_: usize) -> Self {
        unreachable!("run_store fills the arena")
    }
    fn key(&self, i: usize) -> Handle<Projectile> {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, h: Handle<Projectile>) -> u32 {
        self.0.get(h).expect("live handle").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        black_box(self.0.remove(self.1[i]).expect("live handle").id);
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.insert(p);
    }
}

impl Poolable for Projectile {
    fn create() -> Self {
        Projectile::new(0)
    }
    /// Reads the released object, as the other peers' `remove` does.
    fn on_release(&mut self) {
        black_box(self.id);
    }
}

/// `World::spawn_with` / `destroy` on a `Reuse` pool (no workers: a released object waits
/// in the game thread's magazines for the next spawn), a frame ended every 1 000 pairs: the
/// pooled path a game takes, as `benches/pool.rs`'s `pool_churn/respawn_reuse`.
///
/// With [`KIND_POP`], the `pop` peer: a `Purge` pool without workers, prefilled with
/// [`WorldPeer::READY`] objects on the game thread. Each destroy ends its object at once (the
/// collector's destroy pipeline, cells back to the class) and each spawn pops a ready object
/// from the magazines: the spawn of a class that keeps nothing. Cachegrind only
/// (`resolve pop churn 10000 N`): runs of up to `READY - live` pairs.
///
/// With [`KIND_MISS`], the `miss` peer: the same pool, nothing prefilled, so every spawn misses
/// and builds its object inline: a `Purge` pool whose workers cannot keep up, beside
/// `arena`'s unpooled insert.
struct WorldPeer<const KIND: u8 = KIND_REUSE>(World, Vec<Handle<Projectile>>, usize);

/// [`WorldPeer`]'s kinds: a `Reuse` pool, a prefilled `Purge` pool without workers, and the
/// same not prefilled.
const KIND_REUSE: u8 = 0;
const KIND_POP: u8 = 1;
const KIND_MISS: u8 = 2;

impl<const KIND: u8> WorldPeer<KIND> {
    /// `pop`'s objects built before the run: enough for 100 000 pairs over 10 000 live.
    const READY: usize = 120_000;
    const REUSE: PoolConfig = PoolConfig {
        capacity: 16_384,
        max: 1 << 16,
        low_watermark: 0,
        grow_by: 0,
        policy: Policy::Reuse,
        precreate: false,
        workers: 0,
        idle_trim: None,
    };
}
impl<const KIND: u8> Peer for WorldPeer<KIND> {
    type Key = Handle<Projectile>;
    fn fill(live: usize) -> Self {
        let gc = GcSettings { time_between_collections: None, purge_budget: None, ..GcSettings::SINGLE_THREADED };
        let config = match KIND {
            KIND_REUSE => PoolConfig { capacity: live + 2048, max: (live + 2048).max(1 << 16), ..Self::REUSE },
            _ => PoolConfig { policy: Policy::Purge, capacity: 0, max: 1 << 20, ..Self::REUSE },
        };
        let mut world = World::builder().pool::<Projectile>(config).gc(gc).build().expect("a valid pool");
        if KIND == KIND_POP {
            world.prefill::<Projectile>(Self::READY).expect("memory for the ready objects");
        }
        let spawn = |world: &mut World, i: u32| world.spawn_with(move |q: &mut Projectile| *q = Projectile::new(i));
        let keys = (0..live as u32).map(|i| spawn(&mut world, i)).collect();
        // A magazine-load of released objects waiting for the first spawns.
        for h in (0..2048).map(|i| spawn(&mut world, i)).collect::<Vec<_>>() {
            world.destroy(h).expect("live projectile");
        }
        Self(world, keys, 0)
    }
    fn key(&self, i: usize) -> Handle<Projectile> {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, h: Handle<Projectile>) -> u32 {
        self.0.get(h).expect("live handle").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        self.0.destroy(self.1[i]).expect("live projectile");
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.spawn_with(move |q: &mut Projectile| *q = p);
        self.2 += 1;
        if self.2 % 1000 == 0 {
            self.0.end_frame();
        }
    }
}

/// The same pairs through [`World::pool_mut`]'s typed view, taken once per run: the pool
/// found once instead of on every call, as a loop spawning a volley would.
struct ViewPeer<'w>(respawn::PoolMut<'w, Projectile>, Vec<Handle<Projectile>>, usize);
impl Peer for ViewPeer<'_> {
    type Key = Handle<Projectile>;
    fn fill(_: usize) -> Self {
        unreachable!("run_view fills the world")
    }
    fn key(&self, i: usize) -> Handle<Projectile> {
        self.1[i]
    }
    #[inline(always)]
    fn read(&mut self, h: Handle<Projectile>) -> u32 {
        self.0.get(h).expect("live handle").id
    }
    #[inline(always)]
    fn take(&mut self, i: usize) {
        self.0.destroy(self.1[i]).expect("live projectile");
    }
    #[inline(always)]
    fn put(&mut self, i: usize, p: Projectile) {
        self.1[i] = self.0.spawn_with(move |q: &mut Projectile| *q = p);
        self.2 += 1;
    }
}

fn sequence(live: usize) -> Vec<u32> {
    let mut rng = XorShift::new();
    (0..SEQ).map(|_| rng.below(live) as u32).collect()
}

/// Runs `ops` of `mode` on a filled `P` and returns nanoseconds per op.
fn run<P: Peer>(mode: &str, live: usize, ops: usize) -> f64 {
    measure(P::fill(live), mode, live, ops)
}

/// `run` for [`ViewPeer`], whose view borrows a world that outlives it. (No `end_frame`
/// every 1 000 pairs: the view borrows the world; a `Reuse` pool without workers has no
/// upkeep a frame would do on this path.)
fn run_view(mode: &str, live: usize, ops: usize) -> f64 {
    let WorldPeer(mut world, keys, _) = WorldPeer::<KIND_REUSE>::fill(live);
    let view = world.pool_mut::<Projectile>().expect("a pooled class");
    measure(ViewPeer(view, keys, 0), mode, live, ops)
}

/// `run` for [`StorePeer`], whose store borrows an arena that outlives it.
fn run_store(mode: &str, live: usize, ops: usize) -> f64 {
    let ArenaPeer(mut arena, keys) = ArenaPeer::fill(live);
    let store = arena.store_mut::<Projectile>().expect("a registered class");
    measure(StorePeer(store, keys), mode, live, ops)
}

fn measure<P: Peer>(mut peer: P, mode: &str, live: usize, ops: usize) -> f64 {
    let seq = sequence(live);
    let start = Instant::now();
    match mode {
        "chase" => {
            // The keys in visiting order, read front to back (so prefetched: the only misses
            // are the resolve's). Each lookup's position depends on the id the one before
            // read (ids are below 2^31, so `id >> 31` is always 0, but the compiler cannot
            // know): one resolve at a time, its latency exposed.
            let keys: Vec<P::Key> = seq.iter().map(|&i| peer.key(i as usize)).collect();
            let start = Instant::now();
            let mut x = 0usize;
            for k in 0..ops {
                let id = peer.read(keys[(k ^ x) & (SEQ - 1)]);
                x = (id >> 31) as usize;
            }
            black_box(x);
            return per_op(start, ops);
        }
        "churn" => {
            for k in 0..ops {
                let i = seq[k & (SEQ - 1)] as usize;
                peer.take(i);
                peer.put(i, Projectile::new(k as u32));
            }
        }
        "burst" => {
            // Whole rounds: every object out in insertion order, then as many in.
            for round in 0..ops.div_ceil(live) {
                for i in 0..live {
                    peer.take(i);
                }
                for i in 0..live {
                    peer.put(i, Projectile::new((round * live + i) as u32));
                }
            }
            black_box(&mut peer);
            return per_op(start, ops.div_ceil(live) * live);
        }
        other => panic!("unknown mode {other:?}: chase, churn or burst"),
    }
    black_box(&mut peer);
    per_op(start, ops)
}

fn per_op(start: Instant, ops: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / ops.max(1) as f64
}

fn run_peer(peer: &str, mode: &str, live: usize, ops: usize) -> f64 {
    match peer {
        "vec" => run::<DenseVec>(mode, live, ops),
        "box" => run::<Boxes>(mode, live, ops),
        "slab" => run::<SlabPeer>(mode, live, ops),
        "slotmap" => run::<SlotMapPeer>(mode, live, ops),
        "floor" => run::<FloorPeer>(mode, live, ops),
        "reusefloor" => run::<ReuseFloorPeer>(mode, live, ops),
        "arena" => run::<ArenaPeer>(mode, live, ops),
        "store" => run_store(mode, live, ops),
        "world" => run::<WorldPeer>(mode, live, ops),
        "view" => run_view(mode, live, ops),
        "pop" => run::<WorldPeer<KIND_POP>>(mode, live, ops),
        "miss" => run::<WorldPeer<KIND_MISS>>(mode, live, ops),
        other => {
            panic!(
                "unknown peer {other:?}: vec, box, slab, slotmap, floor, reusefloor, arena, store, world, view, pop or miss"
            )
        }
    }
}

const PEERS: [&str; 10] = ["vec", "box", "slab", "slotmap", "floor", "reusefloor", "arena", "store", "world", "view"];

/// One peer's workload, resumable: each call runs `ops` more units where the last call
/// stopped (a remove + insert pair for `churn`; a whole round for `burst`: every object
/// out in insertion order, then as many in) and returns its nanoseconds per pair.
type Churner = Box<dyn FnMut(usize) -> f64>;

/// `ops` units of `mode` ([`measure`]'s loops) over `peer`, from position `k` of `seq` on;
/// nanoseconds per pair.
#[inline(always)]
fn slice<P: Peer>(peer: &mut P, burst: bool, live: usize, seq: &[u32], k: &mut usize, ops: usize) -> f64 {
    let start = Instant::now();
    let pairs = if burst {
        for _ in 0..ops {
            for i in 0..live {
                peer.take(i);
            }
            for i in 0..live {
                peer.put(i, Projectile::new((*k + i) as u32));
            }
            *k += live;
        }
        ops * live
    } else {
        for _ in 0..ops {
            let i = seq[*k & (SEQ - 1)] as usize;
            peer.take(i);
            peer.put(i, Projectile::new(*k as u32));
            *k += 1;
        }
        ops
    };
    black_box(peer);
    start.elapsed().as_nanos() as f64 / pairs.max(1) as f64
}

/// A peer that owns its container, as a [`Churner`].
fn churner<P: Peer + 'static>(mut peer: P, burst: bool, live: usize) -> Churner {
    let (seq, mut k) = (sequence(live), 0);
    Box::new(move |ops| slice(&mut peer, burst, live, &seq, &mut k, ops))
}

/// The churner of `peer` at `live` objects. `store` and `view` take their typed view
/// afresh on each call (a few instructions a slice of thousands of pairs).
fn churner_for(peer: &str, burst: bool, live: usize) -> Churner {
    match peer {
        "vec" => churner(DenseVec::fill(live), burst, live),
        "box" => churner(Boxes::fill(live), burst, live),
        "slab" => churner(SlabPeer::fill(live), burst, live),
        "slotmap" => churner(SlotMapPeer::fill(live), burst, live),
        "floor" => churner(FloorPeer::fill(live), burst, live),
        "reusefloor" => churner(ReuseFloorPeer::fill(live), burst, live),
        "arena" => churner(ArenaPeer::fill(live), burst, live),
        "world" => churner(WorldPeer::<KIND_REUSE>::fill(live), burst, live),
        "store" => {
            let ArenaPeer(mut arena, mut keys) = ArenaPeer::fill(live);
            let (seq, mut k) = (sequence(live), 0);
            Box::new(move |ops| {
                let mut peer = StorePeer(arena.store_mut::<Projectile>().expect("registered"), mem::take(&mut keys));
                let ns = slice(&mut peer, burst, live, &seq, &mut k, ops);
                keys = peer.1;
                ns
            })
        }
        "view" => {
            let WorldPeer(mut world, mut keys, _) = WorldPeer::<KIND_REUSE>::fill(live);
            let (seq, mut k) = (sequence(live), 0);
            Box::new(move |ops| {
                let view = world.pool_mut::<Projectile>().expect("a pooled class");
                let mut peer = ViewPeer(view, mem::take(&mut keys), 0);
                let ns = slice(&mut peer, burst, live, &seq, &mut k, ops);
                keys = peer.1;
                ns
            })
        }
        other => {
            panic!("unknown peer {other:?}: vec, box, slab, slotmap, floor, reusefloor, arena, store, world or view")
        }
    }
}

/// `alternate`: runs `peers` in turn, `slice` units each, for `rounds` rounds, and prints
/// each one's median nanoseconds per pair and its median ratio to the first peer's slice
/// of the same round. On a machine whose speed drifts (a shared VM), slices a few
/// milliseconds apart see the same machine, so the ratios hold where single runs do not.
fn alternate(mode: &str, peers: &[String], live: usize, slice: usize, rounds: usize) {
    let burst = match mode {
        "churn" => false,
        "burst" => true,
        other => panic!("unknown mode {other:?}: churn or burst"),
    };
    let mut churners: Vec<Churner> = peers.iter().map(|p| churner_for(p, burst, live)).collect();
    // A first slice each, untimed: caches and branch predictors warm.
    for run in &mut churners {
        run(slice);
    }
    let mut ns: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); peers.len()];
    for _ in 0..rounds {
        for (run, ns) in churners.iter_mut().zip(&mut ns) {
            ns.push(run(slice));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let unit = if burst { "rounds" } else { "pairs" };
    println!("{mode}, {live} live, {rounds} rounds of {slice} {unit} each, peers in turn");
    println!("{:8} {:>10} {:>12}", "peer", "ns/pair", format!("× {}", peers[0]));
    for (i, peer) in peers.iter().enumerate() {
        let mut ratios: Vec<f64> = (0..rounds).map(|r| ns[i][r] / ns[0][r]).collect();
        let mut own = ns[i].clone();
        println!("{peer:8} {:>10.2} {:>12.3}", median(&mut own), median(&mut ratios));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if args.first().map(String::as_str) == Some("alternate") {
        let usage = "usage: resolve alternate <churn|burst> <live> <slice> <rounds> <peer> <peer>...";
        let [_, mode, live, slice, rounds, peers @ ..] = &args[..] else {
            eprintln!("{usage}");
            std::process::exit(2);
        };
        if peers.is_empty() {
            eprintln!("{usage}");
            std::process::exit(2);
        }
        let number = |s: &str| s.parse::<usize>().expect("a number");
        alternate(mode, peers, number(live), number(slice).max(1), number(rounds).max(1));
        return;
    }
    if args.is_empty() {
        // `cargo bench` (or no arguments): every peer, both modes, small, as a smoke test.
        for mode in ["chase", "churn", "burst"] {
            for peer in PEERS {
                let ns = run_peer(peer, mode, 10_000, 100_000);
                println!("resolve {peer:8} {mode:6} live 10000: {ns:6.2} ns/op");
            }
        }
        return;
    }
    let [peer, mode, live, ops] = &args[..] else {
        eprintln!(
            "usage: resolve <vec|box|slab|slotmap|floor|reusefloor|arena|store|world|view> <chase|churn|burst> <live> <ops>"
        );
        std::process::exit(2);
    };
    let live: usize = live.parse().expect("live: a number");
    let ops: usize = ops.parse().expect("ops: a number");
    let ns = run_peer(peer, mode, live, ops);
    println!("{peer} {mode} live {live} ops {ops}: {ns:.2} ns/op");
}
