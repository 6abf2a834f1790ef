//! respawn's arena beside its peers (slab, slotmap, `Box`, a free-list `Vec`, hecs, and
//! `floor`, respawn's per-object invariants alone: `common::Floor`) on the workloads of the
//! targets in `benches/README.md`: `churn`, `burst` and `tick`, one 64-byte projectile per
//! object; `heavy` (1,000 objects of ~3 µs each, serial and parallel), `small_classes` (26
//! classes of 20 ticked in turn) and `new` (a container made and dropped).
//!
//! Run with `cargo bench --bench arena`; see `benches/LOG.md` for the reference figures.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use respawn::{Arena, Handle};
use slab::Slab;
use slotmap::{DefaultKey, SlotMap};

const DT: f32 = 1.0 / 60.0;

/// The per-object work of a `tick`.
#[inline(always)]
fn step(p: &mut Projectile) {
    p.pos[0] += p.vel[0] * DT;
    p.pos[1] += p.vel[1] * DT;
    p.pos[2] += p.vel[2] * DT;
    p.life -= DT;
}

mod common;
use common::{churn_loop, churn_sequence, consume, Floor, Projectile, XorShift, CHURN_LIVE};

// ---------------------------------------------------------------------------------------
// churn: 10 000 live, each iteration removes a random live object and inserts a new one.
// ---------------------------------------------------------------------------------------

/// The hand-written baseline: slots in a `Vec`, vacant ones on a stack. No generations.
#[derive(Default)]
struct FreeListVec {
    slots: Vec<Option<Projectile>>,
    free: Vec<u32>,
}

impl FreeListVec {
    #[inline(always)]
    fn insert(&mut self, p: Projectile) -> u32 {
        match self.free.pop() {
            Some(k) => {
                self.slots[k as usize] = Some(p);
                k
            }
            None => {
                self.slots.push(Some(p));
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline(always)]
    fn remove(&mut self, k: u32) -> Projectile {
        let p = self.slots[k as usize].take().expect("live slot");
        self.free.push(k);
        p
    }
}

fn churn(c: &mut Criterion) {
    let seq = churn_sequence();
    let seq = &seq[..];
    let mut g = c.benchmark_group("churn");
    g.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));

    {
        let mut state: Option<(FreeListVec, Vec<u32>, usize)> = None;
        g.bench_function("free_list_vec", |b| {
            let (list, live, pos) = state.get_or_insert_with(|| {
                let mut list = FreeListVec::default();
                let live = (0..CHURN_LIVE as u32).map(|i| list.insert(Projectile::new(i))).collect();
                (list, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&list.remove(live[i]));
                    live[i] = list.insert(p);
                })
            });
        });
    }

    common::bench_churn_peers(&mut g, seq);

    {
        let mut state: Option<(hecs::World, Vec<hecs::Entity>, usize)> = None;
        g.bench_function("hecs", |b| {
            let (world, live, pos) = state.get_or_insert_with(|| {
                let mut world = hecs::World::new();
                let live = (0..CHURN_LIVE as u32).map(|i| world.spawn((Projectile::new(i),))).collect();
                (world, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    world.despawn(live[i]).expect("live entity");
                    live[i] = world.spawn((p,));
                })
            });
        });
    }

    {
        let mut state: Option<(Arena, Vec<Handle<Projectile>>, usize)> = None;
        g.bench_function("respawn_arena", |b| {
            let (arena, live, pos) = state.get_or_insert_with(|| {
                let mut arena = Arena::new();
                let live = (0..CHURN_LIVE as u32).map(|i| arena.insert(Projectile::new(i))).collect();
                (arena, live, 0)
            });
            b.iter_custom(|iters| {
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&arena.remove(live[i]).expect("live handle"));
                    live[i] = arena.insert(p);
                })
            });
        });
    }

    {
        let mut state: Option<(Arena, Vec<Handle<Projectile>>, usize)> = None;
        g.bench_function("respawn_store", |b| {
            let (arena, live, pos) = state.get_or_insert_with(|| {
                let mut arena = Arena::new();
                let mut store = arena.store_mut::<Projectile>().expect("register Projectile");
                let live = (0..CHURN_LIVE as u32).map(|i| store.insert(Projectile::new(i))).collect();
                (arena, live, 0)
            });
            b.iter_custom(|iters| {
                let mut store = arena.store_mut::<Projectile>().expect("registered");
                churn_loop(seq, pos, iters, |i, p| {
                    consume(&store.remove(live[i]).expect("live handle"));
                    live[i] = store.insert(p);
                })
            });
        });
    }

    g.finish();
}

// ---------------------------------------------------------------------------------------
// burst: insert 100 000, then remove them all; containers stay alive (steady state).
// ---------------------------------------------------------------------------------------

const BURST: usize = 100_000;

fn burst(c: &mut Criterion) {
    let mut g = c.benchmark_group("burst");
    g.throughput(Throughput::Elements(BURST as u64));
    g.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    {
        let mut map = SlotMap::<DefaultKey, Projectile>::new();
        let mut keys = Vec::with_capacity(BURST);
        g.bench_function("slotmap", |b| {
            b.iter(|| {
                keys.extend((0..BURST as u32).map(|i| map.insert(Projectile::new(i))));
                for k in keys.drain(..) {
                    consume(&map.remove(k).expect("live key"));
                }
            });
        });
    }

    {
        let mut slab = Slab::<Projectile>::new();
        let mut keys = Vec::with_capacity(BURST);
        g.bench_function("slab", |b| {
            b.iter(|| {
                keys.extend((0..BURST as u32).map(|i| slab.insert(Projectile::new(i))));
                for k in keys.drain(..) {
                    consume(&slab.remove(k));
                }
            });
        });
    }

    {
        let mut floor = Floor::<Projectile>::new();
        let mut keys = Vec::with_capacity(BURST);
        g.bench_function("floor", |b| {
            b.iter(|| {
                keys.extend((0..BURST as u32).map(|i| floor.insert(Projectile::new(i))));
                for k in keys.drain(..) {
                    consume(&floor.remove(k).expect("live key"));
                }
            });
        });
    }

    {
        let mut boxes: Vec<Box<Projectile>> = Vec::with_capacity(BURST);
        g.bench_function("box", |b| {
            b.iter(|| {
                boxes.extend((0..BURST as u32).map(|i| Box::new(Projectile::new(i))));
                for p in boxes.drain(..) {
                    consume(&p);
                }
            });
        });
    }

    {
        let mut arena = Arena::new();
        let mut keys = Vec::with_capacity(BURST);
        g.bench_function("respawn_arena", |b| {
            b.iter(|| {
                keys.extend((0..BURST as u32).map(|i| arena.insert(Projectile::new(i))));
                for h in keys.drain(..) {
                    consume(&arena.remove(h).expect("live handle"));
                }
            });
        });
    }

    {
        let mut arena = Arena::new();
        let mut keys = Vec::with_capacity(BURST);
        g.bench_function("respawn_store", |b| {
            b.iter(|| {
                let mut store = arena.store_mut::<Projectile>().expect("register Projectile");
                keys.extend((0..BURST as u32).map(|i| store.insert(Projectile::new(i))));
                for h in keys.drain(..) {
                    consume(&store.remove(h).expect("live handle"));
                }
            });
        });
    }

    g.finish();
}

// ---------------------------------------------------------------------------------------
// tick: 1 000 000 live after 3 000 000 churn steps (setup, untimed), then one update pass.
// ---------------------------------------------------------------------------------------

const TICK_LIVE: usize = 1_000_000;
const TICK_CHURN: usize = 3_000_000;

/// Fills a keyed container with `TICK_LIVE` objects, then runs `TICK_CHURN` steps that each
/// remove a random live object and insert a new one in its place.
fn churned<C, K: Copy>(
    mut c: C,
    mut insert: impl FnMut(&mut C, Projectile) -> K,
    mut remove: impl FnMut(&mut C, K),
) -> C {
    let mut live: Vec<K> = (0..TICK_LIVE as u32).map(|i| insert(&mut c, Projectile::new(i))).collect();
    let mut rng = XorShift::new();
    for n in 0..TICK_CHURN {
        let i = rng.below(TICK_LIVE);
        let p = Projectile::new((TICK_LIVE + n) as u32);
        remove(&mut c, live[i]);
        live[i] = insert(&mut c, p);
    }
    c
}

/// A `Vec` churned the way a game keeps a compact list: remove a random element by
/// `swap_remove`, push the new one. With boxes, memory order and list order drift apart.
fn churned_vec<T>(mut make: impl FnMut(Projectile) -> T) -> Vec<T> {
    let mut v: Vec<T> = (0..TICK_LIVE as u32).map(|i| make(Projectile::new(i))).collect();
    let mut rng = XorShift::new();
    for n in 0..TICK_CHURN {
        let i = rng.below(TICK_LIVE);
        drop(v.swap_remove(i));
        v.push(make(Projectile::new((TICK_LIVE + n) as u32)));
    }
    v
}

fn tick(c: &mut Criterion) {
    let mut g = c.benchmark_group("tick");
    g.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    {
        let mut state: Option<Vec<Projectile>> = None;
        g.bench_function("dense_vec", |b| {
            let v = state.get_or_insert_with(|| churned_vec(|p| p));
            b.iter(|| v.iter_mut().for_each(step));
        });
    }

    {
        let mut state: Option<Vec<Box<Projectile>>> = None;
        g.bench_function("vec_box", |b| {
            let v = state.get_or_insert_with(|| churned_vec(Box::new));
            b.iter(|| v.iter_mut().for_each(|p| step(p)));
        });
    }

    {
        let mut state: Option<SlotMap<DefaultKey, Projectile>> = None;
        g.bench_function("slotmap", |b| {
            let map = state.get_or_insert_with(|| {
                churned(
                    SlotMap::with_capacity(TICK_LIVE),
                    |m, p| m.insert(p),
                    |m, k| consume(&m.remove(k).expect("live key")),
                )
            });
            b.iter(|| map.values_mut().for_each(step));
        });
    }

    {
        let mut state: Option<hecs::World> = None;
        g.bench_function("hecs", |b| {
            let world = state.get_or_insert_with(|| {
                churned(hecs::World::new(), |w, p| w.spawn((p,)), |w, e| w.despawn(e).expect("live entity"))
            });
            b.iter(|| world.query_mut::<&mut Projectile>().into_iter().for_each(step));
        });
    }

    let churned_arena =
        || churned(Arena::new(), |a, p| a.insert(p), |a, h: Handle<Projectile>| consume(&a.remove(h).expect("live")));

    {
        let mut state: Option<hecs::World> = None;
        g.bench_function("hecs_par_batched", |b| {
            let world = state.get_or_insert_with(|| {
                churned(hecs::World::new(), |w, p| w.spawn((p,)), |w, e| w.despawn(e).expect("live entity"))
            });
            b.iter(|| par_query(world, step));
        });
    }

    {
        let mut state: Option<Arena> = None;
        g.bench_function("respawn_tick", |b| {
            let arena = state.get_or_insert_with(churned_arena);
            b.iter(|| arena.tick::<Projectile>(step));
        });
    }

    {
        let mut state: Option<Arena> = None;
        g.bench_function("respawn_par_tick", |b| {
            let arena = state.get_or_insert_with(churned_arena);
            b.iter(|| arena.par_tick::<Projectile>(step));
        });
    }

    g.finish();
}

/// hecs's parallel query, as its docs show it: batches of 64 entities bridged to rayon.
fn par_query<C: hecs::Component>(world: &mut hecs::World, f: impl Fn(&mut C) + Sync + Send) {
    use rayon::iter::{ParallelBridge, ParallelIterator};
    world.query_mut::<&mut C>().into_iter_batched(64).par_bridge().for_each(|batch| batch.for_each(&f));
}

// ---------------------------------------------------------------------------------------
// heavy: 1 000 objects that each do about 3 µs of math per tick, as the public ECS
// benchmark suite's `heavy_compute` does (100 4×4 matrix inversions). One slab holds them
// all, so a split by slab runs them on one thread.
// ---------------------------------------------------------------------------------------

const HEAVY_LIVE: usize = 1_000;

/// An object with a 4×4 transform to invert, and a position it moves.
struct Heavy {
    transform: glam::Mat4,
    pos: glam::Vec3,
}

impl Heavy {
    fn new(i: usize) -> Self {
        let scale = glam::Vec3::splat(1.0 + (i % 7) as f32);
        let transform = glam::Mat4::from_scale_rotation_translation(scale, glam::Quat::IDENTITY, glam::Vec3::X);
        Heavy { transform, pos: glam::Vec3::new(i as f32, 0.0, 0.0) }
    }
}

/// The per-object work: invert the transform 100 times (glam's `Mat4::inverse`), then move
/// by it.
fn heavy_step(h: &mut Heavy) {
    for _ in 0..100 {
        h.transform = std::hint::black_box(h.transform).inverse();
    }
    h.pos = h.transform.transform_vector3(h.pos);
}

fn heavy(c: &mut Criterion) {
    let mut g = c.benchmark_group("heavy");
    g.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    let mut hecs = hecs::World::new();
    for i in 0..HEAVY_LIVE {
        hecs.spawn((Heavy::new(i),));
    }
    g.bench_function("hecs", |b| b.iter(|| hecs.query_mut::<&mut Heavy>().into_iter().for_each(heavy_step)));
    g.bench_function("hecs_par_batched", |b| b.iter(|| par_query(&mut hecs, heavy_step)));

    let mut arena = Arena::new();
    for i in 0..HEAVY_LIVE {
        arena.insert(Heavy::new(i));
    }
    g.bench_function("respawn_tick", |b| b.iter(|| arena.tick::<Heavy>(heavy_step)));
    g.bench_function("respawn_par_tick", |b| b.iter(|| arena.par_tick::<Heavy>(heavy_step)));

    g.finish();
}

// ---------------------------------------------------------------------------------------
// small_classes: 26 classes of 20 objects each, ticked one class after another, as a game
// with many kinds of small things does every frame. What it measures is the set-up of each
// class's tick: its lookup and the start of its walk.
// ---------------------------------------------------------------------------------------

const SMALL_CLASSES: usize = 26;
const SMALL_LIVE: usize = 20;

/// A game system's tick over a hecs world.
type SystemFn = Box<dyn FnMut(&mut hecs::World)>;

/// A class of its own for each `K`, 64 bytes like a projectile.
struct Kind<const K: usize>(Projectile);

/// Expands `$then!(K)` for each of the 26 kinds.
macro_rules! each_kind {
    ($then:ident) => {
        each_kind!(@ $then 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25)
    };
    (@ $then:ident $($k:literal)*) => {
        $( $then!($k); )*
    };
}

/// Ticks each kind's class of `arena` in turn, each `tick::<T>` finding its class by type.
#[inline]
fn tick_kinds(arena: &mut Arena) {
    macro_rules! tick {
        ($k:literal) => {
            arena.tick::<Kind<$k>>(|k| step(&mut k.0))
        };
    }
    each_kind!(tick);
}

fn small_classes(c: &mut Criterion) {
    let mut g = c.benchmark_group("small_classes");
    g.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements((SMALL_CLASSES * SMALL_LIVE) as u64));

    let mut vecs: Vec<Vec<Projectile>> = (0..SMALL_CLASSES)
        .map(|k| (0..SMALL_LIVE).map(|i| Projectile::new((k * SMALL_LIVE + i) as u32)).collect())
        .collect();
    g.bench_function("dense_vecs", |b| b.iter(|| vecs.iter_mut().for_each(|v| v.iter_mut().for_each(step))));

    let mut world = hecs::World::new();
    let mut arena = Arena::new();
    // The same classes in slabs of 64 cells (`SlabConfig::SMALL`, for classes with few
    // objects): a tick's walk is one bitmap word, not a default slab's 16.
    let mut small = Arena::new();
    // hecs's kept queries, one a class, each behind a call as a game's systems would be.
    let mut prepared: Vec<SystemFn> = Vec::new();
    macro_rules! fill {
        ($k:literal) => {
            small.register_with::<Kind<$k>>(respawn::SlabConfig::SMALL).expect("a new class");
            for i in 0..SMALL_LIVE {
                world.spawn((Kind::<$k>(Projectile::new(i as u32)),));
                arena.insert(Kind::<$k>(Projectile::new(i as u32)));
                small.insert(Kind::<$k>(Projectile::new(i as u32)));
            }
            let mut query = hecs::PreparedQuery::<&mut Kind<$k>>::new();
            prepared.push(Box::new(move |w| query.query_mut(w).for_each(|k| step(&mut k.0))));
        };
    }
    each_kind!(fill);

    g.bench_function("hecs", |b| {
        b.iter(|| {
            macro_rules! tick {
                ($k:literal) => {
                    world.query_mut::<&mut Kind<$k>>().into_iter().for_each(|k| step(&mut k.0))
                };
            }
            each_kind!(tick);
        })
    });
    g.bench_function("hecs_prepared", |b| b.iter(|| prepared.iter_mut().for_each(|tick| tick(&mut world))));
    g.bench_function("respawn_tick", |b| b.iter(|| tick_kinds(&mut arena)));
    g.bench_function("respawn_tick_small_slabs", |b| b.iter(|| tick_kinds(&mut small)));

    g.finish();
}

// ---------------------------------------------------------------------------------------
// new: making a container and dropping it, as tools and tests do many times. An arena or
// world with no class starts no thread; the first class starts the slab preparation thread.
// ---------------------------------------------------------------------------------------

fn new(c: &mut Criterion) {
    let mut g = c.benchmark_group("new");
    g.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.bench_function("hecs", |b| b.iter(|| drop(std::hint::black_box(hecs::World::new()))));
    g.bench_function("respawn_arena", |b| b.iter(|| drop(std::hint::black_box(Arena::new()))));
    g.bench_function("respawn_world", |b| b.iter(|| drop(std::hint::black_box(respawn::World::new()))));
    g.bench_function("hecs_one_object", |b| {
        b.iter(|| {
            let mut world = hecs::World::new();
            world.spawn((Projectile::new(0),));
            world
        })
    });
    g.bench_function("respawn_arena_one_object", |b| {
        b.iter(|| {
            let mut arena = Arena::new();
            arena.insert(Projectile::new(0));
            arena
        })
    });
    g.finish();
}

criterion_group!(benches, churn, burst, tick, heavy, small_classes, new);
criterion_main!(benches);
