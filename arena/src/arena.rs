//! The arena: typed objects in class-contiguous cells, reached through generational handles.

use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::ptr::{self, NonNull};

use respawn_allocator::sync::{Arc, Ordering};
use respawn_allocator::{ChunkAllocator, ClassId, ClassStats, PermanentPool, Rejected, SlabConfig};

use crate::class::{ClassEntry, CollectorEntry, Ended, EndedCells, Found, Freed, FreedCell, Geometry};
use crate::layout::{self, ClassLayout};
use crate::outer::Outers;
use crate::table::{Cells, ObjectTable, Range, Slot, PERMANENT_SLOTS};
use crate::{ArenaError, DropAll, Handle, Lifecycle, ObjectFlags, RawHandle, Root};

mod access;
pub(crate) mod dormancy;
pub(crate) mod listeners;
mod ticks;
mod trim;
mod view;
pub use access::IterMut;
pub use dormancy::TickCursor;
pub use listeners::ListenerId;
pub use view::View;

/// Settings of an [`Arena`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaConfig {
    /// Slab configuration for classes registered without one (including those registered
    /// implicitly by a first `insert`).
    pub slab: SlabConfig,
    /// The highest generation a slot may reach; a slot released at this generation is
    /// retired for good instead of wrapping. `u32::MAX` in production; lower it to test the
    /// retirement path, or code that must survive it.
    pub max_generation: u32,
    /// Bytes of the permanent pool that holds [`insert_permanent`](Arena::insert_permanent)'s
    /// objects (virtual; the OS commits pages as they are used). Mapped on first use.
    pub permanent_bytes: usize,
}

impl ArenaConfig {
    /// Default slabs, generations up to `u32::MAX`, a 16 MiB permanent pool.
    pub const DEFAULT: Self = Self { slab: SlabConfig::DEFAULT, max_generation: u32::MAX, permanent_bytes: 16 << 20 };
}

impl Default for ArenaConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Counters of one class in an arena.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArenaClassStats {
    /// The class's name (its Rust type).
    pub name: &'static str,
    /// Objects in the class's cells with a live slot, as [`Arena::len`] counts them.
    pub len: usize,
    /// Vacant slots (with their cells) ready for new objects.
    pub vacant: usize,
    /// Slots retired for good: their generation reached the ceiling, or their object's
    /// destructor panicked.
    pub retired: usize,
    /// Permanent objects of the class (in the permanent pool, not in the class's slabs).
    pub permanent: usize,
    /// Objects made dormant ([`Arena::set_dormant`]) that have not ended, hidden ones
    /// included (as `len` counts them): the tick skips them.
    pub dormant: usize,
    /// The allocator's view of the class's memory.
    pub memory: ClassStats,
    /// Bytes of object-table slots the class's slabs have set up (16 per cell): the
    /// table's share of the class's memory, beside the slabs' `memory`.
    pub slot_bytes: usize,
    /// Bytes of the class's own bookkeeping on the heap: its live bitmap (one bit per cell
    /// number; its dormancy bitmap too, once an object was dormant), its vacant list and its slab bases, at their capacities, and the sub-object
    /// links in its range of the table (pages of 2 Ki indices, allocated once one of their
    /// objects gains an owner, 8 bytes an index, or owns sub-objects, 4 more).
    pub side_bytes: usize,
    /// Bytes of one object of the class (`size_of::<T>()`; the cell may be larger).
    pub object_size: usize,
}

impl ArenaClassStats {
    /// Bytes the class takes beyond its objects' own bytes, per object held: the committed
    /// slabs (granted and prepared ahead: vacant and pooled cells, page rounding, cell
    /// padding; not those a trim decommitted), the slots and the side bookkeeping, less
    /// `len × object_size`, over `len`. `None` while it holds no object.
    pub fn overhead_per_object(&self) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        let total = self.memory.committed_bytes + self.slot_bytes + self.side_bytes;
        Some(total.saturating_sub(self.len * self.object_size) as f64 / self.len as f64)
    }
}

/// Hashes a `TypeId` by taking the 64 bits it writes, as bevy and hecs do: `TypeId`s are
/// already uniformly distributed.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not reached with today's `TypeId`; FNV-1a keeps it correct if that ever changes.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A type no arena registers: what every slot of the class cache holds before its first
/// class.
struct NoClass;

/// Slots in an arena's class cache ([`Arena::cached_class`]): 6 KiB of `(TypeId, ClassId)`
/// pairs, so that two classes share a slot once in 256 pairs.
const CACHED_CLASSES: usize = 256;

/// `T`'s slot in the class cache: bits of its `TypeId`, which are uniformly distributed. A
/// constant once inlined, so a cached lookup is one `TypeId` compare at a fixed offset.
///
/// One slot a type, not two: a second slot to look in would cost the `World`'s churn pair
/// 12 instructions and the `Arena`'s 15 (measured, `benches/resolve.rs`), for every class,
/// to spare the few classes that share a slot a directory lookup.
#[inline(always)]
fn cache_slot<T: 'static>() -> usize {
    let mut hasher = TypeIdHasher::default();
    TypeId::of::<T>().hash(&mut hasher);
    (hasher.finish() % CACHED_CLASSES as u64) as usize
}

/// Objects of many classes, each class in its own contiguous region, reached through
/// generational [`Handle`]s.
///
/// - `insert` places an object in a vacant cell of its class (taking a prepared slab when
///   none is vacant) and returns its handle; `remove` moves it out and bumps the slot's
///   generation, so every handle to it goes stale at once.
/// - `tick` and `par_tick` visit every visible object of a class in memory order.
/// - Every object is dropped exactly once: by `remove`/`destroy`, or when the arena drops.
///
/// `&Arena` reads, `&mut Arena` writes: Rust's borrows are the access control.
///
/// ```
/// use respawn_arena::Arena;
///
/// #[derive(Debug, PartialEq)]
/// struct Projectile { pos: [f32; 3], vel: [f32; 3], life: f32 }
///
/// let mut arena = Arena::new();
/// let h = arena.insert(Projectile { pos: [0.0; 3], vel: [1.0, 0.0, 0.0], life: 1.0 });
/// arena.tick::<Projectile>(|p| { p.pos[0] += p.vel[0] * 0.5; p.life -= 0.5; });
/// assert_eq!(arena.get(h).unwrap().pos[0], 0.5);
/// let p = arena.remove(h).unwrap();
/// assert_eq!(p.life, 0.5);
/// assert!(arena.get(h).is_none()); // stale, forever
/// ```
pub struct Arena {
    table: Arc<ObjectTable>,
    classes: Vec<ClassEntry>,
    by_type: HashMap<TypeId, ClassId, BuildHasherDefault<TypeIdHasher>>,
    /// The classes typed calls found, each with its type in its type's slot
    /// ([`cache_slot`]; direct-mapped: of two types that share a slot, the last one found
    /// holds it): a typed call compares one `TypeId` instead of probing `by_type` or the
    /// table's directory, whichever classes the calls alternate between. Every pair is a
    /// registered class and its own type (set by `find_or_register`, `class_by_range` and
    /// every typed store, `store_of_unchecked`); classes are never unregistered, so no pair
    /// goes stale.
    cache: [(TypeId, ClassId); CACHED_CLASSES],
    config: ArenaConfig,
    alloc: ChunkAllocator,
    outers: Outers,
    /// Memory of permanent objects, mapped on first use. Declared after nothing that drops
    /// objects: `Arena::drop` ends every object before the fields (this pool included) go.
    permanent: Option<PermanentPool>,
    /// The permanent objects' range of the table, made with the pool.
    permanent_range: Option<NonNull<Range>>,
    /// The collector's write barrier is on ([`set_barrier`](Self::set_barrier)): the calls
    /// that find their class through the table note what they change.
    barrier: bool,
}

// SAFETY: the raw pointers inside are the arena's own cells; every object placed in them is
// `Send + Sync` (bound on `insert`), a returned cell's token is `Send`, and shared access
// (`&Arena`) only reads objects or updates atomics.
unsafe impl Send for Arena {}
// SAFETY: as above; `&Arena` methods never touch a class's lists.
unsafe impl Sync for Arena {}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena").field("slots", &self.table.len()).field("classes", &self.classes).finish()
    }
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

/// Drops the `T` at `p`: the class's type-erased destructor.
///
/// # Safety
/// `p` points to a live, initialised `T` that nobody will use or drop again.
unsafe fn drop_as<T>(p: *mut u8) {
    // SAFETY: the caller passes a cell holding a live `T`, and drops it once.
    unsafe { ptr::drop_in_place(p.cast::<T>()) }
}

impl Arena {
    /// An empty arena with [`ArenaConfig::DEFAULT`].
    pub fn new() -> Self {
        Self::with_config(ArenaConfig::DEFAULT)
    }

    /// An empty arena.
    pub fn with_config(config: ArenaConfig) -> Self {
        Self {
            table: Arc::new(ObjectTable::new()),
            classes: Vec::new(),
            by_type: HashMap::default(),
            cache: [(TypeId::of::<NoClass>(), ClassId::from_index(u16::MAX)); CACHED_CLASSES],
            config,
            alloc: ChunkAllocator::new(),
            outers: Outers::default(),
            permanent: None,
            permanent_range: None,
            barrier: false,
        }
    }

    /// Registers class `T` with the arena's default slab configuration.
    ///
    /// # Errors
    /// As [`register_with`](Self::register_with).
    pub fn register<T: Send + Sync + 'static>(&mut self) -> Result<ClassId, ArenaError> {
        self.register_with::<T>(self.config.slab)
    }

    /// Registers class `T` with its own slab configuration (its own reservation).
    ///
    /// # Errors
    /// [`ArenaError::AlreadyRegistered`], or [`ArenaError::Alloc`] for a zero-sized or
    /// over-aligned `T`, a bad configuration, or a refused reservation.
    pub fn register_with<T: Send + Sync + 'static>(&mut self, slab: SlabConfig) -> Result<ClassId, ArenaError> {
        if self.by_type.contains_key(&TypeId::of::<T>()) {
            return Err(ArenaError::AlreadyRegistered(type_name::<T>()));
        }
        slab.validate()?;
        // Index space first: a class the table cannot hold is refused before the allocator
        // registers it (the two class tables stay in step).
        let capacity = slab.max_slabs * slab.cells_per_slab;
        if !self.table.has_room(capacity) {
            return Err(ArenaError::TableFull);
        }
        let id = self.alloc.register_class(std::alloc::Layout::new::<T>(), slab)?;
        debug_assert_eq!(id.index(), self.classes.len(), "arena and allocator class tables diverged");
        let memory = self.alloc.stats(id)?;
        let cells = Cells {
            cell_size: memory.cell_size,
            #[cfg(not(miri))]
            stride: memory.slab_bytes,
            #[cfg(not(miri))]
            base: self.alloc.region_base(id).expect("a registered class has a region"),
            #[cfg(miri)]
            bases: (0..slab.max_slabs).map(|_| respawn_allocator::sync::AtomicPtr::new(ptr::null_mut())).collect(),
        };
        let range = self.table.add_range(capacity, slab.cells_per_slab, id.index() as u16, Some(cells))?;
        let drop_fn = std::mem::needs_drop::<T>().then_some(drop_as::<T> as unsafe fn(*mut u8));
        let max_generation = self.config.max_generation;
        let geometry =
            Geometry::new::<T>(id, memory.cell_size, slab.cells_per_slab, drop_fn, range, capacity, max_generation);
        crate::handle::record_class_start(type_name::<T>(), geometry.start());
        self.classes.push(ClassEntry::new(geometry, self.barrier));
        self.by_type.insert(TypeId::of::<T>(), id);
        Ok(id)
    }

    /// The class id of `T`, if registered: from the class cache
    /// ([`cached_class`](Self::cached_class)), else the type directory.
    #[inline]
    pub fn class_of<T: 'static>(&self) -> Option<ClassId> {
        match self.cached_class::<T>() {
            Some(id) => Some(id),
            None => self.class_in_directory::<T>(),
        }
    }

    /// `T`'s class from the type directory, for a class the cache does not hold.
    #[inline(never)]
    fn class_in_directory<T: 'static>(&self) -> Option<ClassId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// The collector's entry for the class with index `class`: `None` for a class that has
    /// not registered with a collector (or no such class).
    #[inline]
    pub fn collector_entry(&self, class: usize) -> Option<&CollectorEntry> {
        self.collector_entries().get(class)
    }

    /// Every class's collector entry, by class index: what a mark reads for each object it
    /// visits, one index away (the class records, without the arena around them).
    #[inline]
    pub fn collector_entries(&self) -> CollectorEntries<'_> {
        CollectorEntries { classes: &self.classes }
    }

    /// Sets the collector's entry for the class with index `class`, replacing any it had: when a class
    /// registers with a collector, and when the collector changes what it keeps about the
    /// class ([`CollectorEntry::with_owned`], [`CollectorEntry::with_clustered`]).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for an index this arena never gave out, and
    /// [`ArenaError::WrongClass`] for an entry made for another type than the class's:
    /// nothing changes.
    pub fn set_collector_entry(&mut self, class: usize, entry: CollectorEntry) -> Result<(), ArenaError> {
        let Some(class) = self.classes.get_mut(class) else {
            return Err(ArenaError::Unregistered(entry.type_name()));
        };
        if class.set_collector(entry) {
            Ok(())
        } else {
            Err(ArenaError::WrongClass { expected: entry.type_name(), found: class.name() })
        }
    }

    /// The typed view of class `T`, registering `T` first if needed. Use it to skip the
    /// per-call class lookup in a hot loop.
    ///
    /// # Errors
    /// As [`register`](Self::register), when `T` was not registered yet.
    #[inline]
    pub fn store_mut<T: Send + Sync + 'static>(&mut self) -> Result<ClassStore<'_, T>, ArenaError> {
        let id = match self.cached_class::<T>() {
            Some(id) => id,
            None => self.find_or_register::<T>()?,
        };
        // SAFETY: the cache and `find_or_register` name `T`'s own class.
        Ok(unsafe { self.store_of_unchecked(id) })
    }

    /// The typed view of class `id` with no check at all: for a caller that holds an id
    /// it checked once ([`store_of`](Self::store_of) accepted it) and keeps for the arena's
    /// life, such as a pool.
    ///
    /// # Safety
    /// `id` is class `T`'s in this arena.
    #[inline(always)]
    pub unsafe fn store_of_unchecked<T: 'static>(&mut self, id: ClassId) -> ClassStore<'_, T> {
        debug_assert!(
            self.classes.get(id.index()).is_some_and(ClassEntry::is::<T>),
            "{id:?} is not {}'s class",
            type_name::<T>()
        );
        // Every typed view caches its class, so that the arena's own typed calls (a `get`
        // between a pool's spawns and releases) find it with one compare. (The cache pairs
        // a class with its own type, so the id alone tells a change.)
        if self.cache[cache_slot::<T>()].1 != id {
            self.cache_class::<T>(id);
        }
        // SAFETY: the caller's `id` is a class of this arena (classes are never removed).
        let entry = unsafe { self.classes.get_unchecked_mut(id.index()) };
        ClassStore { table: &self.table, entry, alloc: &self.alloc, outers: &mut self.outers, _class: PhantomData }
    }

    /// `T`'s class if the arena's class cache holds it: one `TypeId` compare at a slot
    /// fixed by `T`, no directory. A typed call (a typed view, an insert, a remove) caches
    /// its class. The cache is direct-mapped, a slot a type among 256, so classes that
    /// alternate stay cached unless two share a slot; then the last one used holds it.
    /// `None` says only "not cached": look it up with [`class_of`](Self::class_of). For a
    /// layer that keeps its own per-class data by class index (a pool per class) and finds
    /// it on every call.
    ///
    /// ```
    /// use respawn_arena::Arena;
    /// let mut arena = Arena::new();
    /// assert_eq!(arena.cached_class::<u32>(), None);
    /// arena.insert(7u32);
    /// assert_eq!(arena.cached_class::<u32>(), arena.class_of::<u32>());
    /// ```
    #[inline(always)]
    pub fn cached_class<T: 'static>(&self) -> Option<ClassId> {
        let (ty, id) = self.cache[cache_slot::<T>()];
        (ty == TypeId::of::<T>()).then_some(id)
    }

    /// Caches `id` as `T`'s class, in place of the class that held `T`'s slot.
    #[inline]
    fn cache_class<T: 'static>(&mut self, id: ClassId) {
        self.cache[cache_slot::<T>()] = (TypeId::of::<T>(), id);
    }

    /// `T`'s class, registered now if it was not, and cached.
    #[cold]
    #[inline(never)]
    fn find_or_register<T: Send + Sync + 'static>(&mut self) -> Result<ClassId, ArenaError> {
        let id = match self.class_of::<T>() {
            Some(id) => id,
            None => self.register::<T>()?,
        };
        self.cache_class::<T>(id);
        Ok(id)
    }

    /// The typed view of the class registered as `id`, without hashing `T`'s type: for
    /// callers that keep the id (a pool). One comparison checks that `id` is `T`'s.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this arena, or
    /// [`ArenaError::WrongClass`] if it is another type's.
    #[inline]
    pub fn store_of<T: Send + Sync + 'static>(&mut self, id: ClassId) -> Result<ClassStore<'_, T>, ArenaError> {
        match self.classes.get(id.index()) {
            None => Err(ArenaError::Unregistered(type_name::<T>())),
            Some(entry) if !entry.is::<T>() => {
                Err(ArenaError::WrongClass { expected: type_name::<T>(), found: entry.name() })
            }
            // SAFETY: checked just now.
            Some(_) => Ok(unsafe { self.store_of_unchecked(id) }),
        }
    }

    /// Places `value` in the arena's permanent pool (UE's disregard-for-GC pool), flagged
    /// [`ObjectFlags::PERMANENT`], and returns its handle; registers the class on first use.
    /// A permanent object resolves like any other, but lives until the arena drops: `remove`,
    /// `destroy` and the collector refuse it. It sits outside the class's slabs, so `tick`
    /// and `iter` do not visit it.
    ///
    /// # Errors
    /// The value comes back with [`ArenaError::Alloc`] (the permanent pool is full or cannot
    /// be mapped; see [`ArenaConfig::permanent_bytes`]) or [`ArenaError::TableFull`].
    pub fn insert_permanent<T: Send + Sync + 'static>(
        &mut self,
        value: T,
    ) -> Result<Handle<T>, Rejected<T, ArenaError>> {
        let id = match self.class_of::<T>() {
            Some(id) => id,
            None => match self.register::<T>() {
                Ok(id) => id,
                Err(error) => return Err(Rejected { error, value }),
            },
        };
        if self.permanent.is_none() {
            match PermanentPool::new(self.config.permanent_bytes) {
                Ok(pool) => self.permanent = Some(pool),
                Err(e) => return Err(Rejected { error: e.into(), value }),
            }
        }
        if self.permanent_range.is_none() {
            match self.table.add_range(PERMANENT_SLOTS, 4096, u16::MAX, None) {
                Ok(range) => self.permanent_range = Some(range),
                Err(error) => return Err(Rejected { error, value }),
            }
        }
        let pool = self.permanent.as_ref().expect("mapped just now");
        let cell = match pool.try_alloc_layout(std::alloc::Layout::new::<T>()) {
            Ok(cell) => cell,
            Err(e) => return Err(Rejected { error: e.into(), value }),
        };
        // SAFETY: the table owns the range until it drops, after the arena.
        let range = unsafe { self.permanent_range.expect("made just now").as_ref() };
        let Some(index) = self.table.push_permanent(range, cell) else {
            return Err(Rejected { error: ArenaError::TableFull, value });
        };
        // SAFETY: `try_alloc_layout` gave fresh space for one `T`, ours for the pool's life.
        unsafe { cell.cast::<T>().as_ptr().write(value) };
        // SAFETY: `push_permanent` just set up `index`.
        let s = unsafe { self.table.slot_unchecked(index) };
        // Outside the class's range: the object has no live bit (see `change_flags`).
        s.set_up(id.index() as u16, ObjectFlags::PERMANENT);
        self.classes[id.index()].count_permanent();
        Ok(Handle::from_raw(RawHandle::new(index, NonZeroU32::MIN)))
    }

    /// Places `value` in a cell of its class and returns its handle; registers the class
    /// on first use.
    ///
    /// # Panics
    /// If [`try_insert`](Self::try_insert) fails (reservation exhausted, table full,
    /// zero-sized or over-aligned `T`).
    #[inline(always)]
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Handle<T> {
        match self.store_mut::<T>() {
            Ok(mut store) => store.insert(value),
            Err(error) => panic!("Arena::insert::<{}>: {error}", type_name::<T>()),
        }
    }

    /// Places `value` in a cell of its class and returns its handle.
    ///
    /// # Errors
    /// The value comes back with the reason: [`ArenaError::Alloc`] (reservation exhausted,
    /// zero-sized or over-aligned `T`) or [`ArenaError::TableFull`].
    pub fn try_insert<T: Send + Sync + 'static>(&mut self, value: T) -> Result<Handle<T>, Rejected<T, ArenaError>> {
        match self.store_mut::<T>() {
            Ok(mut store) => store.try_insert(value),
            Err(error) => Err(Rejected { error, value }),
        }
    }

    /// The slot and cell of the visible `T` that `h` names. One directory load, then the
    /// slot and the cell by arithmetic: the two loads that follow are independent. No error
    /// value is built: [`typed_slot`](Self::typed_slot) says why when it matters.
    #[inline(always)]
    fn locate<T: 'static>(&self, h: Handle<T>) -> Option<NonNull<u8>> {
        if let Some(id) = self.cached_class::<T>() {
            // SAFETY: the cache names a class of this arena.
            let entry = unsafe { self.classes.get_unchecked(id.index()) };
            // SAFETY: cells are non-null.
            return locate_in(entry, &self.table, h).map(|p| unsafe { NonNull::new_unchecked(p) });
        }
        self.locate_by_range(h).map(|(_, cell)| cell)
    }

    /// [`locate`](Self::locate) through the table's directory, for a class other than the
    /// cached one: the handle's range names the class.
    #[inline]
    fn locate_by_range<T: 'static>(&self, h: Handle<T>) -> Option<(&Slot, NonNull<u8>)> {
        locate_typed(&self.table, &self.classes, h).map(|(_, slot, cell)| (slot, cell))
    }

    /// The slot of the visible `T` that `h` names, or why not.
    #[inline]
    fn typed_slot<T: 'static>(&self, h: Handle<T>) -> Result<&Slot, ArenaError> {
        match self.locate_by_range(h) {
            Some((slot, _)) => Ok(slot),
            None => Err(self.why_not(h)),
        }
    }

    #[cold]
    #[inline(never)]
    fn why_not<T: 'static>(&self, h: Handle<T>) -> ArenaError {
        why_not_typed(&self.table, &self.classes, h)
    }

    /// The object `h` names, or why not.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Hidden`] or [`ArenaError::WrongClass`].
    pub fn try_get<T: 'static>(&self, h: Handle<T>) -> Result<&T, ArenaError> {
        self.get(h).ok_or_else(|| self.why_not(h))
    }

    /// The object `h` names, if it resolves.
    #[inline]
    pub fn get<T: 'static>(&self, h: Handle<T>) -> Option<&T> {
        let cell = self.locate(h)?;
        // SAFETY: the slot is live, of class `T`, so its cell holds an initialised `T`;
        // `&self` excludes writers for the borrow's life.
        Some(unsafe { &*cell.cast::<T>().as_ptr() })
    }

    /// The object `h` names, mutably, if it resolves.
    #[inline]
    pub fn get_mut<T: 'static>(&mut self, h: Handle<T>) -> Option<&mut T> {
        let cell = self.locate(h)?;
        if self.barrier {
            self.note(h.index(), false);
        }
        // SAFETY: as in `get`; `&mut self` makes the borrow unique.
        Some(unsafe { &mut *cell.cast::<T>().as_ptr() })
    }

    /// Whether `h` resolves.
    pub fn contains<T: 'static>(&self, h: Handle<T>) -> bool {
        self.locate(h).is_some()
    }

    /// Moves the object out, if `h` resolves; its handles go stale.
    #[inline(always)]
    pub fn remove<T: Send + Sync + 'static>(&mut self, h: Handle<T>) -> Option<T> {
        let id = match self.cached_class::<T>() {
            Some(id) => id,
            None => self.class_by_range(h)?,
        };
        // SAFETY: the cache and `class_by_range` name `T`'s class.
        unsafe { self.store_of_unchecked::<T>(id) }.remove(h)
    }

    /// `T`'s class for a typed call when the cache does not hold it: the one whose range
    /// holds `h` (no type hash, and no error value built), if it is `T`'s; it is cached.
    #[inline(never)]
    fn class_by_range<T: 'static>(&mut self, h: Handle<T>) -> Option<ClassId> {
        let class = usize::from(self.table.class_at(h.index())?);
        self.classes.get(class).filter(|e| e.is::<T>())?;
        let id = ClassId::from_index(class as u16);
        self.cache_class::<T>(id);
        Some(id)
    }

    /// Moves the object out and releases its slot; every handle to it goes stale.
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`], [`ArenaError::Hidden`],
    /// [`ArenaError::WrongClass`], [`ArenaError::Rooted`] or [`ArenaError::Permanent`].
    pub fn try_remove<T: Send + Sync + 'static>(&mut self, h: Handle<T>) -> Result<T, ArenaError> {
        // The handle's range names its class: no type hash.
        let class = self.table.class_at(h.index()).unwrap_or(u16::MAX);
        match self.store_of::<T>(ClassId::from_index(class)) {
            Ok(mut store) => store.try_remove(h),
            Err(_) => Err(self.why_not_removable(h)),
        }
    }

    #[cold]
    #[inline(never)]
    fn why_not_removable<T: 'static>(&self, h: Handle<T>) -> ArenaError {
        match self.why_not(h) {
            // Resolves as a `T` but lies outside `T`'s range: the permanent pool's.
            ArenaError::WrongClass { found, .. } if found == type_name::<T>() => ArenaError::Permanent,
            e => e,
        }
    }

    /// Drops the object `raw` names, whatever its class, and releases its slot (vacant, or
    /// its cell returned: [`set_ended_cells`](Self::set_ended_cells)). This is how
    /// type-erased code (the collector) ends objects; hidden objects (garbage, unreachable)
    /// are accepted, vacant slots are not.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Rooted`] or [`ArenaError::Permanent`]; nothing
    /// changes.
    pub fn destroy(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.destroy_for(raw, Ended::Removed)
    }

    /// [`destroy`](Self::destroy), returning with the cell why the object `ended` (the
    /// collector's purge and `destroy_now` use it).
    ///
    /// # Errors
    /// As [`destroy`](Self::destroy).
    pub fn destroy_for(&mut self, raw: RawHandle, ended: Ended) -> Result<(), ArenaError> {
        let slot = self.table.resolve_live(raw)?;
        check_releasable(&self.table, raw.index(), slot)?;
        let class = slot.class() as usize;
        let entry = &mut self.classes[class];
        // SAFETY: `resolve_live` found an object of `class` in slot `raw.index()`.
        unsafe { entry.destroy_at(&self.table, &mut self.outers, raw.index(), self.config.max_generation, ended) };
        Ok(())
    }

    /// Ends the object `raw` names, whatever its class, and retires its slot for good: the
    /// object is dropped, no handle resolves to the slot again, its cell is never reused,
    /// and a class whose cells are returned returns [`Freed::Retired`] (so a pool counts the
    /// object gone). For an object whose end went wrong — the collector's `begin_destroy` hook
    /// panicked, leaving it in a state its class did not plan for.
    ///
    /// # Errors
    /// As [`destroy`](Self::destroy); nothing changes.
    pub fn retire(&mut self, raw: RawHandle, ended: Ended) -> Result<(), ArenaError> {
        let slot = self.table.resolve_live(raw)?;
        check_releasable(&self.table, raw.index(), slot)?;
        let class = slot.class() as usize;
        let entry = &mut self.classes[class];
        // A ceiling of 0: every generation is at it, so the release retires the slot.
        // SAFETY: `resolve_live` found an object of `class` in slot `raw.index()`.
        unsafe { entry.destroy_at(&self.table, &mut self.outers, raw.index(), 0, ended) };
        Ok(())
    }

    /// Sets where class `id`'s cells go when their objects end (removed, destroyed, purged
    /// by the collector): the default, [`EndedCells::Vacant`], makes each slot vacant for
    /// the class's next object; [`EndedCells::Returned`] puts the cell on the class's
    /// returned list instead, for its owner (a pool queues it for precreation) to
    /// [take](Self::drain_returned) and give back with [`recycle`](Self::recycle) or
    /// `activate`; [`EndedCells::ReturnedUndropped`] returns it with its object undropped,
    /// for the owner to drop. A slot retired at the generation ceiling is returned as
    /// [`Freed::Retired`] (no cell comes with it). [`ClassStore::deactivate`] and
    /// [`Releasable::keep`](crate::Releasable::keep) return nothing: their caller holds
    /// what they free. Cells returned already stay on the list when the way changes.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this arena.
    pub fn set_ended_cells(&mut self, id: ClassId, way: EndedCells) -> Result<(), ArenaError> {
        let Some(entry) = self.classes.get_mut(id.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        entry.set_ended_cells(way);
        Ok(())
    }

    /// Where class `id`'s cells go when their objects end ([`set_ended_cells`](Self::set_ended_cells)).
    pub fn ended_cells(&self, id: ClassId) -> Option<EndedCells> {
        Some(self.classes.get(id.index())?.ended_cells())
    }

    /// Takes class `id`'s returned cells, oldest first, emptying its list (which keeps its
    /// buffer). Each [`Freed::Cell`] and [`Freed::Occupied`] token is the caller's until it
    /// goes back through [`recycle`](Self::recycle) or `activate`; an `Occupied` one's object
    /// must be dropped first. Tokens the caller drops — those left in the iterator when it
    /// drops too — are never reused (the slot stays lent for good; an `Occupied` one's
    /// object is never dropped); returned cells nobody takes are dropped (`Occupied` ones'
    /// objects included) when the arena drops.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this arena.
    #[inline]
    pub fn drain_returned(&mut self, id: ClassId) -> Result<std::vec::Drain<'_, Freed>, ArenaError> {
        let Some(entry) = self.classes.get_mut(id.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        Ok(entry.drain_returned())
    }

    /// Makes class `id`'s returned cells vacant again for its next objects, as
    /// [`recycle`](Self::recycle) would each, in one pass that shows `seen` every entry it
    /// takes (so an owner counts what ended, and why): for an owner with no use for the
    /// cells (a pool without workers to rebuild them), in place of
    /// [`drain_returned`](Self::drain_returned) and a `recycle` per cell. Entries whose
    /// object came back undropped ([`Freed::Occupied`]) stay on the list.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this arena.
    pub fn recycle_returned(&mut self, id: ClassId, seen: impl FnMut(&Freed)) -> Result<(), ArenaError> {
        let Some(entry) = self.classes.get_mut(id.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        entry.recycle_returned(seen);
        Ok(())
    }

    /// How many of class `id`'s ended objects wait on its returned list (0 for a class
    /// this arena does not know).
    #[inline]
    pub fn returned(&self, id: ClassId) -> usize {
        self.classes.get(id.index()).map_or(0, |entry| entry.returned().len())
    }

    /// Class `id`'s returned list as it stands, oldest first, to read (an owner's counts
    /// include what waits there); empty for a class this arena does not know.
    pub fn returned_cells(&self, id: ClassId) -> &[Freed] {
        self.classes.get(id.index()).map_or(&[], ClassEntry::returned)
    }

    /// Gives a returned (or taken) cell back: its slot becomes vacant for the class's next object.
    ///
    /// # Errors
    /// [`ArenaError::Stale`] if the token does not belong to this arena; the token is
    /// consumed either way.
    pub fn recycle(&mut self, token: FreedCell) -> Result<(), ArenaError> {
        let Some(slot) = self.table.slot(token.slot) else {
            return Err(ArenaError::Stale);
        };
        let ours = self.table.cell(token.slot) == Some(token.cell)
            && usize::from(slot.class()) == token.class.index()
            && slot.flags().is_vacant();
        if !ours {
            return Err(ArenaError::Stale);
        }
        self.classes[token.class.index()].recycle(token);
        Ok(())
    }

    /// The flags of the object `raw` names (hidden objects included).
    ///
    /// # Errors
    /// [`ArenaError::Stale`].
    pub fn flags(&self, raw: RawHandle) -> Result<ObjectFlags, ArenaError> {
        Ok(self.table.resolve_live(raw)?.flags())
    }

    /// The lifecycle state of the object `raw` names (hidden objects included).
    ///
    /// # Errors
    /// [`ArenaError::Stale`].
    pub fn lifecycle(&self, raw: RawHandle) -> Result<Lifecycle, ArenaError> {
        Ok(self.table.resolve_live(raw)?.flags().lifecycle())
    }

    /// Moves the object `raw` names (hidden objects included) to the lifecycle state `to`,
    /// by one of the transitions [`Lifecycle::may_become`] allows, and keeps the class's
    /// live bitmap in step: an object leaves `tick` and `iter` when it stops being
    /// [`Live`](Lifecycle::Live) and comes back when it is revived. Returns the state
    /// before; an object in `to` already stays as it is.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::Transition`] for a move the lifecycle does
    /// not have (the vacant states are the arena's own); nothing changes then.
    pub fn set_lifecycle(&mut self, raw: RawHandle, to: Lifecycle) -> Result<Lifecycle, ArenaError> {
        let slot = self.table.resolve_live(raw)?;
        let from = slot.flags().lifecycle();
        if from == to {
            return Ok(from);
        }
        if !from.may_become(to) {
            return Err(ArenaError::Transition { from, to });
        }
        slot.set_lifecycle(to);
        // Permanent objects have no cell number, hence no live bit.
        if !is_permanent(&self.table, raw.index()) {
            let entry = &mut self.classes[usize::from(slot.class())];
            let n = entry.geometry().number(raw.index());
            entry.set_live(n, to == Lifecycle::Live);
            if self.barrier {
                // Garbage revived, an object hidden: the mark must judge it again.
                entry.note(raw.index());
            }
        }
        Ok(from)
    }

    /// Sets `flags` on the object `raw` names (hidden objects included). Returns the flags
    /// the object had before.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::ReservedFlags`] for
    /// [`ObjectFlags::ARENA_OWNED`] (the lifecycle moves by
    /// [`set_lifecycle`](Self::set_lifecycle)).
    pub fn set_flags(&mut self, raw: RawHandle, flags: ObjectFlags) -> Result<ObjectFlags, ArenaError> {
        self.change_flags(raw, flags, true)
    }

    /// Clears `flags` on the object `raw` names; see [`set_flags`](Self::set_flags).
    /// Returns the flags the object had before.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::ReservedFlags`] for
    /// [`ObjectFlags::ARENA_OWNED`] (and for `PERMANENT` on an object of the permanent pool).
    pub fn clear_flags(&mut self, raw: RawHandle, flags: ObjectFlags) -> Result<ObjectFlags, ArenaError> {
        self.change_flags(raw, flags, false)
    }

    fn change_flags(&mut self, raw: RawHandle, flags: ObjectFlags, set: bool) -> Result<ObjectFlags, ArenaError> {
        let reserved = flags & ObjectFlags::ARENA_OWNED;
        if !reserved.is_empty() {
            return Err(ArenaError::ReservedFlags(reserved));
        }
        let slot = self.table.resolve_live(raw)?;
        let permanent_pool = is_permanent(&self.table, raw.index());
        if permanent_pool && !set && flags.contains(ObjectFlags::PERMANENT) {
            // It lives in the permanent pool whatever its flags say; keep them truthful.
            return Err(ArenaError::ReservedFlags(ObjectFlags::PERMANENT));
        }
        let before = match set {
            true => slot.insert_flags(flags),
            false => slot.remove_flags(flags),
        };
        if self.barrier && !permanent_pool {
            // A keep flag set or cleared: the mark must judge the object again.
            self.classes[usize::from(slot.class())].note(raw.index());
        }
        Ok(before)
    }

    /// Adds the object to the root set by hand (UE's `AddToRoot`).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] or [`ArenaError::Hidden`].
    pub fn add_to_root(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.table.resolve(raw)?.insert_flags(ObjectFlags::ROOT_SET);
        if self.barrier {
            self.note(raw.index(), true);
        }
        Ok(())
    }

    /// Takes the object out of the root set (UE's `RemoveFromRoot`). [`Root`] guards are
    /// counted apart and are not affected.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::NotRooted`] if it was not added.
    pub fn remove_from_root(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        let before = self.table.resolve_live(raw)?.remove_flags(ObjectFlags::ROOT_SET);
        if before.contains(ObjectFlags::ROOT_SET) {
            Ok(())
        } else {
            Err(ArenaError::NotRooted)
        }
    }

    /// An RAII root of the object: it stays in the root set while the guard (or a clone)
    /// lives.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Hidden`] or [`ArenaError::WrongClass`].
    pub fn root<T: 'static>(&mut self, h: Handle<T>) -> Result<Root<T>, ArenaError> {
        self.typed_slot(h)?;
        if self.barrier {
            self.note(h.index(), true);
        }
        Ok(Root::new(Arc::clone(&self.table), h))
    }

    /// Whether the object is a root (added by hand or guarded by a [`Root`]).
    pub fn is_rooted(&self, raw: RawHandle) -> bool {
        self.table.resolve_live(raw).is_ok_and(Slot::is_rooted)
    }

    /// Records `outer` as the owner of `child` (UE's Outer), or cuts `child` loose with
    /// `None`. The collector treats the link as a reference from `child` to its owner and
    /// destroys sub-objects with their owner; removing or destroying an owner through the
    /// arena alone cuts its sub-objects loose.
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`] or [`ArenaError::Hidden`] (both objects
    /// must be visible), or [`ArenaError::OuterCycle`] if `outer` is `child` or one of its
    /// sub-objects.
    pub fn set_outer(&mut self, child: RawHandle, outer: Option<RawHandle>) -> Result<(), ArenaError> {
        let Some(outer) = outer else {
            self.table.resolve_live(child)?;
            self.outers.detach_from_outer(&self.table, child.index());
            return Ok(());
        };
        self.table.resolve(child)?;
        let mut up = self.table.resolve(outer)?;
        let mut index = outer.index();
        loop {
            if index == child.index() {
                return Err(ArenaError::OuterCycle);
            }
            let Some(next) = up.outer() else { break };
            index = next;
            // SAFETY: an `outer` link names a live slot (owners cut sub-objects loose when
            // they are released).
            up = unsafe { self.table.slot_unchecked(index) };
        }
        self.outers.attach(&self.table, child.index(), outer.index());
        if self.barrier {
            // A new edge, child → owner, from an object the mark may have visited already.
            self.note(child.index(), true);
        }
        Ok(())
    }

    /// The direct sub-objects of `raw` (objects whose `outer` it is), hidden ones included;
    /// empty if `raw` does not name a live object.
    pub fn sub_objects(&self, raw: RawHandle) -> impl Iterator<Item = RawHandle> + '_ {
        let first = self.table.resolve_live(raw).is_ok().then_some(raw.index());
        first.into_iter().flat_map(|p| self.outers.children(p)).filter_map(|i| self.handle_at(i))
    }

    /// The handle of the object in slot `index` with its current generation, if the slot
    /// holds one (visible or hidden). For type-erased code that found a slot by index (the
    /// collector's sweep, an `outer` link).
    pub fn handle_at(&self, index: u32) -> Option<RawHandle> {
        let slot = self.table.slot(index)?;
        if slot.flags().is_vacant() {
            return None;
        }
        Some(RawHandle::new(index, NonZeroU32::new(slot.generation())?))
    }

    /// Asks the allocator's preparation thread to have room for `n` more objects of class
    /// `T` (beyond its vacant cells) ready ahead of time; returns at once. Registers `T`.
    ///
    /// # Errors
    /// [`ArenaError::Alloc`] if the reservation cannot hold them (nothing is asked then), or
    /// as [`register`](Self::register).
    pub fn reserve<T: Send + Sync + 'static>(&mut self, n: usize) -> Result<(), ArenaError> {
        let store = self.store_mut::<T>()?;
        // Decommitted slabs serve before new ones (`grow`): they count as room.
        let missing = n.saturating_sub(store.entry.room());
        if missing > 0 {
            store.alloc.reserve(store.entry.id(), missing)?;
        }
        Ok(())
    }

    /// Asks the allocator's preparation thread to have room for `n` objects of class `id`
    /// (beyond its vacant cells) prepared ahead, without asking twice for the same room
    /// (see [`ChunkAllocator::prepare_ahead`]); returns at once. For an owner of the class's
    /// cells that knows when it will need more: a pool near its growth step asks each frame,
    /// and its class keeps no spare slab the rest of the time.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this arena.
    pub fn prepare_ahead(&self, id: ClassId, n: usize) -> Result<(), ArenaError> {
        let entry = self.classes.get(id.index()).ok_or(ArenaError::Unregistered("an unknown class"))?;
        let missing = n.saturating_sub(entry.room());
        if missing > 0 {
            self.alloc.prepare_ahead(entry.id(), missing)?;
        }
        Ok(())
    }

    /// Makes room for `n` objects of class `T` now, on this thread: slabs are taken and
    /// their slots set up until `n` cells are vacant. For loading screens: the next `n`
    /// inserts touch no allocator at all. Registers `T`.
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert); the cells prepared before the error stay.
    pub fn prefill<T: Send + Sync + 'static>(&mut self, n: usize) -> Result<(), ArenaError> {
        let mut store = self.store_mut::<T>()?;
        while store.entry.vacant() < n {
            store.grow()?;
        }
        Ok(())
    }

    /// Keeps the visible objects of class `T` for which `keep` returns `true` and destroys
    /// the others (dropped in place, slots released as
    /// [`set_ended_cells`](Self::set_ended_cells) says), in one pass in memory order. Rooted objects are kept whatever `keep` says.
    pub fn retain<T: Send + Sync + 'static>(&mut self, keep: impl FnMut(&mut T) -> bool) {
        if self.class_of::<T>().is_some() {
            self.store_mut::<T>().expect("registered").retain(keep);
        }
    }

    /// Objects of class `T` in the class's cells with a live slot: visible ones and hidden
    /// ones awaiting their end (`Garbage`, `Unreachable`, `Destroying`), not permanent ones
    /// (see [`ArenaClassStats::permanent`]) and not the ones a pool keeps in released slots
    /// (`InPool`, or `Lent` while being built).
    pub fn len<T: 'static>(&self) -> usize {
        self.class_of::<T>().map_or(0, |id| self.classes[id.index()].len())
    }

    /// Whether the arena holds no object of class `T`.
    pub fn is_empty<T: 'static>(&self) -> bool {
        self.len::<T>() == 0
    }

    /// Every visible object of class `T` with its handle, in memory order; dormant ones too
    /// (they are alive: only ticks skip them, see [`set_dormant`](Self::set_dormant)).
    pub fn iter<T: 'static>(&self) -> Iter<'_, T> {
        let entry = self.class_of::<T>().map(|id| &self.classes[id.index()]);
        Iter { entry, cells: LiveCells::of(entry), _class: PhantomData }
    }

    /// Calls `f` on every visible object of class `T` that is not dormant
    /// ([`set_dormant`](Self::set_dormant)), in memory order: one pass over the class's
    /// contiguous slabs (the aggregated tick), walking the live bitmap less the dormant one.
    pub fn tick<T: 'static>(&mut self, mut f: impl FnMut(&mut T)) {
        if let Some(id) = self.class_of::<T>() {
            let entry = &mut self.classes[id.index()];
            entry.note_all();
            let entry = &*entry;
            let dormant = entry.dormancy().words(0, entry.live().len());
            let geometry = entry.geometry();
            // SAFETY: `entry` is class `T`'s and `&mut self` makes every object ours.
            unsafe { visit_words::<T>(geometry.shift(), geometry.bases(), 0, entry.live(), dormant, &mut f) };
        }
    }

    /// Like [`tick`](Self::tick), split across rayon's threads by work: the class is cut
    /// into chunks of consecutive cells that hold about equal numbers of awake objects, a
    /// few a thread, so a thousand heavy objects in one slab use every core.
    pub fn par_tick<T: Send + 'static>(&mut self, f: impl Fn(&mut T) + Sync + Send) {
        let Some(id) = self.class_of::<T>() else { return };
        let entry = &mut self.classes[id.index()];
        entry.note_all();
        let entry = &*entry;
        let live = entry.live();
        let (shift, bases) = (entry.geometry().shift(), SharedBases(entry.geometry().bases()));
        ticks::par_chunks(live, entry.dormancy().words(0, live.len()), |_, first, words, dormant| {
            let bases = &bases;
            // SAFETY: the geometry is class `T`'s; the chunks do not overlap, so each
            // `&mut T` is handed to one task; `&mut self` excludes others.
            unsafe { visit_words::<T>(shift, bases.0, first, words, dormant, &mut |t| f(t)) };
        });
    }

    /// Where `class`'s cells are, for holders of [`CompactCell`](crate::CompactCell)s (a
    /// pool and its workers). `None` for a class this arena does not know.
    /// `None` too for a class of 2³¹ cells or more (a compact token keeps a bit).
    pub fn cell_map(&self, class: ClassId) -> Option<crate::CellMap> {
        let entry = self.classes.get(class.index())?;
        let geometry = entry.geometry();
        (geometry.capacity() <= 1 << 31).then(|| crate::CellMap::new(geometry.range_ptr(), entry.id()))
    }

    /// Counters of class `T`, if registered.
    pub fn stats<T: 'static>(&self) -> Option<ArenaClassStats> {
        let entry = &self.classes[self.class_of::<T>()?.index()];
        let geometry = entry.geometry();
        Some(ArenaClassStats {
            name: entry.name(),
            len: entry.len(),
            vacant: entry.vacant(),
            retired: entry.retired(),
            permanent: entry.permanent(),
            dormant: entry.dormancy().count(),
            memory: self.alloc.stats(entry.id()).ok()?,
            slot_bytes: geometry.slabs() * geometry.cells_per_slab() * std::mem::size_of::<Slot>(),
            side_bytes: entry.side_bytes() + self.outers.bytes_in(geometry.start(), geometry.capacity()),
            object_size: geometry.object_size(),
        })
    }

    /// The object in slot `index` counted among its class's slots (`0` for the class's
    /// first), as a handle's debug form and the collector's reference chains print it
    /// (`Enemy#127`). `None` for an index no class of this arena holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// struct Enemy { hp: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let enemy = arena.insert(Enemy { hp: 3 });
    /// let n = arena.index_in_class(enemy.index()).unwrap();
    /// assert_eq!(format!("{enemy:?}"), format!("Enemy#{n}v1"));
    /// assert_eq!(arena.index_in_class(u32::MAX - 1), None);
    /// ```
    pub fn index_in_class(&self, index: u32) -> Option<u32> {
        let slot = self.table.slot(index)?;
        let entry = self.classes.get(usize::from(slot.class()))?;
        index.checked_sub(entry.geometry().start())
    }

    /// The name (Rust type) of class `class`, or `None` for a class this arena does not
    /// know. With [`Slot::class`] it names the class of any object, for type-erased code
    /// (the collector's diagnostics).
    pub fn class_name(&self, class: ClassId) -> Option<&'static str> {
        self.classes.get(class.index()).map(ClassEntry::name)
    }

    /// What every cell of class `class`'s slabs holds, slab by slab in address order: the
    /// picture behind a memory-layout view. `None` for a class this arena does not know.
    pub fn layout(&self, class: ClassId) -> Option<ClassLayout> {
        let entry = self.classes.get(class.index())?;
        Some(layout::class_layout(entry))
    }

    /// [`layout`](Self::layout) of every class, in registration order.
    pub fn layouts(&self) -> Vec<ClassLayout> {
        self.classes.iter().map(layout::class_layout).collect()
    }

    /// The object table, for type-erased code (the collector marks it chunk by chunk).
    pub fn table(&self) -> &ObjectTable {
        &self.table
    }

    /// The allocator under the arena, for its statistics and address queries.
    pub fn allocator(&self) -> &ChunkAllocator {
        &self.alloc
    }

    /// The arena's settings.
    pub fn config(&self) -> &ArenaConfig {
        &self.config
    }

    /// Turns the collector's write barrier on or off: while it is on, the arena notes
    /// every object that is made live (`insert`, `activate`) or lent mutably (`get_mut`, a
    /// store's `get_mut`, a [`Releasable`]'s object; `tick`, `par_tick` and `retain` note
    /// the whole class at once) in a class for which `traced` is true (asked with the class's
    /// id and [collector entry](Self::collector_entry)), and every object of
    /// any class that is rooted (`add_to_root`, `root`), given an owner (`set_outer`) or
    /// re-flagged (`set_flags`, `clear_flags`). The collector's incremental mark drains the
    /// notes with [`drain_barrier`](Self::drain_barrier) and traces those objects again,
    /// which is how it learns of the handles the game stored between two of its slices. A
    /// class registered while the barrier is on is noted as if traced. Turning the barrier
    /// off forgets what it noted.
    ///
    /// Off (always, outside an incremental mark), each of those calls pays one
    /// well-predicted branch on a flag it has in cache: the class entry's for the typed
    /// store paths, the arena's for `get_mut`. On, a note is a `Vec` push (amortised: the
    /// lists are kept between marks).
    ///
    /// This is the collector's: a heap turns it on and off around its incremental marks.
    /// Turned off behind an incremental mark's back, the mark could miss a store and purge
    /// a reachable object.
    pub fn set_barrier(&mut self, on: bool, mut traced: impl FnMut(ClassId, Option<&CollectorEntry>) -> bool) {
        self.barrier = on;
        for entry in &mut self.classes {
            let traced = on && traced(entry.id(), entry.collector());
            entry.set_barrier(traced);
        }
    }

    /// Whether the write barrier is on ([`set_barrier`](Self::set_barrier)).
    pub fn barrier(&self) -> bool {
        self.barrier
    }

    /// Moves what the write barrier noted since the last drain into `into` (appended; the
    /// arena keeps its lists' capacity): slot indices of single objects, possibly repeated,
    /// possibly vacant or reused since, and the classes whose every live object was lent.
    pub fn drain_barrier(&mut self, into: &mut BarrierLog) {
        for entry in &mut self.classes {
            entry.drain_noted(into);
        }
    }

    /// Notes slot `index` for the barrier: when its class is traced, or `always` (a root,
    /// an owner, flags: they matter whatever the class). Permanent objects are never
    /// scanned, so they are not noted.
    #[cold]
    #[inline(never)]
    fn note(&mut self, index: u32, always: bool) {
        let Some(class) = self.table.class_at(index) else { return };
        let entry = &mut self.classes[usize::from(class)];
        if always || entry.barrier() {
            entry.note(index);
        }
    }

    /// The slot indices of class `class`'s visible objects (live bit set), in memory order:
    /// for type-erased code that walks a class (the collector re-traces a ticked class).
    /// Empty for a class this arena does not know.
    pub fn live_indices(&self, class: ClassId) -> LiveIndices<'_> {
        let entry = self.classes.get(class.index());
        LiveIndices { entry, cells: LiveCells::of(entry) }
    }
}

/// What the arena's write barrier noted while it was on (see [`Arena::set_barrier`]), as
/// [`Arena::drain_barrier`] hands it over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BarrierLog {
    /// Slot indices of objects made live, lent mutably, rooted, given an owner or
    /// re-flagged; class by class, in the order noted, repeats kept. An index may name a slot vacant since,
    /// or reused by another object.
    pub objects: Vec<u32>,
    /// Classes whose every live object was lent mutably (a `tick`, `par_tick` or `retain`).
    pub classes: Vec<ClassId>,
}

impl BarrierLog {
    /// Whether nothing was noted.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.classes.is_empty()
    }

    /// Empties both lists, keeping their capacity.
    pub fn clear(&mut self) {
        self.objects.clear();
        self.classes.clear();
    }
}

/// The slot indices of one class's visible objects, from [`Arena::live_indices`].
#[derive(Debug)]
pub struct LiveIndices<'a> {
    entry: Option<&'a ClassEntry>,
    cells: LiveCells<'a>,
}

impl Iterator for LiveIndices<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let n = self.cells.next()?;
        Some(self.entry?.geometry().slot_of(n))
    }
}

/// The cell numbers of one class's set live bits, in memory order: the walk every
/// per-class iterator ([`Iter`], [`IterMut`], [`LiveIndices`]) shares.
#[derive(Debug)]
pub(crate) struct LiveCells<'a> {
    live: &'a [u64],
    word: usize,
    bits: u64,
}

impl<'a> LiveCells<'a> {
    /// The walk over `entry`'s live bitmap (none for no class).
    pub(crate) fn of(entry: Option<&'a ClassEntry>) -> Self {
        let live = entry.map_or(&[][..], ClassEntry::live);
        Self { live, word: 0, bits: live.first().copied().unwrap_or(0) }
    }
}

impl Iterator for LiveCells<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.live.get(self.word)?;
        }
        let n = (self.word * 64 + self.bits.trailing_zeros() as usize) as u32;
        self.bits &= self.bits - 1;
        Some(n)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // Walk the table rather than the live bitmaps: hidden objects (garbage, in pool)
        // have no live bit but are still constructed. A panicking destructor does not stop
        // the walk: every other object is dropped, then the first panic goes on.
        let mut drops = DropAll::new();
        // Kept objects' slots are vacant (`InPool`), and so are returned cells' (`Lent`): the
        // walk below skips them.
        for class in 0..self.classes.len() {
            let entry = &mut self.classes[class];
            drops.run(|| {
                entry.drop_kept();
            });
            entry.drop_returned(&mut drops);
        }
        for (first, run) in self.table.runs() {
            for (k, slot) in run.iter().enumerate() {
                if slot.flags().is_vacant() {
                    continue;
                }
                slot.flags.store(Lifecycle::Vacant.flags().bits(), Ordering::Release);
                let cell = self.table.cell(first + k as u32).expect("a set-up slot has a cell");
                if let Some(drop_fn) = self.classes[slot.class() as usize].geometry().drop_fn() {
                    // SAFETY: a non-vacant slot's cell holds an object of its class; marking
                    // it vacant first means a panicking destructor cannot lead to a second drop.
                    drops.run(|| unsafe { drop_fn(cell.as_ptr()) });
                }
            }
        }
        drop(drops);
    }
}

/// The cell of the visible object of `entry`'s class that `h` names: the slot and the
/// cell by arithmetic on the class's range, no directory, no error value. A permanent object
/// of the class (outside the range) takes the cold path.
#[inline(always)]
fn locate_in<T: 'static>(entry: &ClassEntry, table: &ObjectTable, h: Handle<T>) -> Option<*mut u8> {
    let geometry = entry.geometry();
    let n = geometry.number(h.index());
    let Some(slot) = geometry.try_slot(n) else { return locate_permanent(entry, table, h.raw()) };
    slot.check_without(h.generation(), ObjectFlags::HIDDEN)?;
    Some(geometry.cell_of::<T>(n))
}

/// Tells `entry`'s spawn listeners of the object `h` names, if it is visible (resolved
/// again: the listeners get a reference to it, which must be there).
#[cold]
#[inline(never)]
fn tell_spawn_in<T: 'static>(table: &ObjectTable, entry: &mut ClassEntry, h: Handle<T>) {
    let Some(cell) = locate_in(entry, table, h) else { return };
    // SAFETY: `locate_in` found the visible object's cell; cells are non-null.
    entry.tell_spawn(h.raw(), unsafe { NonNull::new_unchecked(cell) });
}

/// Why a handle typed as `entry`'s class does not name a visible object in its range.
#[cold]
#[inline(never)]
fn why_not_in(table: &ObjectTable, entry: &ClassEntry, raw: RawHandle) -> ArenaError {
    match table.resolve(raw) {
        Err(e) => e,
        Ok(slot) if usize::from(slot.class()) == entry.id().index() => ArenaError::Permanent,
        Ok(_) => ArenaError::WrongClass { expected: entry.name(), found: "another class" },
    }
}

#[cold]
#[inline(never)]
fn locate_permanent(entry: &ClassEntry, table: &ObjectTable, raw: RawHandle) -> Option<*mut u8> {
    let slot = table.resolve(raw).ok()?;
    (usize::from(slot.class()) == entry.id().index()).then_some(())?;
    Some(table.cell(raw.index())?.as_ptr())
}

/// The class index, slot and cell of the visible `T` that `h` names, through the table's
/// directory: the handle's range names the class (a permanent object's slot does).
#[inline]
fn locate_typed<'a, T: 'static>(
    table: &'a ObjectTable,
    classes: &[ClassEntry],
    h: Handle<T>,
) -> Option<(usize, &'a Slot, NonNull<u8>)> {
    let range = table.range(h.index())?;
    let n = h.index().wrapping_sub(range.start);
    let slot = range.try_slot(n)?;
    let flags = slot.check_flags(h.generation())?;
    let class = match range.class {
        u16::MAX => slot.class(),
        class => class,
    };
    let class = usize::from(class);
    let typed = classes.get(class).is_some_and(ClassEntry::is::<T>);
    if flags.intersects(ObjectFlags::HIDDEN) || !typed {
        return None;
    }
    Some((class, slot, range.cell(n)?))
}

/// Why `h` does not name a visible `T` ([`locate_typed`] found none).
#[cold]
#[inline(never)]
fn why_not_typed<T: 'static>(table: &ObjectTable, classes: &[ClassEntry], h: Handle<T>) -> ArenaError {
    let slot = match table.resolve(h.raw()) {
        Ok(slot) => slot,
        Err(e) => return e,
    };
    let found = classes.get(usize::from(slot.class())).map_or("another class", ClassEntry::name);
    ArenaError::WrongClass { expected: type_name::<T>(), found }
}

/// Whether slot `index` lies in the permanent pool's range (told apart by where it lives,
/// not by a flag a caller could clear).
#[inline]
fn is_permanent(table: &ObjectTable, index: u32) -> bool {
    table.range(index).is_some_and(|r| r.cells.is_none())
}

/// Refuses to end rooted objects and objects of the permanent pool.
#[inline]
fn check_releasable(table: &ObjectTable, index: u32, slot: &Slot) -> Result<(), ArenaError> {
    if slot.is_rooted() {
        return Err(ArenaError::Rooted);
    }
    if is_permanent(table, index) {
        return Err(ArenaError::Permanent);
    }
    Ok(())
}

/// The bases of a class's slabs, shared read-only with rayon's tasks.
struct SharedBases<'a>(&'a [*mut u8]);
// SAFETY: the pointers are only read to compute addresses; which task touches which object
// is decided by the live-bitmap chunk it was given.
unsafe impl Sync for SharedBases<'_> {}

/// Calls `f` on the object of every bit set in `words` and clear in `dormant` (the words of
/// the class's dormancy bitmap beside them; a missing one is all awake), whose first word is
/// word `first_word` of the class's live bitmap.
///
/// # Safety
/// `bases`, `shift` and the bitmap belong to class `T`; the caller holds exclusive access to
/// every object whose bit is in `words`.
#[inline]
unsafe fn visit_words<T>(
    shift: u32,
    bases: &[*mut u8],
    first_word: usize,
    words: &[u64],
    dormant: &[u64],
    f: &mut impl FnMut(&mut T),
) {
    let mask = (1usize << shift) - 1;
    for (w, &word) in words.iter().enumerate() {
        // Dormant objects cost their bit here, and nothing more.
        let word = word & !dormant.get(w).copied().unwrap_or(0);
        if word == 0 {
            continue;
        }
        let n0 = (first_word + w) * 64;
        if shift >= 6 {
            // Words never straddle slabs: the 64 cells are consecutive.
            let base = bases[n0 >> shift].cast::<T>();
            debug_assert!(!base.is_null(), "live bit in a slab the class does not own");
            // SAFETY: `n0 & mask` + 63 < cells_per_slab, so the cells lie in the slab.
            let first = unsafe { base.add(n0 & mask) };
            if word == u64::MAX {
                for i in 0..64 {
                    // SAFETY: the bit is set, so the cell holds a live `T` that we own.
                    f(unsafe { &mut *first.add(i) });
                }
            } else {
                prefetch_word::<T>(shift, bases, n0 + 64, words.get(w + 1), dormant.get(w + 1));
                let mut bits = word;
                while bits != 0 {
                    let i = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    // SAFETY: as above.
                    f(unsafe { &mut *first.add(i) });
                }
            }
        } else {
            let mut bits = word;
            while bits != 0 {
                let n = n0 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // SAFETY: a set bit names a live `T` in a slab the class owns.
                f(unsafe { &mut *bases[n >> shift].cast::<T>().add(n & mask) });
            }
        }
    }
}

/// Asks the CPU for the cells of the awake objects of the next word (`n1`: its first cell
/// number; `live` and `dormant`: its words, if any) while the walk works through a partial
/// one. Where dormant objects leave gaps, the hardware prefetcher loses the stream (a 64-byte
/// object is a line, a word of them a page), and the tick would wait for each object in
/// turn: the walk knows which lines it will read next, so it says so, a word ahead. A full
/// next word is left to the hardware. (Measured: `benches/dormant.rs`, 1.6× faster at half
/// dormant, 2.5–3.5× at 90 %.)
#[inline(always)]
#[cfg_attr(any(not(target_arch = "x86_64"), miri), allow(unused_variables))]
fn prefetch_word<T>(shift: u32, bases: &[*mut u8], n1: usize, live: Option<&u64>, dormant: Option<&u64>) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let Some(&live) = live else { return };
        let mut bits = live & !dormant.copied().unwrap_or(0);
        if bits == u64::MAX || bits == 0 {
            return;
        }
        let Some(&base) = bases.get(n1 >> shift) else { return };
        if base.is_null() {
            return;
        }
        // Addresses only, never dereferenced: `wrapping_add` keeps them well-defined.
        let first = base.cast::<T>().wrapping_add(n1 & ((1usize << shift) - 1));
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            // SAFETY: SSE is part of x86_64's baseline, and a prefetch is a hint that
            // neither reads into the program nor faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(i).cast()) };
        }
    }
}

/// Iterator over the visible objects of one class, in memory order.
pub struct Iter<'a, T> {
    entry: Option<&'a ClassEntry>,
    cells: LiveCells<'a>,
    _class: PhantomData<&'a T>,
}

impl<'a, T: 'static> Iterator for Iter<'a, T> {
    type Item = (Handle<T>, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        let geometry = self.entry?.geometry();
        let n = self.cells.next()?;
        let index = geometry.slot_of(n);
        let slot = geometry.slot(n);
        let generation = NonZeroU32::new(slot.generation()).expect("live slots have a generation");
        // SAFETY: the live bit says the cell holds a `T`; `&'a Arena` keeps it unchanged.
        let object = unsafe { &*geometry.cell_ptr(n).cast::<T>() };
        Some((Handle::from_raw(RawHandle::new(index, generation)), object))
    }
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter").field("word", &self.cells.word).finish()
    }
}

/// An object [`ClassStore::releasable`] found releasable (visible, of the store's class,
/// not rooted, not permanent), held with its store borrowed: nothing can release it, or
/// touch the class, between the check and [`deactivate`](Self::deactivate), so a release
/// path resolves the handle once and deactivates without a second look. Dropping it
/// changes nothing.
pub struct Releasable<'s, T> {
    // The store's parts, reborrowed (not the store: holding `&mut ClassStore` would make
    // the caller keep the store in memory).
    table: &'s ObjectTable,
    entry: &'s mut ClassEntry,
    outers: &'s mut Outers,
    index: u32,
    /// The cell number.
    n: u32,
    flags: ObjectFlags,
    generation: NonZeroU32,
    cell: NonNull<T>,
}

impl<T: 'static> Releasable<'_, T> {
    /// The object's flags when it was found (`HAS_SUBOBJECTS` tells an owner).
    #[inline]
    pub fn flags(&self) -> ObjectFlags {
        self.flags
    }

    /// The object's handle.
    #[inline]
    pub fn handle(&self) -> Handle<T> {
        Handle::from_raw(RawHandle::new(self.index, self.generation))
    }

    /// The object, to run its release hooks on.
    #[inline]
    pub fn object(&mut self) -> &mut T {
        if self.entry.barrier() {
            // Usually deactivated next (then kept unscanned, as pooled objects are); but
            // dropped before its deactivation, the object stays live with what the hooks
            // wrote.
            self.entry.note(self.index);
        }
        // SAFETY: the cell holds the live `T` that `releasable` found, and the store stays
        // borrowed, so this is the one reference.
        unsafe { self.cell.as_mut() }
    }

    /// Tells the class's end listeners now, if it has any, that the object is ending
    /// ([`Arena::notify_end`]): before a pool's `on_release` and `reset` change it. Its
    /// release then tells them nothing more. A class without end listeners pays one test of
    /// a byte.
    #[inline(always)]
    pub fn notify_end(&mut self) {
        if self.entry.listening_to_ends() {
            // Scalars to the cold call, not `self`: the hot path keeps the `Releasable` in
            // registers.
            self.entry.tell_end(self.index, self.flags, self.generation);
            // What the release reads: the listeners were told.
            self.flags |= ObjectFlags::END_NOTIFIED;
        }
    }

    /// [`ClassStore::deactivate`]s the object: its slot is released (every handle to it goes
    /// stale, its sub-objects are cut loose) and `InPool`, and the returned token
    /// owns the cell with the object still in it. `None`: the slot reached the generation
    /// ceiling and retired, and the object was dropped here.
    #[inline]
    pub fn deactivate(self) -> Option<FreedCell> {
        let found = self.found();
        // SAFETY: `releasable` found this live `T` there, and the borrow kept it so.
        unsafe { self.entry.deactivate::<T>(self.table, self.outers, found) }
    }

    /// Keeps the object for the class's next spawn ([`ClassStore::reuse`]): its slot is
    /// released (every handle to it goes stale, its sub-objects are cut loose) and
    /// [`InPool`](Lifecycle::InPool), and the object — reset by the caller — stays in its
    /// cell, the arena's: no token to hold, nothing to count. The arena drops it if no spawn
    /// takes it. `false`: the slot reached the generation ceiling and retired, and the
    /// object was dropped here.
    #[inline]
    pub fn keep(self) -> bool {
        let found = self.found();
        // SAFETY: `releasable` found this live `T` there, and the borrow kept it so.
        unsafe { self.entry.keep::<T>(self.table, self.outers, found) }
    }

    /// Whether the object's class registered with a collector ([`CollectorEntry`]): its
    /// end runs the collector's hooks.
    #[inline]
    pub fn is_collected(&self) -> bool {
        self.entry.collector().is_some()
    }

    /// Begins the object's end, as the collector does before an object's `begin_destroy`
    /// hook: it becomes [`Destroying`](Lifecycle::Destroying), hidden from lookups, ticks
    /// and iterators, while its handle still names it. Then [`destroy`](Self::destroy) ends
    /// it — or, if its end must wait, the caller lets go and ends it later by its handle
    /// ([`Arena::destroy_for`]).
    #[inline]
    pub fn begin_destroy(&mut self) {
        self.entry.begin_destroy(self.n, self.index);
    }

    /// Ends the object now, as [`Arena::destroy_for`] would without resolving it again: its
    /// slot is released (every handle to it goes stale), the object dropped — or handed back
    /// undropped, to a class whose ended cells are returned so — and its cell freed as the
    /// class's [`EndedCells`](crate::EndedCells) say, `ended` telling its owner why. A slot at
    /// the generation ceiling retires.
    #[inline]
    pub fn destroy(self, ended: Ended) {
        let max_generation = self.entry.geometry().max_generation();
        // SAFETY: `releasable` found a live `T` in slot `index`, and the borrow kept it so
        // (`begin_destroy` only hid it).
        unsafe { self.entry.destroy_at(self.table, self.outers, self.index, max_generation, ended) };
    }

    /// [`destroy`](Self::destroy), the slot retired for good: for an object whose end went
    /// wrong (a `begin_destroy` hook panicked), as [`Arena::retire`].
    pub fn retire(self, ended: Ended) {
        // SAFETY: as in `destroy`; a ceiling of 0 retires the slot.
        unsafe { self.entry.destroy_at(self.table, self.outers, self.index, 0, ended) };
    }

    #[inline(always)]
    fn found(&self) -> Found {
        let (index, n, cell, flags) = (self.index, self.n, self.cell.cast(), self.flags);
        Found { index, n, cell, flags, generation: self.generation.get() }
    }
}

impl<T> fmt::Debug for Releasable<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Releasable")
            .field("handle", &RawHandle::new(self.index, self.generation))
            .field("flags", &self.flags)
            .finish()
    }
}

/// The collector entries of an arena's classes, by class index
/// ([`Arena::collector_entries`]). Shared by the threads of a parallel mark.
#[derive(Clone, Copy)]
pub struct CollectorEntries<'a> {
    classes: &'a [ClassEntry],
}

// SAFETY: the view reads the classes' collector entries only: plain `Copy` data, written
// under `&mut Arena` alone, which the view's borrow excludes. (A class record as a whole is
// neither `Send` nor `Sync`, for its slab pointers and its listeners, which the view never
// touches.)
unsafe impl Send for CollectorEntries<'_> {}
// SAFETY: as above.
unsafe impl Sync for CollectorEntries<'_> {}

impl<'a> CollectorEntries<'a> {
    /// The entry of the class with index `class`, as [`Arena::collector_entry`].
    #[inline(always)]
    pub fn get(self, class: usize) -> Option<&'a CollectorEntry> {
        self.classes.get(class)?.collector()
    }
}

impl fmt::Debug for CollectorEntries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.classes.iter().map(ClassEntry::collector)).finish()
    }
}

/// The typed view of one class, from [`Arena::store_mut`]: the arena's operations without
/// the class lookup each call makes.
pub struct ClassStore<'a, T> {
    table: &'a ObjectTable,
    entry: &'a mut ClassEntry,
    alloc: &'a ChunkAllocator,
    outers: &'a mut Outers,
    _class: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for ClassStore<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassStore").field("class", &self.entry.name()).field("len", &self.entry.len()).finish()
    }
}

// `T: 'static` only: every way to a store names a registered class of `T` (the
// registration asked `Send + Sync`), so a caller whose `T` is known only as `'static` (a
// World's `destroy`) can use a store it was handed unchecked.
impl<T: 'static> ClassStore<'_, T> {
    /// The class's id.
    pub fn class(&self) -> ClassId {
        self.entry.id()
    }

    /// Objects in the class's cells with a live slot (see [`Arena::len`]).
    pub fn len(&self) -> usize {
        self.entry.len()
    }

    /// Whether the class holds no object.
    pub fn is_empty(&self) -> bool {
        self.entry.len() == 0
    }

    /// Takes a prepared slab and makes its cells vacant slots.
    #[cold]
    fn grow(&mut self) -> Result<(), ArenaError> {
        self.entry.grow(self.table, self.alloc)
    }

    /// Places `value` in a vacant cell and returns its handle.
    ///
    /// # Errors
    /// As [`Arena::try_insert`].
    #[inline]
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, Rejected<T, ArenaError>> {
        match self.entry.pop_vacant(self.table, self.alloc) {
            Ok(index) => Ok(self.place(index, value)),
            Err(error) => Err(Rejected { error, value }),
        }
    }

    /// [`try_insert`](Self::try_insert), also lending the object just placed: for a caller
    /// that finishes it in place (a spawn's `init` and hooks) without resolving the handle
    /// again.
    ///
    /// # Errors
    /// As [`Arena::try_insert`].
    #[inline]
    pub fn try_insert_mut(&mut self, value: T) -> Result<(Handle<T>, &mut T), Rejected<T, ArenaError>> {
        match self.entry.pop_vacant(self.table, self.alloc) {
            Ok(index) => {
                // SAFETY: the store is class `T`'s, and `index` came off its vacant list.
                let (handle, object) = unsafe { self.entry.place_at(index, value) };
                // SAFETY: the cell holds the `T` placed just now, live in its slot; the
                // borrow of the store it is lent for stands for the whole class's.
                Ok((handle, unsafe { &mut *object.as_ptr() }))
            }
            Err(error) => Err(Rejected { error, value }),
        }
    }

    /// [`try_insert_mut`](Self::try_insert_mut) of the object `create` builds, built in its
    /// cell: a vacant cell is found first, then `create` runs. If `create` panics, nothing
    /// was inserted.
    ///
    /// # Errors
    /// As [`Arena::try_insert`]; `create` does not run.
    #[inline(always)]
    pub fn try_insert_with(&mut self, create: impl FnOnce() -> T) -> Result<(Handle<T>, &mut T), ArenaError> {
        let index = self.entry.pop_vacant(self.table, self.alloc)?;
        // SAFETY: the store is class `T`'s, and `index` came off its vacant list.
        let (handle, object) = unsafe { self.entry.place_with(index, create) };
        // SAFETY: the cell holds the `T` placed just now, live in its slot; the borrow of
        // the store it is lent for stands for the whole class's.
        Ok((handle, unsafe { &mut *object.as_ptr() }))
    }

    /// Writes `value` into vacant slot `index`'s cell and makes it live.
    #[inline(always)]
    fn place(&mut self, index: u32, value: T) -> Handle<T> {
        // SAFETY: the store is class `T`'s, and the caller took `index` off its vacant list.
        unsafe { self.entry.place(index, value) }
    }

    /// Places `value` in a vacant cell and returns its handle.
    ///
    /// # Panics
    /// If [`try_insert`](Self::try_insert) fails.
    #[inline]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        let index = self.entry.pop_vacant_or_fail::<T>(self.table, self.alloc);
        self.place(index, value)
    }

    /// Hands out a vacant cell of the class (taking a prepared slab when none is vacant) as
    /// a [`FreedCell`] token, for an object to be built off this thread — a pool's
    /// precreation worker — and placed with [`activate`](Self::activate) once compacted by the
    /// class's [`CellMap`](crate::CellMap). The slot stays vacant,
    /// [`Lifecycle::Lent`], until then.
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert): [`ArenaError::Alloc`] or [`ArenaError::TableFull`].
    pub fn take_cell(&mut self) -> Result<FreedCell, ArenaError> {
        self.entry.take_cell(self.table, self.alloc)
    }

    /// Makes the object built in `cell` live in its slot and returns its handle (a fresh
    /// generation: no handle to the cell's earlier objects resolves). The slot and the cell
    /// are arithmetic on the cell number, with `T`'s size a constant.
    ///
    /// # Safety
    /// `cell` was compacted by this class's [`CellMap`](crate::CellMap) from a token this
    /// arena handed out for this class (by [`take_cell`](Self::take_cell),
    /// [`deactivate`](Self::deactivate) or the class's returned list), and holds an initialised `T`
    /// that from now on belongs to the arena.
    #[inline]
    pub unsafe fn activate(&mut self, cell: crate::CompactCell) -> Handle<T> {
        // SAFETY: the store is class `T`'s; the token is the caller's contract.
        unsafe { self.entry.activate(cell) }
    }

    /// Whether releases keep the class's objects for reuse: its pool's policy is `Reuse` and
    /// the pool is within `max` ([`set_keeping`](Self::set_keeping)). Off by default.
    #[inline(always)]
    pub fn keeping(&self) -> bool {
        self.entry.keeping()
    }

    /// Tells the class whether releases keep its objects (its pool's say). Objects kept
    /// already stay until [`reuse`](Self::reuse)d or taken.
    pub fn set_keeping(&mut self, on: bool) {
        self.entry.set_keeping(on);
    }

    /// Objects the class keeps for its next spawns ([`Releasable::keep`]).
    #[inline(always)]
    pub fn kept(&self) -> usize {
        self.entry.kept()
    }

    /// Objects kept since the class was registered.
    pub fn kept_total(&self) -> u64 {
        self.entry.kept_total()
    }

    /// Makes the most recently kept object live again, in its own cell (the warmest), and
    /// returns its handle — a fresh generation: no handle to its last life resolves — and
    /// the object, for the spawn's hooks. `None` when the class keeps none.
    #[inline]
    pub fn reuse(&mut self) -> Option<(Handle<T>, &mut T)> {
        // SAFETY: the store is class `T`'s.
        unsafe { self.entry.reuse() }
    }

    /// Tells the class's spawn listeners, if it has any, that the object `h` names — one
    /// this store just made live ([`reuse`](Self::reuse), [`activate`](Self::activate),
    /// [`insert`](Self::insert)) — is complete ([`Arena::notify_spawn`]). A class without
    /// spawn listeners pays one test of a byte.
    #[inline(always)]
    pub fn notify_spawn(&mut self, h: Handle<T>) {
        if self.entry.listening_to_spawns() {
            // The store's parts, not the store: a cold call must not make the hot path build
            // the store in memory.
            tell_spawn_in(self.table, self.entry, h);
        }
    }

    /// Hands every kept object out as a compact token (its cell number; the slot stays
    /// `InPool`), as the class's `CellMap` would compact a [`deactivate`](Releasable::deactivate): for a pool's trim
    /// or shutdown, which drops them or keeps them among its ready objects. The most
    /// recently kept comes last.
    #[cfg(not(loom))]
    pub fn take_kept(&mut self) -> Vec<crate::CompactCell> {
        self.entry.take_kept()
    }

    /// The address of a compact token's cell (where its object is, for a read or a
    /// prefetch before [`activate`](Self::activate)): arithmetic, no load but the
    /// class's geometry. Meaningful only for a token of this class.
    #[inline(always)]
    pub fn compact_cell(&self, cell: &crate::CompactCell) -> NonNull<T> {
        let geometry = self.entry.geometry();
        debug_assert!(cell.number() < geometry.capacity(), "token of another class");
        // SAFETY: cell addresses are non-null (an offset into the class's reservation).
        unsafe { NonNull::new_unchecked(geometry.cell_of::<T>(cell.number()).cast()) }
    }

    /// Takes the object out of the world without dropping it: its slot is released (every
    /// handle to it goes stale at once, its sub-objects are cut loose) and
    /// [`Lifecycle::InPool`], and the returned token owns the cell *with the object still
    /// in it* — a pool's path, which compacts it and [`activate`](Self::activate)s it again later. The
    /// token's holder must drop the object (or activate it); an object in a dropped token is
    /// leaked, never dropped twice. `Ok(None)`: the slot reached the generation ceiling and
    /// was retired, so the object was dropped here.
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`], [`ArenaError::Hidden`],
    /// [`ArenaError::WrongClass`], [`ArenaError::Rooted`] or [`ArenaError::Permanent`].
    #[inline]
    pub fn deactivate(&mut self, h: Handle<T>) -> Result<Option<FreedCell>, ArenaError> {
        let (n, slot, flags) = self.slot(h)?;
        check_releasable(self.table, h.index(), slot)?;
        // SAFETY: cells are non-null.
        let cell = unsafe { NonNull::new_unchecked(self.entry.geometry().cell_of::<T>(n)) };
        let found = Found { index: h.index(), n, cell, flags, generation: h.generation().get() };
        // SAFETY: `slot` resolved `h` to a live `T` of this class in that cell.
        Ok(unsafe { self.entry.deactivate::<T>(self.table, self.outers, found) })
    }

    /// The object `h` names, if it resolves.
    #[inline]
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        let cell = self.locate(h)?;
        // SAFETY: live, visible, of this class: the cell holds a `T`.
        Some(unsafe { &*cell.cast::<T>() })
    }

    /// The object `h` names, mutably, if it resolves.
    #[inline]
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        let cell = self.locate(h)?;
        if self.entry.barrier() {
            self.entry.note(h.index());
        }
        // SAFETY: as in `get`; `&mut self` makes the borrow unique.
        Some(unsafe { &mut *cell.cast::<T>() })
    }

    /// The cell of the visible object of this class that `h` names: the slot and the cell
    /// by arithmetic on the class's range, no directory, no error value. A permanent object
    /// of the class (outside the range) takes the cold path.
    #[inline(always)]
    fn locate(&self, h: Handle<T>) -> Option<*mut u8> {
        locate_in(self.entry, self.table, h)
    }

    /// The cell number, slot and flags of the visible object of this class that `h` names
    /// (not a permanent one: those are never released), or why not.
    #[inline]
    fn slot(&self, h: Handle<T>) -> Result<(u32, &Slot, ObjectFlags), ArenaError> {
        match self.visible(h) {
            Some(found) => Ok(found),
            // The store's parts, not the store: a cold call must not make the hot path build
            // the store in memory.
            None => Err(why_not_in(self.table, self.entry, h.raw())),
        }
    }

    /// [`slot`](Self::slot) without the reason.
    #[inline(always)]
    fn visible(&self, h: Handle<T>) -> Option<(u32, &Slot, ObjectFlags)> {
        let geometry = self.entry.geometry();
        let n = geometry.number(h.index());
        let slot = geometry.try_slot(n)?;
        let flags = slot.check_without(h.generation(), ObjectFlags::HIDDEN)?;
        Some((n, slot, flags))
    }

    /// Moves the object out and releases its slot; every handle to it goes stale.
    ///
    /// # Errors
    /// As [`Arena::try_remove`].
    #[inline]
    pub fn try_remove(&mut self, h: Handle<T>) -> Result<T, ArenaError> {
        let (n, slot, flags) = self.slot(h)?;
        if flags.contains(ObjectFlags::ROOT_SET) || slot.root_count() > 0 {
            return Err(ArenaError::Rooted);
        }
        let found = self.found(h, n, flags);
        // SAFETY: `slot` resolved `h` to a live, visible object of this class.
        Ok(unsafe { self.entry.take::<T>(self.table, self.outers, found) })
    }

    /// Moves the object out, if `h` resolves.
    #[inline(always)]
    pub fn remove(&mut self, h: Handle<T>) -> Option<T> {
        let geometry = self.entry.geometry();
        let n = geometry.number(h.index());
        let slot = geometry.try_slot(n)?;
        let flags = slot.check_without(h.generation(), ObjectFlags::HIDDEN.union(ObjectFlags::ROOT_SET))?;
        if slot.root_count() > 0 {
            return None;
        }
        let found = self.found(h, n, flags);
        // SAFETY: `slot` resolved `h` to a live, visible, unrooted object of this class.
        Some(unsafe { self.entry.take::<T>(self.table, self.outers, found) })
    }

    /// What a release of the object `h` names needs, found at cell number `n` with `flags`.
    #[inline(always)]
    fn found(&self, h: Handle<T>, n: u32, flags: ObjectFlags) -> Found {
        // SAFETY: cells are non-null.
        let cell = unsafe { NonNull::new_unchecked(self.entry.geometry().cell_of::<T>(n)) };
        Found { index: h.index(), n, cell, flags, generation: h.generation().get() }
    }

    /// The object `h` names, if it may be released now (visible, of this class, not rooted,
    /// not permanent), as a [`Releasable`] that lends the object to release hooks and then
    /// [`deactivate`](Releasable::deactivate)s it: the whole release path resolves the handle once, and
    /// the store stays borrowed in between. Nothing changes on an error, or if the
    /// `Releasable` is dropped.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Hidden`], [`ArenaError::WrongClass`],
    /// [`ArenaError::Rooted`] or [`ArenaError::Permanent`].
    #[inline]
    pub fn releasable(&mut self, h: Handle<T>) -> Result<Releasable<'_, T>, ArenaError> {
        let (n, slot, flags) = self.slot(h)?;
        if flags.contains(ObjectFlags::ROOT_SET) || slot.root_count() > 0 {
            return Err(ArenaError::Rooted);
        }
        // SAFETY: cells are non-null.
        let cell = unsafe { NonNull::new_unchecked(self.entry.geometry().cell_of::<T>(n).cast::<T>()) };
        Ok(Releasable {
            table: self.table,
            entry: &mut *self.entry,
            outers: &mut *self.outers,
            index: h.index(),
            n,
            flags,
            generation: h.generation(),
            cell,
        })
    }

    /// See [`Arena::retain`].
    pub fn retain(&mut self, keep: impl FnMut(&mut T) -> bool) {
        // SAFETY: the store is class `T`'s.
        unsafe { self.entry.retain(self.table, self.outers, keep) }
    }

    /// See [`Arena::tick`].
    pub fn tick(&mut self, mut f: impl FnMut(&mut T)) {
        self.entry.note_all();
        let (entry, geometry) = (&*self.entry, self.entry.geometry());
        let dormant = entry.dormancy().words(0, entry.live().len());
        // SAFETY: the entry is class `T`'s; `&mut self` borrows the arena mutably.
        unsafe { visit_words::<T>(geometry.shift(), geometry.bases(), 0, entry.live(), dormant, &mut f) };
    }
}

#[cfg(test)]
mod tests {
    use super::{cache_slot, Arena, ClassEntry};

    /// A class of its own for each `K`.
    struct Kind<const K: usize>(#[allow(dead_code)] u64);

    #[test]
    fn the_live_bitmap_is_walked_as_far_as_cells_were_used() {
        let mut arena = Arena::new();
        fn entry(arena: &Arena) -> &ClassEntry {
            &arena.classes[arena.class_of::<u64>().expect("registered").index()]
        }
        let words = |arena: &Arena| entry(arena).live().len();
        // The slabs granted so far, by index: which index a grant gets depends on the
        // allocator's preparation thread (one it is still preparing goes to a later grant),
        // so the words are counted from the slabs the class holds. 16 words a slab.
        let granted = |arena: &Arena| -> Vec<usize> {
            let bases = entry(arena).geometry().bases();
            bases.iter().enumerate().filter(|(_, b)| !b.is_null()).map(|(i, _)| i).collect()
        };
        let mut hs: Vec<_> = (0..20u64).map(|i| arena.insert(i)).collect();
        let first = granted(&arena)[0];
        assert_eq!(words(&arena), first * 16 + 1, "20 objects of a 1,024-cell slab: one word of it");
        hs.extend((20..1000u64).map(|i| arena.insert(i)));
        assert_eq!(words(&arena), first * 16 + 16);
        // Past the first slab: the second's words as its cells are used.
        hs.extend((1000..1100u64).map(|i| arena.insert(i)));
        let second = *granted(&arena).iter().find(|&&s| s != first).expect("a second slab");
        assert_eq!(words(&arena), (first * 16 + 16).max(second * 16 + 2));
        let mut sum = 0;
        arena.tick::<u64>(|v| sum += *v);
        assert_eq!(sum, (0..1100).sum::<u64>());
        // Emptied, the slabs go back; taken again, every object is still walked.
        for h in hs.drain(..) {
            arena.remove(h).expect("live");
        }
        let class = arena.class_of::<u64>().expect("registered");
        assert_eq!(arena.decommit_empty_slabs(class).expect("decommits"), 2);
        hs.extend((0..1100u64).map(|i| arena.insert(i)));
        let (mut sum, mut count) = (0, 0);
        arena.tick::<u64>(|v| (sum, count) = (sum + *v, count + 1));
        assert_eq!((sum, count), ((0..1100).sum::<u64>(), 1100));
        assert_eq!(arena.len::<u64>(), 1100);
    }

    #[test]
    fn the_class_cache_keeps_alternating_classes_and_never_names_a_wrong_one() {
        let mut arena = Arena::new();
        macro_rules! kinds {
            ($($k:literal)*) => {{
                let slots = [$(cache_slot::<Kind<$k>>()),*];
                // Every class used in turn, three times over: an insert and a get each.
                for round in 0..3u64 {
                    $(
                        let h = arena.insert(Kind::<$k>(round));
                        assert!(arena.get(h).is_some());
                        let class = arena.class_of::<Kind<$k>>();
                        assert_eq!(arena.cached_class::<Kind<$k>>(), class, "the last used is cached");
                    )*
                }
                // Cached or not, never another class's id.
                $(
                    let cached = arena.cached_class::<Kind<$k>>();
                    assert!(cached.is_none() || cached == arena.class_of::<Kind<$k>>());
                    // A class alone in its slot stays cached, whatever was used after it.
                    if slots.iter().filter(|&&s| s == cache_slot::<Kind<$k>>()).count() == 1 {
                        assert_eq!(cached, arena.class_of::<Kind<$k>>(), "Kind<{}> alone in its slot", $k);
                    }
                )*
                slots
            }};
        }
        let slots = kinds!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
        let alone = slots.iter().filter(|&&s| slots.iter().filter(|&&t| t == s).count() == 1).count();
        assert!(alone >= 16, "32 classes in 256 slots: most alone ({alone})");
    }
}
