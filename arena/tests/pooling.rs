//! The arena's pooling surface: `take_cell`/`activate` (precreation), `deactivate` (the `Reuse`
//! release), `recycle`, `store_of` and `insert_permanent`, with every object dropped once.

use respawn_allocator::AllocError;
use respawn_arena::{
    Arena, ArenaConfig, ArenaError, CompactCell, FreedCell, Handle, Lifecycle, ObjectFlags, Rejected, SlabConfig,
};
use respawn_testkit::drops::Drops;

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT };

/// An object that records its drop under its id.
#[derive(Debug)]
struct Tracked {
    id: usize,
    _pad: [u64; 3],
    log: Drops,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.log.note_drop(self.id);
    }
}

fn tracked(log: &Drops, id: usize) -> Tracked {
    Tracked { id, _pad: [0; 3], log: log.clone() }
}

/// A second class, for wrong-class checks.
#[derive(Debug)]
struct Other(u64);

/// Lets a token go without recycling it: its slot stays unused for good.
fn abandon(_token: FreedCell) {}

/// The flags of slot `index`, vacant or not.
fn slot_flags(arena: &Arena, index: u32) -> ObjectFlags {
    arena.table().slot(index).unwrap().flags()
}

fn ids_ticked(arena: &mut Arena) -> Vec<usize> {
    let mut ids = Vec::new();
    arena.tick::<Tracked>(|t| ids.push(t.id));
    ids.sort_unstable();
    ids
}

fn ids_listed(arena: &Arena) -> Vec<usize> {
    let mut ids: Vec<usize> = arena.iter::<Tracked>().map(|(_, t)| t.id).collect();
    ids.sort_unstable();
    ids
}

/// Writes `value` into the token's cell.
///
/// # Safety
/// The token's cell is empty (from `take_cell`, or a deactivated cell whose object was moved or
/// dropped) and belongs to class `T`.
unsafe fn fill<T>(token: &FreedCell, value: T) {
    // SAFETY: the caller's cell is uninitialised, sized and aligned for `T`, and ours.
    unsafe { token.cell().cast::<T>().as_ptr().write(value) };
}

/// The token in the compact form `ClassStore::activate` takes, made by its class's map, as a
/// pool makes it.
fn compact(arena: &Arena, token: FreedCell) -> CompactCell {
    let map = arena.cell_map(token.class()).expect("the token's class");
    map.compact(token).unwrap_or_else(|_| panic!("a cell of the class's map"))
}

/// `take_cell` hands out a `Lent` cell invisible to the arena; `activate` makes the
/// object built in it live under the slot's current generation.
#[test]
fn take_cell_then_activate_places_an_object_built_elsewhere() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    arena.insert(tracked(&log, 0));
    let token = arena.store_mut::<Tracked>().unwrap().take_cell().unwrap();
    assert_eq!(token.class(), arena.class_of::<Tracked>().unwrap());
    assert_eq!(slot_flags(&arena, token.slot()), Lifecycle::Lent.flags());
    assert_eq!(arena.len::<Tracked>(), 1, "a taken cell holds no object yet");
    assert_eq!(arena.handle_at(token.slot()), None);
    assert_eq!(ids_ticked(&mut arena), vec![0]);
    assert_eq!(ids_listed(&arena), vec![0]);

    // Built off the arena, as a precreation worker would, then sent back.
    let worker_log = log.clone();
    let token = std::thread::spawn(move || {
        // SAFETY: `take_cell` handed out an empty cell of class `Tracked`, ours alone.
        unsafe { fill(&token, tracked(&worker_log, 1)) };
        token
    })
    .join()
    .unwrap();
    let slot = token.slot();
    let cell = token.cell();
    let token = compact(&arena, token);
    let mut store = arena.store_mut::<Tracked>().unwrap();
    // SAFETY: the token is this arena's, of class `Tracked`, and its cell holds one.
    let h = unsafe { store.activate(token) };
    assert_eq!(store.get(h).unwrap().id, 1);
    assert_eq!(h.index(), slot);
    assert_eq!(arena.get(h).unwrap().id, 1);
    assert_eq!(arena.get(h).unwrap() as *const Tracked as *const u8, cell.as_ptr().cast_const());
    assert_eq!(arena.len::<Tracked>(), 2);
    assert_eq!(slot_flags(&arena, slot), ObjectFlags::empty());
    assert_eq!(h.generation().get(), arena.table().slot(slot).unwrap().generation());
    assert_eq!(ids_ticked(&mut arena), vec![0, 1]);
    assert_eq!(ids_listed(&arena), vec![0, 1]);
    assert_eq!(log.total(), 0);
    drop(arena);
    assert_eq!((log.times(0), log.times(1), log.total()), (1, 1, 2));
}

/// `deactivate` takes an object out of reach without dropping it; activating the token brings the
/// same object back under a new generation, and the arena drops it once in the end.
#[test]
fn deactivate_hides_without_dropping_and_activate_brings_the_object_back() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    let keep = arena.insert(tracked(&log, 0));
    let old = arena.insert(tracked(&log, 1));
    let address = arena.get(old).unwrap() as *const Tracked;

    let token =
        arena.store_mut::<Tracked>().unwrap().deactivate(old).unwrap().expect("far from the generation ceiling");
    assert_eq!(token.slot(), old.index());
    assert_eq!(token.cell().as_ptr().cast_const(), address.cast::<u8>());
    assert!(arena.get(old).is_none());
    assert!(matches!(arena.try_get(old), Err(ArenaError::Stale)));
    assert!(slot_flags(&arena, old.index()).is_vacant());
    assert_eq!(log.total(), 0, "deactivating drops nothing");
    assert_eq!(arena.len::<Tracked>(), 1);
    assert_eq!(ids_ticked(&mut arena), vec![0]);
    assert_eq!(ids_listed(&arena), vec![0]);

    let token = compact(&arena, token);
    let mut store = arena.store_mut::<Tracked>().unwrap();
    // SAFETY: `deactivate` left the `Tracked` in the token's cell; the arena takes it back.
    let new = unsafe { store.activate(token) };
    assert_eq!(new.index(), old.index());
    assert_ne!(new.generation(), old.generation(), "a deactivated object comes back under a new generation");
    assert_eq!(arena.get(new).unwrap().id, 1);
    assert_eq!(arena.get(new).unwrap() as *const Tracked, address, "the same object, in place");
    assert!(matches!(arena.try_get(old), Err(ArenaError::Stale)), "the old handle stays stale");
    assert_eq!(arena.len::<Tracked>(), 2);
    assert_eq!(ids_ticked(&mut arena), vec![0, 1]);
    assert_eq!(arena.get(keep).unwrap().id, 0);
    assert_eq!(log.total(), 0);

    drop(arena);
    assert_eq!((log.times(0), log.times(1), log.total()), (1, 1, 2));
}

/// A deactivated object's slot is flagged `IN_POOL` on top of `VACANT`, as `deactivate` documents,
/// until `recycle` makes it plain vacant.
#[test]
fn deactivate_flags_the_slot_in_pool() {
    let mut arena = Arena::with_config(SMALL);
    let h = arena.insert(7u64);
    let token = arena.store_mut::<u64>().unwrap().deactivate(h).unwrap().unwrap();
    let slot = token.slot();
    assert_eq!(slot_flags(&arena, slot).lifecycle(), Lifecycle::InPool);
    arena.recycle(token).unwrap();
    assert_eq!(slot_flags(&arena, slot).lifecycle(), Lifecycle::Vacant, "recycling makes it plain vacant");
}

/// `deactivate` refuses stale, rooted, guarded, permanent and wrong-class handles, and changes
/// nothing when it does.
#[test]
fn deactivate_refuses_what_it_may_not_release() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    let stale = arena.insert(tracked(&log, 0));
    drop(arena.remove(stale).unwrap());
    let rooted = arena.insert(tracked(&log, 1));
    arena.add_to_root(rooted.raw()).unwrap();
    let guarded = arena.insert(tracked(&log, 2));
    let guard = arena.root(guarded).unwrap();
    let permanent = arena.insert_permanent(tracked(&log, 3)).unwrap();
    let other = arena.insert(Other(4));
    let tracked_id = arena.class_of::<Tracked>().unwrap();
    let counts = |arena: &Arena| {
        let s = arena.stats::<Tracked>().unwrap();
        (s.len, s.vacant, s.retired, s.permanent)
    };
    let before = counts(&arena);

    let mut store = arena.store_of::<Tracked>(tracked_id).unwrap();
    assert!(matches!(store.deactivate(stale), Err(ArenaError::Stale)));
    assert!(matches!(store.deactivate(rooted), Err(ArenaError::Rooted)));
    assert!(matches!(store.deactivate(guarded), Err(ArenaError::Rooted)));
    assert!(matches!(store.deactivate(permanent), Err(ArenaError::Permanent)));
    let forged = Handle::<Tracked>::from_raw(other.raw());
    assert!(matches!(store.deactivate(forged), Err(ArenaError::WrongClass { .. })));
    assert!(matches!(arena.store_of::<Other>(tracked_id), Err(ArenaError::WrongClass { .. })));

    assert_eq!(counts(&arena), before, "nothing changed");
    for (h, id) in [(rooted, 1), (guarded, 2), (permanent, 3)] {
        assert_eq!(arena.get(h).unwrap().id, id);
    }
    assert_eq!(arena.get(other).unwrap().0, 4);
    assert_eq!(log.total(), 1, "only the removed object was dropped");
    drop(guard);
    drop(arena);
    assert_eq!(log.total(), 4);
}

/// At the generation ceiling `deactivate` retires the slot and drops the object itself
/// (`Ok(None)`), once, and no handle to the slot resolves again.
#[test]
fn deactivate_at_the_generation_ceiling_retires_the_slot_and_drops_the_object() {
    let log = Drops::default();
    let mut arena =
        Arena::with_config(ArenaConfig { max_generation: 2, slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT });
    let class = arena.register::<Tracked>().unwrap();
    let map = arena.cell_map(class).unwrap();
    let mut store = arena.store_mut::<Tracked>().unwrap();
    let first = store.insert(tracked(&log, 0));
    let mut handles = vec![first];
    let mut h = first;
    while let Some(token) = store.deactivate(h).unwrap() {
        assert_eq!(log.total(), 0, "deactivating below the ceiling drops nothing");
        // SAFETY: `deactivate` left the `Tracked` in the cell; the arena takes it back.
        h = unsafe { store.activate(map.compact(token).ok().unwrap()) };
        handles.push(h);
        assert!(handles.len() <= 2, "max_generation 2 allows one deactivation");
    }
    assert_eq!(handles.len(), 2);
    assert_eq!(log.times(0), 1, "the retired slot's object was dropped by deactivate");
    let stats = arena.stats::<Tracked>().unwrap();
    assert_eq!((stats.retired, stats.len), (1, 0));
    for h in &handles {
        assert!(arena.get(*h).is_none());
    }
    assert_eq!(arena.handle_at(first.index()), None);
    assert_retired_for_good(arena, &log, first);
}

/// Slot `first` (its object, number 0, dropped once already) retired: it says so, the next
/// insert (number 1) takes another slot, and the arena drops each object once.
fn assert_retired_for_good(mut arena: Arena, log: &Drops, first: Handle<Tracked>) {
    assert_eq!(slot_flags(&arena, first.index()).lifecycle(), Lifecycle::Retired);
    let next = arena.insert(tracked(log, 1));
    assert_ne!(next.index(), first.index(), "a retired slot is never handed out again");
    drop(arena);
    assert_eq!((log.times(0), log.times(1)), (1, 1));
}

/// `recycle` turns a taken cell back into a plain vacant slot that the next `insert` uses,
/// and refuses a token of another arena even when the slot index exists here.
#[test]
fn recycle_returns_a_taken_cell_and_refuses_another_arenas() {
    let mut arena = Arena::with_config(SMALL);
    let token = arena.store_mut::<u64>().unwrap().take_cell().unwrap();
    let (slot, cell) = (token.slot(), token.cell());
    let cells = SlabConfig::SMALL.cells_per_slab as usize;
    assert_eq!(arena.stats::<u64>().unwrap().vacant, cells - 1);
    arena.recycle(token).unwrap();
    assert_eq!(slot_flags(&arena, slot).lifecycle(), Lifecycle::Vacant, "vacant again");
    assert_eq!(arena.stats::<u64>().unwrap().vacant, cells);
    let h = arena.insert(5u64);
    assert_eq!(h.index(), slot, "the recycled slot is the next one used");
    assert_eq!(arena.get(h).unwrap() as *const u64 as *const u8, cell.as_ptr().cast_const());
    assert_eq!(arena.stats::<u64>().unwrap().vacant, cells - 1);

    // Two arenas with the same geometry: B's token names a slot index, class index and
    // vacant flag that A also has; only the cell address tells them apart.
    let mut a = Arena::with_config(SMALL);
    let mut b = Arena::with_config(SMALL);
    let foreign = b.store_mut::<u64>().unwrap().take_cell().unwrap();
    // A slot index names a cell number of its class, and which slab each arena took first
    // depends on its preparation thread: A takes slabs until it holds B's cell number too.
    let mut n = cells;
    while !a.table().slot(foreign.slot()).is_some_and(|s| s.flags().is_vacant()) {
        a.prefill::<u64>(n).unwrap();
        n += cells;
    }
    let here = a.table().slot(foreign.slot()).expect("the slot index exists in A too");
    assert_eq!(usize::from(here.class()), foreign.class().index());
    assert!(here.flags().is_vacant());
    let vacant = a.stats::<u64>().unwrap().vacant;
    assert!(matches!(a.recycle(foreign), Err(ArenaError::Stale)));
    assert_eq!(a.stats::<u64>().unwrap().vacant, vacant, "nothing changed in A");
    assert_eq!(b.stats::<u64>().unwrap().vacant, cells - 1, "B's cell stays out, never reused");
}

/// `store_of` is `store_mut` without the type lookup, and checks the id it is given.
#[test]
fn store_of_checks_the_class_id() {
    let mut big = Arena::with_config(SMALL);
    big.register::<u64>().unwrap();
    big.register::<Other>().unwrap();
    let only_big = big.register::<u32>().unwrap();

    let mut arena = Arena::with_config(SMALL);
    let ours = arena.register::<u64>().unwrap();
    let other = arena.register::<Other>().unwrap();
    let mut store = arena.store_of::<u64>(ours).unwrap();
    assert_eq!(store.class(), ours);
    let h = store.insert(9);
    assert_eq!(store.len(), 1);
    assert_eq!(*arena.get(h).unwrap(), 9);
    assert_eq!(arena.store_mut::<u64>().unwrap().get(h), Some(&9), "the same class as store_mut's");

    assert!(matches!(arena.store_of::<u64>(other), Err(ArenaError::WrongClass { .. })));
    assert!(matches!(arena.store_of::<Other>(ours), Err(ArenaError::WrongClass { .. })));
    assert!(matches!(arena.store_of::<u32>(only_big), Err(ArenaError::Unregistered(_))));
    assert_eq!(arena.class_of::<u32>(), None, "store_of registers nothing");
}

/// A permanent object resolves but cannot be ended, lives outside its class's slabs and
/// ticks, and is dropped once with the arena.
#[test]
fn permanent_objects_resolve_but_live_until_the_arena_drops() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    let regular = arena.insert(tracked(&log, 0));
    let p = arena.insert_permanent(tracked(&log, 1)).unwrap();
    let raw = p.raw();
    assert_eq!(arena.get(p).unwrap().id, 1);
    assert!(arena.flags(raw).unwrap().contains(ObjectFlags::PERMANENT));
    assert!(matches!(arena.try_remove(p), Err(ArenaError::Permanent)));
    assert!(arena.remove(p).is_none());
    assert!(matches!(arena.destroy(raw), Err(ArenaError::Permanent)));
    assert!(matches!(arena.store_mut::<Tracked>().unwrap().try_remove(p), Err(ArenaError::Permanent)));

    // Flags that change visibility must not touch a live bit the object does not have.
    arena.set_lifecycle(raw, Lifecycle::Garbage).unwrap();
    assert!(arena.get(p).is_none());
    arena.set_lifecycle(raw, Lifecycle::Live).unwrap();
    arena.set_flags(raw, ObjectFlags::ROOT_SET).unwrap();
    assert!(arena.get(p).is_some());

    assert_eq!(ids_ticked(&mut arena), vec![0]);
    assert_eq!(ids_listed(&arena), vec![0]);
    let stats = arena.stats::<Tracked>().unwrap();
    assert_eq!((stats.permanent, stats.len), (1, 1), "len counts the class's cells only");
    let address = arena.get(p).unwrap() as *const Tracked as usize;
    if let Some(region) = arena.allocator().region(arena.class_of::<Tracked>().unwrap()) {
        assert!(!region.contains(&address), "a permanent object is not in its class's region");
        assert!(region.contains(&(arena.get(regular).unwrap() as *const Tracked as usize)));
    }
    assert_eq!(log.total(), 0);
    drop(arena);
    assert_eq!((log.times(0), log.times(1), log.total()), (1, 1, 2));
}

/// A full permanent pool hands the value back undropped, and the objects already in it stay.
#[test]
fn a_full_permanent_pool_gives_the_value_back() {
    let log = Drops::default();
    let mut arena = Arena::with_config(ArenaConfig { permanent_bytes: 4096, ..SMALL });
    let mut placed = Vec::new();
    let rejected = loop {
        let id = placed.len();
        assert!(id < 4096, "a 4 KiB pool cannot hold 4096 objects");
        match arena.insert_permanent(tracked(&log, id)) {
            Ok(h) => placed.push(h),
            Err(r) => break r,
        }
    };
    let Rejected { error, value } = rejected;
    assert!(matches!(error, ArenaError::Alloc(AllocError::Full { .. })), "{error}");
    assert!(placed.len() >= 4096 / size_of::<Tracked>() - 1, "the pool was filled, got {}", placed.len());
    assert_eq!(value.id, placed.len());
    assert_eq!(log.total(), 0, "the rejected value is not dropped");
    drop(value);
    assert_eq!(log.times(placed.len()), 1);
    for (id, h) in placed.iter().enumerate() {
        assert_eq!(arena.get(*h).unwrap().id, id);
    }
    assert_eq!(arena.stats::<Tracked>().unwrap().permanent, placed.len());
    assert!(arena.insert_permanent([0u64; 8]).is_err(), "full for every class");
    drop(arena);
    assert!((0..=placed.len()).all(|id| log.times(id) == 1));
}

/// Objects in every pooling state are dropped exactly once: by the arena when it holds
/// them, by their holder otherwise.
#[test]
fn every_object_is_dropped_once_whatever_its_pooling_history() {
    let log = Drops::default();
    let mut arena = Arena::with_config(ArenaConfig { max_generation: 2, ..SMALL });
    let class = arena.register::<Tracked>().unwrap();
    let map = arena.cell_map(class).unwrap();

    // 0, 1: live all along.
    let live: Vec<_> = (0..2).map(|id| arena.insert(tracked(&log, id))).collect();
    // 2: deactivated, then activated back.
    let mut store = arena.store_of::<Tracked>(class).unwrap();
    let h = store.insert(tracked(&log, 2));
    let token = store.deactivate(h).unwrap().unwrap();
    // SAFETY: `deactivate` left object 2 in the cell.
    let reactivated = unsafe { store.activate(map.compact(token).ok().unwrap()) };
    // 3: built in a taken cell, activated.
    let token = store.take_cell().unwrap();
    // SAFETY: a taken cell is empty and of class `Tracked`.
    unsafe { fill(&token, tracked(&log, 3)) };
    // SAFETY: the token is this arena's and its cell holds object 3.
    let built = unsafe { store.activate(map.compact(token).ok().unwrap()) };
    // 4: deactivated and activated until its slot retired: `deactivate` dropped it.
    let h = store.insert(tracked(&log, 4));
    let token = store.deactivate(h).unwrap().unwrap();
    // SAFETY: `deactivate` left object 4 in the cell.
    let h = unsafe { store.activate(map.compact(token).ok().unwrap()) };
    assert!(store.deactivate(h).unwrap().is_none(), "max_generation 2: the second deactivate retires");
    // 5: deactivated and kept by the token's holder, which drops it by hand and drops the token.
    let h = store.insert(tracked(&log, 5));
    let kept = store.deactivate(h).unwrap().unwrap();
    // 6: deactivated, dropped by hand, the cell recycled, and 7 placed in it.
    let h = store.insert(tracked(&log, 6));
    let recycled = store.deactivate(h).unwrap().unwrap();
    let recycled_slot = recycled.slot();
    // 8: a taken cell never written; the token just goes.
    let unused = store.take_cell().unwrap();
    // 9: removed; the caller drops it.
    let removed = store.insert(tracked(&log, 9));
    let nine = store.remove(removed).unwrap();
    // 10: permanent.
    let permanent = arena.insert_permanent(tracked(&log, 10)).unwrap();
    // 11: hidden (garbage), still the arena's.
    let hidden = arena.insert(tracked(&log, 11));
    arena.set_lifecycle(hidden.raw(), Lifecycle::Garbage).unwrap();

    // SAFETY: `deactivate` left object 5 in the cell, owned by the token's holder, not the
    // arena: this is its one drop. The cell stays mapped while `arena` lives.
    unsafe { std::ptr::drop_in_place(kept.cell().cast::<Tracked>().as_ptr()) };
    abandon(kept);
    // SAFETY: as for object 5, with object 6.
    unsafe { std::ptr::drop_in_place(recycled.cell().cast::<Tracked>().as_ptr()) };
    arena.recycle(recycled).unwrap();
    let reused = arena.insert(tracked(&log, 7));
    assert_eq!(reused.index(), recycled_slot);
    abandon(unused);
    drop(nine);

    let before_drop: Vec<u32> = (0..12).map(|id| log.times(id)).collect();
    assert_eq!(before_drop, vec![0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0]);
    for h in live.iter().chain([&reactivated, &built, &reused, &permanent]) {
        assert!(arena.get(*h).is_some());
    }
    assert_eq!(ids_ticked(&mut arena), vec![0, 1, 2, 3, 7]);
    drop(arena);
    let after_drop: Vec<u32> = (0..12).map(|id| log.times(id)).collect();
    assert_eq!(after_drop, vec![1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1], "id 8 was never built");
    assert_eq!(log.total(), 11);
}

/// A deactivation's token compacted by the class's map names the object's cell, which still holds
/// it, and activating the compact token brings the object back.
#[test]
fn a_deactivation_compacted_by_the_class_map_names_the_cell_and_activates_back() {
    #[derive(Debug, PartialEq)]
    struct Shot(u64);
    let mut arena = Arena::with_config(SMALL);
    let handles: Vec<Handle<Shot>> = (0..40).map(|i| arena.insert(Shot(i))).collect();
    let class = arena.class_of::<Shot>().unwrap();
    let map = arena.cell_map(class).unwrap();
    for (i, &h) in handles.iter().enumerate() {
        let mut store = arena.store_mut::<Shot>().unwrap();
        let address = store.get(h).unwrap() as *const Shot as *mut u8;
        let found = store.releasable(h).unwrap();
        let cell = map.compact(found.deactivate().expect("below the ceiling")).expect("a cell of the class");
        assert!(!cell.is_occupied());
        // SAFETY: the map's arena is alive and the token came from its class.
        assert_eq!(unsafe { map.cell(&cell) }.as_ptr(), address, "object {i}");
        assert!(arena.get(h).is_none(), "deactivated: the handle is stale");
        // SAFETY: the deactivated cell holds the object untouched; activated back, it is live.
        let again = unsafe { arena.store_mut::<Shot>().unwrap().activate(cell) };
        assert_eq!(arena.get(again), Some(&Shot(i as u64)));
    }
}

/// `keep` takes an object out of reach without dropping it and without a token: the class
/// keeps it in its cell, `reuse` brings the most recently kept back under a new generation,
/// and the arena drops what nobody reused, once.
#[test]
fn keep_holds_the_object_in_its_class_and_reuse_brings_it_back() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    let first = arena.insert(tracked(&log, 0));
    let second = arena.insert(tracked(&log, 1));
    let third = arena.insert(tracked(&log, 2));
    let address = arena.get(second).unwrap() as *const Tracked;

    let mut store = arena.store_mut::<Tracked>().unwrap();
    assert!(!store.keeping(), "off until a pool says so");
    store.set_keeping(true);
    assert!(store.keeping());
    for h in [first, second] {
        assert!(store.releasable(h).unwrap().keep(), "far from the generation ceiling");
    }
    assert_eq!((store.kept(), store.kept_total(), store.len()), (2, 2, 1));
    assert_eq!(log.total(), 0, "keeping drops nothing");
    assert!(matches!(arena.try_get(second), Err(ArenaError::Stale)), "stale at once");
    assert_eq!(slot_flags(&arena, second.index()).lifecycle(), Lifecycle::InPool);
    assert_eq!(ids_ticked(&mut arena), vec![2]);
    assert_eq!(ids_listed(&arena), vec![2]);
    let class = arena.class_of::<Tracked>().unwrap();
    assert_eq!((arena.kept(class), arena.kept_total(class)), (2, 2));

    // Last in, first out: the warmest cell first.
    let mut store = arena.store_mut::<Tracked>().unwrap();
    let (again, object) = store.reuse().expect("two kept");
    assert_eq!((object.id, object as *const Tracked), (1, address), "the same object, in place");
    assert_eq!(again.index(), second.index());
    assert_ne!(again.generation(), second.generation(), "a new generation");
    assert_eq!((store.kept(), store.len()), (1, 2));
    assert!(arena.get(second).is_none(), "the old handle stays stale");
    assert_eq!(arena.get(again).unwrap().id, 1);
    assert_eq!(ids_ticked(&mut arena), vec![1, 2]);
    assert_eq!(arena.get(third).unwrap().id, 2);

    // Object 0 is still kept: the arena drops it with the rest.
    drop(arena);
    assert_eq!((log.times(0), log.times(1), log.times(2), log.total()), (1, 1, 1, 3));
}

/// `keep` at the generation ceiling retires the slot and drops the object itself (`false`),
/// once; nothing is kept and the slot is never handed out again.
#[test]
fn keep_at_the_generation_ceiling_retires_the_slot_and_drops_the_object() {
    let log = Drops::default();
    let mut arena =
        Arena::with_config(ArenaConfig { max_generation: 2, slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT });
    let mut store = arena.store_mut::<Tracked>().unwrap();
    let first = store.insert(tracked(&log, 0));
    assert!(store.releasable(first).unwrap().keep());
    let (h, _) = store.reuse().unwrap();
    assert!(!store.releasable(h).unwrap().keep(), "max_generation 2 allows one keep");
    assert_eq!((store.kept(), store.kept_total(), store.len()), (0, 1, 0));
    assert_eq!(log.times(0), 1, "the retired slot's object was dropped by keep");
    assert_retired_for_good(arena, &log, first);
}

/// `take_kept` hands the kept objects out as compact tokens (the pool's trim and shutdown),
/// which activate as a deactivation's would; `drop_kept` drops them and makes their slots vacant.
#[test]
fn kept_objects_leave_as_tokens_or_are_dropped_in_place() {
    let log = Drops::default();
    let mut arena = Arena::with_config(SMALL);
    let hs: Vec<_> = (0..4).map(|i| arena.insert(tracked(&log, i))).collect();
    let class = arena.class_of::<Tracked>().unwrap();
    let mut store = arena.store_mut::<Tracked>().unwrap();
    for &h in &hs {
        assert!(store.releasable(h).unwrap().keep());
    }
    let taken = store.take_kept();
    assert_eq!(taken.len(), 4);
    assert_eq!(taken.last().unwrap().number(), hs[3].index() - hs[0].index() + taken[0].number());
    assert_eq!((store.kept(), store.len()), (0, 0));
    let mut store = arena.store_mut::<Tracked>().unwrap();
    // SAFETY: each token was a kept cell holding its `Tracked`, this class's.
    let back: Vec<_> = taken.into_iter().map(|cell| unsafe { store.activate(cell) }).collect();
    assert_eq!(ids_ticked(&mut arena), vec![0, 1, 2, 3]);
    assert_eq!(log.total(), 0);

    let mut store = arena.store_mut::<Tracked>().unwrap();
    for &h in &back[..3] {
        assert!(store.releasable(h).unwrap().keep());
    }
    let vacant = arena.stats::<Tracked>().unwrap().vacant;
    assert_eq!(arena.drop_kept(class), 3);
    assert_eq!((log.times(0), log.times(1), log.times(2), log.times(3)), (1, 1, 1, 0));
    assert_eq!(arena.kept(class), 0);
    assert_eq!(arena.stats::<Tracked>().unwrap().vacant, vacant + 3, "their slots are vacant again");
    assert_eq!(slot_flags(&arena, back[0].index()).lifecycle(), Lifecycle::Vacant);
    assert_eq!(arena.drop_kept(class), 0, "nothing left to drop");
    drop(arena);
    assert_eq!(log.total(), 4, "each dropped once");
}
