//! Heap allocations of a pooled spawn loop, counted by dhat: a warm `World` pool
//! (`Policy::Reuse`) against a `Box` per projectile, on the same steady frame loop.
//!
//! ```sh
//! cargo run --release --example heap_profile
//! ```
//!
//! Each loop runs 300 frames: 48 spawns a frame, one `tick` over every projectile in flight,
//! the spent ones retired, the frame ended. After a warm-up of the same frames (and a wait
//! for the pool's worker to go idle), dhat counts the blocks allocated during one more run
//! of them, and the example prints them per spawn:
//!
//! ```text
//! warm-up: 14400 spawns, 0 misses, pool of 4096 cells (4096 precreated, grown by 0)
//! steady loop: 300 frames, 14400 spawns, up to 1411 projectiles in flight
//! World pool (Reuse)       0 blocks allocated (0.00 per spawn), 0 bytes
//! Box per projectile   14400 blocks allocated (1.00 per spawn), 403200 bytes
//! dhat-heap.json written: load it in https://nnethercote.github.io/dh_view/dh_view.html
//! ```
//!
//! followed by dhat's own summary of the whole run on stderr. It asserts that the pooled
//! steady loop allocates nothing and the Box loop one block per spawn.
//!
//! The world waits for its pool to be warm (`wait_until_warm`) before the warm-up frames,
//! and again before the counted ones, so no spawn misses and no worker is still trading
//! magazines while dhat counts.
//!
//! The profiler writes `dhat-heap.json` to the current directory when it drops (the
//! repository's `.gitignore` lists it). To read it, open
//! <https://nnethercote.github.io/dh_view/dh_view.html>, press "Load…" and pick the file.
//! The viewer shows a tree of allocation sites (backtraces) with the blocks and bytes each
//! allocated over the whole run ("total") and held at the heap's peak ("at t-gmax"). Look
//! for:
//!
//! - under `heap_profile::allocations` (the two measured loops): only `box_loop`'s
//!   `Box::new`, one block per spawn, and no `pooled_loop` site;
//! - under the warm-up's `pooled_loop`: the frame arena's chunks (bumpalo's `new_chunk`,
//!   two blocks in the first frames; `end_frame` keeps the last chunk for the next frame);
//! - under `World::builder().build()`: the object table, the pool's queues (the queue of
//!   cells to build holds what can be in flight, one growth step of 1 024 cells or 24 KiB
//!   here; the rest of a larger step waits in a backlog) and its magazines, and the
//!   background threads, which have started by the time `build` returns; the worker
//!   allocates the rest of its magazines while it precreates. The whole run peaks at about
//!   0.9 MB of heap.
//!
//! dhat sees only the global allocator. The class slabs that hold the projectiles are
//! reserved with `mmap` by respawn's chunk allocator and do not appear in the profile.

use std::collections::VecDeque;
use std::time::Duration;

use respawn::{Object, Policy, PoolConfig, Poolable, Trace, World};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[derive(Trace, Object)]
struct Projectile {
    pos: [f32; 3],
    vel: [f32; 3],
    /// Seconds left before the shot is spent.
    life: f32,
}

impl Poolable for Projectile {
    fn create() -> Self {
        Projectile { pos: [0.0; 3], vel: [0.0; 3], life: 0.0 }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

const FRAMES: u32 = 300;
const SHOTS_PER_FRAME: u32 = 48;
const DT: f32 = 1.0 / 60.0;

/// The `i`-th shot of a frame: lives of 0.25 to 0.75 s, so about 1 400 are in flight.
fn launch(p: &mut Projectile, i: u32) {
    p.vel = [300.0, 10.0 * i as f32, 0.0];
    p.life = 0.25 + (i % 11) as f32 * 0.05;
}

fn advance(p: &mut Projectile) {
    for axis in 0..3 {
        p.pos[axis] += p.vel[axis] * DT;
    }
    p.life -= DT;
}

/// `frames` frames of the pooled loop; returns the most projectiles in flight at once.
fn pooled_loop(world: &mut World, frames: u32) -> usize {
    let mut most = 0;
    for _ in 0..frames {
        for i in 0..SHOTS_PER_FRAME {
            world.spawn_with(|p: &mut Projectile| launch(p, i));
        }
        world.tick::<Projectile>(advance);
        most = most.max(world.len::<Projectile>());
        world.with_frame_arena(|world, frame| {
            let mut spent = respawn::bumpalo::collections::Vec::new_in(frame);
            spent.extend(world.iter::<Projectile>().filter(|(_, p)| p.life <= 0.0).map(|(h, _)| h));
            for h in spent {
                world.destroy(h).expect("a spent shot is live until retired");
            }
        });
        world.end_frame();
    }
    most
}

/// The same frames with a `Box` per projectile, held in a list whose capacity is reserved
/// up front, so the boxes are the loop's only allocations.
fn box_loop(live: &mut VecDeque<Box<Projectile>>, frames: u32) {
    for _ in 0..frames {
        for i in 0..SHOTS_PER_FRAME {
            let mut p = Box::new(Projectile::create());
            launch(&mut p, i);
            live.push_back(p);
        }
        live.iter_mut().for_each(|p| advance(p));
        live.retain(|p| p.life > 0.0);
    }
}

/// Blocks and bytes allocated while `f` runs.
fn allocations(f: impl FnOnce()) -> (u64, u64) {
    let before = dhat::HeapStats::get();
    f();
    let after = dhat::HeapStats::get();
    (after.total_blocks - before.total_blocks, after.total_bytes - before.total_bytes)
}

fn main() -> Result<(), respawn::PoolError> {
    let profiler = dhat::Profiler::new_heap();

    let config = PoolConfig { capacity: 4096, policy: Policy::Reuse, ..PoolConfig::PROJECTILES };
    let mut world = World::builder().pool::<Projectile>(config).build()?;
    world.wait_until_warm(Duration::from_secs(20))?;
    // Warm-up: the same frames, so the pool's magazines and the frame arena's chunk are in
    // place before anything is counted.
    pooled_loop(&mut world, FRAMES);
    // A worker still building (after growth) would trade magazines during the measurement.
    world.wait_until_warm(Duration::from_secs(20))?;
    let warm = world.pool_stats::<Projectile>().expect("Projectile has a pool");
    let mut most = 0;
    let (pooled_blocks, pooled_bytes) = allocations(|| most = pooled_loop(&mut world, FRAMES));
    let stats = world.pool_stats::<Projectile>().expect("Projectile has a pool");

    let mut live = VecDeque::with_capacity(4 * most);
    box_loop(&mut live, FRAMES);
    let (box_blocks, box_bytes) = allocations(|| box_loop(&mut live, FRAMES));

    let spawns = u64::from(FRAMES * SHOTS_PER_FRAME);
    let per_spawn = |blocks: u64| blocks as f64 / spawns as f64;
    println!(
        "warm-up: {} spawns, {} misses, pool of {} cells ({} precreated, grown by {})",
        warm.spawns,
        warm.misses,
        warm.ready + warm.in_use,
        warm.precreated,
        warm.grown
    );
    println!("steady loop: {FRAMES} frames, {spawns} spawns, up to {most} projectiles in flight");
    println!(
        "World pool (Reuse)  {pooled_blocks:6} blocks allocated ({:.2} per spawn), {pooled_bytes} bytes",
        per_spawn(pooled_blocks)
    );
    println!(
        "Box per projectile  {box_blocks:6} blocks allocated ({:.2} per spawn), {box_bytes} bytes",
        per_spawn(box_blocks)
    );

    assert_eq!(stats.spawns, 2 * spawns);
    assert_eq!(box_blocks, spawns, "one block per boxed spawn");
    assert_eq!(pooled_blocks, 0, "a warm Reuse pool's frames allocate nothing");

    drop(world);
    drop(profiler); // writes dhat-heap.json
    println!("dhat-heap.json written: load it in https://nnethercote.github.io/dh_view/dh_view.html");
    Ok(())
}
