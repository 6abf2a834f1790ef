//! The heap: an [`Arena`] with a mark-sweep collector over it.

mod incremental;
mod owner;

use std::any::type_name;
use std::fmt;
use std::num::NonZeroU32;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use bumpalo::Bump;
use rayon::prelude::*;
use respawn_allocator::sync::{AtomicU32, Ordering};
use respawn_arena::{
    Arena, ArenaClassStats, ArenaConfig, ArenaError, ClassId, ClassLayout, CollectorEntry, Ended, EndedCells, Freed,
    Handle, Iter, Lifecycle, ObjectFlags, ObjectTable, RawHandle, Rejected, Releasable, Root, SlabConfig, Slot, View,
};

use crate::cluster::{ClusterId, Clusters};
use crate::frontier::Frontier;
use crate::mark::{Keep, Marker};
use crate::purger::{PurgeThreadStats, Purger};
use crate::referencer::{Referencer, Referencers};
use crate::settings::{CollectOptions, GcSettings, GcStats, GcStep, MarkStep, PurgeProgress};
use crate::threads::Threads;
use crate::trace::{entry_of, Tracer};
use crate::why::{GarbageReference, Graph, ReferenceChain};
use crate::{GcError, Object};

use incremental::Marking;

/// Kept objects the mark never scans (UE's disregard-for-GC): permanent, pooled, being built.
const UNTRACED_KEEP: ObjectFlags = ObjectFlags::PERMANENT;

/// How long the objects of a class live: until nothing reaches them, or until they are
/// destroyed.
///
/// UE draws the same line between its plain objects (`NewObject`: kept while something
/// references them) and the actors a level holds (kept until `Destroy`). A [`Heap`] gives
/// every class [`Collected`](Self::Collected) unless told otherwise
/// ([`Heap::set_lifetime`], [`Heap::set_default_lifetime`]); a World gives every class
/// [`Owned`](Self::Owned) unless its builder declares it collected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lifetime {
    /// Kept while a root reaches it (a root, a guard, a referencer, a kept object's handle,
    /// a reachable sub-object's owner link); purged by the first collection after that.
    #[default]
    Collected,
    /// Kept by every collection until it is marked as garbage or destroyed, whether or not
    /// anything references it, and traced as a root is: what it holds is kept too. Rooting
    /// is not needed to keep it (a rooted object still refuses to be destroyed).
    Owned,
}

/// The collector's scratch arena. `Bump` is not `Sync`; the wrapper is, because the heap
/// reaches it only through `&mut` (no `&self` method touches it).
struct Scratch(Bump);
// SAFETY: see above — shared references to a `Scratch` give no access to the `Bump`.
unsafe impl Sync for Scratch {}

/// What [`Heap::end_life`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Dropped and freed.
    Ended,
    /// `begin_destroy` ran (now, or before: its end is under way); waiting for
    /// `is_ready_for_finish_destroy`.
    Waiting,
    /// Rooted after all: left alone.
    Kept,
}

/// Refuses an object that must not end on demand: rooted, or permanent.
fn check_may_end(slot: &Slot) -> Result<(), GcError> {
    if slot.is_rooted() {
        Err(GcError::Arena(ArenaError::Rooted))
    } else if slot.flags().contains(ObjectFlags::PERMANENT) {
        Err(GcError::Permanent)
    } else {
        Ok(())
    }
}

/// An object and every sub-object below it, walked once by [`Heap::subtree`] and checked
/// that each may end: the one walk that `destroy_now`, `mark_as_garbage` and a `Reuse`
/// pool's release of an owner share. It holds the heap mutably while it lives, so what the
/// walk checked stays true until one of its operations consumes it; dropped unused, it
/// changes nothing.
///
/// ```
/// use respawn_gc::{Heap, Object, Trace};
///
/// #[derive(Trace, Object)]
/// struct Part {
///     hp: u32,
/// }
///
/// let mut heap = Heap::new();
/// let tower = heap.insert(Part { hp: 500 });
/// let gun = heap.insert(Part { hp: 80 });
/// heap.set_outer(gun.raw(), Some(tower.raw())).unwrap();
///
/// let subtree = heap.subtree(tower.raw()).unwrap();
/// assert_eq!(subtree.objects(), [tower.raw(), gun.raw()]);
/// assert_eq!(subtree.destroy_sub_objects(), 1); // the gun ends; the tower stays
/// assert!(heap.get(tower).is_some() && heap.get(gun).is_none());
/// ```
#[must_use = "a subtree ends nothing until `mark_as_garbage`, `destroy_now` or `destroy_sub_objects`"]
pub struct Subtree<'h> {
    heap: &'h mut Heap,
    /// The walk: the root first, every owner before its sub-objects.
    order: Vec<RawHandle>,
}

impl fmt::Debug for Subtree<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subtree").field("objects", &self.order).finish()
    }
}

impl<'h> Subtree<'h> {
    /// The object the walk started from.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// let subtree = heap.subtree(gun.raw())?;
    /// assert_eq!(subtree.root(), gun.raw(), "where the walk started, not the gun's owner");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn root(&self) -> RawHandle {
        self.order[0]
    }

    /// Every object walked: the root first, each owner before its sub-objects.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [tower, gun, barrel] = [500, 80, 20].map(|hp| heap.insert(Part { hp }));
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// heap.set_outer(barrel.raw(), Some(gun.raw()))?;
    /// let subtree = heap.subtree(tower.raw())?;
    /// assert_eq!(subtree.objects(), [tower.raw(), gun.raw(), barrel.raw()]);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn objects(&self) -> &[RawHandle] {
        &self.order
    }

    /// Whether the root owns sub-objects.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// assert!(!heap.subtree(tower.raw())?.has_sub_objects());
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// assert!(heap.subtree(tower.raw())?.has_sub_objects());
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn has_sub_objects(&self) -> bool {
        self.order.len() > 1
    }

    /// The root object, mutably, if it is a `T` (for a hook that runs before it ends —
    /// a pool's `on_release`).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    /// #[derive(Trace, Object)]
    /// struct Gun { ammo: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let mut subtree = heap.subtree(tower.raw())?;
    /// assert!(subtree.root_mut::<Gun>().is_none(), "the root is a Part");
    /// subtree.root_mut::<Part>().unwrap().hp = 0;
    /// drop(subtree); // ends nothing
    /// assert_eq!(heap.get(tower).map(|p| p.hp), Some(0));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn root_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let root = Handle::<T>::from_raw(self.order[0]);
        self.heap.arena.get_mut(root)
    }

    /// Tells the end listeners of every object walked now, sub-objects before their
    /// owners ([`Arena::notify_end`]): for a caller that ends the subtree in steps — a
    /// pool's destroy, before `on_release` and `reset` — and wants them told before the
    /// first. Their releases then tell them nothing more. Costs one look at the classes
    /// when no class has end listeners.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let ended = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&ended);
    /// heap.add_end_listener(move |_, part: &Part| log.lock().unwrap().push(part.hp))?;
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    ///
    /// let mut subtree = heap.subtree(tower.raw())?;
    /// subtree.notify_ends(); // told now, the gun before its tower …
    /// assert_eq!(*ended.lock().unwrap(), [80, 500]);
    /// subtree.destroy_now(); // … and not again as they end
    /// assert_eq!(ended.lock().unwrap().len(), 2);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn notify_ends(&mut self) {
        if !self.heap.arena.any_end_listeners() {
            return;
        }
        for &raw in self.order.iter().rev() {
            let told = self.heap.arena.notify_end(raw);
            debug_assert!(told.is_ok(), "walked and checked under the same borrow: {told:?}");
        }
    }

    /// Flags every object walked as garbage (UE's `MarkAsGarbage`): their handles stop
    /// resolving at once and the next collection purges them. Returns how many were marked:
    /// a sub-object already garbage, or already on its way out (found unreachable and
    /// waiting for the purge, or its `begin_destroy` run), is not counted again.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// heap.add_to_root(gun.raw())?;
    /// assert!(heap.subtree(tower.raw()).is_err(), "the gun is rooted: nothing may end");
    ///
    /// heap.remove_from_root(gun.raw())?;
    /// assert_eq!(heap.subtree(tower.raw())?.mark_as_garbage(), 2);
    /// assert!(!heap.contains(tower) && !heap.contains(gun), "stale at once");
    /// assert_eq!(heap.collect_garbage(CollectOptions::FULL).purged, 2);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn mark_as_garbage(mut self) -> usize {
        let order = std::mem::take(&mut self.order);
        let listed = self.heap.purges_early();
        let mut marked = 0;
        for &h in &order {
            // Only a `Live` object moves: one garbage already, or ending, is not counted.
            let before = self.heap.arena.set_lifecycle(h, Lifecycle::Garbage);
            debug_assert!(
                matches!(before, Ok(_) | Err(ArenaError::Transition { .. })),
                "walked and checked under the same borrow"
            );
            if matches!(before, Ok(Lifecycle::Live)) {
                marked += 1;
                if listed {
                    self.heap.garbage.push(h);
                }
            }
        }
        self.finish(order);
        marked
    }

    /// Ends every object walked now, sub-objects before their owners (see
    /// [`Heap::destroy_now`]). Returns how many ended now (the rest wait for `purge`).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// let subtree = heap.subtree(tower.raw())?;
    /// assert_eq!(subtree.destroy_now(), 2); // the gun, then the tower: no collection needed
    /// assert_eq!(heap.len::<Part>(), 0);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn destroy_now(mut self) -> usize {
        let order = std::mem::take(&mut self.order);
        let ended = self.heap.end_all(&order);
        self.finish(order);
        ended
    }

    /// Ends the sub-objects now, as [`destroy_now`](Self::destroy_now) would, and keeps the
    /// root, which then owns none. Returns how many ended now.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [tower, gun, barrel] = [500, 80, 20].map(|hp| heap.insert(Part { hp }));
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// heap.set_outer(barrel.raw(), Some(gun.raw()))?;
    /// assert_eq!(heap.subtree(tower.raw())?.destroy_sub_objects(), 2); // the barrel, the gun
    /// assert!(heap.contains(tower) && !heap.contains(gun) && !heap.contains(barrel));
    /// assert_eq!(heap.sub_objects(tower.raw()).count(), 0);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn destroy_sub_objects(mut self) -> usize {
        let order = std::mem::take(&mut self.order);
        let ended = self.heap.end_all(&order[1..]);
        self.finish(order);
        ended
    }

    /// Gives the walk's buffer back to the heap (kept for its capacity).
    fn finish(self, order: Vec<RawHandle>) {
        self.heap.order = order;
    }
}

impl Drop for Subtree<'_> {
    fn drop(&mut self) {
        if self.order.capacity() > 0 {
            self.heap.order = std::mem::take(&mut self.order);
        }
    }
}

/// An [`Arena`] with a garbage collector: UE's `CollectGarbage` over respawn's object table.
///
/// - Register classes that hold handles as [`Object`]s ([`register`](Self::register), or
///   implicitly by [`insert`](Self::insert)); objects of classes inserted through the arena
///   directly are leaves (never scanned).
/// - [`collect_garbage`](Self::collect_garbage) keeps what is reachable from the roots
///   ([`Root`](respawn_arena::Root) guards, [`add_to_root`](Self::add_to_root), keep flags,
///   and every object of a class whose [`Lifetime`] is `Owned`) and purges the rest;
///   [`purge`](Self::purge) spreads the purge over frames;
///   [`update`](Self::update) does both on the settings' schedule.
/// - [`mark_as_garbage`](Self::mark_as_garbage) and [`destroy_now`](Self::destroy_now) end
///   objects on demand, with their sub-objects.
/// - [`start_incremental_collection`](Self::start_incremental_collection) and
///   [`mark_slice`](Self::mark_slice) (or [`GcSettings::incremental_mark_budget`] with
///   `update`) spread a collection's mark over frames, the game going on between slices.
///
/// The heap lends the arena calls that keep the collector's picture true (`get`,
/// `get_mut`, `tick`, roots, outers, `stats` …), and a class's owner, such as a pool, the
/// class's records (`store_of`, `take_cell`, `recycle` …); [`arena`](Self::arena) reads
/// the rest. It never lends its [`Arena`] whole, which could be replaced: the calls that
/// would end or hide objects behind the collector's back are behind the unsafe
/// [`arena_mut`](Self::arena_mut).
///
/// ```
/// use respawn_gc::{CollectOptions, Heap, Object, Trace};
/// use respawn_arena::Handle;
///
/// #[derive(Trace, Object)]
/// struct Node { next: Option<Handle<Node>> }
///
/// let mut heap = Heap::new();
/// let b = heap.insert(Node { next: None });
/// let a = heap.insert(Node { next: Some(b) });
/// let lonely = heap.insert(Node { next: None });
/// let root = heap.root(a).unwrap();
///
/// let stats = heap.collect_garbage(CollectOptions::FULL);
/// assert_eq!((stats.kept, stats.purged), (2, 1));
/// assert!(heap.get(b).is_some(), "reachable from a root");
/// assert!(heap.get(lonely).is_none(), "purged");
/// drop(root);
/// ```
pub struct Heap {
    /// The objects, and the class records: each class's record holds its collector entry
    /// ([`CollectorEntry`](respawn_arena::CollectorEntry)) once it registers, `None` until
    /// then.
    arena: Arena,
    clusters: Clusters,
    settings: GcSettings,
    stats: GcStats,
    /// The collector's scratch arena (reset every collection): the table's runs.
    scratch: Scratch,
    /// The mark's two frontiers, one `u32` per table slot each, kept between collections.
    frontiers: [Vec<AtomicU32>; 2],
    /// Objects found unreachable by the last collection, purged from `purge_cursor` on.
    purge_queue: Vec<RawHandle>,
    purge_cursor: usize,
    /// Objects whose `begin_destroy` ran, waiting to be ready for `finish_destroy`.
    /// With why each is ending, returned with its cell.
    waiting: Vec<(RawHandle, Ended)>,
    /// Objects the purge met rooted and kept, `Unreachable` until the next collection
    /// revives them before it judges them again.
    standing: Vec<RawHandle>,
    /// Scratch lists for sub-object walks (kept for their capacity).
    walk: Vec<RawHandle>,
    order: Vec<RawHandle>,
    /// Time since the last collection, for [`update`](Self::update).
    since_collection: Duration,
    /// Objects marked as garbage since the last gather (a collection's, or an early
    /// purge's), while early purges are on ([`GcSettings::early_purge_percent`]): what the
    /// next early purge takes, without a walk over the table.
    garbage: Vec<RawHandle>,
    /// Where the parallel mark and `par_tick` run: rayon's global pool, or the heap's own
    /// ([`GcSettings::threads`]), joined when the heap drops.
    threads: Threads,
    /// Systems outside the heap that report the handles they hold at each mark.
    referencers: Referencers,
    /// What the last collection found still referencing garbage, when
    /// [`GcSettings::track_garbage_references`] is on.
    garbage_references: Vec<GarbageReference>,
    /// The incremental mark running, if any, and its lists (kept between marks).
    marking: Marking,
    /// The purge thread for classes registered under [`GcSettings::async_purge`], and the
    /// cells it hands back.
    purger: Purger,
    /// The [`Lifetime`] a class gets when it registers.
    default_lifetime: Lifetime,
}

impl Drop for Heap {
    /// Joins the purge thread first: every object handed to it is dropped before the arena
    /// (its memory) goes.
    fn drop(&mut self) {
        self.purger.shutdown();
    }
}

impl fmt::Debug for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Heap")
            .field("arena", &self.arena)
            .field("clusters", &self.clusters)
            .field("settings", &self.settings)
            .field("stats", &self.stats)
            .field("pending_purge", &self.pending_purge())
            .field("marking", &self.is_marking())
            .finish()
    }
}

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

impl Heap {
    /// An empty heap with the default arena and [`GcSettings::DEFAULT`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{GcSettings, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.settings(), &GcSettings::DEFAULT);
    /// let coin = heap.insert(Coin { value: 5 }); // `Coin` registers on first use
    /// assert_eq!(heap.get(coin).map(|c| c.value), Some(5));
    /// ```
    pub fn new() -> Self {
        Self::from_arena(Arena::new(), GcSettings::DEFAULT).expect("the default settings are valid")
    }

    /// An empty heap.
    ///
    /// # Errors
    /// [`GcError::BadSettings`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_arena::ArenaConfig;
    /// use respawn_gc::{GcError, GcSettings, Heap};
    ///
    /// let heap = Heap::with_config(ArenaConfig::DEFAULT, GcSettings::SINGLE_THREADED)?;
    /// assert!(!heap.settings().parallel);
    ///
    /// let bad = GcSettings { purge_budget: Some(Duration::ZERO), ..GcSettings::DEFAULT };
    /// let refused = Heap::with_config(ArenaConfig::DEFAULT, bad);
    /// assert!(matches!(refused, Err(GcError::BadSettings(_))));
    /// # Ok::<(), GcError>(())
    /// ```
    pub fn with_config(arena: ArenaConfig, settings: GcSettings) -> Result<Self, GcError> {
        Self::from_arena(Arena::with_config(arena), settings)
    }

    /// Puts a collector over an existing arena. Its classes are leaves until registered with
    /// [`register`](Self::register).
    ///
    /// # Errors
    /// [`GcError::BadSettings`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    /// use respawn_gc::{CollectOptions, GcSettings, Heap};
    ///
    /// let mut arena = Arena::new();
    /// let kept = arena.insert(10u32); // a class the collector never scans: a leaf
    /// let lost = arena.insert(20u32);
    /// arena.add_to_root(kept.raw())?;
    ///
    /// let mut heap = Heap::from_arena(arena, GcSettings::SINGLE_THREADED)?;
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(heap.get(kept), Some(&10));
    /// assert_eq!(heap.get(lost), None, "nothing rooted it");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn from_arena(arena: Arena, settings: GcSettings) -> Result<Self, GcError> {
        settings.validate()?;
        let threads = Threads::new(settings.threads)?;
        Ok(Self {
            threads,
            referencers: Referencers::default(),
            garbage_references: Vec::new(),
            arena,
            clusters: Clusters::default(),
            settings,
            stats: GcStats::default(),
            scratch: Scratch(Bump::new()),
            frontiers: [Vec::new(), Vec::new()],
            purge_queue: Vec::new(),
            purge_cursor: 0,
            waiting: Vec::new(),
            standing: Vec::new(),
            walk: Vec::new(),
            order: Vec::new(),
            since_collection: Duration::ZERO,
            garbage: Vec::new(),
            marking: Marking::default(),
            purger: Purger::default(),
            default_lifetime: Lifetime::Collected,
        })
    }

    /// The arena under the collector, to read: everything [`Arena`] tells (`table`,
    /// `layouts`, `allocator`, `handle_at`…) beyond the reads the heap forwards itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let coin = heap.insert(Coin { value: 5 });
    /// let arena = heap.arena(); // reads beyond the heap's own
    /// assert_eq!(arena.handle_at(coin.index()), Some(coin.raw()));
    /// assert!(arena.class_name(heap.class_of::<Coin>().unwrap()).unwrap().ends_with("Coin"));
    /// ```
    pub fn arena(&self) -> &Arena {
        &self.arena
    }

    /// The arena under the collector, mutably — *bypassing* the collector and the pools.
    ///
    /// The heap lends what keeps the collector's picture true itself
    /// ([`get_mut`](Self::get_mut), [`add_to_root`](Self::add_to_root),
    /// [`set_outer`](Self::set_outer), [`tick`](Self::tick)…), and a class's owner its
    /// records ([`store_of`](Self::store_of), [`take_cell`](Self::take_cell),
    /// [`recycle`](Self::recycle)…). What is left is reachable only here, because the
    /// collector never sees it: `remove`, `destroy` and `retain` end objects without
    /// `begin_destroy` or `finish_destroy`; `set_flags`/`clear_flags` hide or reveal objects
    /// behind the mark's back; a class registered here is never scanned and gets no hooks.
    /// It is for tests that break an invariant on purpose.
    ///
    /// # Safety
    /// The caller must not replace the arena (`mem::swap`, `mem::replace`, `mem::take`, an
    /// assignment through the reference): the clusters, the marks' lists (by slot index)
    /// and the cells the purge thread is dropping objects in belong to this arena, and
    /// would be applied to another's objects, or outlive the memory they are in. (The
    /// classes' collector entries are in the arena's class records, and go with it.)
    ///
    /// ```compile_fail
    /// # use respawn_gc::Heap;
    /// fn replace(heap: &mut Heap) {
    ///     // error[E0133]: call to unsafe function
    ///     *heap.arena_mut() = respawn_arena::Arena::new();
    /// }
    /// ```
    pub unsafe fn arena_mut(&mut self) -> &mut Arena {
        &mut self.arena
    }

    /// Gives class `id`'s ended cells to a new owner — a pool that rebuilds them — or back
    /// to the class's vacant list ([`Arena::set_ended_cells`]): from now on the collector's
    /// purge, `destroy_now` and every other end put the class's cells on its returned list,
    /// which the owner empties with [`drain_returned`](Self::drain_returned). The purge
    /// thread of [`GcSettings::async_purge`] stops dropping the class's objects (what it
    /// was handed already, it finishes).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of the arena.
    pub fn set_ended_cells(&mut self, id: ClassId, way: EndedCells) -> Result<(), ArenaError> {
        if self.arena.ended_cells(id).is_none() {
            return Err(ArenaError::Unregistered("an unknown class"));
        }
        // What the class returned so far is the purge thread's still.
        self.purger.hand_over(&mut self.arena);
        self.purger.release_class(id);
        self.arena.set_ended_cells(id, way)
    }

    /// Takes class `id`'s returned cells ([`Arena::drain_returned`]): for the owner
    /// [`set_ended_cells`](Self::set_ended_cells) named.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this heap.
    #[inline]
    pub fn drain_returned(&mut self, id: ClassId) -> Result<std::vec::Drain<'_, Freed>, ArenaError> {
        self.arena.drain_returned(id)
    }

    /// The object `h` names, if it resolves. As [`Arena::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Hero { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let hero = heap.insert(Hero { hp: 100 });
    /// assert_eq!(heap.get(hero).map(|h| h.hp), Some(100));
    /// heap.destroy_now(hero.raw())?;
    /// assert!(heap.get(hero).is_none(), "a stale handle resolves to nothing");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    #[inline]
    pub fn get<T: 'static>(&self, h: Handle<T>) -> Option<&T> {
        self.arena.get(h)
    }

    /// The object `h` names, or why not. As [`Arena::try_get`].
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Hidden`] or [`ArenaError::WrongClass`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::ArenaError;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Hero { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let hero = heap.insert(Hero { hp: 100 });
    /// assert_eq!(heap.try_get(hero)?.hp, 100);
    /// heap.mark_as_garbage(hero.raw())?;
    /// assert!(matches!(heap.try_get(hero), Err(ArenaError::Hidden(_))), "garbage, not yet purged");
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(matches!(heap.try_get(hero), Err(ArenaError::Stale)), "purged");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn try_get<T: 'static>(&self, h: Handle<T>) -> Result<&T, ArenaError> {
        self.arena.try_get(h)
    }

    /// The object `h` names, mutably, if it resolves. As [`Arena::get_mut`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Hero { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let hero = heap.insert(Hero { hp: 100 });
    /// heap.get_mut(hero).unwrap().hp -= 30;
    /// assert_eq!(heap.get(hero).map(|h| h.hp), Some(70));
    /// ```
    #[inline]
    pub fn get_mut<T: 'static>(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.arena.get_mut(h)
    }

    /// Whether `h` resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Hero { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let hero = heap.insert(Hero { hp: 100 });
    /// assert!(heap.contains(hero));
    /// heap.collect_garbage(CollectOptions::FULL); // nothing roots it
    /// assert!(!heap.contains(hero));
    /// ```
    pub fn contains<T: 'static>(&self, h: Handle<T>) -> bool {
        self.arena.contains(h)
    }

    /// The object's flags. As [`Arena::flags`].
    ///
    /// # Errors
    /// [`ArenaError::Stale`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::ObjectFlags;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Hero { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let hero = heap.insert(Hero { hp: 100 });
    /// assert!(!heap.flags(hero.raw())?.contains(ObjectFlags::ROOT_SET));
    /// heap.add_to_root(hero.raw())?;
    /// assert!(heap.flags(hero.raw())?.contains(ObjectFlags::ROOT_SET));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn flags(&self, raw: RawHandle) -> Result<ObjectFlags, ArenaError> {
        self.arena.flags(raw)
    }

    /// Adds the object to the root set by hand (UE's `AddToRoot`). As
    /// [`Arena::add_to_root`].
    ///
    /// # Errors
    /// [`ArenaError::Stale`] or [`ArenaError::Hidden`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Boss { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let boss = heap.insert(Boss { hp: 5000 });
    /// heap.add_to_root(boss.raw())?;
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.contains(boss), "a root: nothing needs to reference it");
    /// assert!(heap.destroy_now(boss.raw()).is_err(), "and it refuses to end");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn add_to_root(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.arena.add_to_root(raw)
    }

    /// Takes the object out of the root set (UE's `RemoveFromRoot`). As
    /// [`Arena::remove_from_root`].
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::NotRooted`] if it was not added.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::ArenaError;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Boss { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let boss = heap.insert(Boss { hp: 5000 });
    /// heap.add_to_root(boss.raw())?;
    /// heap.remove_from_root(boss.raw())?;
    /// assert!(matches!(heap.remove_from_root(boss.raw()), Err(ArenaError::NotRooted)));
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(!heap.contains(boss), "no longer a root: purged");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn remove_from_root(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.arena.remove_from_root(raw)
    }

    /// An RAII root of the object. As [`Arena::root`].
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Hidden`] or [`ArenaError::WrongClass`].
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Save { slot: u8 }
    /// impl Object for Save {}
    ///
    /// let mut heap = Heap::new();
    /// let save = heap.insert(Save { slot: 1 });
    /// let guard = heap.root(save).unwrap(); // nothing references it; the guard keeps it
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(heap.get(save).map(|s| s.slot), Some(1));
    /// drop(guard);
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.get(save).is_none());
    /// ```
    pub fn root<T: 'static>(&mut self, h: Handle<T>) -> Result<Root<T>, ArenaError> {
        self.arena.root(h)
    }

    /// Whether the object is a root (added by hand or guarded by a [`Root`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Boss { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let boss = heap.insert(Boss { hp: 5000 });
    /// assert!(!heap.is_rooted(boss.raw()));
    /// let guard = heap.root(boss)?;
    /// assert!(heap.is_rooted(boss.raw()));
    /// drop(guard);
    /// assert!(!heap.is_rooted(boss.raw()));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn is_rooted(&self, raw: RawHandle) -> bool {
        self.arena.is_rooted(raw)
    }

    /// Makes `outer` the object's owner (or cuts it loose with `None`); the collector then
    /// treats the pair as [`Arena::set_outer`] says, and `destroy_now`/`mark_as_garbage` of
    /// the owner take the sub-object with it.
    ///
    /// # Errors
    /// As [`Arena::set_outer`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let ship = heap.insert(Part { hp: 900 });
    /// let engine = heap.insert(Part { hp: 300 });
    /// heap.set_outer(engine.raw(), Some(ship.raw()))?; // the engine is the ship's
    /// assert!(heap.set_outer(ship.raw(), Some(engine.raw())).is_err(), "no cycles");
    /// assert_eq!(heap.destroy_now(ship.raw())?, 2, "the engine goes with its ship");
    /// assert!(!heap.contains(engine));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn set_outer(&mut self, child: RawHandle, outer: Option<RawHandle>) -> Result<(), ArenaError> {
        self.arena.set_outer(child, outer)
    }

    /// The direct sub-objects of `raw`. As [`Arena::sub_objects`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [ship, engine, wing] = [900, 300, 200].map(|hp| heap.insert(Part { hp }));
    /// heap.set_outer(engine.raw(), Some(ship.raw()))?;
    /// heap.set_outer(wing.raw(), Some(ship.raw()))?;
    /// let subs: Vec<_> = heap.sub_objects(ship.raw()).collect();
    /// assert_eq!(subs.len(), 2);
    /// assert!(subs.contains(&engine.raw()) && subs.contains(&wing.raw()));
    /// assert_eq!(heap.sub_objects(engine.raw()).count(), 0);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn sub_objects(&self, raw: RawHandle) -> impl Iterator<Item = RawHandle> + '_ {
        self.arena.sub_objects(raw)
    }

    /// `T`'s class id, if registered (with the arena; see [`register`](Self::register)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Tree { height: f32 }
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.class_of::<Tree>(), None);
    /// let id = heap.register::<Tree>()?;
    /// assert_eq!(heap.class_of::<Tree>(), Some(id));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    #[inline]
    pub fn class_of<T: 'static>(&self) -> Option<ClassId> {
        self.arena.class_of::<T>()
    }

    /// Objects of class `T` held: visible ones and those awaiting their end (garbage,
    /// unreachable, being destroyed); not permanent ones, and not the ready objects a pool
    /// keeps (see [`Arena::len`](respawn_arena::Arena::len)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let coins: Vec<_> = (0..3).map(|value| heap.insert(Coin { value })).collect();
    /// heap.mark_as_garbage(coins[0].raw())?;
    /// assert_eq!(heap.len::<Coin>(), 3, "garbage counts until it is purged");
    /// assert_eq!(heap.iter::<Coin>().count(), 2);
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(heap.len::<Coin>(), 0, "nothing rooted them");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn len<T: 'static>(&self) -> usize {
        self.arena.len::<T>()
    }

    /// Whether the heap holds no object of class `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// assert!(heap.is_empty::<Coin>());
    /// let coin = heap.insert(Coin { value: 5 });
    /// assert!(!heap.is_empty::<Coin>());
    /// heap.destroy_now(coin.raw())?;
    /// assert!(heap.is_empty::<Coin>());
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn is_empty<T: 'static>(&self) -> bool {
        self.arena.is_empty::<T>()
    }

    /// Every visible object of class `T` with its handle, in memory order.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Coin { value: 5 });
    /// let b = heap.insert(Coin { value: 7 });
    /// let total: u32 = heap.iter::<Coin>().map(|(_, coin)| coin.value).sum();
    /// assert_eq!(total, 12);
    /// assert_eq!(heap.iter::<Coin>().map(|(h, _)| h).collect::<Vec<_>>(), [a, b]);
    /// ```
    pub fn iter<T: 'static>(&self) -> Iter<'_, T> {
        self.arena.iter::<T>()
    }

    /// Calls `f` on every visible object of class `T` in one pass over its contiguous slabs
    /// (the aggregated tick). Garbage, objects being destroyed and dormant objects
    /// ([`set_dormant`](Self::set_dormant)) are skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Mover { x: f32, speed: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Mover { x: 0.0, speed: 2.0 });
    /// let b = heap.insert(Mover { x: 0.0, speed: 3.0 });
    /// heap.set_dormant(b.raw(), true)?;
    /// heap.tick::<Mover>(|m| m.x += m.speed);
    /// assert_eq!(heap.get(a).unwrap().x, 2.0);
    /// assert_eq!(heap.get(b).unwrap().x, 0.0, "dormant: skipped");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn tick<T: 'static>(&mut self, f: impl FnMut(&mut T)) {
        self.arena.tick(f);
    }

    /// Like [`tick`](Self::tick), split across rayon's threads by work (see [`Arena::par_tick`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Cell { age: u32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..5000 {
    ///     heap.insert(Cell { age: 0 });
    /// }
    /// heap.par_tick::<Cell>(|c| c.age += 1);
    /// assert!(heap.iter::<Cell>().all(|(_, c)| c.age == 1), "each ticked once");
    /// ```
    pub fn par_tick<T: Send + 'static>(&mut self, f: impl Fn(&mut T) + Sync + Send) {
        self.in_threads(|heap| heap.arena.par_tick(f));
    }

    /// [`tick`](Self::tick) with a read-only [`View`] of every other class (a missile
    /// reads its target). As [`Arena::tick_reading`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Target { x: f32 }
    /// #[derive(Trace, Object)]
    /// struct Missile { target: Handle<Target>, x: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let target = heap.insert(Target { x: 10.0 });
    /// let missile = heap.insert(Missile { target, x: 0.0 });
    /// // Each missile closes half the distance to its target, read through the view.
    /// heap.tick_reading::<Missile>(|m, rest| {
    ///     if let Some(t) = rest.get(m.target) {
    ///         m.x += (t.x - m.x) / 2.0;
    ///     }
    /// });
    /// assert_eq!(heap.get(missile).unwrap().x, 5.0);
    /// ```
    pub fn tick_reading<T: 'static>(&mut self, f: impl FnMut(&mut T, &View<'_>)) {
        self.arena.tick_reading(f);
    }

    /// [`tick_reading`](Self::tick_reading) split across the heap's threads by work.
    /// As [`Arena::par_tick_reading`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Beacon { strength: u32 }
    /// #[derive(Trace, Object)]
    /// struct Probe { beacon: Handle<Beacon>, heard: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let beacon = heap.insert(Beacon { strength: 7 });
    /// for _ in 0..5000 {
    ///     heap.insert(Probe { beacon, heard: 0 });
    /// }
    /// heap.par_tick_reading::<Probe>(|p, rest| {
    ///     p.heard = rest.get(p.beacon).map_or(0, |b| b.strength);
    /// });
    /// assert!(heap.iter::<Probe>().all(|(_, p)| p.heard == 7));
    /// ```
    pub fn par_tick_reading<T: Send + 'static>(&mut self, f: impl Fn(&mut T, &View<'_>) + Sync + Send) {
        self.in_threads(|heap| heap.arena.par_tick_reading(f));
    }

    /// Ticks at most `budget` awake objects of class `T` from where `cursor` stopped: a
    /// round-robin over the class across frames. As [`Arena::tick_budgeted`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::TickCursor;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Npc { thoughts: u32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..10 {
    ///     heap.insert(Npc { thoughts: 0 });
    /// }
    /// let mut cursor = TickCursor::new();
    /// let mut frame = || heap.tick_budgeted::<Npc>(&mut cursor, 4, |n| n.thoughts += 1);
    /// let ticked = [frame(), frame(), frame()];
    /// assert_eq!(ticked, [4, 4, 2], "one pass over the class in three frames");
    /// assert!(heap.iter::<Npc>().all(|(_, n)| n.thoughts == 1));
    /// assert_eq!(cursor.cycles(), 1);
    /// ```
    pub fn tick_budgeted<T: 'static>(
        &mut self,
        cursor: &mut respawn_arena::TickCursor,
        budget: usize,
        f: impl FnMut(&mut T),
    ) -> usize {
        self.arena.tick_budgeted(cursor, budget, f)
    }

    /// Makes the object dormant (skipped by every tick, alive otherwise) or wakes it. The
    /// collector treats dormant objects as any other: reachable ones are kept, dormant or
    /// not. As [`Arena::set_dormant`].
    ///
    /// # Errors
    /// As [`Arena::set_dormant`]: [`ArenaError::Stale`], [`ArenaError::Hidden`] or
    /// [`ArenaError::Permanent`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Npc { thoughts: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let npc = heap.insert(Npc { thoughts: 0 });
    /// heap.set_dormant(npc.raw(), true)?; // far from the player
    /// heap.tick::<Npc>(|n| n.thoughts += 1);
    /// assert_eq!(heap.get(npc).unwrap().thoughts, 0, "asleep: not ticked, but alive");
    /// heap.set_dormant(npc.raw(), false)?;
    /// heap.tick::<Npc>(|n| n.thoughts += 1);
    /// assert_eq!(heap.get(npc).unwrap().thoughts, 1);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn set_dormant(&mut self, raw: RawHandle, dormant: bool) -> Result<(), ArenaError> {
        self.arena.set_dormant(raw, dormant)
    }

    /// Whether `raw` resolves to a dormant object. As [`Arena::is_dormant`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Npc { thoughts: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let npc = heap.insert(Npc { thoughts: 0 });
    /// assert!(!heap.is_dormant(npc.raw()));
    /// heap.set_dormant(npc.raw(), true)?;
    /// assert!(heap.is_dormant(npc.raw()));
    /// heap.destroy_now(npc.raw())?;
    /// assert!(!heap.is_dormant(npc.raw()), "a stale handle names nothing dormant");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn is_dormant(&self, raw: RawHandle) -> bool {
        self.arena.is_dormant(raw)
    }

    /// Calls `f` with every visible, awake object of class `T` and its handle, in memory
    /// order; see [`Arena::tick_handles`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Npc { thoughts: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Npc { thoughts: 0 });
    /// let b = heap.insert(Npc { thoughts: 0 });
    /// let mut seen = Vec::new();
    /// heap.tick_handles::<Npc>(|h, npc| {
    ///     npc.thoughts += 1;
    ///     seen.push(h); // e.g. to queue commands about this object
    /// });
    /// assert_eq!(seen, [a, b]);
    /// ```
    pub fn tick_handles<T: 'static>(&mut self, f: impl FnMut(Handle<T>, &mut T)) {
        self.arena.tick_handles(f);
    }

    /// [`tick_handles`](Self::tick_handles) split across the heap's threads chunk by chunk,
    /// with a per-chunk state from `begin`; see [`Arena::par_tick_chunks`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Npc { thoughts: u32 }
    ///
    /// // A chunk's state: it counts in a local, and adds the count once, as the chunk ends.
    /// struct Tally<'a>(u32, &'a AtomicU32);
    /// impl Drop for Tally<'_> {
    ///     fn drop(&mut self) {
    ///         self.1.fetch_add(self.0, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..5000 {
    ///     heap.insert(Npc { thoughts: 0 });
    /// }
    /// let total = AtomicU32::new(0);
    /// heap.par_tick_chunks::<Npc, _>(|_chunk| Tally(0, &total), |tally, _h, npc| {
    ///     npc.thoughts += 1;
    ///     tally.0 += 1;
    /// });
    /// assert_eq!(total.load(Ordering::Relaxed), 5000);
    /// ```
    pub fn par_tick_chunks<T: Send + 'static, S>(
        &mut self,
        begin: impl Fn(usize) -> S + Sync + Send,
        f: impl Fn(&mut S, Handle<T>, &mut T) + Sync + Send,
    ) {
        self.in_threads(|heap| heap.arena.par_tick_chunks(begin, f));
    }

    /// Runs `work` on this thread with rayon's calls inside it going to the heap's own pool,
    /// if it has one ([`GcSettings::threads`]).
    fn in_threads<R: Send>(&mut self, work: impl FnOnce(&mut Self) -> R + Send) -> R {
        match self.threads.pool() {
            Some(pool) => pool.install(|| work(self)),
            None => work(self),
        }
    }

    /// Memory figures of class `T`, if registered. As [`Arena::stats`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock { mass: u32 }
    ///
    /// let mut heap = Heap::new();
    /// assert!(heap.stats::<Rock>().is_none(), "not registered yet");
    /// heap.insert(Rock { mass: 3 });
    /// heap.insert(Rock { mass: 4 });
    /// let stats = heap.stats::<Rock>().unwrap();
    /// assert_eq!((stats.len, stats.object_size), (2, std::mem::size_of::<Rock>()));
    /// assert!(stats.memory.committed_bytes > 0);
    /// ```
    pub fn stats<T: 'static>(&self) -> Option<ArenaClassStats> {
        self.arena.stats::<T>()
    }

    /// What every cell of every class's slabs holds. As [`Arena::layouts`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::CellState;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock { mass: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let rocks: Vec<_> = (0..3).map(|mass| heap.insert(Rock { mass })).collect();
    /// heap.destroy_now(rocks[1].raw())?;
    /// let layouts = heap.layouts();
    /// let rock = layouts.iter().find(|l| l.name.ends_with("Rock")).unwrap();
    /// assert_eq!(rock.count(CellState::Live), 2);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn layouts(&self) -> Vec<ClassLayout> {
        self.arena.layouts()
    }

    /// The object table, for type-erased code. As [`Arena::table`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock { mass: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let rock = heap.insert(Rock { mass: 3 });
    /// let slot = heap.table().resolve(rock.raw())?; // no `Rock` needed to read its slot
    /// assert_eq!(usize::from(slot.class()), heap.class_of::<Rock>().unwrap().index());
    /// heap.destroy_now(rock.raw())?;
    /// assert!(heap.table().resolve(rock.raw()).is_err());
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    #[inline]
    pub fn table(&self) -> &ObjectTable {
        self.arena.table()
    }

    /// Asks for room for `n` more objects of class `T` ahead of time (registered with the
    /// collector first if needed). As [`Arena::reserve`].
    ///
    /// # Errors
    /// As [`Arena::reserve`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::SlabConfig;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// #[derive(Trace, Object)]
    /// struct Ember { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.reserve::<Spark>(1000)?; // prepared in the background; returns at once
    /// assert!(heap.class_of::<Spark>().is_some(), "registered now");
    ///
    /// let one_slab = SlabConfig { max_slabs: 1, ..SlabConfig::SMALL }; // 64 cells
    /// heap.register_with::<Ember>(one_slab)?;
    /// assert!(heap.reserve::<Ember>(1000).is_err(), "more than its reservation holds");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn reserve<T: Object>(&mut self, n: usize) -> Result<(), ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.reserve::<T>(n)
    }

    /// Makes room for `n` objects of class `T` now (registered with the collector first if
    /// needed). As [`Arena::prefill`].
    ///
    /// # Errors
    /// As [`Arena::prefill`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.prefill::<Spark>(500)?; // a loading screen: the cells are ready now
    /// assert!(heap.stats::<Spark>().unwrap().vacant >= 500);
    /// for _ in 0..500 {
    ///     heap.insert(Spark { heat: 1.0 }); // no allocator call
    /// }
    /// assert_eq!(heap.len::<Spark>(), 500);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn prefill<T: Object>(&mut self, n: usize) -> Result<(), ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.prefill::<T>(n)
    }

    /// The settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_arena::ArenaConfig;
    /// use respawn_gc::{GcSettings, Heap};
    ///
    /// let heap = Heap::with_config(ArenaConfig::DEFAULT, GcSettings::LOW_LATENCY)?;
    /// assert_eq!(heap.settings().time_between_collections, Some(Duration::from_secs(10)));
    /// assert_eq!(heap.settings().purge_budget, Some(Duration::from_millis(1)));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn settings(&self) -> &GcSettings {
        &self.settings
    }

    /// Replaces the settings.
    ///
    /// # Errors
    /// [`GcError::BadSettings`]; the old settings stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{GcSettings, Heap};
    ///
    /// let mut heap = Heap::new();
    /// let every_5s = Some(Duration::from_secs(5));
    /// let settings = GcSettings { time_between_collections: every_5s, ..GcSettings::DEFAULT };
    /// heap.set_settings(settings)?;
    /// assert_eq!(heap.settings().time_between_collections, every_5s);
    ///
    /// assert!(heap.set_settings(GcSettings { threads: Some(0), ..GcSettings::DEFAULT }).is_err());
    /// assert_eq!(heap.settings().time_between_collections, every_5s, "the old settings stay");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn set_settings(&mut self, settings: GcSettings) -> Result<(), GcError> {
        settings.validate()?;
        if settings.threads != self.settings.threads {
            // The old pool's threads are joined as it is replaced.
            self.threads = Threads::new(settings.threads)?;
        }
        self.settings = settings;
        Ok(())
    }

    /// Figures of the last collection (and of its purge so far). (`stats::<T>()`, through
    /// the arena, gives a class's memory figures.)
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let kept = heap.insert(Coin { value: 1 });
    /// heap.add_to_root(kept.raw())?;
    /// heap.insert(Coin { value: 2 });
    /// heap.insert(Coin { value: 3 });
    /// heap.collect_garbage(CollectOptions::FULL);
    /// let stats = heap.gc_stats();
    /// assert_eq!((stats.cycles, stats.kept, stats.purged), (1, 1, 2));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn gc_stats(&self) -> &GcStats {
        &self.stats
    }

    /// Registers an external referencer (UE's `FGCObject`): a system outside the heap — a
    /// spatial hash, a network-id map, a script VM — whose `report` runs in every
    /// collection and tells the collector, through the [`Tracer`], which handles it holds.
    /// What it reports is kept as if rooted, and traced. Dropping the returned
    /// [`Referencer`] removes it (from the next collection on).
    ///
    /// `report` runs on the collecting thread, after the roots are flagged and before the
    /// objects are traced; it must not touch the heap.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Ship { hull: u32 }
    /// impl Object for Ship {}
    ///
    /// let mut heap = Heap::new();
    /// let ship = heap.insert(Ship { hull: 100 });
    /// // A network-id map outside the heap: it holds the ship, and says so at each mark.
    /// let net_ids = Arc::new(Mutex::new(vec![ship]));
    /// let ids = Arc::clone(&net_ids);
    /// let registration = heap.add_referencer(move |t| ids.lock().unwrap().iter().for_each(|h| t.handle(h.raw())));
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(heap.get(ship).map(|s| s.hull), Some(100));
    /// drop(registration);
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.get(ship).is_none());
    /// ```
    pub fn add_referencer(&mut self, report: impl for<'t> FnMut(&mut Tracer<'t>) + Send + 'static) -> Referencer {
        self.referencers.add(Box::new(report))
    }

    /// External referencers registered whose [`Referencer`] guard still lives (a dropped
    /// guard's referencer stops counting at once; its entry is cleared at the next
    /// collection).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::Heap;
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.referencers(), 0);
    /// let minimap = heap.add_referencer(|_tracer| {}); // would report the handles it holds
    /// assert_eq!(heap.referencers(), 1);
    /// drop(minimap);
    /// assert_eq!(heap.referencers(), 0);
    /// ```
    pub fn referencers(&self) -> usize {
        self.referencers.len()
    }

    /// Why the object is alive (UE's `FReferenceChainSearch`): a shortest chain of
    /// references from a root to it, by the rules the next collection would mark by — or
    /// `None` if that collection would purge it. The chain names what keeps its first object
    /// ([`RootKind`](crate::RootKind): `add_to_root`, a `Root` guard, an external
    /// referencer, permanence) and how each object reaches the next
    /// ([`Reference`](crate::Reference): a traced field, an `outer` — a reachable sub-object
    /// keeps its owner — or a shared cluster). Keep flags count as [`CollectOptions::FULL`]
    /// has them: none ([`why_alive_with`](Self::why_alive_with) takes others).
    ///
    /// A diagnostic, on the calling thread: a breadth-first search from every root over the
    /// edges the mark follows, read through the same `trace` functions, with its own side
    /// map. It writes no flag, and the heap is as it was when it returns. It calls every
    /// external referencer's report once, as a collection does (hence `&mut self`).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] / [`ArenaError::Hidden`] (through [`GcError::Arena`]): the
    /// handle does not name a visible object (ended, garbage, pending purge, pooled).
    ///
    /// ```
    /// use respawn_arena::{Handle, RawHandle};
    /// use respawn_gc::{CollectOptions, Heap, Object, Reference, RootKind, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { shots: Vec<Handle<Projectile>> }
    /// #[derive(Trace, Object)]
    /// struct Projectile { speed: f32 }
    /// #[derive(Trace, Object)]
    /// struct Trail { length: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let shot = heap.insert(Projectile { speed: 90.0 });
    /// let turret = heap.insert(Turret { shots: vec![shot] });
    /// heap.add_to_root(turret.raw())?;
    /// let chain = heap.why_alive(shot)?.expect("the turret keeps it");
    /// // Each object by its class and its index among its class's objects.
    /// let n = |raw: RawHandle| heap.arena().index_in_class(raw.index()).unwrap();
    /// assert_eq!((chain.root, chain.links[1].reference), (RootKind::AddToRoot, Reference::Traced));
    /// assert_eq!(
    ///     chain.to_string(),
    ///     format!("root (add_to_root) Turret#{} -> [traced] Projectile#{}", n(turret.raw()), n(shot.raw()))
    /// );
    ///
    /// // A sub-object's outer is its owner: a reachable trail would keep its projectile,
    /// // but the projectile does not keep its trail.
    /// let trail = heap.insert(Trail { length: 3.0 });
    /// heap.set_outer(trail.raw(), Some(shot.raw()))?;
    /// assert_eq!(heap.why_alive(trail)?, None, "the next collection purges it");
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.why_alive(trail).is_err(), "a stale handle");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn why_alive(&mut self, object: impl Into<RawHandle>) -> Result<Option<ReferenceChain>, GcError> {
        self.why_alive_with(object, ObjectFlags::empty())
    }

    /// [`why_alive`](Self::why_alive) for a collection whose
    /// [`keep_flags`](CollectOptions::keep_flags) are `keep_flags`: objects carrying any of
    /// them count as roots ([`RootKind::KeepFlags`](crate::RootKind::KeepFlags)).
    ///
    /// # Errors
    /// As [`why_alive`](Self::why_alive).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Handle, ObjectFlags};
    /// use respawn_gc::{Heap, Object, RootKind, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Level { props: Vec<Handle<Prop>> }
    /// #[derive(Trace, Object)]
    /// struct Prop { mass: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let prop = heap.insert(Prop { mass: 2.0 });
    /// let level = heap.insert(Level { props: vec![prop] });
    /// // The game flags the level standalone: kept by the collections whose keep flags name it.
    /// heap.table().resolve(level.raw())?.insert_flags(ObjectFlags::STANDALONE);
    /// assert_eq!(heap.why_alive(prop)?, None, "no keep flags: the next collection purges it");
    /// let chain = heap.why_alive_with(prop, ObjectFlags::STANDALONE)?.expect("kept by the level");
    /// assert_eq!(chain.root, RootKind::KeepFlags(ObjectFlags::STANDALONE));
    /// assert_eq!((chain.root_object().handle, chain.len()), (level.raw(), 1));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn why_alive_with(
        &mut self,
        object: impl Into<RawHandle>,
        keep_flags: ObjectFlags,
    ) -> Result<Option<ReferenceChain>, GcError> {
        let raw = object.into();
        self.arena.table().resolve(raw)?;
        let graph = Graph::new(&self.arena, &self.clusters);
        Ok(graph.chain(&mut self.referencers, raw, keep_flags))
    }

    /// References that still name objects marked as garbage, found now: held by a traced
    /// field of an object the next collection would keep, or reported by an external
    /// referencer. The collector ignores such a reference and purges the object anyway, so
    /// each is a handle about to go stale — usually a field someone forgot to clear. Run it
    /// between [`mark_as_garbage`](Self::mark_as_garbage) and the collection (after a full
    /// collection the garbage is gone and its handles are stale); for a record taken by
    /// every collection, see [`GcSettings::track_garbage_references`].
    ///
    /// A diagnostic with [`why_alive`](Self::why_alive)'s search: one thread, no flag
    /// written, each referencer's report called once.
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{Heap, Object, Referrer, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Squad { tanks: Vec<Handle<Tank>> }
    /// #[derive(Trace, Object)]
    /// struct Tank { armor: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tank = heap.insert(Tank { armor: 3 });
    /// let squad = heap.insert(Squad { tanks: vec![tank] });
    /// let _root = heap.root(squad)?;
    /// assert!(heap.find_garbage_references().is_empty());
    /// heap.mark_as_garbage(tank.raw())?; // destroyed, but the squad still lists it
    /// let found = heap.find_garbage_references();
    /// assert_eq!(found.len(), 1);
    /// assert_eq!(found[0].to.handle, tank.raw());
    /// assert!(matches!(found[0].from, Referrer::Object(o) if o.handle == squad.raw()));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn find_garbage_references(&mut self) -> Vec<GarbageReference> {
        let graph = Graph::new(&self.arena, &self.clusters);
        graph.garbage_now(&mut self.referencers)
    }

    /// What the last collection found still referencing garbage: the references that the
    /// objects it kept, and the external referencers, held to objects marked as garbage,
    /// read after its mark and before its purge. Empty unless
    /// [`GcSettings::track_garbage_references`] was on for it; the next collection replaces
    /// it. [`find_garbage_references`](Self::find_garbage_references) looks now instead.
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{CollectOptions, GcSettings, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Squad { tanks: Vec<Handle<Tank>> }
    /// #[derive(Trace, Object)]
    /// struct Tank { armor: u32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.set_settings(GcSettings { track_garbage_references: true, ..GcSettings::DEFAULT })?;
    /// let tank = heap.insert(Tank { armor: 3 });
    /// let squad = heap.insert(Squad { tanks: vec![tank] });
    /// let _root = heap.root(squad)?;
    /// heap.mark_as_garbage(tank.raw())?;
    /// heap.collect_garbage(CollectOptions::FULL); // purges the tank all the same
    /// assert_eq!(heap.garbage_references().len(), 1);
    /// println!("{}", heap.garbage_references()[0]); // Squad#1 -> [traced] Tank#0 (garbage)
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn garbage_references(&self) -> &[GarbageReference] {
        &self.garbage_references
    }

    /// Registers `T` with the arena (if needed) and with the collector.
    ///
    /// # Errors
    /// [`GcError::AlreadyRegistered`], or as [`Arena::register`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{GcError, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Tree { height: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let id = heap.register::<Tree>()?; // ahead of the first insert
    /// assert_eq!(heap.class_of::<Tree>(), Some(id));
    /// assert!(matches!(heap.register::<Tree>(), Err(GcError::AlreadyRegistered(_))));
    /// # Ok::<(), GcError>(())
    /// ```
    pub fn register<T: Object>(&mut self) -> Result<ClassId, GcError> {
        let id = match self.arena.class_of::<T>() {
            Some(id) => id,
            None => self.arena.register::<T>()?,
        };
        self.attach::<T>(id)
    }

    /// Registers `T` with its own slab configuration.
    ///
    /// # Errors
    /// As [`Arena::register_with`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::SlabConfig;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.register_with::<Spark>(SlabConfig::SMALL)?;
    /// heap.insert(Spark { heat: 1.0 });
    /// assert_eq!(heap.stats::<Spark>().unwrap().memory.cells_per_slab, 64);
    /// assert!(heap.register_with::<Spark>(SlabConfig::SMALL).is_err(), "once per class");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn register_with<T: Object>(&mut self, slab: SlabConfig) -> Result<ClassId, GcError> {
        let id = self.arena.register_with::<T>(slab)?;
        self.attach::<T>(id)
    }

    fn attach<T: Object>(&mut self, id: ClassId) -> Result<ClassId, GcError> {
        if self.arena.collector_entry(id.index()).is_some() {
            return Err(GcError::AlreadyRegistered(type_name::<T>()));
        }
        self.arena.set_collector_entry(id.index(), entry_of::<T>(self.default_lifetime == Lifetime::Owned))?;
        if self.settings.async_purge && !T::DROP_ON_GAME_THREAD && std::mem::needs_drop::<T>() {
            // The class's ended objects come back undropped, for the purge thread. (A pool
            // that takes the class later takes its ended cells: `set_ended_cells`.)
            self.arena.set_ended_cells(id, EndedCells::ReturnedUndropped)?;
            self.purger.adopt_class(id, drop_erased::<T>);
        }
        Ok(id)
    }

    /// What the purge thread of [`GcSettings::async_purge`] has done: objects handed to
    /// it, destructors run, destructors that panicked.
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, GcSettings, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Mesh { vertices: Vec<[f32; 3]> } // a destructor worth moving off the game thread
    ///
    /// let settings = GcSettings { async_purge: true, ..GcSettings::SINGLE_THREADED };
    /// let mut heap = Heap::with_config(Default::default(), settings)?;
    /// let mesh = heap.insert(Mesh { vertices: vec![[0.0; 3]; 1024] });
    /// heap.collect_garbage(CollectOptions::FULL); // nothing roots it: purged
    /// assert!(heap.get(mesh).is_none(), "stale at once");
    /// assert_eq!(heap.purge_thread_stats().posted, 1); // its `Vec` is freed on the purge thread
    /// drop(heap); // joins the purge thread: every object handed over is dropped by then
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn purge_thread_stats(&self) -> PurgeThreadStats {
        self.purger.stats()
    }

    fn ensure_class<T: Object>(&mut self) -> Result<ClassId, ArenaError> {
        if let Some(id) = self.arena.class_of::<T>() {
            if self.arena.collector_entry(id.index()).is_some() {
                return Ok(id);
            }
        }
        match self.register::<T>() {
            Ok(id) => Ok(id),
            Err(GcError::Arena(e)) => Err(e),
            Err(e) => unreachable!("registering an unregistered class: {e}"),
        }
    }

    /// `T`'s class id, registering `T` with the arena and the collector first if it is
    /// new.
    ///
    /// # Errors
    /// As [`Arena::register`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Tree { height: f32 }
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.class_of::<Tree>(), None);
    /// let id = heap.class_id::<Tree>()?; // registers it
    /// assert_eq!(heap.class_id::<Tree>()?, id, "the same id from then on");
    /// assert_eq!(heap.class_of::<Tree>(), Some(id));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn class_id<T: Object>(&mut self) -> Result<ClassId, ArenaError> {
        self.ensure_class::<T>()
    }

    /// Sets how long `T`'s objects live, registering `T` first if it is new. It applies to
    /// the objects the class has and will have, from the next collection on: a collection
    /// already under way (an incremental mark) keeps the rule it began with for the objects
    /// it flagged already.
    ///
    /// # Errors
    /// As [`Arena::register`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Lifetime, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Actor { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.set_lifetime::<Actor>(Lifetime::Owned)?;
    /// let actor = heap.insert(Actor { hp: 100 });
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.contains(actor), "owned: kept with nothing referencing it");
    ///
    /// heap.mark_as_garbage(actor.raw())?; // until it is destroyed
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(!heap.contains(actor));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn set_lifetime<T: Object>(&mut self, lifetime: Lifetime) -> Result<(), ArenaError> {
        let id = self.ensure_class::<T>()?;
        self.update_entry(id.index(), |entry| entry.with_owned(lifetime == Lifetime::Owned));
        Ok(())
    }

    /// How long `T`'s objects live: the class's [`Lifetime`], or, if `T` has not
    /// registered with the collector yet, the one it will get
    /// ([`default_lifetime`](Self::default_lifetime)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Lifetime, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Actor { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.lifetime::<Actor>(), Lifetime::Collected, "the default");
    /// heap.set_lifetime::<Actor>(Lifetime::Owned)?;
    /// assert_eq!(heap.lifetime::<Actor>(), Lifetime::Owned);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn lifetime<T: 'static>(&self) -> Lifetime {
        match self.arena.class_of::<T>().and_then(|id| self.arena.collector_entry(id.index())) {
            Some(entry) if entry.owned() => Lifetime::Owned,
            Some(_) => Lifetime::Collected,
            None => self.default_lifetime,
        }
    }

    /// Changes the collector entry of the class with index `class`, if it has one.
    fn update_entry(&mut self, class: usize, change: impl FnOnce(CollectorEntry) -> CollectorEntry) {
        if let Some(&entry) = self.arena.collector_entry(class) {
            let set = self.arena.set_collector_entry(class, change(entry));
            debug_assert!(set.is_ok(), "the class's own entry fits it");
        }
    }

    /// Sets the [`Lifetime`] classes get when they register from now on (a class registered
    /// already keeps its own). [`Lifetime::Collected`] until changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Lifetime, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Actor { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// heap.set_default_lifetime(Lifetime::Owned);
    /// let actor = heap.insert(Actor { hp: 100 }); // `Actor` registers now: owned
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.contains(actor), "kept with nothing referencing it");
    /// heap.set_default_lifetime(Lifetime::Collected);
    /// assert_eq!(heap.lifetime::<Actor>(), Lifetime::Owned, "a registered class keeps its own");
    /// ```
    pub fn set_default_lifetime(&mut self, lifetime: Lifetime) {
        self.default_lifetime = lifetime;
    }

    /// The [`Lifetime`] a class gets when it registers.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Lifetime, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Actor { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// assert_eq!(heap.default_lifetime(), Lifetime::Collected);
    /// heap.set_default_lifetime(Lifetime::Owned);
    /// assert_eq!(heap.default_lifetime(), Lifetime::Owned);
    /// assert_eq!(heap.lifetime::<Actor>(), Lifetime::Owned, "what `Actor` will get");
    /// ```
    pub fn default_lifetime(&self) -> Lifetime {
        self.default_lifetime
    }

    /// Places `value` in the heap and returns its handle; registers the class with the
    /// collector on first use.
    ///
    /// # Panics
    /// If [`try_insert`](Self::try_insert) fails.
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Node { next: Option<Handle<Node>> }
    /// impl Object for Node {}
    ///
    /// let mut heap = Heap::new();
    /// let tail = heap.insert(Node { next: None });
    /// let head = heap.insert(Node { next: Some(tail) });
    /// let _root = heap.root(head).unwrap();
    /// let lost = heap.insert(Node { next: None });
    /// let stats = heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(stats.purged, 1);
    /// assert!(heap.get(tail).is_some(), "reached through head");
    /// assert!(heap.get(lost).is_none());
    /// ```
    pub fn insert<T: Object>(&mut self, value: T) -> Handle<T> {
        self.try_insert(value).unwrap_or_else(|r| panic!("Heap::insert::<{}>: {}", type_name::<T>(), r.error))
    }

    /// Places `value` in the heap and returns its handle.
    ///
    /// # Errors
    /// As [`Arena::try_insert`]; the value comes back.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::SlabConfig;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock { mass: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let one_slab = SlabConfig { max_slabs: 1, ..SlabConfig::SMALL }; // 64 cells
    /// heap.register_with::<Rock>(one_slab)?;
    /// for mass in 0..64 {
    ///     assert!(heap.try_insert(Rock { mass }).is_ok());
    /// }
    /// let refused = heap.try_insert(Rock { mass: 64 }).unwrap_err(); // the slab is full
    /// assert_eq!(refused.value.mass, 64, "the value comes back");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn try_insert<T: Object>(&mut self, value: T) -> Result<Handle<T>, Rejected<T, ArenaError>> {
        if let Err(error) = self.ensure_class::<T>() {
            return Err(Rejected { error, value });
        }
        self.arena.try_insert(value)
    }

    /// Places `value` in the permanent pool, flagged [`ObjectFlags::PERMANENT`]: the
    /// collector keeps it without scanning it (UE's disregard-for-GC objects), and
    /// `destroy_now`, `mark_as_garbage` and the arena's `remove` refuse it. Registers the
    /// class with the collector on first use. See [`Arena::insert_permanent`].
    ///
    /// # Errors
    /// As [`Arena::insert_permanent`]; the value comes back.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, GcError, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Config { volume: u8 }
    ///
    /// let mut heap = Heap::new();
    /// let config = heap.insert_permanent(Config { volume: 7 }).map_err(|r| r.error)?;
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(heap.get(config).map(|c| c.volume), Some(7), "kept with no root");
    /// assert!(matches!(heap.destroy_now(config.raw()), Err(GcError::Permanent)));
    /// # Ok::<(), GcError>(())
    /// ```
    pub fn insert_permanent<T: Object>(&mut self, value: T) -> Result<Handle<T>, Rejected<T, ArenaError>> {
        if let Err(error) = self.ensure_class::<T>() {
            return Err(Rejected { error, value });
        }
        self.arena.insert_permanent(value)
    }

    /// Marks the object and its sub-objects as garbage (UE's `MarkAsGarbage`): handles to
    /// them stop resolving at once, `tick` skips them, and the next collection purges them
    /// even if they are referenced. Returns how many objects were marked: a sub-object
    /// already garbage or already waiting for its purge is not counted again. The same as
    /// [`subtree`](Self::subtree) then [`Subtree::mark_as_garbage`].
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`] / [`ArenaError::Hidden`] (already garbage,
    /// in its pool), [`ArenaError::Rooted`] if the object or a sub-object is rooted, or
    /// [`GcError::Permanent`].
    ///
    /// ```
    /// use respawn_arena::Handle;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Tank { armor: u32 }
    /// #[derive(Trace)]
    /// struct Turret { angle: f32 }
    /// #[derive(Trace)]
    /// struct Squad { tanks: Vec<Handle<Tank>> }
    /// impl Object for Tank {}
    /// impl Object for Turret {}
    /// impl Object for Squad {}
    ///
    /// let mut heap = Heap::new();
    /// let tank = heap.insert(Tank { armor: 3 });
    /// let turret = heap.insert(Turret { angle: 0.0 });
    /// heap.set_outer(turret.raw(), Some(tank.raw())).unwrap(); // the turret is the tank's
    /// let squad = heap.insert(Squad { tanks: vec![tank] });
    /// let _root = heap.root(squad).unwrap();
    /// assert_eq!(heap.mark_as_garbage(tank.raw()).unwrap(), 2); // tank and turret
    /// assert!(heap.get(tank).is_none(), "stale at once");
    /// let stats = heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!(stats.purged, 2, "garbage goes even while the squad references it");
    /// ```
    pub fn mark_as_garbage(&mut self, raw: RawHandle) -> Result<usize, GcError> {
        Ok(self.subtree(raw)?.mark_as_garbage())
    }

    /// Destroys the object and its sub-objects (objects whose `outer` it is, transitively)
    /// now, without a mark: `begin_destroy`, then, when ready, `finish_destroy`, drop in
    /// place and final free (vacant, or returned to the class's owner) — sub-objects before their
    /// owners. Objects not yet ready for `finish_destroy` are hidden and finish in later
    /// [`purge`](Self::purge) steps. Returns how many objects ended now. The same as
    /// [`subtree`](Self::subtree) then [`Subtree::destroy_now`].
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`] / [`ArenaError::Hidden`],
    /// [`ArenaError::Rooted`] if the object or a sub-object is rooted, or
    /// [`GcError::Permanent`].
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Door { open: bool }
    /// impl Object for Door {
    ///     fn begin_destroy(&mut self) { self.open = false; } // UE's BeginDestroy
    /// }
    ///
    /// let mut heap = Heap::new();
    /// let door = heap.insert(Door { open: true });
    /// assert_eq!(heap.destroy_now(door.raw()).unwrap(), 1); // hooks and drop, no mark
    /// assert!(heap.get(door).is_none());
    /// assert!(heap.destroy_now(door.raw()).is_err(), "a second destroy is refused");
    /// ```
    pub fn destroy_now(&mut self, raw: RawHandle) -> Result<usize, GcError> {
        Ok(self.subtree(raw)?.destroy_now())
    }

    /// Walks down from `raw` once: the object and every sub-object below it (objects whose
    /// `outer` it is, transitively), owners before their sub-objects, checked that it may
    /// end — none rooted, none permanent. The [`Subtree`] then ends them without walking
    /// again: [`mark_as_garbage`](Subtree::mark_as_garbage),
    /// [`destroy_now`](Subtree::destroy_now), or
    /// [`destroy_sub_objects`](Subtree::destroy_sub_objects) (a pool's `Reuse` keeps the
    /// owner). It holds the heap for as long as it lives, so nothing it checked can change
    /// before it acts.
    ///
    /// # Errors
    /// Nothing changes on [`ArenaError::Stale`] / [`ArenaError::Hidden`] (`raw` is not a
    /// visible object), [`ArenaError::Rooted`] if it or a sub-object is rooted, or
    /// [`GcError::Permanent`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::ArenaError;
    /// use respawn_gc::{GcError, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let tower = heap.insert(Part { hp: 500 });
    /// let gun = heap.insert(Part { hp: 80 });
    /// heap.set_outer(gun.raw(), Some(tower.raw()))?;
    /// let guard = heap.root(gun)?;
    /// let refused = matches!(heap.subtree(tower.raw()), Err(GcError::Arena(ArenaError::Rooted)));
    /// assert!(refused, "the gun is rooted: nothing may end");
    /// drop(guard);
    /// let subtree = heap.subtree(tower.raw())?;
    /// assert_eq!(subtree.objects(), [tower.raw(), gun.raw()]);
    /// assert_eq!(subtree.destroy_now(), 2);
    /// # Ok::<(), GcError>(())
    /// ```
    pub fn subtree(&mut self, raw: RawHandle) -> Result<Subtree<'_>, GcError> {
        let slot = self.arena.table().resolve(raw)?;
        if !slot.flags().contains(ObjectFlags::HAS_SUBOBJECTS) {
            // A leaf: the walk is the object itself.
            check_may_end(slot)?;
            let mut order = std::mem::take(&mut self.order);
            order.clear();
            order.push(raw);
            return Ok(Subtree { heap: self, order });
        }
        let (mut walk, mut order) = (std::mem::take(&mut self.walk), std::mem::take(&mut self.order));
        walk.clear();
        order.clear();
        walk.push(raw);
        let mut refused = Ok(());
        while let Some(h) = walk.pop() {
            order.push(h);
            if let Ok(slot) = self.arena.table().resolve_live(h) {
                refused = refused.and(check_may_end(slot));
            }
            walk.extend(self.arena.sub_objects(h));
        }
        self.walk = walk;
        match refused {
            Ok(()) => Ok(Subtree { heap: self, order }),
            Err(e) => {
                self.order = order;
                Err(e)
            }
        }
    }

    /// Ends `order`'s objects, last first (sub-objects before their owners); returns how
    /// many ended now.
    fn end_all(&mut self, order: &[RawHandle]) -> usize {
        let mut ended = 0;
        for &h in order.iter().rev() {
            if self.end_life(h, Ended::DestroyedNow) == Ending::Ended {
                ended += 1;
            }
        }
        self.purger.hand_over(&mut self.arena);
        ended
    }

    /// Revives the objects the last purge met rooted and left `Unreachable` (a root taken
    /// between the verdict and the purge): `Live` again, ticked again, and judged by the
    /// collection about to begin like any other object.
    fn revive_standing(&mut self) {
        for raw in self.standing.drain(..) {
            // One ended since, or moved on by hand, is left as it is.
            let _ = self.arena.set_lifecycle(raw, Lifecycle::Live);
        }
    }

    /// Ends one object: hooks, drop, final free. The caller resolved `raw`.
    fn end_life(&mut self, raw: RawHandle, ended: Ended) -> Ending {
        let Ok(slot) = self.arena.table().resolve_live(raw) else { return Ending::Ended };
        if slot.is_rooted() {
            if slot.flags().lifecycle() == Lifecycle::Unreachable {
                self.standing.push(raw);
            }
            return Ending::Kept;
        }
        if slot.flags().lifecycle() == Lifecycle::Destroying {
            // Its end began already (a sub-object waiting for `finish_destroy`): never a
            // second `begin_destroy`.
            return Ending::Waiting;
        }
        let class = usize::from(slot.class());
        let cell = self.arena.table().cell(raw.index()).expect("a live object has a cell").as_ptr();
        if let Some(&gc) = self.arena.collector_entry(class) {
            // Flag first: a panicking hook must not lead to a second `begin_destroy`.
            let flagged = self.arena.set_lifecycle(raw, Lifecycle::Destroying);
            debug_assert!(flagged.is_ok(), "resolved just now");
            // SAFETY: `raw` resolved to a live object of `class`; `&mut self` holds it
            // exclusively.
            let began = panic::catch_unwind(AssertUnwindSafe(|| unsafe { (gc.begin_destroy())(cell) }));
            if let Err(payload) = began {
                // The hook panicked: the object ends now, its slot retired (never reused:
                // the hook may have left it half torn down) and returned retired, so that
                // its class's owner counts it gone; then the panic goes on to the caller.
                let retired = self.arena.retire(raw, ended);
                debug_assert!(retired.is_ok(), "resolved and unrooted just now");
                panic::resume_unwind(payload);
            }
            // SAFETY: as above.
            if !unsafe { (gc.is_ready())(cell) } {
                self.waiting.push((raw, ended));
                return Ending::Waiting;
            }
            // SAFETY: as above.
            unsafe { (gc.finish_destroy())(cell) };
        }
        match self.arena.destroy_for(raw, ended) {
            Ok(()) => Ending::Ended,
            // A hook rooted it: keep it (hidden; the next collection judges it again).
            Err(_) => Ending::Kept,
        }
    }

    /// Ends a leaf object a caller found releasable in its class's typed store, now, as
    /// [`destroy_now`](Self::destroy_now) ends a leaf, but from that one resolve: it becomes
    /// `Destroying`, `T`'s `begin_destroy` runs (a panic retires the slot and goes on, as in
    /// a purge), then, if `is_ready_for_finish_destroy`, `finish_destroy`, and the arena
    /// drops it and frees its cell (`Ended::DestroyedNow`). A class that did not register
    /// with the collector runs no hooks, as in a purge. A pool's `Purge` release of a
    /// leaf goes this way. The caller checked that the object owns no sub-objects
    /// (`HAS_SUBOBJECTS`).
    ///
    /// Returns `Err` with the object's handle if it is not ready: it waits, `Destroying`,
    /// and the caller hands it to [`wait_to_finish`](Self::wait_to_finish), which finishes
    /// it when it is, as a purge's waiting objects are.
    #[inline(never)]
    pub fn destroy_found<T: Object>(mut found: Releasable<'_, T>) -> Result<(), RawHandle> {
        debug_assert!(!found.flags().contains(ObjectFlags::HAS_SUBOBJECTS), "a leaf");
        if !found.is_collected() {
            // No collector hooks, as `end_life` runs none for such a class.
            found.destroy(Ended::DestroyedNow);
            return Ok(());
        }
        found.begin_destroy();
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| found.object().begin_destroy())) {
            // As `end_life`: the object ends now, its slot retired (the hook may have left
            // it half torn down), then the panic goes on.
            found.retire(Ended::DestroyedNow);
            panic::resume_unwind(payload);
        }
        if !found.object().is_ready_for_finish_destroy() {
            return Err(found.handle().raw());
        }
        found.object().finish_destroy();
        found.destroy(Ended::DestroyedNow);
        Ok(())
    }

    /// An object whose end began ([`destroy_found`](Self::destroy_found)) and that is not
    /// ready for `finish_destroy` yet: the heap finishes it at a later purge step or
    /// collection, once it is.
    pub fn wait_to_finish(&mut self, raw: RawHandle) {
        self.waiting.push((raw, Ended::DestroyedNow));
    }

    /// Tries to finish a waiting object; `None` while it is not ready.
    fn finish_waiting(&mut self, (raw, ended): (RawHandle, Ended)) -> Option<bool> {
        let Ok(slot) = self.arena.table().resolve_live(raw) else { return Some(false) };
        let class = usize::from(slot.class());
        let cell = self.arena.table().cell(raw.index()).expect("a live object has a cell").as_ptr();
        let gc = *self.arena.collector_entry(class).expect("only collector classes wait");
        // SAFETY: `raw` resolved to a live object of `class`; `&mut self` holds it.
        if !unsafe { (gc.is_ready())(cell) } {
            return None;
        }
        // SAFETY: as above.
        unsafe { (gc.finish_destroy())(cell) };
        Some(self.arena.destroy_for(raw, ended).is_ok())
    }

    /// Makes a cluster of `root` and `members`: from now on, reaching any of them keeps all
    /// of them, and they are never judged one by one — until the cluster is dissolved (by
    /// hand, or by a collection that finds the root marked as garbage). A member marked as
    /// garbage leaves the cluster at the next collection.
    ///
    /// # Errors
    /// Nothing changes if an object is stale or hidden ([`GcError::Arena`]), permanent,
    /// pooled, or in a cluster already.
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Part { id: u32 }
    /// impl Object for Part {}
    ///
    /// let mut heap = Heap::new();
    /// let [body, wheel, door] = [0, 1, 2].map(|id| heap.insert(Part { id }));
    /// heap.create_cluster(body.raw(), &[wheel.raw(), door.raw()]).unwrap();
    /// let _root = heap.root(door).unwrap(); // reaching one member keeps them all
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.get(body).is_some() && heap.get(wheel).is_some());
    /// ```
    pub fn create_cluster(&mut self, root: RawHandle, members: &[RawHandle]) -> Result<ClusterId, GcError> {
        for &raw in std::iter::once(&root).chain(members) {
            let slot = self.arena.table().resolve(raw)?;
            let flags = slot.flags();
            if flags.contains(ObjectFlags::PERMANENT) {
                return Err(GcError::Permanent);
            }
            if self.clusters.cluster_of(raw.index(), slot).is_some() {
                return Err(GcError::InCluster);
            }
        }
        for &raw in std::iter::once(&root).chain(members) {
            if let Ok(slot) = self.arena.table().resolve(raw) {
                self.update_entry(usize::from(slot.class()), |entry| entry.with_clustered(true));
            }
        }
        if self.is_marking() {
            // Reaching one member now keeps them all: the mark must visit a member it
            // reached already again, to reach the cluster.
            self.marking.notes.extend(std::iter::once(&root).chain(members).map(|raw| raw.index()));
        }
        Ok(self.clusters.create(self.arena.table(), root, members))
    }

    /// Dissolves a cluster: its objects are judged one by one again.
    ///
    /// # Errors
    /// [`GcError::UnknownCluster`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, GcError, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [body, wheel] = [0, 1].map(|id| heap.insert(Part { id }));
    /// let cluster = heap.create_cluster(body.raw(), &[wheel.raw()])?;
    /// heap.dissolve_cluster(cluster)?;
    /// let _root = heap.root(wheel)?;
    /// heap.collect_garbage(CollectOptions::FULL);
    /// assert!(heap.contains(wheel) && !heap.contains(body), "judged one by one again");
    /// assert!(matches!(heap.dissolve_cluster(cluster), Err(GcError::UnknownCluster)));
    /// # Ok::<(), GcError>(())
    /// ```
    pub fn dissolve_cluster(&mut self, id: ClusterId) -> Result<(), GcError> {
        if self.clusters.dissolve(id) {
            Ok(())
        } else {
            Err(GcError::UnknownCluster)
        }
    }

    /// The cluster the object is in, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [body, wheel, crate_] = [0, 1, 2].map(|id| heap.insert(Part { id }));
    /// let cluster = heap.create_cluster(body.raw(), &[wheel.raw()])?;
    /// assert_eq!(heap.cluster_of(wheel.raw()), Some(cluster));
    /// assert_eq!(heap.cluster_of(crate_.raw()), None);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn cluster_of(&self, raw: RawHandle) -> Option<ClusterId> {
        let slot = self.arena.table().resolve_live(raw).ok()?;
        self.clusters.cluster_of(raw.index(), slot).map(ClusterId)
    }

    /// The objects of a cluster, root first (stale entries included until the next
    /// collection tidies them).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let [body, wheel, door] = [0, 1, 2].map(|id| heap.insert(Part { id }));
    /// let cluster = heap.create_cluster(body.raw(), &[wheel.raw(), door.raw()])?;
    /// let objects: Vec<_> = heap.cluster_objects(cluster).unwrap().collect();
    /// assert_eq!(objects, [body.raw(), wheel.raw(), door.raw()], "the root first");
    /// heap.dissolve_cluster(cluster)?;
    /// assert!(heap.cluster_objects(cluster).is_none());
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn cluster_objects(&self, id: ClusterId) -> Option<impl Iterator<Item = RawHandle> + '_> {
        self.clusters.objects(id)
    }

    /// Objects waiting to be purged (queued or waiting for `finish_destroy`).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..3 {
    ///     heap.insert(Spark { heat: 1.0 });
    /// }
    /// assert_eq!(heap.pending_purge(), 0);
    /// heap.collect_garbage(CollectOptions::INCREMENTAL); // mark now, purge later
    /// assert_eq!(heap.pending_purge(), 3);
    /// heap.purge(None);
    /// assert_eq!(heap.pending_purge(), 0);
    /// ```
    pub fn pending_purge(&self) -> usize {
        self.purge_queue.len() - self.purge_cursor + self.waiting.len()
    }

    /// Runs a full collection (UE's `CollectGarbage`). Purges what the previous collection
    /// left first. An incremental mark running
    /// ([`start_incremental_collection`](Self::start_incremental_collection)) is dropped:
    /// this collection decides from scratch.
    ///
    /// There is no GC lock (UE's `FGCCSyncObject`): every call that reaches the heap's
    /// objects takes `&mut Heap` or `&Heap`, so no other thread can be inside the heap while
    /// a collection runs, and nothing needs to hold one off.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let kept = heap.insert(Coin { value: 1 });
    /// let lost = heap.insert(Coin { value: 2 });
    /// heap.add_to_root(kept.raw())?;
    /// let stats = heap.collect_garbage(CollectOptions::FULL);
    /// assert_eq!((stats.objects, stats.kept, stats.purged), (2, 1, 1));
    /// assert!(heap.contains(kept) && !heap.contains(lost));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn collect_garbage(&mut self, options: CollectOptions) -> GcStats {
        self.abandon_mark();
        self.in_threads(|heap| heap.collect_whole(options))
    }

    /// The frame hook: collects when [`GcSettings::time_between_collections`] has passed
    /// since the last collection (purging in full if there is no purge budget), otherwise
    /// spends [`GcSettings::purge_budget`] on pending purge work.
    ///
    /// With [`GcSettings::incremental_mark_budget`], a collection that falls due starts an
    /// incremental mark instead (once the previous collection's purge queue is empty: until
    /// then this frame purges, within its budget) and runs its first slice; each later call
    /// runs one slice, [`GcStep::Marked`], until the slice that finishes it returns
    /// [`GcStep::Collected`]. A mark running when the setting is turned off finishes in the
    /// next call.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_arena::ArenaConfig;
    /// use respawn_gc::{GcSettings, GcStep, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let every_second = GcSettings {
    ///     time_between_collections: Some(Duration::from_secs(1)),
    ///     ..GcSettings::SINGLE_THREADED
    /// };
    /// let mut heap = Heap::with_config(ArenaConfig::DEFAULT, every_second)?;
    /// heap.insert(Spark { heat: 1.0 });
    /// let frame = Duration::from_millis(500); // the game's frame time (here, two fps)
    /// assert_eq!(heap.update(frame), GcStep::Idle, "half a second: nothing due");
    /// assert!(matches!(heap.update(frame), GcStep::Collected(stats) if stats.purged == 1));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn update(&mut self, dt: Duration) -> GcStep {
        // The cells the purge thread finished with, vacant again before this frame's work.
        self.purger.reclaim(&mut self.arena);
        // The clock runs from the start of the last collection, a mark spread over frames
        // included; it stops at `Duration::MAX` (a caller's clock may hand any `dt`).
        self.since_collection = self.since_collection.saturating_add(dt);
        if self.is_marking() {
            return self.update_slice();
        }
        if self.settings.time_between_collections.is_some_and(|every| self.since_collection >= every) {
            let options = CollectOptions { full_purge: self.settings.purge_budget.is_none(), ..CollectOptions::FULL };
            if self.settings.incremental_mark_budget.is_some() {
                if self.purge_queue.len() > self.purge_cursor {
                    // The last collection's purge first, within its budget, as on any frame.
                    return GcStep::Purged(self.purge(self.settings.purge_budget));
                }
                self.start_incremental_collection(options);
                return self.update_slice();
            }
            return GcStep::Collected(self.collect_garbage(options));
        }
        if self.early_purge_due() {
            self.gather_garbage();
        }
        if self.pending_purge() > 0 {
            return GcStep::Purged(self.purge(self.settings.purge_budget));
        }
        GcStep::Idle
    }

    /// Whether garbage is purged between collections: [`GcSettings::early_purge_percent`]
    /// is set, and the collections do not report references to garbage.
    fn purges_early(&self) -> bool {
        self.settings.early_purge_percent.is_some() && !self.settings.track_garbage_references
    }

    /// Whether the garbage marked since the last gather passed
    /// [`GcSettings::early_purge_percent`] of the table's slots (and nothing forbids an
    /// early purge). A mark running never asks.
    fn early_purge_due(&self) -> bool {
        let percent = usize::from(self.settings.early_purge_percent.unwrap_or(0));
        self.purges_early()
            && !self.garbage.is_empty()
            && self.garbage.len() * 100 >= percent * self.arena.table().len() as usize
    }

    /// Sends the objects marked as garbage since the last gather that still are, and are not
    /// rooted, to the purge without a mark (see [`GcSettings::early_purge_percent`]): hidden
    /// as a collection's finds are, so nothing gathers them twice, and queued behind what
    /// the purge holds already. The list, not a walk over the table: the work follows the
    /// garbage, not the heap's size.
    ///
    /// Garbage needs no mark: its handles are stale, and the mark keeps nothing for a
    /// garbage object's sake, so the next collection would purge exactly these. Rooted
    /// garbage is left to the collection.
    fn gather_garbage(&mut self) {
        let from = self.purge_queue.len();
        for raw in self.garbage.drain(..) {
            let Ok(slot) = self.arena.table().resolve_live(raw) else { continue }; // ended since
            if slot.flags().lifecycle() != Lifecycle::Garbage || slot.is_rooted() {
                continue;
            }
            let hidden = self.arena.set_lifecycle(raw, Lifecycle::Unreachable);
            debug_assert!(hidden.is_ok(), "a garbage object may become unreachable");
            self.purge_queue.push(raw);
        }
        self.stats.gathered_early += self.purge_queue.len() - from;
    }

    /// One slice of the running incremental mark, for [`update`](Self::update).
    fn update_slice(&mut self) -> GcStep {
        let budget = self.settings.incremental_mark_budget.unwrap_or(Duration::MAX);
        match self.mark_slice(budget) {
            MarkStep::Done(stats) => GcStep::Collected(stats),
            MarkStep::Marking(progress) => GcStep::Marked(progress),
            MarkStep::Idle => GcStep::Idle,
        }
    }

    fn collect_whole(&mut self, options: CollectOptions) -> GcStats {
        if self.pending_purge() > 0 {
            self.purge(None);
        }
        self.revive_standing();
        // A table no bigger than one task's share is marked on this thread: rayon would run
        // one task anyway, and a small world never starts rayon's pool.
        let parallel = self.settings.parallel
            && self.arena.table().len() as usize > self.settings.min_objects_per_task
            && rayon::current_num_threads() > 1;
        self.since_collection = Duration::ZERO;
        self.stats = GcStats {
            cycles: self.stats.cycles + 1,
            threads: if parallel { rayon::current_num_threads() } else { 1 },
            ..GcStats::default()
        };
        let min = self.settings.min_objects_per_task;
        let table = self.arena.table();
        self.stats.clusters_dissolved = self.clusters.begin_cycle(table);

        let bump = &mut self.scratch.0;
        bump.reset();
        let slots = table.len() as usize;
        let [first, second] = &mut self.frontiers;
        let (current, next) = (Frontier::new(sized(first, slots)), Frontier::new(sized(second, slots)));

        let runs = bumpalo::collections::Vec::from_iter_in(table.runs(), bump).into_bump_slice();
        let marker = Marker {
            table,
            classes: self.arena.collector_entries(),
            clusters: &self.clusters,
            exclusive: !parallel,
            checked: false,
        };
        let referencers = &mut self.referencers;
        let mut mark = || {
            // Phase 2: everything unreachable but the kept; the roots into the first frontier,
            // with what the external referencers hold.
            let t = Instant::now();
            let keep = Keep { classes: self.arena.collector_entries(), flags: options.keep_flags };
            let objects = flag_unreachable(runs, keep, &current, parallel, min);
            marker.report_roots(&current, |tracer| referencers.report_all(tracer));
            let (roots, mark_time) = (current.len(), t.elapsed());
            // Phases 3 and 4: reachability, clusters reached whole.
            let t = Instant::now();
            let scanned = reach(&marker, &current, &next, parallel, min);
            (objects, roots, scanned, mark_time, t.elapsed())
        };
        // In parallel, run the phases as one job on the pool: the parallel loops inside then
        // split work through the workers' own deques instead of injecting a job each from
        // outside (which costs a wake-up, and now and then an allocation in rayon's queue).
        let (objects, roots, scanned, mark_time, reach_time) = if parallel { rayon::scope(|_| mark()) } else { mark() };
        (self.stats.objects, self.stats.roots, self.stats.scanned) = (objects, roots, scanned);
        (self.stats.mark_time, self.stats.reach_time) = (mark_time, reach_time);

        self.end_mark();

        // Phase 6.
        if options.full_purge {
            self.purge(None);
        }
        // One slice: the whole collection.
        let slice = self.stats.mark_time + self.stats.reach_time + self.stats.gather_time + self.stats.purge_time;
        (self.stats.mark_slices, self.stats.longest_slice, self.stats.last_slice) = (1, slice, slice);
        self.stats
    }

    /// Phase 5, after a whole mark: the unreachable are gathered; they leave `tick` and
    /// wait for the purge. Clusters nobody reached are dissolved.
    fn end_mark(&mut self) {
        let t = Instant::now();
        let table = self.arena.table();
        self.garbage_references.clear();
        if self.settings.track_garbage_references {
            // A diagnostic, off by default: while the garbage is still in its slots.
            let graph = Graph::new(&self.arena, &self.clusters);
            graph.garbage_after_mark(&mut self.referencers, &mut self.garbage_references);
        }
        let (kept, dissolved) = self.clusters.end_cycle();
        self.stats.clusters_kept = kept;
        self.stats.clusters_dissolved += dissolved;
        self.purge_queue.clear();
        self.purge_cursor = 0;
        // The gather takes every garbage object there is.
        self.garbage.clear();
        gather_unreachable(table, &mut self.purge_queue);
        for &raw in &self.purge_queue {
            let hidden = self.arena.set_lifecycle(raw, Lifecycle::Unreachable);
            debug_assert!(hidden.is_ok(), "gathered from a live or garbage object");
        }
        self.stats.unreachable = self.purge_queue.len();
        self.stats.kept = self.stats.objects - self.stats.unreachable;
        self.stats.gather_time = t.elapsed();
    }

    /// Purges objects found unreachable (phase 6): `begin_destroy` → `finish_destroy` when
    /// ready → drop in place → final free (vacant, or returned to the class's owner). With a budget, it
    /// stops once the budget is spent — overrunning it by at most one object's destruction —
    /// and the next call resumes where it stopped. Objects not ready for `finish_destroy`
    /// wait for a later call.
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace)]
    /// struct Spark { heat: f32 }
    /// impl Object for Spark {}
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..1000 {
    ///     heap.insert(Spark { heat: 1.0 });
    /// }
    /// // Mark now, purge later: a frame at a time, within its budget.
    /// let stats = heap.collect_garbage(CollectOptions::INCREMENTAL);
    /// assert_eq!((stats.unreachable, heap.pending_purge()), (1000, 1000));
    /// while heap.pending_purge() > 0 {
    ///     heap.purge(Some(Duration::from_millis(1)));
    /// }
    /// ```
    pub fn purge(&mut self, budget: Option<Duration>) -> PurgeProgress {
        let start = Instant::now();
        match budget {
            None => self.purge_until(start, || false),
            Some(budget) => self.purge_until(start, || start.elapsed() >= budget),
        }
    }

    /// [`purge`](Self::purge) against your own clock (a frame clock, or a simulated one):
    /// stops once `now()` has advanced by `budget` since the call began.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..100 {
    ///     heap.insert(Spark { heat: 1.0 });
    /// }
    /// heap.collect_garbage(CollectOptions::INCREMENTAL); // 100 to purge
    /// // A simulated clock that moves 1 ms a reading: a 10 ms budget ends 10 objects.
    /// let mut now = Duration::ZERO;
    /// let clock = || {
    ///     now += Duration::from_millis(1);
    ///     now
    /// };
    /// let step = heap.purge_timed(Duration::from_millis(10), clock);
    /// assert_eq!((step.purged, step.remaining), (10, 90));
    /// ```
    pub fn purge_timed(&mut self, budget: Duration, mut now: impl FnMut() -> Duration) -> PurgeProgress {
        let begin = now();
        self.purge_until(Instant::now(), move || now().saturating_sub(begin) >= budget)
    }

    fn purge_until(&mut self, start: Instant, mut spent: impl FnMut() -> bool) -> PurgeProgress {
        self.purger.reclaim(&mut self.arena);
        let mut purged = 0;
        'step: {
            while self.purge_cursor < self.purge_queue.len() {
                let raw = self.purge_queue[self.purge_cursor];
                if let Some(&ahead) = self.purge_queue.get(self.purge_cursor + PURGE_AHEAD) {
                    // Objects spread over the table (a collection's finds among survivors):
                    // start loading the slot and the cell an end a few places on will read,
                    // as this one's wait. Objects close together in the table (a run of
                    // garbage) the processor's own prefetcher brings in.
                    if ahead.index().abs_diff(raw.index()) > 4 * PURGE_AHEAD as u32 {
                        self.arena.table().prefetch(ahead.index());
                    }
                }
                self.purge_cursor += 1;
                let Ok(slot) = self.arena.table().resolve_live(raw) else { continue }; // ended by hand
                if slot.flags().lifecycle() == Lifecycle::Live {
                    continue; // brought back by hand
                }
                if self.end_life(raw, Ended::Collected) == Ending::Ended {
                    purged += 1;
                }
                if spent() {
                    break 'step;
                }
            }
            let mut i = 0;
            while i < self.waiting.len() {
                match self.finish_waiting(self.waiting[i]) {
                    None => i += 1,
                    Some(ended) => {
                        self.waiting.swap_remove(i);
                        purged += usize::from(ended);
                        if spent() {
                            break 'step;
                        }
                    }
                }
            }
        }
        if self.purge_cursor == self.purge_queue.len() {
            self.purge_queue.clear();
            self.purge_cursor = 0;
        }
        self.purger.hand_over(&mut self.arena);
        let elapsed = start.elapsed();
        self.stats.purged += purged;
        self.stats.purge_time += elapsed;
        PurgeProgress { purged, remaining: self.pending_purge(), elapsed }
    }
}

/// How many objects ahead of the one it ends a purge starts loading an object's slot and
/// cell.
const PURGE_AHEAD: usize = 8;

/// Phase 2 for one run of slots starting at index `first`: flags every object unreachable
/// except the kept, and pushes the roots. Returns the objects considered.
///
/// The run is one class's slab, or a piece of one (the permanent pool's run mixes classes,
/// but its objects are all kept by their `PERMANENT` flag before their class is asked), so
/// whether its objects are owned is one question per run.
fn flag_run(first: u32, slots: &[Slot], keep: Keep<'_>, roots: &Frontier<'_>) -> usize {
    let owned = slots.first().is_some_and(|s| keep.owned(s.class()));
    let keep = keep.flags;
    let mut buf = [0u32; 256];
    let (mut len, mut objects) = (0, 0);
    for (k, slot) in slots.iter().enumerate() {
        let flags = slot.flags();
        let state = flags.lifecycle();
        if state > Lifecycle::Garbage {
            // Nothing there, or already on its way out. (An `Unreachable` object the last
            // purge left standing was revived before this phase.)
            continue;
        }
        let garbage = state == Lifecycle::Garbage;
        objects += 1;
        let base = flags - ObjectFlags::MAYBE_UNREACHABLE;
        let rooted = flags.contains(ObjectFlags::ROOT_SET) || slot.root_count() > 0;
        let (new, root) = if rooted || flags.intersects(UNTRACED_KEEP) {
            // Kept. Garbage keeps nothing alive, and permanent or pooled objects are not
            // scanned (UE's disregard-for-GC), so only plain roots are traced.
            (base, !garbage && !flags.intersects(UNTRACED_KEEP))
        } else if !garbage && (owned || flags.intersects(keep)) {
            // Kept and traced: a keep flag, or a class whose objects live until destroyed.
            (base, true)
        } else {
            (base | ObjectFlags::MAYBE_UNREACHABLE, false)
        };
        if new != flags {
            // The mark gives each slot to one task and nothing else writes flags while the
            // collector holds the arena, so a plain store is enough.
            slot.overwrite_flags(new);
        }
        if root {
            buf[len] = first + k as u32;
            len += 1;
            if len == buf.len() {
                roots.push(&buf);
                len = 0;
            }
        }
    }
    roots.push(&buf[..len]);
    objects
}

/// Phase 2 over every run of set-up slots (a slab's worth each), split across rayon's
/// threads in pieces of at least `min` slots when `parallel`.
fn flag_unreachable(
    runs: &[(u32, &[Slot])],
    keep: Keep<'_>,
    roots: &Frontier<'_>,
    parallel: bool,
    min: usize,
) -> usize {
    let flag = |&(first, run): &(u32, &[Slot])| flag_run(first, run, keep, roots);
    if !parallel {
        return runs.iter().map(flag).sum();
    }
    let step = min.max(1024);
    let per_task = step.div_ceil(runs.first().map_or(1, |(_, r)| r.len().max(1)));
    runs.par_iter()
        .with_min_len(per_task)
        .map(|&(first, run)| {
            run.chunks(step)
                .enumerate()
                .map(|(i, piece)| flag_run(first + (i * step) as u32, piece, keep, roots))
                .sum::<usize>()
        })
        .sum()
}

/// A frontier's buffer for a table of `slots` slots: grown to exactly that (it never
/// shrinks), so the two cost 8 bytes per slot and no more — from a bump arena they took up
/// to half as much again, its chunks doubling past the request.
///
/// The entries written so far are kept (an incremental mark's frontier lives between its
/// slices). The new buffer comes zeroed from the allocator, which for a large one means
/// fresh pages the OS zero-fills as they are first written, not a fill loop: the first
/// collection of a million-object heap would otherwise write 8 MB of zeros in one go
/// (about 5 ms, all of it in an incremental mark's first slice).
fn sized(buffer: &mut Vec<AtomicU32>, slots: usize) -> &[AtomicU32] {
    if buffer.len() < slots {
        let mut grown = zeroed_atomics(slots);
        for (new, old) in grown.iter_mut().zip(buffer.iter()) {
            *new.get_mut() = old.load(Ordering::Relaxed);
        }
        *buffer = grown;
    }
    &buffer[..slots]
}

/// `n` atomics, all zero, in zeroed memory from the allocator.
fn zeroed_atomics(n: usize) -> Vec<AtomicU32> {
    let mut zeros = std::mem::ManuallyDrop::new(vec![0u32; n]);
    let (ptr, len, capacity) = (zeros.as_mut_ptr(), zeros.len(), zeros.capacity());
    // SAFETY: `AtomicU32` has the same size, alignment and bit validity as `u32` (its
    // documented representation), so the allocation, made for `capacity` `u32`s, is one
    // for `capacity` `AtomicU32`s, and its `len` initialised `u32`s are valid atomics; the
    // `ManuallyDrop` hands its ownership over whole.
    unsafe { Vec::from_raw_parts(ptr.cast::<AtomicU32>(), len, capacity) }
}

/// Phases 3 and 4: rounds of tracing until no frontier is left. Returns the objects traced.
fn reach(marker: &Marker<'_>, first: &Frontier<'_>, second: &Frontier<'_>, parallel: bool, min: usize) -> usize {
    let (mut current, mut next) = (first, second);
    let mut scanned = 0;
    while current.len() > 0 {
        let seeds = current.entries();
        scanned += if parallel && seeds.len() > 1 {
            let tasks = rayon::current_num_threads() * 4;
            let chunk = seeds.len().div_ceil(tasks);
            seeds.par_chunks(chunk).map(|run| marker.drain(run, next, min)).sum::<usize>()
        } else if parallel {
            marker.drain(seeds, next, min)
        } else {
            marker.drain(seeds, next, usize::MAX)
        };
        current.clear();
        std::mem::swap(&mut current, &mut next);
    }
    scanned
}

/// Phase 5: every object the mark did not reach (and not already being destroyed).
fn gather_unreachable(table: &ObjectTable, out: &mut Vec<RawHandle>) {
    for (first, run) in table.runs() {
        for (k, slot) in run.iter().enumerate() {
            let flags = slot.flags();
            // White, and `Live` or `Garbage` (phase 2 leaves no other state white).
            if flags.contains(ObjectFlags::MAYBE_UNREACHABLE)
                && matches!(flags.lifecycle(), Lifecycle::Live | Lifecycle::Garbage)
            {
                out.push(raw_at(first + k as u32, slot));
            }
        }
    }
}

/// The handle of the live object in slot `index`.
#[inline]
fn raw_at(index: u32, slot: &Slot) -> RawHandle {
    let generation = NonZeroU32::new(slot.generation()).expect("live slots have a generation");
    RawHandle::new(index, generation)
}

/// Drops the `T` at `cell`: a class's destructor, type-erased for the purge thread.
///
/// # Safety
/// `cell` holds an initialised `T` that nothing else reaches or drops.
unsafe fn drop_erased<T>(cell: *mut u8) {
    // SAFETY: the caller's.
    unsafe { std::ptr::drop_in_place(cell.cast::<T>()) }
}
