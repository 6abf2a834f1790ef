//! The collector's diagnostics through the World: why an object is alive, through a pooled
//! object, a traced field and an outer; the references left to garbage by `Policy::Default`.

use respawn::{ArenaError, GcSettings, Policy, PoolConfig, PoolError, RawHandle, Reference, Referrer, RootKind, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::world::{Counted, Ship, Shot};

fn world() -> (World, Drops) {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig {
        capacity: 8,
        max: 64,
        low_watermark: 0,
        grow_by: 8,
        precreate: false,
        workers: 0,
        ..PoolConfig::DEFAULT
    };
    let world = World::builder()
        .pool_with::<Shot>(PoolConfig { policy: Policy::Default, ..config }, move || Shot::new(&d))
        .collected::<Shot>()
        .collected::<Counted>()
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED })
        .build()
        .unwrap();
    (world, drops)
}

#[test]
fn why_alive_follows_pooled_objects_fields_and_outers_and_garbage_references_are_reported() {
    let (mut world, drops) = world();
    let shot = world.spawn::<Shot>();
    let turret = world.insert(Counted::new(&drops));
    world.set_outer(shot, Some(turret.raw())).unwrap();
    let ship = world.insert(Ship { shots: vec![shot] });
    let guard = world.root(ship).unwrap();

    // The turret owns the shot; a reachable shot keeps its owner.
    let chain = world.why_alive(turret).unwrap().expect("kept through the ship's shot");
    assert_eq!(chain.root, RootKind::Guard(1));
    let how: Vec<(RawHandle, Reference)> = chain.links.iter().map(|l| (l.object.handle, l.reference)).collect();
    assert_eq!(how, [(ship.raw(), Reference::Root), (shot.raw(), Reference::Traced), (turret.raw(), Reference::Outer)]);
    let at = |raw: RawHandle| world.heap().arena().index_in_class(raw.index()).unwrap();
    assert_eq!(
        chain.to_string(),
        format!(
            "root (Root guard) Ship#{} -> [traced] Shot#{} -> [outer] Counted#{}",
            at(ship.raw()),
            at(shot.raw()),
            at(turret.raw())
        )
    );
    assert!(world.find_garbage_references().is_empty());

    // Destroyed under `Default`: garbage until the next collection, still in the ship's list.
    world.destroy(shot).unwrap();
    assert!(matches!(world.why_alive(shot), Err(PoolError::Arena(ArenaError::Hidden(_)))));
    assert_eq!(world.why_alive(turret).unwrap(), None, "its only keeper is garbage");
    let found = world.find_garbage_references();
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].from, found[0].to.handle), (Referrer::Object(chain.links[0].object), shot.raw()));
    world.collect_garbage();
    assert!(!world.contains(turret) && world.contains(ship));
    assert!(matches!(world.why_alive(shot), Err(PoolError::Stale)));
    assert!(world.find_garbage_references().is_empty(), "purged: the ship's handle is stale now");
    drop(guard);
}
