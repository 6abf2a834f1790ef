//! respawn's arena beside its peers (slab, slotmap, `Box`, a free-list `Vec`, hecs, and
//! `floor`, respawn's per-object invariants alone: `common::Floor`) on the workloads of the
//! targets in `benches/README.md`: `churn`, `burst` and `tick`, one 64-byte projectile per
//! object.
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

criterion_group!(benches, churn, burst, tick);
criterion_main!(benches);
