//! The pools tell the class's listeners themselves, without a World: a spawn once the
//! object is complete (after `init` and `on_spawn`), whichever path built it (a kept
//! object, a ready one, an inline build, a class without a pool); a destroy before the
//! hooks run (before `on_release` and `reset`), whatever the policy, sub-objects before
//! their owners, and never again at the release or the purge.

#![cfg(feature = "world")]

use std::sync::{Arc, Mutex};

use respawn_arena::Handle;
use respawn_gc::{CollectOptions, Heap, Object, Trace};
use respawn_pool::{Policy, PoolConfig, Poolable, Pools};

#[derive(Trace, Object)]
struct Ship {
    id: u32,
    spawned: bool,
    released: bool,
}

impl Poolable for Ship {
    fn create() -> Self {
        Ship { id: 0, spawned: false, released: false }
    }
    fn on_spawn(&mut self) {
        self.spawned = true;
    }
    fn on_release(&mut self) {
        self.released = true;
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// A class without a pool.
#[derive(Trace, Object)]
struct Rock {
    id: u32,
}

impl Poolable for Rock {
    fn create() -> Self {
        Rock { id: 0 }
    }
}

/// What a listener saw: which list, the object's id, and its hooks' flags.
type Log = Arc<Mutex<Vec<(&'static str, u32, bool, bool)>>>;

fn pools(policy: Policy) -> (Pools, Log) {
    let mut pools = Pools::new(Heap::new());
    pools.add::<Ship>(PoolConfig { policy, ..PoolConfig::ON_DEMAND }).unwrap();
    let log: Log = Arc::default();
    // SAFETY: the heap is only given listeners, never replaced.
    let heap = unsafe { pools.heap_mut() };
    let l = Arc::clone(&log);
    heap.add_spawn_listener(move |_, s: &Ship| l.lock().unwrap().push(("spawn", s.id, s.spawned, s.released))).unwrap();
    let l = Arc::clone(&log);
    heap.add_end_listener(move |_, s: &Ship| l.lock().unwrap().push(("end", s.id, s.spawned, s.released))).unwrap();
    let l = Arc::clone(&log);
    heap.add_spawn_listener(move |_, r: &Rock| l.lock().unwrap().push(("spawn rock", r.id, false, false))).unwrap();
    let l = Arc::clone(&log);
    heap.add_end_listener(move |_, r: &Rock| l.lock().unwrap().push(("end rock", r.id, false, false))).unwrap();
    (pools, log)
}

fn taken(log: &Log) -> Vec<(&'static str, u32, bool, bool)> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn every_spawn_path_tells_once_the_object_is_complete() {
    let (mut pools, log) = pools(Policy::Reuse);
    // An inline build (nothing ready, nothing kept).
    let a = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
    // A kept object (`Reuse`).
    pools.destroy(a).unwrap();
    taken(&log);
    let b = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
    // A ready one (prefilled), through the typed view.
    pools.prefill::<Ship>(1).unwrap();
    let mut view = pools.class_pool_mut::<Ship>().unwrap();
    let c = view.spawn_with(|s| s.id = 3).unwrap();
    let d = view.try_spawn_with(|s| s.id = 4).unwrap();
    // A class without a pool, and an insert.
    let rock = pools.spawn_with(|r: &mut Rock| r.id = 5).unwrap();
    let e = pools.insert(Ship { id: 6, spawned: false, released: false }).unwrap();
    assert_eq!(
        taken(&log),
        [
            ("spawn", 2, true, false),
            ("spawn", 3, true, false),
            ("spawn", 4, true, false),
            ("spawn rock", 5, false, false),
            ("spawn", 6, false, false), // inserted as is: no hook
        ]
    );
    assert!([b, c, d, e].iter().all(|&h| pools.heap().get(h).is_some()) && pools.heap().get(rock).is_some());
}

#[test]
fn every_policy_tells_at_destroy_before_the_hooks_and_never_again() {
    for policy in Policy::ALL {
        let (mut pools, log) = pools(policy);
        let a = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
        let b = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
        let rock = pools.spawn_with(|r: &mut Rock| r.id = 3).unwrap();
        taken(&log);

        pools.destroy(a).unwrap();
        pools.class_pool_mut::<Ship>().unwrap().destroy(b).unwrap();
        pools.destroy(rock).unwrap(); // no pool: garbage now, told now
        assert_eq!(
            taken(&log),
            [("end", 1, true, false), ("end", 2, true, false), ("end rock", 3, false, false)],
            "{policy:?}: before `on_release` and `reset`"
        );

        // SAFETY: the heap is collected, never replaced.
        unsafe { pools.heap_mut() }.collect_garbage(CollectOptions::default());
        pools.maintain();
        assert_eq!(taken(&log), [], "{policy:?}: not again at the release or the purge");
        // A refused destroy tells nobody.
        assert!(pools.destroy(a).is_err());
        assert_eq!(taken(&log), [], "{policy:?}");
    }
}

#[test]
fn an_owner_is_told_after_its_sub_objects() {
    for policy in Policy::ALL {
        let (mut pools, log) = pools(policy);
        let owner = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
        let sub: Handle<Ship> = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
        let rock = pools.spawn_with(|r: &mut Rock| r.id = 3).unwrap();
        // SAFETY: the heap is given links, never replaced.
        let heap = unsafe { pools.heap_mut() };
        heap.set_outer(sub.raw(), Some(owner.raw())).unwrap();
        heap.set_outer(rock.raw(), Some(sub.raw())).unwrap();
        taken(&log);

        pools.destroy(owner).unwrap();
        assert_eq!(
            taken(&log),
            [("end rock", 3, false, false), ("end", 2, true, false), ("end", 1, true, false)],
            "{policy:?}: deepest first, each before its hooks"
        );
        // SAFETY: as above.
        unsafe { pools.heap_mut() }.collect_garbage(CollectOptions::default());
        assert_eq!(taken(&log), [], "{policy:?}: once");
    }
}
