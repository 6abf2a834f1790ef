//! The World's lifecycle listeners (UE's `FUObjectCreateListener` and
//! `FUObjectDeleteListener`): closures told of every object of a class that begins or
//! ends, so a spatial hash or a network-id map follows the world without owning its pools'
//! returned cells.
//!
//! ```text
//!   spawn listeners   World (here): by class, told after `init` and `Poolable::on_spawn`
//!   destroy listeners the arena's class entries (`Arena::add_end_listener`): told by the
//!                     World's `destroy` before the policy runs (`Arena::notify_end`), or
//!                     by the arena's release for every other end (the collector's purge,
//!                     `destroy_now`, …); once per object
//! ```
//!
//! Without listeners, a spawn and a destroy each test one `bool`-like length and go on.

use std::any::{Any, TypeId};
use std::fmt;

use respawn_arena::{EndListenerId, Handle, RawHandle};
use respawn_gc::Heap;

/// Names a listener added by [`World::on_spawn`](crate::World::on_spawn) or
/// [`World::on_destroy`](crate::World::on_destroy), to remove it with
/// [`World::remove_listener`](crate::World::remove_listener).
///
/// ```
/// use respawn::{ListenerId, Object, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Ship { hull: u32 }
///
/// let mut world = World::new();
/// let ids: [ListenerId; 2] = [world.on_spawn(|_, _: &Ship| {}), world.on_destroy(|_, _: &Ship| {})];
/// assert_ne!(ids[0], ids[1]);
/// assert!(ids.into_iter().all(|id| world.remove_listener(id)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListenerId(Kind);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    /// A spawn listener: its number in the World (never reused).
    Spawn(u64),
    /// A destroy listener, kept by the arena.
    Destroy(EndListenerId),
}

impl ListenerId {
    pub(crate) fn destroy(id: EndListenerId) -> Self {
        Self(Kind::Destroy(id))
    }

    /// The arena's id, for a destroy listener.
    pub(crate) fn as_destroy(self) -> Option<EndListenerId> {
        match self.0 {
            Kind::Destroy(id) => Some(id),
            Kind::Spawn(_) => None,
        }
    }
}

/// A spawn listener with its class erased: called with the handle and the object (a `T`,
/// downcast by the wrapper [`Listeners::add_spawn`] makes).
type ErasedSpawn = Box<dyn FnMut(RawHandle, &dyn Any) + Send>;

/// One class's spawn listeners, in the order they were added.
struct SpawnClass {
    type_id: TypeId,
    list: Vec<(u64, ErasedSpawn)>,
}

/// The World's side of the listeners: spawn listeners by class, and the count of the
/// destroy listeners it added to the arena.
#[derive(Default)]
pub(crate) struct Listeners {
    /// Classes with spawn listeners; a class leaves when its last listener does, so
    /// `spawn.is_empty()` is the spawn's one test.
    spawn: Vec<SpawnClass>,
    next: u64,
    /// Destroy listeners the World added and has not removed: while it is zero,
    /// `World::destroy` takes the pools' path directly.
    destroys: usize,
    /// Scratch for the destroy's walk down the object's sub-objects (kept for its capacity).
    pub(crate) walk: Vec<RawHandle>,
}

impl fmt::Debug for Listeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spawn: usize = self.spawn.iter().map(|c| c.list.len()).sum();
        f.debug_struct("Listeners").field("spawn", &spawn).field("destroy", &self.destroys).finish()
    }
}

impl Listeners {
    /// Whether a spawn must tell anyone (of any class).
    #[inline(always)]
    pub(crate) fn spawning(&self) -> bool {
        !self.spawn.is_empty()
    }

    /// Whether a destroy must tell anyone first (of any class: sub-objects may be of
    /// another).
    #[inline(always)]
    pub(crate) fn destroying(&self) -> bool {
        self.destroys > 0
    }

    pub(crate) fn add_spawn<T: 'static>(
        &mut self,
        mut listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> ListenerId {
        let n = self.next;
        self.next += 1;
        let erased: ErasedSpawn = Box::new(move |raw, object| {
            // The class's own listeners are called with its own objects only (`spawned`).
            if let Some(object) = object.downcast_ref::<T>() {
                listener(Handle::from_raw(raw), object);
            }
        });
        let type_id = TypeId::of::<T>();
        match self.spawn.iter_mut().find(|c| c.type_id == type_id) {
            Some(class) => class.list.push((n, erased)),
            None => self.spawn.push(SpawnClass { type_id, list: vec![(n, erased)] }),
        }
        ListenerId(Kind::Spawn(n))
    }

    pub(crate) fn added_destroy(&mut self) {
        self.destroys += 1;
    }

    pub(crate) fn removed_destroy(&mut self) {
        self.destroys -= 1;
    }

    /// Removes a spawn listener; `false` if it is not one, or was removed already.
    pub(crate) fn remove_spawn(&mut self, id: ListenerId) -> bool {
        let Kind::Spawn(n) = id.0 else { return false };
        let Some(at) = self.spawn.iter().position(|c| c.list.iter().any(|(m, _)| *m == n)) else { return false };
        let class = &mut self.spawn[at];
        class.list.retain(|(m, _)| *m != n);
        if class.list.is_empty() {
            self.spawn.swap_remove(at);
        }
        true
    }

    /// Tells the spawn listeners of the class `type_id` that `object` (named by `raw`, of
    /// that class) was spawned: a composite's parts, whose types the World knows only by
    /// their ids.
    pub(crate) fn spawned_any(&mut self, type_id: TypeId, raw: RawHandle, object: &dyn Any) {
        if let Some(class) = self.spawn.iter_mut().find(|c| c.type_id == type_id) {
            for (_, listener) in &mut class.list {
                listener(raw, object);
            }
        }
    }

    /// Tells `T`'s spawn listeners that `object` (named by `h`) was spawned.
    pub(crate) fn spawned<T: 'static>(&mut self, h: Handle<T>, object: &T) {
        let type_id = TypeId::of::<T>();
        if let Some(class) = self.spawn.iter_mut().find(|c| c.type_id == type_id) {
            for (_, listener) in &mut class.list {
                listener(h.raw(), object);
            }
        }
    }
}

/// The first half of a destroy in a world with destroy listeners: checks what the destroy
/// checks — `h` resolves as a `T`, and it and its sub-objects may end (one walk,
/// [`Heap::subtree`]) — then tells each object's listeners, sub-objects first. Leaves the
/// walk in `listeners.walk` (empty when the destroy will be refused, so nobody was told).
pub(crate) fn notify_ends<T: 'static>(listeners: &mut Listeners, heap: &mut Heap, h: Handle<T>) {
    let mut walk = std::mem::take(&mut listeners.walk);
    walk.clear();
    if heap.get(h).is_some() {
        if let Ok(subtree) = heap.subtree(h.raw()) {
            walk.extend_from_slice(subtree.objects());
        }
    }
    for &raw in walk.iter().rev() {
        let notified = heap.notify_end(raw);
        debug_assert!(notified.is_ok(), "walked and checked under the same borrow");
    }
    listeners.walk = walk;
}
