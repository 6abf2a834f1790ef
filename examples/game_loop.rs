//! A game loop: enemies and homing bullets, two pooled classes. A bullet holds its target's
//! handle and reads it in its tick; a hit destroys the bullet, and the third the enemy.

use std::time::Duration;

use respawn::prelude::*;

/// An enemy with three hit points, built ahead of time by its pool's worker thread.
#[derive(Trace, Object)]
struct Enemy {
    pos: [f32; 2],
    hp: i32,
}

impl Poolable for Enemy {
    fn create() -> Self {
        Enemy { pos: [0.0; 2], hp: 3 }
    }
}

/// A bullet that homes on its target. It holds the target's handle, which stops resolving
/// the moment the target is destroyed, even once another enemy reuses its memory.
#[derive(Trace, Object)]
struct Bullet {
    pos: [f32; 2],
    target: Option<Handle<Enemy>>,
    hit: bool,
    life: f32,
}

impl Poolable for Bullet {
    fn create() -> Self {
        Bullet { pos: [0.0; 2], target: None, hit: false, life: 0.0 }
    }

    // `Reuse`: a destroyed bullet is reset here and ready for the next spawn at once.
    fn reset(&mut self) {
        *self = Self::create();
    }
}

fn main() {
    let mut world = World::builder()
        // Enemies are destroyed rarely: `Default`, the collector takes them back.
        .pool::<Enemy>(PoolConfig::DEFAULT)
        // Bullets come and go every frame: `Reuse`, reset and ready again at once.
        .pool::<Bullet>(PoolConfig::PROJECTILES)
        .build()
        .expect("valid pool settings");
    // The workers build the pools' first objects in the background; a loading screen waits.
    world.wait_until_warm(Duration::from_secs(10)).expect("the pools warm up");

    // Four enemies in a row. A spawn pops an object a worker built: no constructor runs here.
    let enemies: Vec<Handle<Enemy>> =
        (0..4).map(|i| world.spawn_with(|e: &mut Enemy| e.pos = [100.0 + 50.0 * i as f32, 20.0])).collect();

    let dt = 1.0 / 60.0;
    for _frame in 0..120 {
        // Fire one bullet a frame at the first enemy still alive.
        if let Some(&target) = enemies.iter().find(|&&e| world.get(e).is_some()) {
            world.spawn_with(|b: &mut Bullet| {
                b.target = Some(target);
                b.life = 2.0;
            });
        }

        // Every bullet in one pass over contiguous memory, reading its target through the
        // view of the other classes. A stale handle reads as `None`: the target is gone.
        world.tick_reading::<Bullet>(|b, others| {
            b.life -= dt;
            let Some(target) = b.target.and_then(|h| others.get(h)) else {
                b.target = None;
                return;
            };
            let (dx, dy) = (target.pos[0] - b.pos[0], target.pos[1] - b.pos[1]);
            let distance = (dx * dx + dy * dy).sqrt();
            if distance < 5.0 {
                b.hit = true;
                return;
            }
            let step = (600.0 * dt).min(distance);
            b.pos[0] += dx / distance * step;
            b.pos[1] += dy / distance * step;
        });

        // Bullets that hit, missed their target or ran out of life are destroyed; a hit
        // costs the enemy a hit point, and the third destroys it.
        let done: Vec<(Handle<Bullet>, Option<Handle<Enemy>>)> = world
            .iter::<Bullet>()
            .filter(|(_, b)| b.hit || b.target.is_none() || b.life <= 0.0)
            .map(|(h, b)| (h, b.target.filter(|_| b.hit)))
            .collect();
        for (bullet, hit) in done {
            world.destroy(bullet).expect("a live bullet");
            let Some(enemy) = hit else { continue };
            let dead = world.get_mut(enemy).is_some_and(|e| {
                e.hp -= 1;
                e.hp == 0
            });
            if dead {
                world.destroy(enemy).expect("a live enemy");
            }
        }

        // The frame's end: pool upkeep, a slice of the collector's work.
        world.end_frame();
    }

    assert!(enemies.iter().all(|&e| world.get(e).is_none()), "every enemy was shot down");
    // Destroyed enemies are garbage until the collector purges them (on its schedule, or
    // once garbage holds a tenth of the slots): collect now, and their cells go back to
    // the pool's worker to be rebuilt.
    world.collect_garbage();
    // One line per pool: spawns, hit rate, objects in use and ready, memory.
    println!("{}", world.pool_stats::<Enemy>().expect("a pooled class"));
    println!("{}", world.pool_stats::<Bullet>().expect("a pooled class"));
}
