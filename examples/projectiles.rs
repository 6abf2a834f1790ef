//! The smallest pooled spawn loop: a `World` with a `Projectile` pool (`Policy::Reuse`),
//! some shots spawned every frame with `spawn_with`, every shot moved by one aggregated
//! `tick`, the spent ones retired through a hit list in the frame arena, `end_frame`.
//!
//! ```sh
//! cargo run --release --example projectiles
//! ```
//!
//! It runs 600 frames of 48 shots each (about 1 400 in flight at once) and prints the
//! pool's counters, for example:
//!
//! ```text
//! 600 frames, 28800 shots spawned, 27437 retired, 1363 in flight (high water 1411)
//! spawns 28800: 28800 hits, 0 misses (hit rate 100.0 %; after warm-up 100.0 %)
//! recycled in place (Reuse) 27437; precreated by the worker 4096 (capacity 4096, grown by 0)
//! 27437 retired handles checked: none resolves
//! ```
//!
//! `build` returns as soon as the pool's worker has started; the 4 096 shots it precreates
//! are published a magazine (128) at a time. The example waits for them with
//! `wait_until_warm` before its first frame. Without that wait, a machine whose cores are
//! busy (or a worker sharing the game thread's core at its lower priority) lets the first
//! frames run before anything is published, and their spawns miss in one block: every shot
//! is built inline until the in-flight peak (about 1 400), after which `Reuse` recycles
//! the retired ones and the misses stop. Once warm, every spawn pops a ready object.
//! Handles to retired shots never resolve, even though their cells now hold newer shots.

use std::time::Duration;

use respawn::{Handle, Object, Policy, PoolConfig, Poolable, Trace, World};

#[derive(Trace, Object)]
struct Projectile {
    pos: [f32; 2],
    vel: [f32; 2],
    /// Seconds left before the shot is spent.
    life: f32,
}

impl Poolable for Projectile {
    // Run by the pool's worker thread, ahead of demand.
    fn create() -> Self {
        Projectile { pos: [0.0; 2], vel: [0.0; 2], life: 0.0 }
    }
    // Reuse: a retired shot is reset and ready for the next spawn at once.
    fn reset(&mut self) {
        *self = Self::create();
    }
}

const FRAMES: u32 = 600;
const SHOTS_PER_FRAME: u32 = 48;
const WARM_UP_FRAMES: u32 = 60;
const DT: f32 = 1.0 / 60.0;

fn main() -> Result<(), respawn::PoolError> {
    let config = PoolConfig { capacity: 4096, policy: Policy::Reuse, ..PoolConfig::PROJECTILES };
    let mut world = World::builder().pool::<Projectile>(config).build()?;
    // Every precreated shot ready to pop before the first frame.
    world.wait_until_warm(Duration::from_secs(10))?;

    // The example's own record, to check at the end that no retired handle resolves.
    let mut retired: Vec<Handle<Projectile>> = Vec::new();
    let mut warm = None;

    for frame in 0..FRAMES {
        if frame == WARM_UP_FRAMES {
            warm = world.pool_stats::<Projectile>();
        }
        for i in 0..SHOTS_PER_FRAME {
            let angle = (frame * SHOTS_PER_FRAME + i) as f32 * 0.1;
            world.spawn_with(|p: &mut Projectile| {
                p.vel = [300.0 * angle.cos(), 300.0 * angle.sin()];
                // Lives of 0.25 to 0.75 s: 15 to 45 frames.
                p.life = 0.25 + (i % 11) as f32 * 0.05;
            });
        }

        // Every shot, one pass over contiguous memory.
        world.tick::<Projectile>(|p| {
            p.pos[0] += p.vel[0] * DT;
            p.pos[1] += p.vel[1] * DT;
            p.life -= DT;
        });

        // The hit list lives in the frame arena: a pointer bump, freed by `end_frame`.
        world.with_frame_arena(|world, frame| {
            let mut spent = respawn::bumpalo::collections::Vec::new_in(frame);
            spent.extend(world.iter::<Projectile>().filter(|(_, p)| p.life <= 0.0).map(|(h, _)| h));
            for &h in &spent {
                world.destroy(h).expect("a spent shot is live until retired");
            }
            retired.extend_from_slice(&spent);
        });

        world.end_frame();
    }

    let stats = world.pool_stats::<Projectile>().expect("Projectile has a pool");
    let warm = warm.expect("the warm-up ends before the last frame");
    let (steady_spawns, steady_hits) = (stats.spawns - warm.spawns, stats.hits - warm.hits);
    let steady_rate = steady_hits as f64 / steady_spawns as f64;
    let in_flight = world.len::<Projectile>();

    println!(
        "{FRAMES} frames, {} shots spawned, {} retired, {in_flight} in flight (high water {})",
        stats.spawns,
        retired.len(),
        stats.high_water
    );
    println!(
        "spawns {}: {} hits, {} misses (hit rate {:.1} %; after warm-up {:.1} %)",
        stats.spawns,
        stats.hits,
        stats.misses,
        100.0 * stats.hit_rate(),
        100.0 * steady_rate
    );
    println!(
        "recycled in place (Reuse) {}; precreated by the worker {} (capacity {}, grown by {})",
        stats.recycled_reuse, stats.precreated, config.capacity, stats.grown
    );

    assert_eq!(stats.spawns, u64::from(FRAMES * SHOTS_PER_FRAME));
    assert_eq!(stats.spawns as usize, retired.len() + in_flight, "every shot is either retired or in flight");
    assert_eq!(stats.recycled_reuse as usize, retired.len(), "Reuse puts every retired shot back at once");
    assert_eq!(stats.misses, 0, "a warm pool: every spawn pops a ready shot");
    assert_eq!(steady_hits, steady_spawns, "after warm-up every spawn pops a ready shot");

    let resolving = retired.iter().filter(|&&h| world.get(h).is_some()).count();
    println!(
        "{} retired handles checked: {}",
        retired.len(),
        if resolving == 0 { "none resolves" } else { "some resolve!" }
    );
    assert_eq!(resolving, 0, "a retired shot's handle must never resolve, even after its cell is reused");
    Ok(())
}
