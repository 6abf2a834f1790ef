//! Commands allocate nothing when warm: frames of `tick_with` and `par_tick_with` that
//! retire objects and spawn others (with capturing init closures, of two classes) add no
//! heap block once the world's buffers have grown to the frame's size (dhat in testing
//! mode). One test per binary: dhat allows one profiler per process.

use respawn::{CommandBuffer, GcSettings, Handle, Object, Policy, PoolConfig, Poolable, Trace, World};

use respawn_testkit::world::Projectile;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The default settings without the collection every 60 s of wall time: on a machine slow
/// enough for the test to outlast it, a first collection (and the parallel mark's thread
/// pool) would allocate inside the measurement.
const NO_TIMED_COLLECTION: GcSettings = GcSettings { time_between_collections: None, ..GcSettings::DEFAULT };

/// What a retired projectile leaves.
#[derive(Trace, Object)]
struct Impact {
    pos: [f32; 3],
    age: u32,
}

impl Poolable for Impact {
    fn create() -> Self {
        Impact { pos: [0.0; 3], age: 0 }
    }
}

/// A projectile's frame: it flies, and when its life runs out it goes and leaves an impact
/// and a fresh projectile behind (so the population holds steady).
fn projectile(h: Handle<Projectile>, p: &mut Projectile, commands: &mut CommandBuffer) {
    p.life -= 1.0;
    if p.life <= 0.0 {
        commands.destroy(h);
        let pos = p.pos;
        commands.spawn_with(move |i: &mut Impact| (i.pos, i.age) = (pos, 0));
        commands.spawn_with(|q: &mut Projectile| q.life = 10.0);
    }
}

/// An impact's frame: it fades out after three frames.
fn impact(h: Handle<Impact>, i: &mut Impact, commands: &mut CommandBuffer) {
    i.age += 1;
    if i.age >= 3 {
        commands.destroy(h);
    }
}

/// `n` frames: serial and parallel ticks by turns, and a buffer of the game's own filled
/// outside the ticks (a flash at the origin each frame).
fn frames(world: &mut World, commands: &mut CommandBuffer, n: usize) {
    for frame in 0..n {
        let applied = if frame % 2 == 0 {
            world.tick_with(projectile).applied + world.tick_with(impact).applied
        } else {
            world.par_tick_with(projectile).applied + world.par_tick_with(impact).applied
        };
        assert!(applied > 0, "the frames do work");
        let origin = [0.0, 0.0, frame as f32];
        commands.spawn_with(move |i: &mut Impact| (i.pos, i.age) = (origin, 0));
        assert!(world.apply(commands).is_ok());
        world.end_frame();
    }
}

#[test]
fn warm_command_frames_allocate_nothing() {
    // The frames run on a thread of this rayon pool, so `par_tick_with`'s tasks start from
    // inside it. Started from outside, every job goes through rayon's injector queue, which
    // allocates a block every 63 jobs (plain `par_tick` does so too): rayon's cost, not the
    // commands', and not in this measurement.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a rayon pool");
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = PoolConfig { capacity: 0, max: 65_536, policy: Policy::Reuse, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder()
        .pool::<Projectile>(config)
        .pool::<Impact>(config)
        .gc(NO_TIMED_COLLECTION)
        .build()
        .expect("valid configuration");
    let n = if cfg!(miri) { 100 } else { 10_000 };
    for i in 0..n {
        world.spawn_with(|p: &mut Projectile| p.life = (i % 10) as f32 + 1.0);
    }
    let (before, after) = pool.install(|| {
        let mut commands = CommandBuffer::new();
        frames(&mut world, &mut commands, 10); // warm: pools, buffers, queues
        let before = dhat::HeapStats::get();
        frames(&mut world, &mut commands, 100);
        (before, dhat::HeapStats::get())
    });
    dhat::assert_eq!(after.total_blocks, before.total_blocks, "a warm frame of commands allocated");
    dhat::assert_eq!(world.len::<Projectile>(), n);
}
