//! Pools that give memory back (issue 18): the game thread's cost of a trim of 100 000
//! ready objects, beside the cost of the release that made them ready, in the same run.
//!
//! - `pool_trim/clear_100k`: `World::clear_pool` on a `Reuse` pool holding 100 000 ready
//!   64-byte objects (a spike spawned and destroyed): each object dropped, its cell handed
//!   back, and the ~98 slabs of 1024 cells left empty decommitted (`madvise(DONTNEED)`).
//! - `pool_trim/release_100k` (baseline): destroying those 100 000 live objects (`Reuse`:
//!   reset and back among the ready ones).
//! - `pool_trim/drop_box_100k` (baseline): dropping a `Vec` of 100 000 boxed objects.
//!
//! Each iteration spawns the spike again (untimed; it recommits the slabs). Run with
//! `cargo bench --bench trim`; see `benches/LOG.md` for the figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use respawn::{Handle, Object, PoolConfig, Poolable, Trace, World};

/// 64 bytes, one cache line, with a destructor that does nothing but exists (the trim
/// calls it on each object).
#[derive(Trace, Object)]
struct Spark {
    heat: [f32; 15],
    #[trace(skip)]
    id: u32,
}

impl Poolable for Spark {
    fn create() -> Self {
        Spark { heat: [0.0; 15], id: 0 }
    }
}

impl Drop for Spark {
    fn drop(&mut self) {
        black_box(self.id);
    }
}

const SPIKE: usize = 100_000;

/// `Reuse` without workers: released objects stay ready until trimmed.
const CONFIG: PoolConfig = PoolConfig { max: 1 << 20, ..PoolConfig::ON_DEMAND };

fn spike(world: &mut World) -> Vec<Handle<Spark>> {
    (0..SPIKE).map(|i| world.spawn_with(|s: &mut Spark| s.id = i as u32)).collect()
}

fn pool_trim(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_trim");
    g.sample_size(20);
    let mut world = World::builder().pool::<Spark>(CONFIG).build().expect("a valid pool");

    g.bench_function("clear_100k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for h in spike(&mut world) {
                    world.destroy(h).expect("live");
                }
                let start = Instant::now();
                let trimmed = world.clear_pool::<Spark>().expect("pooled");
                total += start.elapsed();
                assert_eq!(trimmed, SPIKE);
            }
            total
        });
    });

    g.bench_function("release_100k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let live = spike(&mut world);
                let start = Instant::now();
                for h in live {
                    world.destroy(h).expect("live");
                }
                total += start.elapsed();
                world.clear_pool::<Spark>().expect("pooled");
            }
            total
        });
    });

    g.bench_function("drop_box_100k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let boxes: Vec<Box<Spark>> =
                    (0..SPIKE).map(|i| Box::new(Spark { heat: [0.0; 15], id: i as u32 })).collect();
                let start = Instant::now();
                drop(black_box(boxes));
                total += start.elapsed();
            }
            total
        });
    });
    g.finish();

    let stats = world.pool_stats::<Spark>().expect("pooled");
    println!(
        "pool_trim: after the last clear, {} bytes committed, {} trimmed in all",
        stats.committed_bytes, stats.trimmed
    );
}

criterion_group!(benches, pool_trim);
criterion_main!(benches);
