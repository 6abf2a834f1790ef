//! Tick control: ticking 1M objects of which 0 %, 50 % (at random) or 90 % are dormant.
//!
//! - `respawn_dormant`: `Arena::tick` over the class's live bitmap masked by its dormancy
//!   bitmap (`Arena::set_dormant`): a dormant object costs a bit, its cell is never read;
//! - `respawn_field_test`: the same arena with nothing dormant, and the tick testing a
//!   `dormant` field in each object (reading every object's cache line);
//! - `vec_field_test`: the same field test over a dense `Vec` of all 1M objects;
//! - `dense_vec_awake`: a dense `Vec` holding only the awake objects: the floor;
//! - `respawn_dormant_large`: `respawn_dormant` with `SlabConfig::LARGE` (4096-cell slabs on
//!   transparent huge pages), where a gappy walk takes fewer TLB misses.
//!
//! Every object is the same 64-byte `Actor` (its `dormant` field sits in what would be
//! padding), so all four read the same bytes per object they visit.
//!
//! Run with `cargo bench --bench dormant -- --warm-up-time 1 --measurement-time 3 --noplot`;
//! see `benches/LOG.md` for the figures.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use respawn::{Arena, ArenaConfig, SlabConfig};

mod common;
use common::XorShift;

const LIVE: usize = 1_000_000;
const DT: f32 = 1.0 / 60.0;

/// A 64-byte object with a `dormant` field, for the field-test baselines.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Actor {
    pos: [f32; 3],
    vel: [f32; 3],
    life: f32,
    id: u32,
    dormant: bool,
    _pad: [u8; 31],
}

const _: () = assert!(std::mem::size_of::<Actor>() == 64);

impl Actor {
    fn new(id: u32, dormant: bool) -> Self {
        let v = (id % 97) as f32 * 0.01;
        Actor { pos: [0.0; 3], vel: [v, -v, 0.5 * v], life: 10.0, id, dormant, _pad: [0; 31] }
    }
}

/// The per-object work of a tick.
#[inline(always)]
fn step(a: &mut Actor) {
    a.pos[0] += a.vel[0] * DT;
    a.pos[1] += a.vel[1] * DT;
    a.pos[2] += a.vel[2] * DT;
    a.life -= DT;
}

/// Which of the `LIVE` objects are dormant: none, half at random, or 90 % at random (the
/// same seeded draw for every contender).
fn dormancy(percent: usize) -> Vec<bool> {
    let mut rng = XorShift::new();
    (0..LIVE).map(|_| rng.below(100) < percent).collect()
}

fn dormant_tick(c: &mut Criterion) {
    let mut g = c.benchmark_group("dormant_tick");
    g.sample_size(20).throughput(Throughput::Elements(LIVE as u64));

    for percent in [0usize, 50, 90] {
        let asleep = dormancy(percent);

        {
            let mut awake: Vec<Actor> =
                (0..LIVE as u32).filter(|&i| !asleep[i as usize]).map(|i| Actor::new(i, false)).collect();
            g.bench_function(BenchmarkId::new("dense_vec_awake", percent), |b| {
                b.iter(|| awake.iter_mut().for_each(step));
            });
        }

        {
            let mut all: Vec<Actor> = (0..LIVE as u32).map(|i| Actor::new(i, asleep[i as usize])).collect();
            g.bench_function(BenchmarkId::new("vec_field_test", percent), |b| {
                b.iter(|| {
                    all.iter_mut().for_each(|a| {
                        if !a.dormant {
                            step(a)
                        }
                    })
                });
            });
        }

        {
            let mut arena = Arena::new();
            for i in 0..LIVE as u32 {
                arena.insert(Actor::new(i, asleep[i as usize]));
            }
            g.bench_function(BenchmarkId::new("respawn_field_test", percent), |b| {
                b.iter(|| {
                    arena.tick::<Actor>(|a| {
                        if !a.dormant {
                            step(a)
                        }
                    })
                });
            });
        }

        for (name, slab) in [("respawn_dormant", SlabConfig::DEFAULT), ("respawn_dormant_large", SlabConfig::LARGE)] {
            let mut arena = Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT });
            let handles: Vec<_> = (0..LIVE as u32).map(|i| arena.insert(Actor::new(i, false))).collect();
            for (h, &asleep) in handles.iter().zip(&asleep) {
                if asleep {
                    arena.set_dormant(h.raw(), true).expect("live");
                }
            }
            assert_eq!(arena.stats::<Actor>().expect("registered").dormant, asleep.iter().filter(|&&a| a).count());
            g.bench_function(BenchmarkId::new(name, percent), |b| {
                b.iter(|| arena.tick::<Actor>(step));
            });
        }
    }
    g.finish();
}

criterion_group!(benches, dormant_tick);
criterion_main!(benches);
