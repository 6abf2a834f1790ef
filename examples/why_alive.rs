//! Why is it alive? (UE's `obj refs` / `FReferenceChainSearch`), and who still references
//! garbage (UE's `gc.GarbageReferenceTrackingEnabled`).
//!
//! ```sh
//! cargo run --release --example why_alive
//! ```
//!
//! A base (which the world keeps until it is destroyed) lists its turrets, a turret lists
//! the projectiles it fired, and a HUD outside the world (an external referencer) shows a
//! gun's scope, a sub-object of a gun nothing else keeps. Turrets, projectiles, guns and
//! scopes are collected classes: they live only while something references them. The example asks `why_alive` about each, then
//! destroys a projectile its turret still lists and collects with garbage-reference tracking
//! on. It prints (the numbers can vary from run to run):
//!
//! ```text
//! How to read the chains below:
//!   Class#N        an object: its class, and its index among the objects of its class
//!   root (why)     where a chain starts: what keeps its first object (owned until destroyed,
//!                  a root guard, an external referencer such as a HUD)
//!   -> [traced]    a handle in the object's traced fields
//!   -> [outer]     a sub-object keeps its owner (UE's Outer)
//!
//! Projectile#127: root (owned until destroyed) Base#0 -> [traced] Turret#0 -> [traced] Projectile#127
//! Gun#0: root (referencer #0) Scope#0 -> [outer] Gun#0
//! Turret#1: not reachable: the next collection purges it
//! collected: 2 purged, 1 reference to garbage:
//!   Turret#0 -> [traced] Projectile#127 (garbage)
//! Projectile#127: stale (Projectile#127 was purged although Turret#0 still lists it)
//! ```

use std::sync::{Arc, Mutex};

use respawn::{CollectOptions, GcSettings};
use respawn::{Handle, Object, Policy, PoolConfig, PoolError, Poolable, RawHandle, Trace, World};

#[derive(Trace, Object)]
struct Base {
    turrets: Vec<Handle<Turret>>,
}

#[derive(Trace, Object)]
struct Turret {
    shots: Vec<Handle<Projectile>>,
}

#[derive(Trace, Object)]
struct Projectile {
    speed: f32,
}

impl Poolable for Projectile {
    fn create() -> Self {
        Projectile { speed: 0.0 }
    }
}

#[derive(Trace, Object)]
struct Gun {
    rounds: u32,
}

#[derive(Trace, Object)]
struct Scope {
    zoom: f32,
}

/// Prints why `h` is alive, or why not.
fn explain<T>(world: &mut World, name: &str, h: Handle<T>) -> Result<(), PoolError> {
    match world.why_alive(h) {
        Ok(Some(chain)) => println!("{name}: {chain}"),
        Ok(None) => println!("{name}: not reachable: the next collection purges it"),
        Err(PoolError::Stale) => println!("{name}: stale (its object was purged)"),
        Err(e) => return Err(e),
    }
    Ok(())
}

fn main() -> Result<(), PoolError> {
    let settings = GcSettings { track_garbage_references: true, ..GcSettings::SINGLE_THREADED };
    let config = PoolConfig { policy: Policy::Default, ..PoolConfig::DEFAULT };
    let mut world = World::builder()
        .pool::<Projectile>(config)
        .collected::<Projectile>()
        .collected::<Turret>()
        .collected::<Gun>()
        .collected::<Scope>()
        .gc(settings)
        .build()?;

    let shot = world.spawn_with(|p: &mut Projectile| p.speed = 90.0);
    let turret = world.insert(Turret { shots: vec![shot] });
    let idle = world.insert(Turret { shots: Vec::new() });
    world.insert(Base { turrets: vec![turret] }); // kept by the world: no root needed

    // The gun is kept by its scope, a sub-object the HUD shows: a reachable sub-object
    // keeps its owner (an owner does not keep its sub-objects).
    let gun = world.insert(Gun { rounds: 30 });
    let scope = world.insert(Scope { zoom: 4.0 });
    world.set_outer(scope, Some(gun.raw()))?;
    let hud: Arc<Mutex<Vec<RawHandle>>> = Arc::new(Mutex::new(vec![scope.raw()]));
    let shown = Arc::clone(&hud);
    let _hud = world.add_referencer(move |t| shown.lock().unwrap().iter().for_each(|&h| t.handle(h)));

    println!("How to read the chains below:");
    println!("  Class#N        an object: its class, and its index among the objects of its class");
    println!("  root (why)     where a chain starts: what keeps its first object (owned until destroyed,");
    println!("                 a root guard, an external referencer such as a HUD)");
    println!("  -> [traced]    a handle in the object's traced fields");
    println!("  -> [outer]     a sub-object keeps its owner (UE's Outer)");
    println!();
    let name = |world: &World, kind: &str, h: RawHandle| {
        format!("{kind}#{}", world.heap().arena().index_in_class(h.index()).expect("an object of the world"))
    };
    // Named now: once purged, an object has no class to be counted in.
    let (shot_name, turret_name) = (name(&world, "Projectile", shot.raw()), name(&world, "Turret", turret.raw()));
    explain(&mut world, &shot_name, shot)?;
    let named = name(&world, "Gun", gun.raw());
    explain(&mut world, &named, gun)?;
    let named = name(&world, "Turret", idle.raw());
    explain(&mut world, &named, idle)?;
    assert!(world.why_alive(shot)?.is_some_and(|c| c.len() == 2));
    assert!(world.why_alive(gun)?.is_some_and(|c| c.len() == 1));
    assert!(world.why_alive(idle)?.is_none());

    // Destroyed under `Policy::Default`: garbage at once, purged by the next collection —
    // while the turret still lists it. Tracking reports the reference the turret forgot.
    world.destroy(shot)?;
    let stats = world.collect_garbage_with(CollectOptions::FULL);
    let found = world.heap().garbage_references();
    println!(
        "collected: {} purged, {} reference{} to garbage:",
        stats.purged,
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    );
    for reference in found {
        println!("  {reference}");
    }
    assert_eq!((stats.purged, found.len()), (2, 1), "the shot and the idle turret; the turret's list");
    assert_eq!(found[0].to.handle, shot.raw());
    match world.why_alive(shot) {
        Err(PoolError::Stale) => {
            println!("{}: stale ({} was purged although {} still lists it)", shot_name, shot_name, turret_name)
        }
        other => panic!("a purged object's handle is stale, not {other:?}"),
    }
    Ok(())
}
