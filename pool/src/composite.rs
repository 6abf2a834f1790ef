//! Composite precreation: an owner built together with its parts (sub-objects of other
//! classes) on the pool's workers, so that spawning the whole set is one pop.
//!
//! The seed talk's tower actor took 52 ms to build with its components on the game thread
//! and 1.9 ms precreated. Here a [`Composite`] class says what its parts are
//! (`type Parts = (Turret, Health, Radar)`) and builds the set in
//! [`assemble`](Composite::assemble); the pool's workers run it. **Each part lives in its
//! own class's store** (a class's cells are one contiguous region, so a part cannot live
//! in the owner's): the game thread takes a vacant cell of the owner's class and one of
//! each part's class, queues the set as one token (an [`Assembly`]), and a worker builds
//! all of them in it. A spawn pops the token, activates every cell and links each part to the
//! owner ([`Heap::set_outer`]): a few stores per part, no construction, no allocation.
//!
//! ```text
//!   game thread                                 workers
//!   take_cell(Tower) + take_cell(Turret) … ──► to_build: Assembly ──► assemble() → (Tower, (Turret, …))
//!                                                                      write each into its cell
//!   spawn ◄── pop Assembly ◄── magazines ◄──────────────────────────── publish
//!     activate Tower, activate Turret …, set_outer(part, tower)           (one token per composite)
//!
//!   release   Default ─► owner + parts Garbage ─► GC purge ─┐ parts' cells: their classes' own way
//!             Purge   ─► destroy_now(owner + parts) ────────┴► owner's cell: returned ─► `ended`
//!                                                                ─► new part cells ─► to_build
//!             Reuse   ─► parts intact? reset all, deactivate all ─► magazines as one Assembly (ready at once)
//!                        a part missing, relinked or added ─► `broken`: ends as Purge
//! ```
//!
//! Under `Default` and `Purge` the parts' cells go their own classes' way (a part class
//! with a pool of its own feeds that pool; one without returns the cells to its vacant
//! list), and the owner's class returns the owner's cell
//! ([`EndedCells`](respawn_arena::EndedCells)): the pool takes it at once after a `Purge`
//! release, and after a collection at its next miss, refill or
//! [`Pools::maintain`](crate::Pools::maintain), which pair it with fresh part cells and
//! queue it for the workers. Under the collector's `async_purge` the owner comes back
//! undropped in its cell, and the worker that rebuilds the set drops it first, as a
//! class's pool does.

use std::any::{type_name, TypeId};
use std::fmt;
use std::mem;
use std::ptr::NonNull;
use std::time::Duration;

use respawn_arena::{
    ArenaError, CellMap, ClassId, CompactCell, DropAll, EndedCells, FreedCell, Handle, ObjectFlags, RawHandle,
};
use respawn_gc::Heap;

use crate::class_pool::{compact, ErasedPool};
use crate::depot::{self, Recipe, Returned, Token};
use crate::error::refusal;
use crate::pool_core::{Cold, Kept, PoolCore};
use crate::sync::Arc;
use crate::{Policy, PoolConfig, PoolError, PoolStats, Poolable, Pools};

/// The most parts a composite can have (tuples of one to six classes).
pub const MAX_PARTS: usize = 6;

/// A pooled class whose objects come with sub-objects of other classes, built together
/// on the pool's workers: a tower with its turret, health and radar components.
///
/// Give it a pool with [`Pools::add_composite`](crate::Pools::add_composite) (or respawn's
/// `WorldBuilder::composite`). Every spawn then hands out the owner with a fresh set of
/// parts, each part in its own class's store with the owner as its outer (UE's Outer):
/// the parts are found through the owner's sub-objects, or in the handles
/// `spawn_composite` returns. The parts' classes are registered with the heap when the
/// pool is made. The owner's [`Poolable`] hooks run as for any pooled class, and each
/// part's `on_spawn`, `on_release` and (`Reuse`) `reset` run beside them;
/// [`Poolable::create`] of the owner is not used by the composite pool (it builds the
/// owner alone, for a plain `insert`).
///
/// | policy | a release | next spawn gets |
/// |---|---|---|
/// | `Default` | owner and parts become garbage together (the sub-object rule); the collector purges them | a set the workers built after the purge |
/// | `Purge` | owner and parts destroyed now | a set the workers rebuilt |
/// | `Reuse` | owner and parts reset and deactivated as one set, if the owner's sub-objects are, class for class, one visible, unrooted leaf per part; otherwise (a part destroyed or cut loose on its own, another sub-object added) the set is destroyed as under `Purge`, counted in [`CompositeStats::broken`] | the same set, reset, at once |
///
/// The `Reuse` check goes by class, not by identity: an object of a part's class linked to
/// the owner in place of a part cut loose is reused as that part (reset, and handed out
/// with the set from then on). Either way, a spawn never hands out a set with a part
/// missing or one too many.
///
/// ```
/// use respawn_gc::{Heap, Object, Trace};
/// use respawn_pool::{Composite, PoolConfig, Poolable, Pools};
///
/// #[derive(Trace, Object)]
/// struct Turret { angle: f32 }
/// impl Poolable for Turret { fn create() -> Self { Turret { angle: 0.0 } } }
///
/// #[derive(Trace, Object)]
/// struct Health { hp: u32 }
/// impl Poolable for Health { fn create() -> Self { Health { hp: 100 } } }
///
/// #[derive(Trace, Object)]
/// struct Tower { level: u32 }
/// impl Poolable for Tower { fn create() -> Self { Tower { level: 1 } } }
/// impl Composite for Tower {
///     type Parts = (Turret, Health);
///     fn assemble() -> (Self, Self::Parts) {
///         (Tower { level: 1 }, (Turret { angle: 0.0 }, Health { hp: 100 }))
///     }
/// }
///
/// let mut pools = Pools::new(Heap::new());
/// // No workers here: `prefill` builds on this thread.
/// let config = PoolConfig { workers: 0, precreate: false, low_watermark: 0, ..PoolConfig::DEFAULT };
/// pools.add_composite::<Tower>(config)?;
/// pools.prefill::<Tower>(4)?;
/// let (tower, (turret, health)) = pools.spawn_composite::<Tower>()?;
/// assert_eq!(pools.heap().get(health).unwrap().hp, 100);
/// assert_eq!(pools.heap().sub_objects(tower.raw()).count(), 2);
/// assert!(pools.heap().get(turret).is_some());
/// # Ok::<(), respawn_pool::PoolError>(())
/// ```
pub trait Composite: Poolable {
    /// The parts: a tuple of one to [`MAX_PARTS`] pooled classes, `(Turret, Health)`
    /// (`(Turret,)` for one). A class may appear more than once; the owner's own class may
    /// not.
    type Parts: Parts;

    /// Builds the owner and its parts. Workers call it off the game thread, so it must not
    /// need the world; it may be slow (that is what precreation hides).
    fn assemble() -> (Self, Self::Parts);

    /// Gives the owner its parts' handles, at every spawn, once each part is linked to it
    /// and before `init` and the hooks run. The parts' handles are fresh at each spawn (a
    /// `Reuse` set's parts come back with new generations), so an owner that keeps them
    /// keeps them from here. An owner that the collector should see holding its parts —
    /// under `Default`, a part nobody references is unreachable, as any sub-object is (a
    /// sub-object keeps its owner, not the reverse) — stores them in traced fields.
    fn attach(&mut self, parts: <Self::Parts as Parts>::Handles) {
        let _ = parts;
    }
}

/// The parts of a [`Composite`]: implemented for tuples of one to [`MAX_PARTS`]
/// [`Poolable`] classes. Its items are the composite pool's own.
pub trait Parts: Send + Sized + 'static {
    /// How many parts.
    const COUNT: usize;

    /// A handle to each part, `(Handle<Turret>, Handle<Health>)`: what
    /// [`Pools::spawn_composite`](crate::Pools::spawn_composite) returns beside the owner.
    type Handles: Copy + fmt::Debug + Send + Sync + 'static;

    /// What the composite pool needs of each part's class, in order.
    #[doc(hidden)]
    fn classes() -> [Option<PartClass>; MAX_PARTS];

    /// Moves each part into its cell.
    ///
    /// # Safety
    /// `cells[i]` is an uninitialised cell of part `i`'s class, owned by the caller.
    #[doc(hidden)]
    unsafe fn write(self, cells: &[NonNull<u8>; MAX_PARTS]);

    /// The typed handles of parts `raws` (one per part, in order).
    #[doc(hidden)]
    fn handles(raws: &[RawHandle; MAX_PARTS]) -> Self::Handles;
}

/// What a composite pool needs of one part's class, whatever its type: function pointers
/// made for it by [`PartClass::of`].
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct PartClass {
    name: &'static str,
    type_id: TypeId,
    register: fn(&mut Heap) -> Result<ClassId, ArenaError>,
    /// [`drop_part`], with its safety contract.
    drop: unsafe fn(NonNull<u8>),
    take_cell: fn(&mut Heap, ClassId) -> Result<FreedCell, ArenaError>,
    /// [`activate_part`], with its safety contract.
    activate: unsafe fn(&mut Heap, ClassId, CompactCell) -> RawHandle,
    /// [`on_spawn_part`], with its safety contract.
    on_spawn: unsafe fn(NonNull<u8>),
    on_release: fn(&mut Heap, RawHandle, bool),
    deactivate: fn(&mut Heap, ClassId, RawHandle) -> Result<Option<FreedCell>, ArenaError>,
}

impl fmt::Debug for PartClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PartClass {
    /// `P`'s functions.
    #[doc(hidden)]
    pub fn of<P: Poolable>() -> Self {
        Self {
            name: P::class_name(),
            type_id: TypeId::of::<P>(),
            register: |heap| heap.class_id::<P>(),
            drop: drop_part::<P>,
            take_cell: |heap, class| heap.store_of::<P>(class)?.take_cell(),
            activate: activate_part::<P>,
            on_spawn: on_spawn_part::<P>,
            on_release: |heap, raw, reset| {
                if let Some(part) = heap.get_mut(Handle::<P>::from_raw(raw)) {
                    part.on_release();
                    if reset {
                        part.reset();
                    }
                }
            },
            deactivate: |heap, class, raw| heap.store_of::<P>(class)?.deactivate(Handle::from_raw(raw)),
        }
    }
}

/// [`PartClass::drop`] for `P`.
///
/// # Safety
/// `cell` holds a `P` the caller owns alone; it is not touched again.
unsafe fn drop_part<P>(cell: NonNull<u8>) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::drop_in_place(cell.cast::<P>().as_ptr()) }
}

/// [`PartClass::activate`] for `P`: the part in `cell` becomes live; returns its handle.
///
/// # Safety
/// `class` is `P`'s in this heap (the id `register` returned), and `cell` is one of its
/// cells, compacted by its map, holding a built `P` that from now on belongs to the arena.
unsafe fn activate_part<P: Poolable>(heap: &mut Heap, class: ClassId, cell: CompactCell) -> RawHandle {
    // SAFETY: the caller's contract: the class is `P`'s, so its store is typed right.
    let mut store = unsafe { heap.store_of_unchecked::<P>(class) };
    // SAFETY: the caller's contract: a built `P` in one of the class's cells.
    unsafe { store.activate(cell) }.raw()
}

/// [`PartClass::on_spawn`] for `P`, on the part in `cell`.
///
/// # Safety
/// `cell` holds a live `P` nothing else borrows for the call.
unsafe fn on_spawn_part<P: Poolable>(cell: NonNull<u8>) {
    // SAFETY: the caller's contract.
    unsafe { (*cell.cast::<P>().as_ptr()).on_spawn() }
}

macro_rules! parts {
    ($n:literal: $($p:ident $i:tt),+) => {
        impl<$($p: Poolable),+> Parts for ($($p,)+) {
            const COUNT: usize = $n;
            type Handles = ($(Handle<$p>,)+);

            fn classes() -> [Option<PartClass>; MAX_PARTS] {
                let mut classes = [None; MAX_PARTS];
                $(classes[$i] = Some(PartClass::of::<$p>());)+
                classes
            }

            unsafe fn write(self, cells: &[NonNull<u8>; MAX_PARTS]) {
                // SAFETY: the caller's contract: cell `i` is an uninitialised cell of part
                // `i`'s class, written once.
                $(unsafe { cells[$i].cast::<$p>().as_ptr().write(self.$i) };)+
            }

            fn handles(raws: &[RawHandle; MAX_PARTS]) -> Self::Handles {
                ($(Handle::<$p>::from_raw(raws[$i]),)+)
            }
        }
    };
}

parts!(1: A 0);
parts!(2: A 0, B 1);
parts!(3: A 0, B 1, C 2);
parts!(4: A 0, B 1, C 2, D 3);
parts!(5: A 0, B 1, C 2, D 3, E 4);
parts!(6: A 0, B 1, C 2, D 3, E 4, F 5);

/// Counters of a composite pool: its [`PoolStats`] (which count composites: one spawn,
/// one release, one ready object per set) and what only a composite has.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompositeStats {
    /// The pool's counters, per composite.
    pub pool: PoolStats,
    /// Parts per composite.
    pub parts: usize,
    /// Owners whose cell came back (`Default`, `Purge`, collected) and was paired with new
    /// part cells for the workers.
    pub reassembled: u64,
    /// `Reuse` releases whose owner no longer had one visible, unrooted leaf sub-object of
    /// each part's class (a part destroyed or cut loose on its own, another sub-object
    /// added): the composite was destroyed (as `Purge`) instead of reused.
    pub broken: u64,
}

/// The cells of one composite: the owner's and one per part, each of its own class. The
/// token owns them all (a built one: the objects in them too).
#[derive(Debug)]
pub(crate) struct Assembly {
    owner: CompactCell,
    parts: [Option<CompactCell>; MAX_PARTS],
}

/// Places an [`Assembly`]'s cells: the owner's class map and each part's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AssemblyMap {
    owner: CellMap,
    parts: [Option<CellMap>; MAX_PARTS],
}

impl AssemblyMap {
    /// The addresses of the parts' cells (dangling beyond the parts).
    ///
    /// # Safety
    /// The arena is alive and `cells` came from this map's classes.
    unsafe fn part_cells(&self, cells: &[Option<CompactCell>; MAX_PARTS]) -> [NonNull<u8>; MAX_PARTS] {
        let mut out = [NonNull::dangling(); MAX_PARTS];
        for ((out, map), cell) in out.iter_mut().zip(&self.parts).zip(cells) {
            if let (Some(map), Some(cell)) = (map, cell) {
                // SAFETY: the caller's contract.
                *out = unsafe { map.cell(cell) };
            }
        }
        out
    }
}

impl Token for Assembly {
    type Map = AssemblyMap;

    #[inline(always)]
    unsafe fn cell(&self, map: &AssemblyMap) -> NonNull<u8> {
        // SAFETY: the caller's contract: the arena is alive and the owner's cell is the
        // owner map's.
        unsafe { map.owner.cell(&self.owner) }
    }

    /// The owner's cell still holds the owner that ended (`async_purge`); the parts' cells
    /// are always fresh.
    #[inline(always)]
    fn occupied(&self) -> bool {
        self.owner.is_occupied()
    }

    #[inline(always)]
    fn vacated(self) -> Self {
        Self { owner: self.owner.vacated(), ..self }
    }
}

/// What the workers run: [`Composite::assemble`], each object written into its cell.
struct Assembler<O: Composite> {
    assemble: fn() -> (O, O::Parts),
}

impl<O: Composite> Recipe<Assembly> for Assembler<O> {
    unsafe fn build(&self, cell: &Assembly, map: &AssemblyMap) {
        // A panic here leaves every cell as it was.
        let (owner, parts) = (self.assemble)();
        // SAFETY: the caller's contract: the token owns its cells, uninitialised, of the
        // owner's and each part's class, and `map` places them; each written once.
        unsafe {
            cell.cell(map).cast::<O>().as_ptr().write(owner);
            parts.write(&map.part_cells(&cell.parts));
        }
    }

    unsafe fn drop_built(&self, cell: &Assembly, map: &AssemblyMap) {
        // SAFETY: the caller's contract: `build` wrote an `O` and each part.
        unsafe { drop_assembly::<O>(cell, map) };
    }

    /// An occupied assembly's owner cell holds the ended `O`.
    fn drop_ended(&self) -> depot::DropFn {
        depot::drop_as::<O>
    }
}

/// Drops the owner and the parts in a built assembly's cells. A panicking destructor does
/// not stop the others (the first panic goes on after).
///
/// # Safety
/// The cells hold a built `O` and its parts, the caller's alone, not touched again.
unsafe fn drop_assembly<O: Composite>(cell: &Assembly, map: &AssemblyMap) {
    let mut drops = DropAll::new();
    // SAFETY: the caller's contract.
    drops.run(|| unsafe { std::ptr::drop_in_place(cell.cell(map).cast::<O>().as_ptr()) });
    // SAFETY: as above.
    let cells = unsafe { map.part_cells(&cell.parts) };
    for (class, part) in O::Parts::classes().iter().zip(cells).take(O::Parts::COUNT) {
        let class = class.expect("a class per part");
        // SAFETY: as above: part `i` holds a built object of its class.
        drops.run(|| unsafe { (class.drop)(part) });
    }
}

/// Tallies only a composite pool has; the rest are its core's.
#[derive(Debug, Default)]
struct Tally {
    reassembled: u64,
    broken: u64,
    /// Owner cells handed back to the arena by the game thread (no room, no workers, no
    /// memory for new parts).
    returned: u64,
}

/// The shared game-thread side of a composite pool.
type Core<O> = PoolCore<Assembly, Assembler<O>>;

/// One composite class's pool: the shared game-thread side ([`PoolCore`]) over sets of
/// cells (an [`Assembly`]), which its workers build with [`Composite::assemble`].
pub(crate) struct CompositePool<O: Composite> {
    core: Core<O>,
    classes: Classes,
    /// Owner cells the class returned, whose parts went their own way (under
    /// `async_purge`, each still holding its ended owner: occupied), waiting to be paired
    /// with new part cells.
    ended: Vec<CompactCell>,
    tally: Tally,
}

impl<O: Composite> fmt::Debug for CompositePool<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompositePool")
            .field("class", &O::class_name())
            .field("parts", &&self.classes.parts[..self.classes.count])
            .field("config", self.core.config())
            .finish()
    }
}

impl<O: Composite> CompositePool<O> {
    /// Builds `O`'s composite pool: registers the parts' classes, starts the workers,
    /// takes the owner class's ended cells and, with `precreate`, queues `capacity` composites.
    pub(crate) fn new(heap: &mut Heap, class: ClassId, config: PoolConfig) -> Result<Self, PoolError> {
        heap.store_of::<O>(class)?;
        let count = O::Parts::COUNT;
        let mut parts = [None; MAX_PARTS];
        let mut maps = [None; MAX_PARTS];
        for (i, part) in O::Parts::classes().into_iter().take(count).enumerate() {
            let part = part.expect("a class per part");
            if part.type_id == TypeId::of::<O>() {
                return Err(PoolError::Composite {
                    class: O::class_name(),
                    reason: "its own class is one of its parts",
                });
            }
            let id = (part.register)(heap)?;
            parts[i] = Some((part, id));
            maps[i] = heap.arena().cell_map(id);
        }
        let owner = heap.arena().cell_map(class).expect("the class was checked just now");
        let map = AssemblyMap { owner, parts: maps };
        let core = PoolCore::start(O::class_name(), config, map, Arc::new(Assembler::<O> { assemble: O::assemble }));
        let ended = Vec::with_capacity(depot::build_queue_len(&config));
        // As a class's pool: ended owners come back undropped, for the worker that rebuilds
        // the set in their cells (not without workers: the give-back would drop them on the
        // game thread anyway).
        let async_drop = heap.settings().async_purge && !O::DROP_ON_GAME_THREAD && config.workers > 0;
        heap.set_ended_cells(class, if async_drop { EndedCells::ReturnedUndropped } else { EndedCells::Returned })?;
        let classes = Classes { owner: class, parts, count };
        let mut pool = Self { core, classes, ended, tally: Tally::default() };
        if config.precreate {
            pool.grow(heap, config.capacity)?;
        }
        pool.core.built();
        Ok(pool)
    }

    /// Takes the cells of up to `n` composites (within `max`) and queues them.
    fn grow(&mut self, heap: &mut Heap, n: usize) -> Result<(), PoolError> {
        let classes = &self.classes;
        self.core.grow(n, |core| classes.take_cells(core, heap, None))
    }

    /// A ready set when the loaded magazine ran dry (pairing ended owners with new parts
    /// and topping the stock up when a magazine came from the depot), if there is one.
    #[cold]
    #[inline(never)]
    fn restock(&mut self, heap: &mut Heap) -> Option<Assembly> {
        let (assembly, from_depot) = self.core.refill()?;
        if from_depot {
            self.replenish(heap);
            if self.core.wants_growth(0) {
                let _ = self.grow(heap, self.core.config().grow_by);
            }
        }
        Some(assembly)
    }

    /// Takes the owner cells the class returned: each owner counted out of `in_use`, its
    /// cell kept in `ended` for [`replenish`](Self::replenish).
    fn take_returned(&mut self, heap: &mut Heap) {
        if heap.arena().returned(self.classes.owner) == 0 {
            return;
        }
        let (depot, owner, ended) = (self.core.depot(), &self.core.map().owner, &mut self.ended);
        match heap.drain_returned(self.classes.owner) {
            Ok(returned) => depot.arrived(returned, owner, |cell| ended.push(cell)),
            Err(_) => debug_assert!(false, "the pool's own class"),
        }
    }

    /// Game-thread work the class's ends left: each owner cell that came back is paired
    /// with new part cells and queued for the workers (or, at `max`, without workers or out
    /// of memory, handed back to the arena); the composites the depot gave up go back too.
    fn replenish(&mut self, heap: &mut Heap) {
        self.take_returned(heap);
        self.core.drain_spare(|core, assembly| recycle::<O>(core, heap, assembly));
        let mut cells = mem::take(&mut self.ended);
        for owner in cells.drain(..) {
            let room = self.core.config().workers > 0 && !self.core.at_max();
            if !room {
                recycle_owner::<O>(&self.core, heap, owner);
                self.tally.returned += 1;
                continue;
            }
            match self.classes.take_cells(&self.core, heap, Some(owner)) {
                Ok(assembly) => {
                    self.tally.reassembled += 1;
                    self.core.request(assembly);
                }
                // `take_cells` handed the owner's cell back with the parts' taken so far.
                Err(_) => self.tally.returned += 1,
            }
        }
        // Keep the buffer.
        self.ended = cells;
        self.core.drain_spare(|core, assembly| recycle::<O>(core, heap, assembly));
    }

    /// Builds up to `n` composites on the calling thread (within `max`) into the game
    /// thread's magazines. Returns how many it built.
    pub(crate) fn prefill(&mut self, heap: &mut Heap, n: usize) -> Result<usize, PoolError> {
        let classes = &self.classes;
        self.core.prefill(n, |core| classes.build_inline(core, heap))
    }

    /// Spawns a composite: a ready one if there is one, else one built inline (a miss).
    /// `init` runs on the owner before the hooks.
    pub(crate) fn spawn(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: impl FnOnce(&mut O),
    ) -> Result<(Handle<O>, [RawHandle; MAX_PARTS]), PoolError> {
        let ready = match self.core.pop() {
            Some(assembly) => Some(assembly),
            None if !self.core.may_refill() => None,
            None => self.restock(heap),
        };
        let assembly = match ready {
            Some(assembly) => {
                self.core.spawned(0);
                assembly
            }
            None => self.miss(heap, strict)?,
        };
        let map = *self.core.map();
        // SAFETY: the pool's map placed every cell it holds, and its heap is alive.
        let cells = unsafe { map.part_cells(&assembly.parts) };
        let Assembly { owner, parts } = assembly;
        // SAFETY: `new` checked that `class` is `O`'s in this heap's arena, and the pool
        // never leaves its heap (its `Pools` owns both).
        let mut store = unsafe { heap.store_of_unchecked::<O>(self.classes.owner) };
        let object = store.compact_cell(&owner);
        // SAFETY: every assembly the pool holds has a built `O` in an owner cell of this
        // class (a worker's build, an inline build or a `Reuse` deactivation).
        let h = unsafe { store.activate(owner) };
        let mut raws = [RawHandle::new(0, std::num::NonZeroU32::MIN); MAX_PARTS];
        for (i, cell) in parts.into_iter().enumerate() {
            let Some(cell) = cell else { break };
            let (part, id) = self.classes.parts[i].expect("a class per part");
            // SAFETY: `id` is the part's class in this heap (`new` registered it), and the
            // cell is one of its, holding a built part.
            let raw = unsafe { (part.activate)(heap, id, cell) };
            let linked = heap.set_outer(raw, Some(h.raw()));
            debug_assert!(linked.is_ok(), "linking a fresh part failed: {linked:?}");
            raws[i] = raw;
        }
        // SAFETY: activated just now; `&mut Heap` makes it ours for the call, and nothing
        // below reaches the heap.
        let object = unsafe { &mut *object.as_ptr() };
        object.attach(O::Parts::handles(&raws));
        init(object);
        for ((part, _), cell) in self.classes.parts().zip(cells) {
            // SAFETY: each part was activated into its cell just now, and is borrowed by
            // nothing else (`&mut Heap` is ours; the owner's borrow is another cell).
            unsafe { (part.on_spawn)(cell) };
        }
        // The owner's hook last: its parts are complete.
        object.on_spawn();
        tell_spawned(heap, &raws[..self.classes.count], h.raw());
        Ok((h, raws))
    }

    #[cold]
    fn miss(&mut self, heap: &mut Heap, strict: bool) -> Result<Assembly, PoolError> {
        let at_max = self.core.admit_miss(strict)?;
        self.replenish(heap);
        self.grow(heap, self.core.miss_growth(at_max))?;
        let assembly = self.classes.build_inline(&self.core, heap)?;
        self.core.spawned_inline(at_max);
        Ok(assembly)
    }

    /// The direct sub-objects of `owner` matched to the parts, by class, or `None` if they
    /// are not exactly one visible, leaf, unrooted object per part.
    fn intact_parts(&self, heap: &Heap, owner: RawHandle) -> Option<[RawHandle; MAX_PARTS]> {
        let mut found: [Option<RawHandle>; MAX_PARTS] = [None; MAX_PARTS];
        let mut n = 0;
        for sub in heap.sub_objects(owner) {
            // Visible: a part destroyed on its own is garbage, still linked until purged.
            let slot = heap.table().resolve(sub).ok()?;
            if slot.flags().intersects(ObjectFlags::HAS_SUBOBJECTS | ObjectFlags::PERMANENT) || slot.is_rooted() {
                return None;
            }
            let class = usize::from(slot.class());
            let at =
                self.classes.parts().enumerate().position(|(i, (_, id))| id.index() == class && found[i].is_none())?;
            found[at] = Some(sub);
            n += 1;
        }
        if n != self.classes.count {
            return None;
        }
        let mut raws = [owner; MAX_PARTS];
        for (raw, sub) in raws.iter_mut().zip(found).take(self.classes.count) {
            *raw = sub?;
        }
        Some(raws)
    }

    /// `Reuse` of an intact composite: every hook, every deactivation, and the set back among the
    /// ready ones.
    fn reuse(&mut self, heap: &mut Heap, owner: RawHandle, parts: [RawHandle; MAX_PARTS]) -> Result<(), PoolError> {
        let h = Handle::<O>::from_raw(owner);
        let Some(object) = heap.get_mut(h) else {
            return Err(PoolError::Stale);
        };
        object.on_release();
        object.reset();
        for (i, (part, _)) in self.classes.parts().enumerate() {
            (part.on_release)(heap, parts[i], true);
        }
        let map = *self.core.map();
        let mut cells: [Option<CompactCell>; MAX_PARTS] = [const { None }; MAX_PARTS];
        let mut whole = true;
        for (i, (part, id)) in self.classes.parts().enumerate() {
            // Checked by `intact_parts` (visible, unrooted) under the same borrow.
            match (part.deactivate)(heap, id, parts[i]) {
                Ok(Some(cell)) => cells[i] = Some(compact(&map.parts[i].expect("a map per part"), cell)),
                // Retired at the generation ceiling: the part was dropped, no cell.
                Ok(None) => whole = false,
                Err(e) => unreachable!("an intact part refused its deactivation: {e}"),
            }
        }
        let deactivated = heap.store_of::<O>(self.classes.owner)?.deactivate(h)?;
        let assembly = match deactivated {
            Some(owner) => Ok(Assembly { owner: compact(&map.owner, owner), parts: cells }),
            None => Err(cells),
        };
        match assembly {
            Ok(assembly) if whole => self.core.put_back(assembly),
            // A slot retired: drop what the others hold and hand their cells back.
            partial => {
                self.core.retired();
                let cells = match partial {
                    Ok(assembly) => {
                        // SAFETY: deactivated just now: the owner's cell holds the reset owner.
                        unsafe { std::ptr::drop_in_place(self.core.cell(&assembly).cast::<O>().as_ptr()) };
                        recycle_owner::<O>(&self.core, heap, assembly.owner);
                        assembly.parts
                    }
                    Err(cells) => cells,
                };
                for (i, cell) in cells.into_iter().enumerate() {
                    let Some(cell) = cell else { continue };
                    let (part, _) = self.classes.parts[i].expect("a class per part");
                    let part_map = map.parts[i].expect("a map per part");
                    // SAFETY: deactivated just now: the cell holds the reset part, ours alone.
                    unsafe { (part.drop)(part_map.cell(&cell)) };
                    // SAFETY: compacted by this map from this arena's token.
                    let back = heap.recycle(unsafe { part_map.expand(cell) });
                    debug_assert!(back.is_ok(), "a part's cell belongs to its arena");
                }
            }
        }
        Ok(())
    }
}

/// The classes of a composite's cells: the owner's and each part's.
struct Classes {
    owner: ClassId,
    /// Each part's class functions and id (`count` of them).
    parts: [Option<(PartClass, ClassId)>; MAX_PARTS],
    count: usize,
}

impl Classes {
    /// The parts' classes and ids.
    fn parts(&self) -> impl Iterator<Item = (PartClass, ClassId)> + '_ {
        self.parts.iter().take(self.count).map(|p| p.expect("a class per part"))
    }

    /// A vacant cell of each part's class, beside `owner` (or a vacant cell of the owner's
    /// class): the cells of one composite, for the workers or an inline build. On an error
    /// the cells taken so far go back.
    fn take_cells<O: Composite>(
        &self,
        core: &Core<O>,
        heap: &mut Heap,
        owner: Option<CompactCell>,
    ) -> Result<Assembly, PoolError> {
        let map = core.map();
        let owner = match owner {
            Some(owner) => owner,
            None => {
                let cell = heap.store_of::<O>(self.owner)?.take_cell()?;
                compact(&map.owner, cell)
            }
        };
        let mut assembly = Assembly { owner, parts: [const { None }; MAX_PARTS] };
        for (i, (part, id)) in self.parts().enumerate() {
            match (part.take_cell)(heap, id) {
                Ok(cell) => assembly.parts[i] = Some(compact(&map.parts[i].expect("a map per part"), cell)),
                Err(e) => {
                    recycle::<O>(core, heap, assembly);
                    return Err(e.into());
                }
            }
        }
        Ok(assembly)
    }

    /// Builds one composite on the calling thread into new cells. A panicking `assemble`
    /// takes nothing (it runs before any cell is taken).
    fn build_inline<O: Composite>(&self, core: &Core<O>, heap: &mut Heap) -> Result<Assembly, PoolError> {
        let (owner, built) = O::assemble();
        let assembly = self.take_cells(core, heap, None)?;
        // SAFETY: `take_cells` handed over uninitialised cells of the owner's and each
        // part's class, ours alone; each written once, here.
        unsafe {
            core.cell(&assembly).cast::<O>().as_ptr().write(owner);
            built.write(&core.map().part_cells(&assembly.parts));
        }
        Ok(assembly)
    }
}

/// Hands an owner cell back to the arena (dropping the ended owner an occupied one still
/// holds).
fn recycle_owner<O: Composite>(core: &Core<O>, heap: &mut Heap, owner: CompactCell) {
    let owner = vacate_owner(core, owner);
    let map = core.map();
    // SAFETY: compacted by the owner's map from this arena's token.
    let back = heap.recycle(unsafe { map.owner.expand(owner) });
    debug_assert!(back.is_ok(), "a composite's cell belongs to its arena");
}

/// The ended owner an occupied owner cell still holds (`async_purge`), dropped here on the
/// game thread, for a cell no worker will take: the token vacant.
fn vacate_owner<O: Composite>(core: &Core<O>, owner: CompactCell) -> CompactCell {
    if !owner.is_occupied() {
        return owner;
    }
    // SAFETY: an occupied owner cell the pool holds came back from its class with the ended `O`
    // in it, the pool's alone; the token comes back vacant, so it is dropped once.
    let (owner, panicked) = unsafe { depot::drop_occupant(owner, &core.map().owner, depot::drop_as::<O>) };
    core.depot().dropped(panicked, false);
    owner
}

/// Hands every cell of an assembly back to the arena: the parts' vacant (nothing built, or
/// dropped), the owner's as [`recycle_owner`] takes it.
fn recycle<O: Composite>(core: &Core<O>, heap: &mut Heap, assembly: Assembly) {
    recycle_owner::<O>(core, heap, assembly.owner);
    for (cell, part) in assembly.parts.into_iter().zip(core.map().parts) {
        if let (Some(cell), Some(part)) = (cell, part) {
            // SAFETY: compacted by the part's map from this arena's token.
            let back = heap.recycle(unsafe { part.expand(cell) });
            debug_assert!(back.is_ok(), "a part's cell belongs to its arena");
        }
    }
}

/// Whether the object `raw` names is visible and may be deactivated (neither rooted nor
/// permanent).
fn may_deactivate(heap: &Heap, raw: RawHandle) -> bool {
    heap.table().resolve(raw).is_ok_and(|slot| !slot.is_rooted() && !slot.flags().contains(ObjectFlags::PERMANENT))
}

/// What `Pools` needs of a composite pool beyond [`ErasedPool`]: a spawn whose owner type
/// it checked, for a plain `spawn::<O>()`.
pub(crate) trait ErasedComposite: ErasedPool {
    /// Spawns a composite; `init` gets the owner's address.
    fn spawn_erased(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: &mut dyn FnMut(NonNull<u8>),
    ) -> Result<RawHandle, PoolError>;
    fn prefill_erased(&mut self, heap: &mut Heap, n: usize) -> Result<usize, PoolError>;
    /// Takes back the composite `raw` names, by the pool's policy. The caller resolved it
    /// (visible, the owner's class) and checked that it and its sub-objects may be
    /// released.
    fn release(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError>;
    fn composite_stats(&self, heap: &Heap) -> CompositeStats;
}

impl<O: Composite> ErasedComposite for CompositePool<O> {
    fn spawn_erased(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: &mut dyn FnMut(NonNull<u8>),
    ) -> Result<RawHandle, PoolError> {
        self.spawn(heap, strict, |owner| init(NonNull::from(owner).cast())).map(|(h, _)| h.raw())
    }

    fn prefill_erased(&mut self, heap: &mut Heap, n: usize) -> Result<usize, PoolError> {
        self.prefill(heap, n)
    }

    fn release(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        let parts = self.intact_parts(heap, raw);
        let policy = self.core.config().policy;
        if policy == Policy::Reuse && self.core.owned() <= self.core.config().max {
            if let Some(parts) = parts.filter(|_| may_deactivate(heap, raw)) {
                // Everything the deactivations need was checked: the walk below (which allocates)
                // is not needed. The end listeners hear first, the parts before the owner.
                tell_ends(heap, &parts[..self.classes.count], raw);
                self.core.released();
                return self.reuse(heap, raw, parts);
            }
        }
        // Checked before anything changes: the owner and its sub-objects may end. Their end
        // listeners hear first.
        heap.subtree(raw).map_err(refusal)?.notify_ends();
        self.core.released();
        if policy == Policy::Reuse && parts.is_none() {
            self.tally.broken += 1;
        }
        if let Some(owner) = heap.get_mut(Handle::<O>::from_raw(raw)) {
            owner.on_release();
        }
        if let Some(parts) = parts {
            for (i, (part, _)) in self.classes.parts().enumerate() {
                (part.on_release)(heap, parts[i], false);
            }
        }
        if policy == Policy::Default {
            heap.mark_as_garbage(raw).map_err(refusal)?;
        } else {
            heap.destroy_now(raw).map_err(refusal)?;
            self.take_returned(heap);
        }
        Ok(())
    }

    fn composite_stats(&self, heap: &Heap) -> CompositeStats {
        CompositeStats {
            pool: ErasedPool::stats(self, heap),
            parts: self.classes.count,
            reassembled: self.tally.reassembled,
            broken: self.tally.broken,
        }
    }
}

impl<O: Composite> ErasedPool for CompositePool<O> {
    fn note_inserted(&mut self, _heap: &mut Heap) {
        self.core.note_inserted(0);
    }

    /// Not built for composites yet: a ready set is an owner's cell and a cell per part,
    /// which a trim would have to drop and give back together.
    fn trim(&mut self, _heap: &mut Heap, _keep: usize) -> Result<usize, PoolError> {
        Err(PoolError::Composite {
            class: O::class_name(),
            reason: "shrinking or clearing a composite pool is not built yet; its sets stay ready until shutdown",
        })
    }

    /// Nothing to do: `add_composite` refuses `idle_trim`.
    fn idle_upkeep(&mut self, _heap: &mut Heap, _dt: Duration) {}

    fn maintain(&mut self, heap: &mut Heap) {
        self.replenish(heap);
        if self.core.wants_growth(0) {
            let _ = self.grow(heap, self.core.config().grow_by);
        }
        if self.core.nears_growth(0) {
            let _ = heap.arena().prepare_ahead(self.classes.owner, self.core.config().grow_by);
        }
        self.core.wake_if_needed();
    }

    fn stats(&self, heap: &Heap) -> PoolStats {
        self.pool_stats(Returned::of(heap.arena().returned_cells(self.classes.owner)))
    }

    fn config(&self) -> &PoolConfig {
        self.core.config()
    }

    fn cold(&self, _heap: &Heap) -> Option<Cold> {
        self.core.cold(0)
    }

    fn name(&self) -> &'static str {
        O::class_name()
    }

    fn shutdown(&mut self, heap: &mut Heap) {
        // The class's ends go back to its vacant list from now on.
        let vacant = heap.set_ended_cells(self.classes.owner, EndedCells::Vacant);
        debug_assert!(vacant.is_ok(), "the pool's own class");
        self.take_returned(heap);
        self.shut_down();
    }
}

impl<O: Composite> CompositePool<O> {
    /// [`ErasedPool::shutdown`] once the returned cells are taken: joins the workers, drops
    /// what is ready.
    fn shut_down(&mut self) {
        self.core.shutdown();
        // The owner cells returned hold nothing built; an occupied one still holds its
        // ended owner. The cells go with the arena.
        for owner in mem::take(&mut self.ended) {
            let _ = vacate_owner(&self.core, owner);
        }
    }
}

impl<O: Composite> CompositePool<O> {
    /// The pool's counters (a composite's class keeps nothing: its `Reuse` deactivates sets).
    /// `returned`: the owner class's ended objects not taken yet.
    fn pool_stats(&self, returned: Returned) -> PoolStats {
        let stats = self.core.stats(mem::size_of::<Self>(), Kept::default(), returned);
        PoolStats { returned: stats.returned + self.tally.returned, ..stats }
    }
}

impl<O: Composite> Drop for CompositePool<O> {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// A composite pool in [`Pools`]: its owner's type (for the typed calls) and the pool.
pub(crate) struct CompositeSlot {
    type_id: TypeId,
    pool: Box<dyn ErasedComposite>,
}

impl CompositeSlot {
    pub(crate) fn erased(&self) -> &dyn ErasedComposite {
        &*self.pool
    }

    pub(crate) fn erased_mut(&mut self) -> &mut dyn ErasedComposite {
        &mut *self.pool
    }

    /// The pool as `CompositePool<O>`, if it is `O`'s.
    fn typed_mut<O: Composite>(&mut self) -> Option<&mut CompositePool<O>> {
        let pool: *mut dyn ErasedComposite = &mut *self.pool;
        // SAFETY: the type id says the box holds a `CompositePool<O>`; `&mut self` lends it
        // uniquely, and the thin cast keeps its address.
        (self.type_id == TypeId::of::<O>()).then(|| unsafe { &mut *pool.cast::<CompositePool<O>>() })
    }

    /// A plain `spawn::<T>()` of a composite class: the composite's spawn, `init` on the
    /// owner.
    #[cold]
    #[inline(never)]
    pub(crate) fn spawn_as<T: 'static>(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: impl FnOnce(&mut T),
    ) -> Result<Handle<T>, PoolError> {
        assert!(self.type_id == TypeId::of::<T>(), "the composite pool of a class is its owner type's");
        let mut init = Some(init);
        let mut erased = |owner: NonNull<u8>| {
            if let Some(init) = init.take() {
                // SAFETY: the pool's owner type is `T` (checked above), and the spawn lends
                // the activated owner for the call.
                init(unsafe { &mut *owner.cast::<T>().as_ptr() });
            }
        };
        self.pool.spawn_erased(heap, strict, &mut erased).map(Handle::from_raw)
    }
}

/// Tells the spawn listeners of a composite just spawned: its `parts` first, then its
/// `owner` (each one test of its class's hooks when nobody listens).
fn tell_spawned(heap: &mut Heap, parts: &[RawHandle], owner: RawHandle) {
    for &raw in parts.iter().chain([&owner]) {
        let told = heap.notify_spawn(raw);
        debug_assert!(told.is_ok(), "a part or owner spawned just now: {told:?}");
    }
}

/// Tells the end listeners of a composite about to be released whole: its `parts` first,
/// then its `owner`. The caller checked that all of them may end.
fn tell_ends(heap: &mut Heap, parts: &[RawHandle], owner: RawHandle) {
    if !heap.arena().any_end_listeners() {
        return;
    }
    for &raw in parts.iter().chain([&owner]) {
        let told = heap.notify_end(raw);
        debug_assert!(told.is_ok(), "checked by `may_deactivate`: {told:?}");
    }
}

/// The composite pools of a [`Pools`], by their owner's class index, and the classes used
/// as parts.
#[derive(Default)]
pub(crate) struct Composites {
    by_class: Vec<Option<CompositeSlot>>,
    parts: Vec<ClassId>,
}

impl fmt::Debug for Composites {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|c| c.erased().name())).finish()
    }
}

impl Composites {
    #[inline]
    pub(crate) fn get(&self, class: usize) -> Option<&CompositeSlot> {
        self.by_class.get(class)?.as_ref()
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, class: usize) -> Option<&mut CompositeSlot> {
        self.by_class.get_mut(class)?.as_mut()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &CompositeSlot> {
        self.by_class.iter().flatten()
    }

    /// Every composite pool with its owner's class index.
    pub(crate) fn iter_classes(&self) -> impl Iterator<Item = (usize, &CompositeSlot)> {
        self.by_class.iter().enumerate().filter_map(|(class, slot)| slot.as_ref().map(|slot| (class, slot)))
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut CompositeSlot> {
        self.by_class.iter_mut().flatten()
    }

    /// Whether `class` is a part of some composite.
    pub(crate) fn is_part(&self, class: ClassId) -> bool {
        self.parts.contains(&class)
    }
}

impl Pools {
    /// Gives `O` a composite pool: each object is built with its parts by
    /// [`Composite::assemble`] on the workers (or inline on a miss, or by
    /// [`prefill`](Self::prefill)), and spawned with every part linked to it as a
    /// sub-object. Registers the parts' classes. A plain [`spawn_with`](Self::spawn_with)
    /// of `O` spawns a composite too; [`destroy`](Self::destroy) takes the whole set back
    /// by the pool's policy (see [`Composite`]).
    ///
    /// A part's class takes its cells from its store directly, so it may not have a pool
    /// of its own, nor be a composite; a composite may not be a part.
    ///
    /// # Errors
    /// [`PoolError::Config`] for an invalid configuration, [`PoolError::AlreadyPooled`] if
    /// `O` has a pool, [`PoolError::Composite`] for a part as above (or `O` among its own
    /// parts), or the heap's refusal to register a class.
    pub fn add_composite<O: Composite>(&mut self, config: PoolConfig) -> Result<(), PoolError> {
        config.validate().map_err(|e| PoolError::Config(e.in_class(O::class_name())))?;
        let refuse = |reason| PoolError::Composite { class: O::class_name(), reason };
        if config.idle_trim.is_some() {
            return Err(refuse("idle_trim is not built for composite pools yet: set idle_trim = None"));
        }
        if self.heap.class_of::<O>().is_none() {
            let slab = crate::config::pooled_slabs(self.heap.arena().config().slab, &config);
            self.heap.register_with::<O>(slab)?;
        }
        let class = self.heap.class_id::<O>()?;
        if self.is_pooled::<O>() {
            return Err(PoolError::AlreadyPooled(O::class_name()));
        }
        if self.composites.is_part(class) {
            return Err(refuse("it is a part of another composite: a composite cannot be a part"));
        }
        let mut part_ids = Vec::with_capacity(O::Parts::COUNT);
        for part in O::Parts::classes().into_iter().flatten() {
            if part.type_id == TypeId::of::<O>() {
                return Err(refuse("its own class is one of its parts"));
            }
            let id = (part.register)(&mut self.heap)?;
            if self.class_pooled(id.index()) {
                return Err(refuse("a part's class has a pool of its own: parts take cells from their class's store"));
            }
            part_ids.push(id);
        }
        let pool = CompositePool::<O>::new(&mut self.heap, class, config)?;
        let composites = &mut self.composites;
        composites.parts.extend(part_ids);
        if composites.by_class.len() <= class.index() {
            composites.by_class.resize_with(class.index() + 1, || None);
        }
        composites.by_class[class.index()] = Some(CompositeSlot { type_id: TypeId::of::<O>(), pool: Box::new(pool) });
        Ok(())
    }

    /// Spawns a composite of `O`: pops a set the workers built (a hit: no construction and
    /// no allocation on this thread), or builds one inline (a miss), and links each part
    /// to the owner. Returns the owner's handle and each part's. At `max` with nothing
    /// ready, builds an overflow set as [`spawn_with`](Self::spawn_with) does.
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `O` has no composite pool; [`PoolError::Arena`] when a
    /// class's memory is exhausted.
    pub fn spawn_composite<O: Composite>(&mut self) -> Result<(Handle<O>, <O::Parts as Parts>::Handles), PoolError> {
        self.spawn_composite_with(|_| {})
    }

    /// [`spawn_composite`](Self::spawn_composite), running `init` on the owner before the
    /// hooks (the parts' `on_spawn`, then the owner's).
    ///
    /// # Errors
    /// As [`spawn_composite`](Self::spawn_composite).
    pub fn spawn_composite_with<O: Composite>(
        &mut self,
        init: impl FnOnce(&mut O),
    ) -> Result<(Handle<O>, <O::Parts as Parts>::Handles), PoolError> {
        let class = self.heap.class_of::<O>().map_or(usize::MAX, |id| id.index());
        let Some(pool) = self.composites.get_mut(class).and_then(CompositeSlot::typed_mut::<O>) else {
            return Err(PoolError::NotPooled(type_name::<O>()));
        };
        let (h, parts) = pool.spawn(&mut self.heap, false, init)?;
        Ok((h, O::Parts::handles(&parts)))
    }

    /// `O`'s composite pool counters, if it has one.
    pub fn composite_stats<O: 'static>(&self) -> Option<CompositeStats> {
        let class = self.heap.class_of::<O>()?.index();
        let mut stats = self.composites.get(class)?.erased().composite_stats(&self.heap);
        stats.pool = self.with_memory(stats.pool, class);
        Some(stats)
    }
}
