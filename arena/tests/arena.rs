//! Behaviour of the arena: handles, drops, flags, roots, returned cells, ticks, bad input.

use std::collections::HashSet;
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use respawn_arena::{
    class_local_index, Arena, ArenaConfig, ArenaError, Ended, EndedCells, Freed, FreedCell, Handle, Lifecycle,
    ObjectFlags, RawHandle, SlabConfig, BLOCK_SLOTS,
};

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, max_generation: u32::MAX, ..ArenaConfig::DEFAULT };

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
struct Projectile {
    pos: [f32; 3],
    vel: [f32; 3],
    life: f32,
    id: u32,
}

fn projectile(id: u32) -> Projectile {
    Projectile { pos: [0.0; 3], vel: [1.0, 2.0, 3.0], life: 1.0, id }
}

/// Counts its drops in a shared counter.
#[derive(Debug)]
struct Counted(Arc<AtomicUsize>, u32);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn handles_are_eight_bytes_and_print_class_index_v_generation() {
    /// A class of this test's own: how a handle prints depends on where every arena of the
    /// process placed its class.
    struct Enemy(#[allow(dead_code)] u32);
    assert_eq!(size_of::<Handle<Projectile>>(), 8);
    assert_eq!(size_of::<Option<Handle<Projectile>>>(), 8);
    assert_eq!(size_of::<RawHandle>(), 8);
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(Enemy(0));
    // The index among the class's slots: which slab the class gets first is up to the
    // preparation thread, so not always 0, but within the class's range, which begins on a
    // block of the table.
    let local = class_local_index(std::any::type_name::<Enemy>(), h.index()).expect("registered once");
    assert!(local < SMALL.slab.cells_per_slab * SMALL.slab.max_slabs, "{local}");
    assert_eq!((h.index() - local) as usize % BLOCK_SLOTS, 0, "the class's slots begin on a block");
    assert_eq!(format!("{h:?}"), format!("Enemy#{local}v1"));
    assert_eq!(format!("{:?}", h.raw()), format!("{}v1", h.index()), "a raw handle has no class");
    arena.remove(h).unwrap();
    let h2 = arena.insert(Enemy(1));
    assert_eq!(format!("{h2:?}"), format!("Enemy#{local}v2"), "same slot, next generation");
    assert_eq!(Handle::<Enemy>::from_bits(h2.to_bits()), Some(h2));
    assert_eq!(RawHandle::from_bits(5), None, "generation zero is no handle");
}

#[test]
fn a_class_placed_differently_by_two_arenas_prints_the_table_index() {
    struct Scout(#[allow(dead_code)] u32);
    struct Tank(#[allow(dead_code)] u32);
    let mut first = Arena::with_config(SMALL);
    let scout = first.insert(Scout(1));
    first.insert(Tank(1));
    let scout_class = std::any::type_name::<Scout>();
    let local = class_local_index(scout_class, scout.index()).expect("one arena so far");
    assert_eq!(format!("{scout:?}"), format!("Scout#{local}v1"));
    // The second arena registers the classes the other way round: `Scout`'s slots begin
    // elsewhere, and its table index alone no longer says where it lies in its class.
    let mut second = Arena::with_config(SMALL);
    second.insert(Tank(2));
    let other = second.insert(Scout(2));
    assert_eq!(class_local_index(scout_class, other.index()), None);
    assert_eq!(format!("{other:?}"), format!("Scout@{}v1", other.index()));
    assert_eq!(format!("{scout:?}"), format!("Scout@{}v1", scout.index()), "the first arena's too");
    assert!(class_local_index(std::any::type_name::<Tank>(), 0).is_none());
}

#[test]
fn removed_handle_goes_stale_and_never_resolves_to_the_new_tenant() {
    let mut arena = Arena::with_config(SMALL);
    let old = arena.insert(projectile(1));
    assert_eq!(arena.remove(old).unwrap().id, 1);
    let new = arena.insert(projectile(2));
    assert_eq!(new.index(), old.index(), "the slot is reused");
    assert!(arena.get(old).is_none());
    assert!(arena.get_mut(old).is_none());
    assert!(!arena.contains(old));
    assert!(matches!(arena.try_remove(old), Err(ArenaError::Stale)));
    assert!(matches!(arena.try_get(old), Err(ArenaError::Stale)));
    assert_eq!(arena.get(new).unwrap().id, 2);
}

#[test]
fn double_remove_is_an_error_and_changes_nothing() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(Counted(Arc::clone(&drops), 0));
    let keep = arena.insert(Counted(Arc::clone(&drops), 1));
    drop(arena.remove(h).unwrap());
    assert!(matches!(arena.try_remove(h), Err(ArenaError::Stale)));
    assert!(matches!(arena.destroy(h.raw()), Err(ArenaError::Stale)));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(arena.len::<Counted>(), 1);
    assert_eq!(arena.get(keep).unwrap().1, 1);
}

/// A class in a module of its own, for the messages that name it.
mod units {
    /// Never built: only its name and its size (a class needs a byte) matter.
    #[allow(dead_code)]
    pub struct Ghost(pub u8);
}

#[test]
fn errors_name_a_class_by_its_type_without_its_module_path() {
    let mut arena = Arena::with_config(SMALL);
    let projectiles = arena.register::<Projectile>().unwrap();
    let Err(err) = arena.store_of::<units::Ghost>(projectiles) else { panic!("another class's id") };
    assert_eq!(err.to_string(), "a handle of class Ghost names an object of class Projectile");
    let unknown = respawn_arena::ClassId::from_index(projectiles.index() as u16 + 1);
    let Err(err) = arena.store_of::<units::Ghost>(unknown) else { panic!("no class has that id") };
    assert_eq!(err.to_string(), "class Ghost is not registered with this arena");
    arena.register::<units::Ghost>().unwrap();
    let err = arena.register::<units::Ghost>().unwrap_err();
    assert_eq!(err.to_string(), "class Ghost is registered already");
}

#[test]
fn forged_and_wrong_class_handles_are_refused() {
    let mut arena = Arena::with_config(SMALL);
    let p = arena.insert(projectile(1));
    let s = arena.insert(String::from("hello"));
    let forged: Handle<String> = Handle::from_raw(p.raw());
    assert!(arena.get(forged).is_none());
    assert!(matches!(arena.try_get(forged), Err(ArenaError::WrongClass { .. })));
    let err = arena.try_remove(forged).unwrap_err();
    // Classes are named as every message names them: the type without its module path.
    assert_eq!(err.to_string(), "a handle of class String names an object of class Projectile");
    // Out of range, and a generation never issued.
    let far = Handle::<Projectile>::from_raw(RawHandle::new(1 << 30, 1.try_into().unwrap()));
    assert!(matches!(arena.try_get(far), Err(ArenaError::Stale)));
    let future = Handle::<Projectile>::from_raw(RawHandle::new(p.index(), 9.try_into().unwrap()));
    assert!(arena.get(future).is_none());
    // A vacant slot at its current generation does not resolve either.
    let v = arena.insert(projectile(2));
    arena.remove(v).unwrap();
    let vacant = Handle::<Projectile>::from_raw(RawHandle::new(v.index(), 2.try_into().unwrap()));
    assert!(matches!(arena.try_get(vacant), Err(ArenaError::Stale)));
    assert_eq!(arena.get(s).unwrap(), "hello");
    assert_eq!(arena.get(p).unwrap().id, 1);
}

#[test]
fn unsupported_classes_are_refused_with_the_value_back() {
    let mut arena = Arena::with_config(SMALL);
    let r = arena.try_insert(()).unwrap_err();
    assert!(matches!(r.error, ArenaError::Alloc(_)), "{}", r.error);
    assert!(r.error.to_string().contains("zero-sized"));
    #[repr(align(8192))]
    struct Huge(#[allow(dead_code)] u8);
    let r = arena.try_insert(Huge(3)).unwrap_err();
    assert!(r.error.to_string().contains("alignment"), "{}", r.error);
    assert_eq!(r.value.0, 3);
    arena.register::<Projectile>().unwrap();
    assert!(matches!(arena.register::<Projectile>(), Err(ArenaError::AlreadyRegistered(_))));
    let unknown = respawn_arena::ClassId::from_index(999);
    assert!(matches!(arena.set_ended_cells(unknown, EndedCells::Vacant), Err(ArenaError::Unregistered(_))));
}

#[test]
fn exhausted_reservation_hands_the_value_back() {
    let mut arena = Arena::with_config(SMALL);
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 2, huge_pages: false };
    arena.register_with::<Projectile>(cfg).unwrap();
    let hs: Vec<_> = (0..128).map(|i| arena.insert(projectile(i))).collect();
    let r = arena.try_insert(projectile(999)).unwrap_err();
    assert!(matches!(r.error, ArenaError::Alloc(_)));
    assert!(r.error.to_string().contains("max_slabs"), "{}", r.error);
    assert_eq!(r.value.id, 999);
    // A removal makes room: no object was lost, the arena still works.
    arena.remove(hs[5]).unwrap();
    let h = arena.insert(projectile(1000));
    assert_eq!(arena.get(h).unwrap().id, 1000);
    assert_eq!(arena.len::<Projectile>(), 128);
}

/// `try_insert_mut` lends the object it placed: changed through that, it is the object the
/// handle resolves to; with the reservation used up it hands the value back.
#[test]
fn try_insert_mut_lends_the_object_it_placed_or_hands_the_value_back() {
    let mut arena = Arena::with_config(SMALL);
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 1, huge_pages: false };
    arena.register_with::<Projectile>(cfg).unwrap();
    let mut store = arena.store_mut::<Projectile>().unwrap();
    let handles: Vec<_> = (0..64)
        .map(|i| {
            let (h, p) = store.try_insert_mut(projectile(i)).unwrap();
            p.life = i as f32 * 2.0;
            h
        })
        .collect();
    let r = store.try_insert_mut(projectile(999)).unwrap_err();
    assert!(matches!(r.error, ArenaError::Alloc(_)));
    assert_eq!(r.value.id, 999);
    for (i, h) in handles.into_iter().enumerate() {
        let p = arena.get(h).unwrap();
        assert_eq!((p.id, p.life), (i as u32, i as f32 * 2.0));
    }
    assert_eq!(arena.len::<Projectile>(), 64);
}

#[test]
fn try_insert_with_builds_in_a_vacant_cell_and_a_panicking_create_inserts_nothing() {
    let mut arena = Arena::with_config(SMALL);
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 1, huge_pages: false };
    arena.register_with::<Projectile>(cfg).unwrap();
    let mut store = arena.store_mut::<Projectile>().unwrap();
    let (first, p) = store.try_insert_with(|| projectile(1)).unwrap();
    p.life = 7.0;
    // A panicking `create` gives its cell back: the next insert takes that same cell.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = store.try_insert_with(|| -> Projectile { panic!("create failed") });
    }));
    assert!(panicked.is_err());
    let (second, _) = store.try_insert_with(|| projectile(2)).unwrap();
    assert_eq!(second.raw().index(), first.raw().index() + 1, "the panicked insert's cell is reused");
    let handles: Vec<_> = (3..65).map(|i| store.try_insert_with(|| projectile(i)).unwrap().0).collect();
    assert_eq!(handles.len(), 62);
    // The class is full: the insert is refused before `create` runs.
    let mut ran = false;
    let refused = store.try_insert_with(|| {
        ran = true;
        projectile(999)
    });
    assert!(matches!(refused, Err(ArenaError::Alloc(_))));
    assert!(!ran, "create does not run for a refused insert");
    assert_eq!((arena.get(first).unwrap().id, arena.get(first).unwrap().life), (1, 7.0));
    assert_eq!(arena.get(second).unwrap().id, 2);
    assert_eq!(arena.len::<Projectile>(), 64);
}

#[test]
fn every_object_is_dropped_exactly_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let n = if cfg!(miri) { 150 } else { 5000 };
    {
        let mut arena = Arena::with_config(SMALL);
        let hs: Vec<_> = (0..n).map(|i| arena.insert(Counted(Arc::clone(&drops), i))).collect();
        // Removed objects are dropped by whoever takes them out.
        for h in hs.iter().step_by(3) {
            drop(arena.remove(*h).unwrap());
        }
        // Destroyed ones in place.
        for h in hs.iter().skip(1).step_by(3) {
            arena.destroy(h.raw()).unwrap();
        }
        // Hidden ones (garbage, found unreachable) must be dropped with the arena too.
        arena.set_lifecycle(hs[2].raw(), Lifecycle::Garbage).unwrap();
        arena.set_lifecycle(hs[5].raw(), Lifecycle::Unreachable).unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), (n as usize).div_ceil(3) + (n as usize - 1).div_ceil(3));
    }
    assert_eq!(drops.load(Ordering::SeqCst), n as usize);
}

#[test]
fn a_slot_is_retired_at_the_generation_ceiling() {
    let mut arena =
        Arena::with_config(ArenaConfig { slab: SlabConfig::SMALL, max_generation: 3, ..ArenaConfig::DEFAULT });
    let mut seen = HashSet::new();
    let first = arena.insert(projectile(0));
    let slot = first.index();
    arena.remove(first).unwrap();
    let mut last = first;
    for g in 2..=3 {
        let h = arena.insert(projectile(g));
        assert_eq!((h.index(), h.generation().get()), (slot, g));
        assert!(seen.insert(h));
        arena.remove(h).unwrap();
        last = h;
    }
    // Released at the ceiling: retired, never handed out again.
    for i in 0..200 {
        let h = arena.insert(projectile(100 + i));
        assert_ne!(h.index(), slot, "a retired slot came back");
    }
    assert!(arena.get(last).is_none());
    assert_eq!(arena.stats::<Projectile>().unwrap().retired, 1);
}

/// The class's returned cells, taken.
fn returned<T: 'static>(arena: &mut Arena) -> Vec<Freed> {
    let class = arena.class_of::<T>().unwrap();
    let before = arena.returned(class);
    let out: Vec<Freed> = arena.drain_returned(class).unwrap().collect();
    assert_eq!((before, arena.returned(class)), (out.len(), 0));
    out
}

/// A class that returns its cells returns every object that ends: a cell to take back, or
/// a retired slot with none (so whoever counts the class's objects sees the object go
/// either way).
#[test]
fn a_returned_class_returns_a_retired_slot() {
    let mut arena =
        Arena::with_config(ArenaConfig { slab: SlabConfig::SMALL, max_generation: 2, ..ArenaConfig::DEFAULT });
    let class = arena.register::<Projectile>().unwrap();
    assert_eq!(arena.ended_cells(class), Some(EndedCells::Vacant), "the default");
    arena.set_ended_cells(arena.class_of::<Projectile>().unwrap(), EndedCells::Returned).unwrap();
    assert_eq!(arena.ended_cells(class), Some(EndedCells::Returned));
    let first = arena.insert(projectile(0));
    arena.remove(first).unwrap();
    assert_eq!(arena.returned(class), 1, "waiting for the owner");
    let token =
        returned::<Projectile>(&mut arena).pop().unwrap().into_cell().expect("generation 1 is below the ceiling");
    assert_eq!(arena.returned(class), 0, "taken");
    arena.recycle(token).unwrap();
    let second = arena.insert(projectile(1));
    assert_eq!((second.index(), second.generation().get()), (first.index(), 2));
    arena.destroy(second.raw()).unwrap();
    let heard = returned::<Projectile>(&mut arena);
    assert!(
        matches!(heard.as_slice(), [Freed::Retired { slot, .. }] if *slot == first.index()),
        "the class returned {heard:?}"
    );
    assert_eq!(heard[0].class(), arena.class_of::<Projectile>().unwrap());
    assert_eq!(arena.stats::<Projectile>().unwrap().retired, 1);
}

/// `recycle_returned` makes a returned class's cells vacant in one pass, showing each entry
/// to its caller (a retired slot's too); entries whose object came back undropped stay on
/// the list for `drain_returned`.
#[test]
fn recycle_returned_makes_the_returned_cells_vacant_and_shows_each_entry() {
    let mut arena =
        Arena::with_config(ArenaConfig { slab: SlabConfig::SMALL, max_generation: 2, ..ArenaConfig::DEFAULT });
    let class = arena.register::<Projectile>().unwrap();
    arena.set_ended_cells(class, EndedCells::Returned).unwrap();
    let mut live: Vec<_> = (0..10).map(|i| arena.insert(projectile(i))).collect();
    let vacant = arena.stats::<Projectile>().unwrap().vacant;
    // Five ended by hand, one of them a second time at its slot's ceiling (retired).
    let first = live.remove(0);
    arena.remove(first).unwrap();
    let token = returned::<Projectile>(&mut arena).pop().unwrap().into_cell().unwrap();
    arena.recycle(token).unwrap();
    let again = arena.insert(projectile(10));
    assert_eq!(again.index(), first.index());
    arena.destroy(again.raw()).unwrap();
    for h in live.drain(..4) {
        arena.destroy(h.raw()).unwrap();
    }
    assert_eq!(arena.returned(class), 5);
    let mut seen = Vec::new();
    arena.recycle_returned(class, |freed| seen.push((freed.ended(), matches!(freed, Freed::Retired { .. })))).unwrap();
    assert_eq!(seen.len(), 5);
    assert_eq!(seen.iter().filter(|(_, retired)| *retired).count(), 1, "{seen:?}");
    assert!(seen.iter().all(|(ended, _)| *ended == Ended::Removed), "{seen:?}");
    assert_eq!(arena.returned(class), 0);
    // The four cells are vacant again (the retired slot's is gone for good): the next
    // four inserts take them without growing the class.
    let stats = arena.stats::<Projectile>().unwrap();
    assert_eq!((stats.vacant, stats.retired), (vacant + 4, 1));
    let slabs = stats.memory.granted_slabs;
    for i in 0..4 {
        live.push(arena.insert(projectile(20 + i)));
    }
    assert_eq!(arena.stats::<Projectile>().unwrap().memory.granted_slabs, slabs);
    assert!(live.iter().all(|&h| arena.get(h).is_some()));

    // Undropped objects stay on the list, for the owner that drops them.
    let drops = Arc::new(AtomicUsize::new(0));
    let counted = arena.register::<Counted>().unwrap();
    arena.set_ended_cells(counted, EndedCells::ReturnedUndropped).unwrap();
    let h = arena.insert(Counted(Arc::clone(&drops), 1));
    arena.destroy(h.raw()).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0, "returned undropped");
    let mut shown = 0;
    arena.recycle_returned(counted, |_| shown += 1).unwrap();
    assert_eq!((shown, arena.returned(counted)), (0, 1));
    assert!(matches!(arena.returned_cells(counted), [Freed::Occupied(..)]));

    let unknown = respawn_arena::ClassId::from_index(200);
    assert!(matches!(arena.recycle_returned(unknown, |_| {}), Err(ArenaError::Unregistered(_))));
}

/// Panics in its destructor while armed; counts its drops either way.
struct Grenade {
    armed: bool,
    drops: Arc<AtomicUsize>,
}
impl Drop for Grenade {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        assert!(!self.armed, "the grenade went off");
    }
}

/// `retire` ends an object for good: dropped once, stale, its slot never handed out
/// again, returned as `Retired`; a rooted object or a stale handle is refused.
#[test]
fn retire_drops_the_object_and_never_reuses_its_slot() {
    let mut arena = Arena::with_config(SMALL);
    arena.register::<Counted>().unwrap();
    arena.set_ended_cells(arena.class_of::<Counted>().unwrap(), EndedCells::Returned).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let doomed = arena.insert(Counted(Arc::clone(&drops), 0));
    let kept = arena.insert(Counted(Arc::clone(&drops), 1));
    let root = arena.root(kept).unwrap();
    assert!(matches!(arena.retire(kept.raw(), Ended::Collected), Err(ArenaError::Rooted)));
    drop(root);

    arena.retire(doomed.raw(), Ended::Collected).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped once");
    assert!(arena.get(doomed).is_none(), "stale");
    assert!(matches!(arena.retire(doomed.raw(), Ended::Collected), Err(ArenaError::Stale)));
    let heard_now = returned::<Counted>(&mut arena);
    assert!(
        matches!(heard_now.as_slice(), [Freed::Retired { slot, ended: Ended::Collected, .. }] if *slot == doomed.index()),
        "the class returned {heard_now:?}"
    );
    arena.set_ended_cells(arena.class_of::<Counted>().unwrap(), EndedCells::Vacant).unwrap();
    let more: Vec<_> = (2..100).map(|i| arena.insert(Counted(Arc::clone(&drops), i))).collect();
    assert!(more.iter().all(|h| h.index() != doomed.index()), "a retired slot was reused");
    assert_eq!(arena.stats::<Counted>().unwrap().retired, 1);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 100, "every object dropped exactly once");
}

#[test]
fn a_panicking_destructor_retires_the_slot_and_returns_it_retired() {
    let mut arena = Arena::with_config(SMALL);
    arena.register::<Grenade>().unwrap();
    arena.set_ended_cells(arena.class_of::<Grenade>().unwrap(), EndedCells::Returned).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let live = arena.insert(Grenade { armed: false, drops: Arc::clone(&drops) });
    let armed = arena.insert(Grenade { armed: true, drops: Arc::clone(&drops) });

    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| arena.destroy(armed.raw())));
    assert!(r.is_err(), "the destructor's panic goes on to the caller");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped once");
    let heard_now = returned::<Grenade>(&mut arena);
    assert!(
        matches!(heard_now.as_slice(), [Freed::Retired { slot, .. }] if *slot == armed.index()),
        "the class returned {heard_now:?}"
    );
    let stats = arena.stats::<Grenade>().unwrap();
    assert_eq!((stats.len, stats.retired), (1, 1), "{stats:?}");
    assert!(arena.get(armed).is_none(), "stale");
    assert!(matches!(arena.destroy(armed.raw()), Err(ArenaError::Stale)));

    // The retired slot is never handed out again; the arena goes on.
    arena.set_ended_cells(arena.class_of::<Grenade>().unwrap(), EndedCells::Vacant).unwrap();
    let more: Vec<_> = (0..100).map(|_| arena.insert(Grenade { armed: false, drops: Arc::clone(&drops) })).collect();
    assert!(more.iter().all(|h| h.index() != armed.index()), "a retired slot was reused");
    arena.remove(live).unwrap();
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 102, "every grenade dropped exactly once");
}

#[test]
fn tick_visits_every_visible_object_once_in_memory_order() {
    let mut arena = Arena::with_config(SMALL);
    let n = if cfg!(miri) { 300 } else { 10_000 };
    let hs: Vec<_> = (0..n).map(|i| arena.insert(projectile(i))).collect();
    for h in hs.iter().step_by(7) {
        arena.remove(*h).unwrap();
    }
    arena.set_lifecycle(hs[1].raw(), Lifecycle::Garbage).unwrap();
    let mut visited = Vec::new();
    arena.tick::<Projectile>(|p| {
        p.life -= 0.25;
        visited.push((p as *const Projectile as usize, p.id));
    });
    let expected: HashSet<u32> = (0..n).filter(|i| i % 7 != 0 && *i != 1).collect();
    assert_eq!(visited.len(), expected.len());
    assert_eq!(visited.iter().map(|v| v.1).collect::<HashSet<_>>(), expected);
    if !cfg!(miri) {
        assert!(visited.windows(2).all(|w| w[0].0 < w[1].0), "tick is in address order");
    }
    // iter agrees, and hands out resolving handles.
    let listed: Vec<_> = arena.iter::<Projectile>().map(|(h, p)| (h, p.id, p.life)).collect();
    assert_eq!(listed.len(), expected.len());
    for (h, id, life) in listed {
        assert_eq!(arena.get(h).unwrap().id, id);
        assert_eq!(life, 0.75);
    }
    // Un-hiding brings the object back into the tick.
    arena.set_lifecycle(hs[1].raw(), Lifecycle::Live).unwrap();
    let mut count = 0;
    arena.tick::<Projectile>(|_| count += 1);
    assert_eq!(count, expected.len() + 1);
}

/// Runs `work` on a rayon pool of `threads` whose threads are joined before it returns
/// (rayon's own `ThreadPool` only signals them): nothing outlives the test, so Miri checks
/// these tests for leaks too. The global pool is never started.
fn in_joined_pool<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
    let handles = Arc::new(Mutex::new(Vec::new()));
    let spawned = Arc::clone(&handles);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .spawn_handler(move |thread| {
            spawned.lock().unwrap().push(std::thread::Builder::new().spawn(|| thread.run())?);
            Ok(())
        })
        .build()
        .expect("a rayon pool");
    let result = pool.install(work);
    drop(pool);
    for thread in std::mem::take(&mut *handles.lock().unwrap()) {
        thread.join().expect("a rayon thread");
    }
    result
}

#[test]
fn par_tick_matches_tick() {
    in_joined_pool(3, par_tick_matches_tick_in_pool);
}

fn par_tick_matches_tick_in_pool() {
    let mut arena = Arena::new();
    let n = if cfg!(miri) { 200 } else { 50_000 };
    let hs: Vec<_> = (0..n).map(|i| arena.insert(projectile(i))).collect();
    for h in hs.iter().step_by(5) {
        arena.remove(*h).unwrap();
    }
    arena.par_tick::<Projectile>(|p| {
        p.pos[0] += p.vel[0];
        p.life -= 0.5;
    });
    let calls = AtomicUsize::new(0);
    arena.par_tick::<Projectile>(|_| {
        calls.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(calls.into_inner(), n as usize - (n as usize).div_ceil(5));
    for (i, h) in hs.iter().enumerate() {
        match arena.get(*h) {
            Some(p) => assert_eq!((p.pos[0], p.life), (1.0, 0.5), "object {i} ticked once"),
            None => assert_eq!(i % 5, 0),
        }
    }
}

#[test]
fn par_tick_chunks_cut_one_slab_by_work_in_memory_order() {
    in_joined_pool(2, || {
        let mut arena = Arena::new();
        // One default slab's worth: a split by slab would make one chunk of them all.
        let n: u64 = if cfg!(miri) { 300 } else { 1000 };
        let hs: Vec<_> = (0..n).map(|i| arena.insert(i)).collect();
        for h in hs.iter().step_by(7) {
            arena.set_dormant(h.raw(), true).unwrap();
        }
        /// One chunk's objects, handed in when the chunk's walk ends.
        struct Chunk<'a>(usize, Vec<u64>, &'a Mutex<Vec<(usize, Vec<u64>)>>);
        impl Drop for Chunk<'_> {
            fn drop(&mut self) {
                self.2.lock().unwrap().push((self.0, std::mem::take(&mut self.1)));
            }
        }
        let seen = Mutex::new(Vec::new());
        arena.par_tick_chunks::<u64, _>(
            |chunk| Chunk(chunk, Vec::new(), &seen),
            |chunk, h, v| {
                assert_eq!(h.raw(), hs[*v as usize].raw(), "the handle of the object lent");
                chunk.1.push(*v);
                *v += n;
            },
        );
        let mut chunks = seen.into_inner().unwrap();
        chunks.sort_by_key(|c| c.0);
        assert!(chunks.len() >= 2, "one slab of objects cut into {} chunk(s)", chunks.len());
        assert!(chunks.iter().enumerate().all(|(k, c)| c.0 == k && !c.1.is_empty()), "chunks 0.., none empty");
        // In memory order, chunk after chunk: every awake object once, no dormant one.
        let awake: Vec<u64> = (0..n).filter(|i| i % 7 != 0).collect();
        assert_eq!(chunks.iter().flat_map(|c| c.1.iter().copied()).collect::<Vec<_>>(), awake);
        let mean = awake.len() / chunks.len();
        assert!(chunks.iter().all(|c| c.1.len() <= 2 * mean + 64), "about even shares");
        // `par_tick` and `par_tick_reading` cut the same way and lend each object once.
        arena.par_tick::<u64>(|v| *v += n);
        arena.par_tick_reading::<u64>(|v, _| *v += n);
        for (i, h) in (0..n).zip(&hs) {
            let ticks = if i % 7 == 0 { 0 } else { 3 };
            assert_eq!(arena.get(*h), Some(&(i + ticks * n)), "object {i}");
        }
    });
}

#[test]
fn small_slabs_tick_across_shared_bitmap_words() {
    // 16 cells a slab: one bitmap word covers four slabs.
    let cfg = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 64, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab: cfg, max_generation: u32::MAX, ..ArenaConfig::DEFAULT });
    let hs: Vec<_> = (0..100).map(|i| arena.insert(i as u64)).collect();
    arena.remove(hs[17]).unwrap();
    let mut sum = 0;
    arena.tick::<u64>(|v| sum += *v);
    assert_eq!(sum, (0..100).sum::<u64>() - 17);
    let total = AtomicUsize::new(0);
    in_joined_pool(3, || {
        arena.par_tick::<u64>(|v| {
            total.fetch_add(*v as usize, Ordering::Relaxed);
        })
    });
    assert_eq!(total.into_inner() as u64, sum);
}

#[cfg(not(miri))] // under Miri each slab is its own allocation
#[test]
fn objects_of_a_class_lie_in_one_contiguous_region_in_slab_order() {
    let mut arena = Arena::new();
    let n = 5000;
    let hs: Vec<_> = (0..n).map(|i| arena.insert(projectile(i))).collect();
    let _other: Vec<_> = (0..n).map(|i| arena.insert(i as u64)).collect();
    let region = arena.allocator().region(arena.class_of::<Projectile>().unwrap()).unwrap();
    let addrs: Vec<usize> = hs.iter().map(|h| arena.get(*h).unwrap() as *const _ as usize).collect();
    assert!(addrs.iter().all(|a| region.contains(a)));
    // Within a slab, cells fill front to back. (Across slabs, insertion order follows the
    // order slabs were taken: the preparation thread and an inline preparation may hand
    // them out of address order when the thread falls behind, as under ThreadSanitizer.)
    let packed = addrs.windows(2).filter(|w| w[1] == w[0] + size_of::<Projectile>()).count();
    let slabs = arena.stats::<Projectile>().unwrap().memory.granted_slabs as usize;
    assert!(packed >= addrs.len() - slabs, "{packed} of {} steps packed over {slabs} slabs", addrs.len());
    // The aggregated tick walks them in address order, whatever the insertion order.
    let visited: Vec<usize> = arena.iter::<Projectile>().map(|(_, p)| p as *const Projectile as usize).collect();
    assert_eq!(visited.len(), addrs.len());
    assert!(visited.windows(2).all(|w| w[0] < w[1]), "iteration in address order");
    let u64_region = arena.allocator().region(arena.class_of::<u64>().unwrap()).unwrap();
    assert!(u64_region.end <= region.start || u64_region.start >= region.end);
}

#[test]
fn roots_pin_objects_until_released() {
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(projectile(1));
    let root = arena.root(h).unwrap();
    let root2 = root.clone();
    assert!(arena.is_rooted(h.raw()));
    assert!(matches!(arena.try_remove(h), Err(ArenaError::Rooted)));
    drop(root);
    assert!(matches!(arena.try_remove(h), Err(ArenaError::Rooted)), "a clone still roots it");
    // Guards may be dropped on another thread.
    std::thread::spawn(move || drop(root2)).join().unwrap();
    assert!(!arena.is_rooted(h.raw()));
    // The manual form.
    arena.add_to_root(h.raw()).unwrap();
    assert!(arena.flags(h.raw()).unwrap().contains(ObjectFlags::ROOT_SET));
    assert!(matches!(arena.destroy(h.raw()), Err(ArenaError::Rooted)));
    arena.remove_from_root(h.raw()).unwrap();
    assert!(matches!(arena.remove_from_root(h.raw()), Err(ArenaError::NotRooted)));
    assert_eq!(arena.remove(h).unwrap().id, 1);
    assert!(matches!(arena.root(h), Err(ArenaError::Stale)));
}

#[test]
fn a_root_may_outlive_its_arena() {
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(projectile(1));
    let root = arena.root(h).unwrap();
    drop(arena);
    assert_eq!(root.handle(), h);
    drop(root);
}

#[test]
fn hidden_objects_do_not_resolve_and_the_lifecycle_is_reserved() {
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(projectile(1));
    for state in [Lifecycle::Garbage, Lifecycle::Unreachable] {
        assert_eq!(arena.set_lifecycle(h.raw(), state).unwrap(), Lifecycle::Live);
        assert!(arena.get(h).is_none(), "{state:?} hides");
        assert!(matches!(arena.try_get(h), Err(ArenaError::Hidden(f)) if f.lifecycle() == state));
        assert!(matches!(arena.try_remove(h), Err(ArenaError::Hidden(_))));
        assert_eq!(arena.lifecycle(h.raw()).unwrap(), state);
        arena.set_lifecycle(h.raw(), Lifecycle::Live).unwrap();
        assert!(arena.get(h).is_some());
    }
    arena.set_flags(h.raw(), ObjectFlags::PERMANENT | ObjectFlags::ROOT_SET).unwrap();
    assert!(arena.get(h).is_some(), "other flags do not hide");
    arena.clear_flags(h.raw(), ObjectFlags::ROOT_SET).unwrap();
    for reserved in [ObjectFlags::VACANT, ObjectFlags::LIFECYCLE, Lifecycle::Garbage.flags()] {
        assert!(matches!(arena.set_flags(h.raw(), reserved), Err(ArenaError::ReservedFlags(_))));
        assert!(matches!(arena.clear_flags(h.raw(), reserved), Err(ArenaError::ReservedFlags(_))));
    }
    // The vacant states are the arena's, and a begun destroy is never undone.
    for state in [Lifecycle::Vacant, Lifecycle::InPool, Lifecycle::Lent, Lifecycle::Retired] {
        let refused = arena.set_lifecycle(h.raw(), state);
        assert!(matches!(refused, Err(ArenaError::Transition { from: Lifecycle::Live, to }) if to == state));
    }
    assert_eq!(arena.set_lifecycle(h.raw(), Lifecycle::Destroying).unwrap(), Lifecycle::Live);
    assert!(matches!(arena.set_lifecycle(h.raw(), Lifecycle::Live), Err(ArenaError::Transition { .. })));
    assert!(arena.get(h).is_none(), "refused moves change nothing");
    // A hidden object can still be destroyed by type-erased code.
    arena.destroy(h.raw()).unwrap();
    assert!(matches!(arena.flags(h.raw()), Err(ArenaError::Stale)));
}

#[test]
fn a_returned_class_returns_each_freed_cell_once_and_can_recycle() {
    let mut arena = Arena::with_config(SMALL);
    arena.register::<Projectile>().unwrap();
    arena.set_ended_cells(arena.class_of::<Projectile>().unwrap(), EndedCells::Returned).unwrap();
    let hs: Vec<_> = (0..10).map(|i| arena.insert(projectile(i))).collect();
    arena.remove(hs[0]).unwrap();
    arena.destroy(hs[1].raw()).unwrap();
    let freed = returned::<Projectile>(&mut arena);
    assert!(freed.iter().all(|f| f.ended() == Ended::Removed));
    let cells: Vec<FreedCell> = freed.into_iter().filter_map(Freed::into_cell).collect();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells.iter().map(FreedCell::slot).collect::<Vec<_>>(), vec![hs[0].index(), hs[1].index()]);
    assert!(returned::<Projectile>(&mut arena).is_empty(), "each returned once");
    // Returned cells are not reused until recycled.
    let h = arena.insert(projectile(10));
    assert!(h.index() != hs[0].index() && h.index() != hs[1].index());
    let other = Arena::with_config(SMALL);
    drop(other);
    for cell in cells {
        arena.recycle(cell).unwrap();
    }
    let reused = arena.insert(projectile(11));
    assert!(reused.index() == hs[0].index() || reused.index() == hs[1].index());
    assert!(arena.get(hs[0]).is_none() && arena.get(hs[1]).is_none());
}

#[test]
fn a_token_from_another_arena_is_refused() {
    let mut a = Arena::with_config(SMALL);
    let mut b = Arena::with_config(SMALL);
    a.register::<u64>().unwrap();
    a.set_ended_cells(a.class_of::<u64>().unwrap(), EndedCells::Returned).unwrap();
    let h = a.insert(5u64);
    a.remove(h).unwrap();
    let _ = b.insert(6u64);
    let token = returned::<u64>(&mut a).pop().unwrap().into_cell().unwrap();
    assert!(matches!(b.recycle(token), Err(ArenaError::Stale)));
}

#[test]
fn outer_links_and_handle_at() {
    let mut arena = Arena::with_config(SMALL);
    let owner = arena.insert(projectile(1));
    let part = arena.insert(projectile(2));
    arena.set_outer(part.raw(), Some(owner.raw())).unwrap();
    assert_eq!(arena.table().slot(part.index()).unwrap().outer(), Some(owner.index()));
    assert_eq!(arena.handle_at(owner.index()), Some(owner.raw()));
    assert!(arena.flags(owner.raw()).unwrap().contains(ObjectFlags::HAS_SUBOBJECTS));
    arena.remove(owner).unwrap();
    assert_eq!(arena.table().slot(part.index()).unwrap().outer(), None, "a removed owner cuts its parts loose");
    assert!(matches!(arena.set_outer(part.raw(), Some(owner.raw())), Err(ArenaError::Stale)));
    assert_eq!(arena.handle_at(owner.index()), None);
    arena.set_outer(part.raw(), None).unwrap();
    assert_eq!(arena.table().slot(part.index()).unwrap().outer(), None);
}

#[test]
fn sub_object_lists_follow_set_outer_and_release() {
    let mut arena = Arena::with_config(SMALL);
    let [a, b, c, d] = [1, 2, 3, 4].map(|i| arena.insert(projectile(i)).raw());
    let subs = |arena: &Arena, h: RawHandle| {
        let mut v: Vec<_> = arena.sub_objects(h).collect();
        v.sort();
        v
    };
    arena.set_outer(b, Some(a)).unwrap();
    arena.set_outer(c, Some(a)).unwrap();
    arena.set_outer(d, Some(c)).unwrap();
    assert_eq!(subs(&arena, a), vec![b, c]);
    assert_eq!(subs(&arena, c), vec![d]);
    // Cycles are refused, and nothing changes.
    assert!(matches!(arena.set_outer(a, Some(d)), Err(ArenaError::OuterCycle)));
    assert!(matches!(arena.set_outer(a, Some(a)), Err(ArenaError::OuterCycle)));
    assert_eq!(arena.table().slot(a.index()).unwrap().outer(), None);
    // Moving a sub-object to another owner updates both lists and both flags.
    arena.set_outer(d, Some(b)).unwrap();
    assert_eq!(subs(&arena, c), vec![]);
    assert!(!arena.flags(c).unwrap().contains(ObjectFlags::HAS_SUBOBJECTS));
    assert_eq!(subs(&arena, b), vec![d]);
    // Releasing a middle sub-object unlinks it from its owner and cuts its own parts loose.
    arena.destroy(b).unwrap();
    assert_eq!(subs(&arena, a), vec![c]);
    assert_eq!(arena.table().slot(d.index()).unwrap().outer(), None);
    assert_eq!(subs(&arena, b), vec![], "a stale owner has no sub-objects");
    // The sub-object mark is the arena's: callers can neither set nor clear it.
    assert!(matches!(arena.clear_flags(a, ObjectFlags::HAS_SUBOBJECTS), Err(ArenaError::ReservedFlags(_))));
    // A hidden owner is refused: a garbage owner's parts must not outlive it.
    arena.set_lifecycle(a, Lifecycle::Garbage).unwrap();
    assert!(matches!(arena.set_outer(d, Some(a)), Err(ArenaError::Hidden(_))));
}

#[test]
fn set_lifecycle_keeps_the_live_bitmap_in_step() {
    let mut arena = Arena::with_config(SMALL);
    let hs: Vec<_> = (0..3).map(|i| arena.insert(projectile(i))).collect();
    // The collector's white bit hides nothing; its verdict (`Unreachable`) takes the object
    // out of tick, and a revival brings it back.
    arena.table().slot(hs[1].index()).unwrap().insert_flags(ObjectFlags::MAYBE_UNREACHABLE);
    let mut seen = Vec::new();
    arena.tick::<Projectile>(|p| seen.push(p.id));
    assert_eq!(seen, vec![0, 1, 2]);
    arena.set_lifecycle(hs[1].raw(), Lifecycle::Unreachable).unwrap();
    seen.clear();
    arena.tick::<Projectile>(|p| seen.push(p.id));
    assert_eq!(seen, vec![0, 2]);
    arena.set_lifecycle(hs[1].raw(), Lifecycle::Live).unwrap();
    seen.clear();
    arena.tick::<Projectile>(|p| seen.push(p.id));
    assert_eq!(seen, vec![0, 1, 2]);
}

#[test]
fn class_store_is_the_same_arena_without_lookups() {
    let mut arena = Arena::with_config(SMALL);
    let mut store = arena.store_mut::<Projectile>().unwrap();
    let h = store.insert(projectile(4));
    assert_eq!(store.get(h).unwrap().id, 4);
    store.get_mut(h).unwrap().id = 5;
    store.tick(|p| p.life = 0.0);
    assert_eq!(store.len(), 1);
    assert_eq!(arena.get(h).unwrap().life, 0.0);
    let mut store = arena.store_mut::<Projectile>().unwrap();
    assert_eq!(store.remove(h).unwrap().id, 5);
    assert!(store.is_empty());
}

#[test]
fn a_class_range_spans_blocks_and_classes_get_their_own_ranges() {
    if cfg!(miri) {
        return; // 1 Mi objects are too many for Miri
    }
    let mut arena = Arena::new();
    let hs: Vec<_> = (0..BLOCK_SLOTS as u32 + 100).map(|i| arena.insert(i)).collect();
    let slabs = (BLOCK_SLOTS + 100).div_ceil(1024);
    assert_eq!(arena.table().len() as usize, slabs * 1024, "one slab's slots set up per slab taken");
    assert_eq!(arena.table().runs().count(), slabs, "a run per slab");
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(*arena.get(*h).unwrap(), i as u32);
    }
    // The next class's range starts after the whole of the first one's (4 Mi cells).
    let other = arena.insert(7u64);
    assert!(other.index() as usize >= 4 * BLOCK_SLOTS, "index {} inside u32's range", other.index());
    assert_eq!(arena.get(other), Some(&7));
    assert!(arena.get(Handle::<u64>::from_raw(hs[5].raw())).is_none(), "a u32 handle read as u64");
}

#[test]
fn stats_follow_the_class() {
    let mut arena = Arena::with_config(SMALL);
    let hs: Vec<_> = (0..100).map(|i| arena.insert(projectile(i))).collect();
    arena.remove(hs[0]).unwrap();
    let s = arena.stats::<Projectile>().unwrap();
    assert_eq!((s.len, s.vacant), (99, 2 * 64 - 99));
    assert_eq!(s.memory.granted_slabs, 2);
    assert_eq!(s.memory.cell_size, size_of::<Projectile>());
    assert!(s.name.ends_with("Projectile"));
    assert!(arena.stats::<u8>().is_none());
}

#[test]
fn retain_destroys_the_rejected_once_and_keeps_roots() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::with_config(SMALL);
    let hs: Vec<_> = (0..200).map(|i| arena.insert(Counted(Arc::clone(&drops), i))).collect();
    let pinned = arena.root(hs[4]).unwrap();
    let mut seen = 0;
    arena.retain::<Counted>(|c| {
        seen += 1;
        c.1 % 2 == 1
    });
    assert_eq!(seen, 200);
    assert_eq!(drops.load(Ordering::SeqCst), 99, "even ones dropped, except the rooted one");
    assert_eq!(arena.len::<Counted>(), 101);
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(arena.get(*h).is_some(), i % 2 == 1 || i == 4, "object {i}");
    }
    drop(pinned);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 200);
}

#[test]
fn retain_returns_freed_cells() {
    let mut arena = Arena::with_config(SMALL);
    arena.register::<u32>().unwrap();
    arena.set_ended_cells(arena.class_of::<u32>().unwrap(), EndedCells::Returned).unwrap();
    for i in 0..100u32 {
        arena.insert(i);
    }
    arena.retain::<u32>(|v| *v >= 10);
    assert_eq!(returned::<u32>(&mut arena).len(), 10);
}

/// `ReturnedUndropped`: an ended object comes back in its cell, undropped, for its owner to
/// drop; one nobody takes is dropped with the arena, once; a moved-out object (`remove`)
/// leaves an empty cell.
#[test]
fn undropped_returns_leave_the_drop_to_the_owner_or_the_arena() {
    let mut arena = Arena::with_config(SMALL);
    let class = arena.register::<Counted>().unwrap();
    arena.set_ended_cells(arena.class_of::<Counted>().unwrap(), EndedCells::ReturnedUndropped).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..4).map(|i| arena.insert(Counted(Arc::clone(&drops), i))).collect();
    arena.destroy(hs[0].raw()).unwrap();
    arena.destroy(hs[1].raw()).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0, "not dropped by the destroy");
    assert!(arena.get(hs[0]).is_none(), "stale at once");
    for freed in returned::<Counted>(&mut arena) {
        let Freed::Occupied(cell, Ended::Removed) = freed else { panic!("{freed:?}") };
        // SAFETY: an `Occupied` token's cell holds its `Counted`, undropped; dropped once here.
        unsafe { std::ptr::drop_in_place(cell.cell().as_ptr().cast::<Counted>()) };
        arena.recycle(cell).unwrap();
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2, "dropped by the owner");
    let moved = arena.remove(hs[3]).unwrap();
    let Some(Freed::Cell(cell, _)) = returned::<Counted>(&mut arena).pop() else { panic!("an empty cell") };
    arena.recycle(cell).unwrap();
    drop(moved);
    arena.destroy(hs[2].raw()).unwrap();
    assert_eq!(arena.returned(class), 1, "left for the arena");
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 4, "every object dropped exactly once");
}

#[test]
fn prefill_makes_room_now_and_reserve_asks_the_worker() {
    let mut arena = Arena::with_config(SMALL);
    arena.prefill::<Projectile>(1000).unwrap();
    let s = arena.stats::<Projectile>().unwrap();
    assert!(s.vacant >= 1000);
    let slabs = s.memory.granted_slabs;
    for i in 0..1000 {
        arena.insert(projectile(i));
    }
    assert_eq!(arena.stats::<Projectile>().unwrap().memory.granted_slabs, slabs, "no slab taken by the inserts");

    arena.reserve::<u64>(64 * 10).unwrap();
    let class = arena.class_of::<u64>().unwrap();
    let start = std::time::Instant::now();
    while arena.allocator().stats(class).unwrap().prepared_slabs < 10 {
        assert!(start.elapsed().as_secs() < 30, "the worker never prepared the reserved slabs");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(arena.reserve::<u64>(usize::MAX / 2).is_err(), "beyond the reservation is an error");
}

/// The overhead figure counts what the class takes beyond its objects: a full slab of
/// 32-byte projectiles costs its 16-byte slots and a few bytes of bookkeeping each; one
/// object alone in a slab carries the whole slab.
#[test]
fn overhead_per_object_counts_slots_slack_and_bookkeeping() {
    let cfg = SlabConfig { cells_per_slab: 128, spare_slabs: 0, max_slabs: 8, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab: cfg, ..ArenaConfig::DEFAULT });
    arena.register_with::<Projectile>(cfg).unwrap();
    assert_eq!(arena.stats::<Projectile>().unwrap().overhead_per_object(), None, "no object yet");

    let first = arena.insert(projectile(0));
    let alone = arena.stats::<Projectile>().unwrap();
    assert_eq!(alone.object_size, size_of::<Projectile>());
    assert!(alone.side_bytes > 0, "the live bitmap and vacant list take heap bytes");
    let per_alone = alone.overhead_per_object().unwrap();
    // One object in a 4 KiB slab: the slab's other 127 cells are its overhead.
    assert!(per_alone >= (127 * 32) as f64, "one object pays for its slab: {per_alone}");

    let rest: Vec<_> = (1..128).map(|i| arena.insert(projectile(i))).collect();
    let full = arena.stats::<Projectile>().unwrap();
    assert_eq!(full.memory.carved_slabs, 1, "128 objects fit one slab");
    let per_full = full.overhead_per_object().unwrap();
    let slots = size_of::<respawn_arena::Slot>() as f64;
    assert!(per_full >= slots, "every object has its slot: {per_full}");
    assert!(per_full < slots + 16.0, "a full slab costs its slots and a little bookkeeping: {per_full}");

    for h in rest.into_iter().chain([first]) {
        arena.remove(h).unwrap();
    }
    assert_eq!(arena.stats::<Projectile>().unwrap().overhead_per_object(), None);
}

/// The index space is finite: a class whose range no longer fits is refused with
/// `TableFull` before anything is reserved for it, and the arena keeps working.
#[test]
fn a_class_the_index_space_cannot_hold_is_refused() {
    #[derive(Debug)]
    struct Huge(#[allow(dead_code)] u64);
    #[derive(Debug)]
    struct Second(#[allow(dead_code)] u64);
    // 2³¹ slots: half the index space (2 048 of its 4 096 blocks).
    let half = SlabConfig { cells_per_slab: 1 << 16, spare_slabs: 0, max_slabs: 1 << 15, huge_pages: false };
    let mut arena = Arena::new();
    arena.register_with::<Huge>(half).unwrap();
    assert!(matches!(arena.register_with::<Second>(half), Err(ArenaError::TableFull)));
    assert!(arena.class_of::<Second>().is_none(), "a refused class is not registered");
    // A smaller class still fits, and both work.
    let second = arena.register_with::<Second>(SlabConfig::SMALL).unwrap();
    assert_eq!(arena.class_of::<Second>(), Some(second));
    let (a, b) = (arena.insert(Huge(1)), arena.insert(Second(2)));
    assert_eq!(arena.get(a).unwrap().0, 1);
    assert_eq!(arena.get(b).unwrap().0, 2);
}

#[test]
fn the_write_barrier_notes_what_the_game_changes_and_costs_nothing_off() {
    #[derive(Debug)]
    struct Leaf(u32);
    let mut arena = Arena::with_config(SMALL);
    let a = arena.insert(projectile(0));
    let leaf = arena.insert(Leaf(0));
    let traced = arena.class_of::<Projectile>().unwrap();
    let mut log = respawn_arena::BarrierLog::default();

    // Off: nothing is noted.
    arena.get_mut(a).unwrap().life = 2.0;
    arena.add_to_root(leaf.raw()).unwrap();
    arena.drain_barrier(&mut log);
    assert!(log.is_empty() && !arena.barrier());

    // On, for the traced class: births and loans of its objects, roots of any class.
    arena.set_barrier(true, |class, _| class == traced);
    let b = arena.insert(projectile(1));
    arena.get_mut(a).unwrap().life = 3.0;
    arena.store_mut::<Projectile>().unwrap().get_mut(b).unwrap().life = 4.0;
    arena.get_mut(leaf).unwrap().0 = 1; // a leaf class: no note
    arena.remove_from_root(leaf.raw()).unwrap();
    let _guard = arena.root(leaf).unwrap(); // a root: noted whatever the class
    arena.set_outer(a.raw(), Some(b.raw())).unwrap();
    arena.tick::<Projectile>(|p| p.life += 1.0);
    arena.tick::<Leaf>(|l| l.0 += 1);
    arena.drain_barrier(&mut log);
    assert_eq!(log.objects, [b.index(), a.index(), b.index(), a.index(), leaf.index()], "class by class");
    assert_eq!(log.classes, [traced]);

    // Drained: empty until something else changes; off: forgotten.
    let mut again = respawn_arena::BarrierLog::default();
    arena.drain_barrier(&mut again);
    assert!(again.is_empty());
    arena.get_mut(a).unwrap().life = 5.0;
    arena.set_barrier(false, |_, _| true);
    arena.drain_barrier(&mut again);
    assert!(again.is_empty());
    let live: Vec<u32> = arena.live_indices(traced).collect();
    assert_eq!(live, [a.index(), b.index()]);
}

/// The collector's entry lives in the class's record: set for the class whose type it was
/// made for, refused (nothing changed) for another class or an index the arena never gave.
#[test]
fn a_collector_entry_is_kept_by_its_class_and_refused_by_others() {
    use respawn_arena::CollectorEntry;

    // `unsafe` only to match the entry's function types: neither reads its argument.
    unsafe fn nothing(_: *mut u8) {}
    unsafe fn ready(_: *mut u8) -> bool {
        true
    }

    let mut arena = Arena::with_config(SMALL);
    let _p = arena.insert(projectile(0));
    let _l = arena.insert(7u32); // a second class
    let projectiles = arena.class_of::<Projectile>().unwrap().index();
    let leaves = arena.class_of::<u32>().unwrap().index();
    assert!(arena.collector_entry(projectiles).is_none(), "no collector has registered the class");

    // SAFETY: no function here reads its object.
    let entry = unsafe { CollectorEntry::new::<Projectile>(None, nothing, ready, nothing) };
    let refused = arena.set_collector_entry(leaves, entry);
    assert!(
        matches!(refused, Err(ArenaError::WrongClass { expected, found })
            if expected == entry.type_name() && found == std::any::type_name::<u32>()),
        "{refused:?}"
    );
    assert!(arena.collector_entry(leaves).is_none(), "a refused entry changes nothing");
    assert!(matches!(arena.set_collector_entry(99, entry), Err(ArenaError::Unregistered(_))));

    arena.set_collector_entry(projectiles, entry.with_owned(true)).unwrap();
    let kept = arena.collector_entry(projectiles).unwrap();
    assert!(kept.owned() && !kept.clustered() && kept.trace().is_none());
    assert_eq!(kept.type_id(), std::any::TypeId::of::<Projectile>());
    arena.set_collector_entry(projectiles, kept.with_clustered(true)).unwrap();
    assert!(arena.collector_entry(projectiles).unwrap().clustered());
    assert!(arena.collector_entry(leaves).is_none() && arena.collector_entry(99).is_none());
}
