//! What a World keeps: every object it spawns, by every way it spawns, until the game
//! destroys it — through 70 s of frames with the default collector settings, explicit
//! collections and incremental marks — under every policy; a destroy that needs nothing
//! first; and the collected kind (`WorldBuilder::collected`), which lives only while
//! something references it.

use std::time::Duration;

use respawn::{
    ArenaError, CollectOptions, CommandBuffer, Composite, GcSettings, GcStep, Handle, Lifetime, MarkStep, Object,
    Policy, PoolConfig, PoolError, Poolable, RootKind, Trace, World,
};

#[derive(Trace, Object)]
struct Enemy {
    hp: u32,
}

impl Poolable for Enemy {
    fn create() -> Self {
        Enemy { hp: 100 }
    }
    fn reset(&mut self) {
        self.hp = 100;
    }
}

#[derive(Trace, Object)]
struct Bullet {
    target: Option<Handle<Enemy>>,
    life: f32,
}

impl Poolable for Bullet {
    fn create() -> Self {
        Bullet { target: None, life: 0.0 }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// Unpooled: built on the game thread.
#[derive(Trace, Object)]
struct Level {
    enemies: Vec<Handle<Enemy>>,
}

#[derive(Trace, Object)]
struct Tower {
    barrel: Option<Handle<Barrel>>,
}

impl Poolable for Tower {
    fn create() -> Self {
        Tower { barrel: None }
    }
}

#[derive(Trace, Object)]
struct Barrel {
    heat: f32,
}

impl Poolable for Barrel {
    fn create() -> Self {
        Barrel { heat: 0.0 }
    }
}

impl Composite for Tower {
    type Parts = (Barrel,);
    fn assemble() -> (Self, Self::Parts) {
        (Tower::create(), (Barrel::create(),))
    }
    fn attach(&mut self, (barrel,): (Handle<Barrel>,)) {
        self.barrel = Some(barrel);
    }
}

/// A path point: lives while an enemy or a bullet holds it.
#[derive(Trace, Object)]
struct Waypoint {
    pos: [f32; 2],
}

impl Poolable for Waypoint {
    fn create() -> Self {
        Waypoint { pos: [0.0; 2] }
    }
    fn reset(&mut self) {
        self.pos = [0.0; 2];
    }
}

fn config(policy: Policy) -> PoolConfig {
    PoolConfig {
        capacity: 64,
        max: 4096,
        low_watermark: 16,
        grow_by: 64,
        policy,
        precreate: true,
        workers: 1,
        idle_trim: None,
    }
}

/// A world with the default collector settings (a collection every 60 s).
fn world(policy: Policy) -> World {
    World::builder()
        .pool::<Enemy>(config(policy))
        .pool::<Bullet>(config(policy))
        .composite::<Tower>(config(policy))
        .build()
        .unwrap()
}

/// Every object a game makes through the world, by every way the world makes them.
struct Spawned {
    enemies: Vec<Handle<Enemy>>,
    bullets: Vec<Handle<Bullet>>,
    towers: Vec<(Handle<Tower>, Handle<Barrel>)>,
    level: Handle<Level>,
    /// Spawned by commands: counted, their handles not returned.
    commanded: usize,
}

fn spawn_everything(world: &mut World) -> Spawned {
    let mut enemies: Vec<Handle<Enemy>> = (0..20).map(|_| world.spawn::<Enemy>()).collect();
    enemies.extend(world.spawn_batch(20, |i, e: &mut Enemy| e.hp = i as u32));
    enemies.push(world.try_spawn::<Enemy>().unwrap());
    let mut bullets = Vec::new();
    for (i, &e) in enemies.iter().enumerate() {
        // Bullets as sub-objects of their target, and loose ones pointing at it.
        bullets.push(world.spawn_sub_with(e, |b: &mut Bullet| b.life = i as f32).unwrap());
        bullets.push(world.spawn_with(|b: &mut Bullet| b.target = Some(e)));
    }
    let towers = (0..5)
        .map(|_| {
            let (tower, (barrel,)) = world.spawn_composite::<Tower>();
            (tower, barrel)
        })
        .collect();
    let level = world.insert(Level { enemies: Vec::new() });
    let mut commands = CommandBuffer::new();
    for _ in 0..7 {
        commands.spawn::<Enemy>();
        commands.spawn_with(|b: &mut Bullet| b.life = 9.0);
    }
    assert!(world.apply(&mut commands).is_ok());
    Spawned { enemies, bullets, towers, level, commanded: 7 }
}

impl Spawned {
    fn assert_all_alive(&self, world: &World, when: &str) {
        assert!(self.enemies.iter().all(|&h| world.contains(h)), "{when}: an enemy vanished");
        assert!(self.bullets.iter().all(|&h| world.contains(h)), "{when}: a bullet vanished");
        assert!(self.towers.iter().all(|&(t, b)| world.contains(t) && world.contains(b)), "{when}: a tower vanished");
        assert!(world.contains(self.level), "{when}: the level vanished");
        assert_eq!(world.len::<Enemy>(), self.enemies.len() + self.commanded, "{when}");
        assert_eq!(world.len::<Bullet>(), self.bullets.len() + self.commanded, "{when}");
        assert_eq!(world.len::<Tower>(), self.towers.len(), "{when}");
        assert_eq!(world.len::<Barrel>(), self.towers.len(), "{when}");
    }
}

#[test]
fn seventy_seconds_of_frames_keep_everything_the_world_spawned_under_every_policy() {
    assert_eq!(GcSettings::default().time_between_collections, Some(Duration::from_secs(60)));
    for policy in Policy::ALL {
        let mut world = world(policy);
        assert_eq!(world.lifetime::<Enemy>(), Lifetime::Owned, "the world's default");
        let spawned = spawn_everything(&mut world);
        let dt = Duration::from_secs_f64(1.0 / 60.0);
        let mut collections = 0;
        for frame in 0..70 * 60 {
            world.tick::<Bullet>(|b| b.life += 1.0);
            if let GcStep::Collected(stats) = world.end_frame_with(dt).gc {
                collections += 1;
                assert_eq!(stats.unreachable, 0, "{policy}: frame {frame}: nothing the world spawned is unreachable");
            }
            if frame % 600 == 0 {
                spawned.assert_all_alive(&world, &format!("{policy}, frame {frame}"));
            }
        }
        assert_eq!(collections, 1, "{policy}: the timed collection ran at 60 s");
        spawned.assert_all_alive(&world, &format!("{policy}, after 70 s"));
        // Their fields are intact too.
        let first = spawned.bullets[1];
        assert_eq!(world.get(first).unwrap().target, Some(spawned.enemies[0]), "{policy}");
        world.collect_garbage();
        spawned.assert_all_alive(&world, &format!("{policy}, after collect_garbage"));
    }
}

#[test]
fn incremental_marks_keep_what_the_world_spawned_even_during_the_mark() {
    for policy in Policy::ALL {
        let gc = GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED };
        let mut world = World::builder().pool::<Enemy>(config(policy)).gc(gc).build().unwrap();
        let mut enemies: Vec<Handle<Enemy>> = (0..3000).map(|_| world.spawn()).collect();
        assert!(world.start_incremental_collection(CollectOptions::FULL));
        // A clock that ticks a microsecond a reading, and 3 µs slices: a few objects a slice,
        // whatever the machine's speed.
        let mut clock = Duration::ZERO;
        let mut slices = 0;
        let stats = loop {
            // Spawned between slices: born during the mark.
            enemies.push(world.spawn());
            let step = world.mark_slice_timed(Duration::from_micros(3), || {
                clock += Duration::from_micros(1);
                clock
            });
            slices += 1;
            assert!(enemies.iter().all(|&e| world.contains(e)), "{policy}");
            match step {
                MarkStep::Marking(_) => {}
                MarkStep::Done(stats) => break stats,
                MarkStep::Idle => panic!("{policy}: the mark stopped"),
            }
        };
        assert!(slices > 10, "{policy}: the mark spanned {slices} slices");
        assert_eq!((stats.unreachable, stats.purged), (0, 0), "{policy}");
        assert!(enemies.iter().all(|&e| world.contains(e)), "{policy}");

        // The same through the frame rhythm with the collector's own schedule.
        let gc = GcSettings {
            time_between_collections: Some(Duration::from_millis(100)),
            incremental_mark_budget: Some(Duration::from_micros(5)),
            ..GcSettings::SINGLE_THREADED
        };
        world.set_gc_settings(gc).unwrap();
        let mut collected = 0;
        while collected < 2 {
            enemies.push(world.spawn());
            if let GcStep::Collected(stats) = world.end_frame_with(Duration::from_millis(16)).gc {
                collected += 1;
                assert_eq!(stats.unreachable, 0, "{policy}");
            }
            assert!(enemies.iter().all(|&e| world.contains(e)), "{policy}");
        }
    }
}

#[test]
fn destroy_needs_nothing_first_and_default_returns_the_cell_through_the_collector() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let enemy = world.spawn::<Enemy>();
        let sub = world.spawn_sub::<Bullet, _>(enemy).unwrap();
        // No root, no unroot: a destroy.
        world.destroy(enemy).unwrap();
        assert!(!world.contains(enemy) && !world.contains(sub), "{policy}: gone at once, with its sub-object");
        assert!(matches!(world.destroy(enemy), Err(PoolError::AlreadyReleased)), "{policy}");
        let stats = world.pool_stats::<Enemy>().unwrap();
        match policy {
            Policy::Default => {
                assert_eq!(stats.recycled_gc, 0, "waits for the collector");
                let gc = world.collect_garbage();
                assert_eq!(gc.purged, 2, "{policy}: the enemy and its bullet");
                let stats = world.pool_stats::<Enemy>().unwrap();
                assert_eq!(stats.recycled_gc, 1, "returned by the collector");
                assert_eq!(world.pool_stats::<Bullet>().unwrap().recycled_gc, 1);
            }
            Policy::Purge => assert_eq!(stats.recycled_purge, 1),
            Policy::Reuse => assert_eq!(stats.recycled_reuse, 1),
        }
        assert_eq!(world.len::<Enemy>(), 0, "{policy}");
    }
}

#[test]
fn a_root_still_pins_and_refuses_destroy_until_removed() {
    let mut world = world(Policy::Reuse);
    let enemy = world.spawn::<Enemy>();
    world.add_to_root(enemy).unwrap();
    assert!(matches!(world.destroy(enemy), Err(PoolError::Arena(ArenaError::Rooted))));
    world.remove_from_root(enemy).unwrap();
    world.collect_garbage();
    assert!(world.contains(enemy), "owned: no root needed");
    let chain = world.why_alive(enemy).unwrap().expect("kept");
    assert_eq!(chain.root, RootKind::Owned);
    assert_eq!(
        chain.to_string(),
        format!("root (owned until destroyed) Enemy#{}", world.heap().arena().index_in_class(enemy.index()).unwrap())
    );
    {
        let _pin = world.root(enemy).unwrap();
        assert!(world.destroy(enemy).is_err(), "pinned");
    }
    world.destroy(enemy).unwrap();
}

fn collected_world(policy: Policy) -> World {
    World::builder()
        .pool::<Enemy>(config(policy))
        .pool::<Waypoint>(config(policy))
        .collected::<Waypoint>()
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED })
        .build()
        .unwrap()
}

#[derive(Trace, Object)]
struct Walker {
    to: Option<Handle<Waypoint>>,
}

#[test]
fn a_collected_class_lives_only_while_referenced_under_every_policy() {
    for policy in Policy::ALL {
        let mut world = collected_world(policy);
        assert_eq!(world.lifetime::<Waypoint>(), Lifetime::Collected);
        assert_eq!(world.lifetime::<Enemy>(), Lifetime::Owned);
        let held = world.spawn_with(|w: &mut Waypoint| w.pos = [1.0, 1.0]);
        let loose = world.spawn::<Waypoint>();
        let walker = world.insert(Walker { to: Some(held) }); // owned: it keeps what it holds
        let gc = world.collect_garbage();
        assert_eq!(gc.purged, 1, "{policy}");
        assert!(world.contains(held) && world.contains(walker), "{policy}");
        assert!(!world.contains(loose), "{policy}: nothing referenced it");
        assert_eq!(world.pool_stats::<Waypoint>().unwrap().recycled_gc, 1, "{policy}: back to its pool");

        // The walker lets go: the waypoint goes at the next collection.
        world.get_mut(walker).unwrap().to = None;
        world.collect_garbage();
        assert!(!world.contains(held), "{policy}");
        // Rooting keeps a collected object.
        let pinned = world.spawn::<Waypoint>();
        world.add_to_root(pinned).unwrap();
        world.collect_garbage();
        assert!(world.contains(pinned), "{policy}");
        // Destroying the walker (owned) makes it garbage like any destroy.
        world.destroy(walker).unwrap();
        world.collect_garbage();
        assert!(!world.contains(walker), "{policy}");
    }
}

#[test]
fn a_collected_class_without_a_pool_and_the_heap_keeps_collecting_by_default() {
    let mut world = World::builder().collected::<Walker>().build().unwrap();
    let walker = world.insert(Walker { to: None });
    world.collect_garbage();
    assert!(!world.contains(walker), "collected: nothing referenced it");

    let mut heap = respawn::Heap::new();
    assert_eq!(heap.default_lifetime(), Lifetime::Collected, "a heap keeps its collected-when-unreachable meaning");
    let w = heap.insert(Walker { to: None });
    assert_eq!(heap.lifetime::<Walker>(), Lifetime::Collected);
    heap.collect_garbage(respawn::CollectOptions::FULL);
    assert!(!heap.contains(w));
}
