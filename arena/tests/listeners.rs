//! Listeners in the class's record. End listeners: told once for every end, whatever the
//! arena path (remove, destroy, retain, deactivate, retirement), with the object still intact;
//! `notify_end` tells early and silences the release. Spawn listeners: told when the
//! object's maker says it is complete (`notify_spawn`, `ClassStore::notify_spawn`, a
//! store's `releasable` → `notify_end`), not by `insert`. Removal of either kind by one id;
//! and several objects at once (`get_disjoint_mut`, `iter_mut`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use respawn_arena::{Arena, ArenaConfig, ArenaError, Handle, Lifecycle, ObjectFlags, SlabConfig};

#[derive(Debug)]
struct Ship {
    name: String,
    drops: Arc<AtomicUsize>,
}

impl Drop for Ship {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

type Log = Arc<Mutex<Vec<(Handle<Ship>, String)>>>;

/// An arena whose `Ship`s' ends are logged (handle and name, read from the intact object).
fn logged() -> (Arena, Log, Arc<AtomicUsize>) {
    let mut arena = Arena::new();
    let log: Log = Arc::default();
    let to = Arc::clone(&log);
    arena.add_end_listener(move |h, ship: &Ship| to.lock().unwrap().push((h, ship.name.clone()))).unwrap();
    (arena, log, Arc::new(AtomicUsize::new(0)))
}

fn ship(name: &str, drops: &Arc<AtomicUsize>) -> Ship {
    Ship { name: name.to_owned(), drops: Arc::clone(drops) }
}

#[test]
fn every_arena_end_is_told_once_with_the_object_intact() {
    let (mut arena, log, drops) = logged();
    let a = arena.insert(ship("remove", &drops));
    let b = arena.insert(ship("try_remove", &drops));
    let c = arena.insert(ship("destroy", &drops));
    let d = arena.insert(ship("retain", &drops));
    let e = arena.insert(ship("deactivate", &drops));
    let kept = arena.insert(ship("kept", &drops));

    assert_eq!(arena.remove(a).unwrap().name, "remove");
    assert_eq!(arena.try_remove(b).unwrap().name, "try_remove");
    arena.destroy(c.raw()).unwrap();
    arena.retain::<Ship>(|s| s.name != "retain");
    let token = arena.store_mut::<Ship>().unwrap().deactivate(e).unwrap().expect("not at the ceiling");
    // SAFETY: `deactivate` left the ship in the token's cell; dropped once, here.
    unsafe { std::ptr::drop_in_place(token.cell().cast::<Ship>().as_ptr()) };
    arena.recycle(token).unwrap();

    let names: Vec<_> = log.lock().unwrap().iter().map(|(h, n)| (*h, n.clone())).collect();
    let expected: Vec<_> = [(a, "remove"), (b, "try_remove"), (c, "destroy"), (d, "retain"), (e, "deactivate")]
        .into_iter()
        .map(|(h, n)| (h, n.to_owned()))
        .collect();
    assert_eq!(names, expected);
    assert_eq!(drops.load(Ordering::SeqCst), 5);

    // Failed ends tell nobody.
    assert!(arena.remove(a).is_none());
    assert!(arena.destroy(c.raw()).is_err());
    let _root = arena.root(kept).unwrap();
    assert!(matches!(arena.try_remove(kept), Err(ArenaError::Rooted)));
    assert_eq!(log.lock().unwrap().len(), 5);
}

#[test]
fn a_slot_retired_at_the_generation_ceiling_is_told_too() {
    let slab = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 4, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab, max_generation: 2, ..ArenaConfig::DEFAULT });
    let told = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&told);
    arena.add_end_listener(move |_, _: &u64| _ = count.fetch_add(1, Ordering::SeqCst)).unwrap();
    let first = arena.insert(1u64);
    arena.remove(first);
    let second = arena.insert(2u64);
    assert_eq!(second.index(), first.index());
    arena.remove(second); // generation 2: the slot retires
    assert_eq!(arena.stats::<u64>().unwrap().retired, 1);
    assert_eq!(told.load(Ordering::SeqCst), 2);
}

#[test]
fn notify_end_tells_early_and_the_release_stays_silent() {
    let (mut arena, log, drops) = logged();
    let a = arena.insert(ship("a", &drops));
    assert!(matches!(arena.notify_end(a.raw()), Ok(true)));
    assert!(matches!(arena.notify_end(a.raw()), Ok(false)), "told already");
    assert!(arena.flags(a.raw()).unwrap().contains(ObjectFlags::END_NOTIFIED));
    assert!(arena.get(a).is_some(), "telling ends nothing");
    assert!(
        matches!(arena.set_flags(a.raw(), ObjectFlags::END_NOTIFIED), Err(ArenaError::ReservedFlags(_))),
        "the arena keeps the flag"
    );
    arena.remove(a);
    assert_eq!(log.lock().unwrap().len(), 1);

    // The next object in the slot starts untold.
    let b = arena.insert(ship("b", &drops));
    assert_eq!(b.index(), a.index());
    assert!(!arena.flags(b.raw()).unwrap().contains(ObjectFlags::END_NOTIFIED));
    arena.remove(b);
    assert_eq!(log.lock().unwrap().len(), 2);

    // Objects that cannot end now are refused, and nobody is told.
    assert!(matches!(arena.notify_end(b.raw()), Err(ArenaError::Stale)));
    let rooted = arena.insert(ship("rooted", &drops));
    arena.add_to_root(rooted.raw()).unwrap();
    assert!(matches!(arena.notify_end(rooted.raw()), Err(ArenaError::Rooted)));
    let permanent = arena.insert_permanent(ship("permanent", &drops)).map_err(|r| r.error).unwrap();
    assert!(matches!(arena.notify_end(permanent.raw()), Err(ArenaError::Permanent)));
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[test]
fn listeners_run_in_order_per_class_until_removed() {
    let mut arena = Arena::new();
    let order: Arc<Mutex<Vec<&str>>> = Arc::default();
    let (o1, o2, o3) = (Arc::clone(&order), Arc::clone(&order), Arc::clone(&order));
    let first = arena.add_end_listener(move |_, _: &u32| o1.lock().unwrap().push("first")).unwrap();
    let _second = arena.add_end_listener(move |_, _: &u32| o2.lock().unwrap().push("second")).unwrap();
    arena.add_end_listener(move |_, _: &u64| o3.lock().unwrap().push("other class")).unwrap();
    assert_eq!(arena.end_listeners::<u32>(), 2);

    let h = arena.insert(1u32);
    arena.remove(h);
    assert_eq!(*order.lock().unwrap(), ["first", "second"]);

    assert!(arena.remove_listener(first));
    assert!(!arena.remove_listener(first), "removed already");
    assert_eq!(arena.end_listeners::<u32>(), 1);
    let h = arena.insert(2u32);
    arena.remove(h);
    assert_eq!(*order.lock().unwrap(), ["first", "second", "second"]);
    assert_eq!(arena.end_listeners::<i8>(), 0, "an unknown class");
}

#[test]
fn spawn_listeners_hear_what_the_maker_says_is_complete_and_only_their_class() {
    let mut arena = Arena::new();
    let log: Arc<Mutex<Vec<(&str, u64)>>> = Arc::default();
    let (l1, l2, l3) = (Arc::clone(&log), Arc::clone(&log), Arc::clone(&log));
    let first = arena.add_spawn_listener(move |_, v: &u64| l1.lock().unwrap().push(("first", *v))).unwrap();
    arena.add_spawn_listener(move |_, v: &u64| l2.lock().unwrap().push(("second", *v))).unwrap();
    let end = arena.add_end_listener(move |_, v: &u64| l3.lock().unwrap().push(("end", *v))).unwrap();
    assert_eq!((arena.spawn_listeners::<u64>(), arena.end_listeners::<u64>()), (2, 1));
    arena.add_spawn_listener(|_, _: &u8| panic!("another class's listener")).unwrap();

    // `insert` tells nobody: its caller may not be done with the object.
    let h = arena.insert(1u64);
    assert_eq!(*log.lock().unwrap(), []);
    *arena.get_mut(h).unwrap() = 7;
    arena.notify_spawn(h.raw()).unwrap();
    assert_eq!(std::mem::take(&mut *log.lock().unwrap()), [("first", 7), ("second", 7)]);

    // Through the class's store: one test of a byte, then the listeners.
    let mut store = arena.store_mut::<u64>().unwrap();
    let g = store.insert(8);
    store.notify_spawn(g);
    assert_eq!(std::mem::take(&mut *log.lock().unwrap()), [("first", 8), ("second", 8)]);

    // A permanent object's cell lies outside the class's slabs: found all the same.
    let p = arena.insert_permanent(9u64).unwrap();
    arena.notify_spawn(p.raw()).unwrap();
    assert_eq!(std::mem::take(&mut *log.lock().unwrap()), [("first", 9), ("second", 9)]);

    // A handle that does not resolve tells nobody.
    arena.remove(h);
    assert_eq!(std::mem::take(&mut *log.lock().unwrap()), [("end", 7)]);
    assert!(matches!(arena.notify_spawn(h.raw()), Err(ArenaError::Stale)));
    assert_eq!(*log.lock().unwrap(), []);

    // One id names a listener of either kind; removing one leaves the others.
    assert!(arena.remove_listener(first) && arena.remove_listener(end));
    assert!(!arena.remove_listener(first) && !arena.remove_listener(end), "removed already");
    assert_eq!((arena.spawn_listeners::<u64>(), arena.end_listeners::<u64>()), (1, 0));
    arena.notify_spawn(g.raw()).unwrap();
    arena.remove(g);
    assert_eq!(*log.lock().unwrap(), [("second", 8)]);
    assert_eq!(arena.spawn_listeners::<i8>(), 0, "an unknown class");
}

#[test]
fn a_releasable_tells_the_end_listeners_once_before_its_release() {
    let (mut arena, log, drops) = logged();
    let h = arena.insert(ship("kept", &drops));
    let mut store = arena.store_mut::<Ship>().unwrap();
    let mut found = store.releasable(h).unwrap();
    found.notify_end();
    assert_eq!(log.lock().unwrap().len(), 1, "told now, the object intact");
    assert!(found.flags().contains(ObjectFlags::END_NOTIFIED));
    found.object().name.clear(); // a pool's `reset`, after the listeners heard
    assert!(found.keep());
    assert_eq!(*log.lock().unwrap(), [(h, "kept".to_owned())], "and not again at the release");
}

#[test]
fn a_panicking_listener_leaves_the_object_in_place_and_drops_it_once() {
    let mut arena = Arena::new();
    let drops = Arc::new(AtomicUsize::new(0));
    arena.add_end_listener(|_, _: &Ship| panic!("listener")).unwrap();
    let h = arena.insert(ship("a", &drops));
    assert!(catch_unwind(AssertUnwindSafe(|| arena.remove(h))).is_err());
    assert_eq!(arena.get(h).map(|s| s.name.as_str()), Some("a"), "the remove did not happen");
    // Told once already: the next end does not call the listener again.
    assert_eq!(arena.remove(h).map(|s| s.name.clone()), Some("a".to_owned()));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    let g = arena.insert(ship("b", &drops));
    drop(arena); // ends without a word
    let _ = g;
    assert_eq!(drops.load(Ordering::SeqCst), 2, "every object dropped once");
}

#[test]
fn get_disjoint_mut_lends_distinct_live_objects_only() {
    let mut arena = Arena::new();
    let a = arena.insert(1u32);
    let b = arena.insert(2u32);
    let c = arena.insert(3u32);
    let p = arena.insert_permanent(4u32).map_err(|r| r.error).unwrap();

    let [x, y, z, w] = arena.get_disjoint_mut([c, a, b, p]).unwrap();
    std::mem::swap(x, y);
    *z += *w;
    assert_eq!([arena.get(a), arena.get(b), arena.get(c)], [Some(&3), Some(&6), Some(&1)]);
    assert_eq!(arena.get_disjoint_mut::<u32, 0>([]).map(|r| r.len()), Some(0));

    assert!(arena.get_disjoint_mut([a, b, a]).is_none(), "the same handle twice");
    arena.remove(b);
    let b2 = arena.insert(9u32);
    assert_eq!(b2.index(), b.index());
    assert!(arena.get_disjoint_mut([b, a]).is_none(), "a stale handle");
    assert!(arena.get_disjoint_mut([b, b2]).is_none(), "two generations of one slot");
    arena.set_lifecycle(a.raw(), Lifecycle::Garbage).unwrap();
    assert!(arena.get_disjoint_mut([a, c]).is_none(), "a hidden object");
    let forged: Handle<u32> = Handle::from_raw(arena.insert(0u64).raw());
    assert!(arena.get_disjoint_mut([forged, c]).is_none(), "another class's object");
}

#[test]
fn iter_mut_visits_each_visible_object_once_with_its_handle() {
    let mut arena = Arena::new();
    let handles: Vec<Handle<u32>> = (0..200).map(|i| arena.insert(i)).collect();
    for h in handles.iter().step_by(3) {
        arena.remove(*h);
    }
    arena.set_lifecycle(handles[1].raw(), Lifecycle::Garbage).unwrap();
    let mut seen = Vec::new();
    for (h, v) in arena.iter_mut::<u32>() {
        *v += 1000;
        seen.push(h);
    }
    let expected: Vec<_> = arena.iter::<u32>().map(|(h, _)| h).collect();
    assert_eq!(seen, expected);
    assert_eq!(seen.len(), 200 - 67 - 1);
    assert!(arena.iter::<u32>().all(|(h, v)| *v == h.index() - handles[0].index() + 1000));
    assert_eq!(arena.iter_mut::<i64>().count(), 0, "an unknown class");
}
