//! Commands from inside a tick against the two-pass way, on the same work in the same run:
//! a world of 1 000 000 pooled 64-byte projectiles (`Reuse`), each of which moves and ages
//! in one tick a frame; a tenth of them run out of life each frame and are retired.
//!
//! - `tick_with`: one pass; a projectile whose life ran out records `destroy(h)`, and the
//!   world applies the 100 000 destroys when the tick ends.
//! - `par_tick_with`: the same split across rayon's threads, each recording into a queue of
//!   its own, applied in the serial order.
//! - `two_pass`: the way before commands: `iter_mut` moves each projectile and collects the
//!   spent handles into a `Vec` in the frame arena, then a loop destroys them.
//! - `tick_then_scan`: the storm's way before commands: `tick` moves them, a second pass
//!   (`iter`) collects the spent handles into the frame arena, then a loop destroys them.
//!
//! Each iteration times the tick and the retirement; then, untimed, the world spawns the
//! 100 000 projectiles back (life 10, so each frame retires the same tenth) and ends the
//! frame, so every iteration starts from the same population.
//!
//! Run with `cargo bench --bench commands`; see `benches/LOG.md` for the figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use respawn::bumpalo::collections::Vec as FrameVec;
use respawn::{Policy, PoolConfig, Poolable, World};

mod common;
use common::Projectile;

impl Poolable for Projectile {
    fn create() -> Self {
        Projectile::new(0)
    }
}

const LIVE: usize = 1_000_000;
/// Frames a projectile lives: a tenth of a steady population runs out each frame.
const LIFE: u32 = 10;
const DT: f32 = 1.0 / 60.0;

/// A projectile's frame; whether it is spent.
#[inline(always)]
fn step(p: &mut Projectile) -> bool {
    for k in 0..3 {
        p.pos[k] += p.vel[k] * DT;
    }
    p.life -= 1.0;
    p.life <= 0.0
}

/// A world of `LIVE` projectiles whose lives are spread evenly over `1..=LIFE` frames.
fn world() -> World {
    let config = PoolConfig { max: 2 * LIVE, policy: Policy::Reuse, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool::<Projectile>(config).build().expect("valid configuration");
    world
        .spawn_batch(LIVE, |i, p: &mut Projectile| {
            *p = Projectile::new(i as u32);
            p.life = (i as u32 % LIFE + 1) as f32;
        })
        .for_each(drop);
    world
}

/// Untimed: spawns the retired projectiles back, ends the frame.
fn refill(world: &mut World) {
    let missing = LIVE - world.len::<Projectile>();
    world.spawn_batch(missing, |i, p: &mut Projectile| *p = Projectile::new(i as u32)).for_each(drop);
    world.end_frame();
}

/// Times `frame` on `iters` frames of the world, refilling it between them.
fn frames(world: &mut World, iters: u64, mut frame: impl FnMut(&mut World) -> usize) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        let retired = frame(world);
        total += start.elapsed();
        assert!(retired.abs_diff(LIVE / LIFE as usize) <= 1, "a tenth retires each frame: {retired}");
        refill(world);
    }
    total
}

fn retire(c: &mut Criterion) {
    let mut g = c.benchmark_group("retire_tenth");
    g.sample_size(20);

    g.bench_function("tick_with", |b| {
        let mut world = world();
        b.iter_custom(|iters| {
            frames(&mut world, iters, |world| {
                let applied = world.tick_with::<Projectile>(|h, p, commands| {
                    if step(p) {
                        commands.destroy(h);
                    }
                });
                assert!(applied.is_ok());
                applied.applied
            })
        });
    });

    g.bench_function("par_tick_with", |b| {
        let mut world = world();
        b.iter_custom(|iters| {
            frames(&mut world, iters, |world| {
                let applied = world.par_tick_with::<Projectile>(|h, p, commands| {
                    if step(p) {
                        commands.destroy(h);
                    }
                });
                assert!(applied.is_ok());
                applied.applied
            })
        });
    });

    g.bench_function("two_pass", |b| {
        let mut world = world();
        b.iter_custom(|iters| {
            frames(&mut world, iters, |world| {
                world.with_frame_arena(|world, frame| {
                    let mut spent = FrameVec::new_in(frame);
                    for (h, p) in world.iter_mut::<Projectile>() {
                        if step(p) {
                            spent.push(h);
                        }
                    }
                    for &h in &spent {
                        world.destroy(h).expect("a spent projectile is live");
                    }
                    spent.len()
                })
            })
        });
    });

    g.bench_function("tick_then_scan", |b| {
        let mut world = world();
        b.iter_custom(|iters| {
            frames(&mut world, iters, |world| {
                world.tick::<Projectile>(|p| {
                    black_box(step(p));
                });
                world.with_frame_arena(|world, frame| {
                    let mut spent = FrameVec::new_in(frame);
                    spent.extend(world.iter::<Projectile>().filter(|(_, p)| p.life <= 0.0).map(|(h, _)| h));
                    for &h in &spent {
                        world.destroy(h).expect("a spent projectile is live");
                    }
                    spent.len()
                })
            })
        });
    });

    g.finish();
}

criterion_group!(benches, retire);
criterion_main!(benches);
