//! What the bench files share: the 64-byte projectile, the churn workload, the peers'
//! churn benches. Each bench file uses part of it.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use respawn::{Object, Trace};
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

/// The peers' churn benches — `slab`, `slotmap` and `box` — in `g`, over the sequence `seq`.
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
