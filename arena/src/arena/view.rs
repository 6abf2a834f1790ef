//! Ticks that read the rest of the arena: while one class's objects are lent mutably to the
//! tick, every other class is open to reads through a [`View`] (a homing missile reads its
//! target's position; a turret scans the enemies in range) — no copy of positions into a
//! side table each frame.
//!
//! The split is by class: the tick holds the one class's cells, the view every other
//! class's, so no object is ever lent both ways. The view refuses handles of the ticking
//! class ([`View::try_get`] says so), and reads nothing the tick can change.

use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::marker::PhantomData;

use respawn_allocator::ClassId;

use super::{locate_typed, visit_words, Arena, Iter, LiveCells, SharedBases, TypeIdHasher};
use crate::class::ClassEntry;
use crate::table::ObjectTable;
use crate::{ArenaError, Handle};

/// A read-only view of every class of an arena but the one being ticked, lent to the
/// closure of [`Arena::tick_reading`] (and the heap's and the world's): objects of the
/// other classes by handle, or one class's in memory order. Handles of the ticking class
/// resolve to nothing here — their objects are the tick's — and [`try_get`](Self::try_get)
/// tells that case apart with [`ArenaError::Ticking`].
///
/// # Examples
///
/// ```
/// use respawn_arena::{Arena, Handle};
///
/// struct Target { x: f32 }
/// struct Missile { target: Handle<Target>, x: f32 }
///
/// let mut arena = Arena::new();
/// let target = arena.insert(Target { x: 10.0 });
/// let missile = arena.insert(Missile { target, x: 0.0 });
/// // Each missile steers toward its target, read from the view while missiles tick.
/// arena.tick_reading::<Missile>(|m, rest| {
///     if let Some(t) = rest.get(m.target) {
///         m.x += (t.x - m.x) * 0.5;
///     }
/// });
/// assert_eq!(arena.get(missile).unwrap().x, 5.0);
/// ```
pub struct View<'a> {
    table: &'a ObjectTable,
    classes: &'a [ClassEntry],
    by_type: &'a HashMap<TypeId, ClassId, BuildHasherDefault<TypeIdHasher>>,
    ticking: ClassId,
}

// SAFETY: a view reads the table's slots (atomics), the classes' geometry, type ids and
// live bitmaps, which nothing changes while the tick holds the arena, and the objects of
// classes other than the ticking one, which are `Send + Sync` (the bound of every way into
// an arena). It never touches a class's returned cells, listeners or lists, the parts of an
// entry that are not `Sync`.
unsafe impl Sync for View<'_> {}

impl<'a> View<'a> {
    fn of(arena: &'a Arena, ticking: ClassId) -> Self {
        Self { table: &arena.table, classes: &arena.classes, by_type: &arena.by_type, ticking }
    }

    /// The class being ticked, whose objects the view does not lend.
    pub fn ticking(&self) -> ClassId {
        self.ticking
    }

    /// The object `h` names, if it resolves and is not of the ticking class.
    #[inline]
    pub fn get<U: 'static>(&self, h: Handle<U>) -> Option<&'a U> {
        let (class, _, cell) = locate_typed(self.table, self.classes, h)?;
        // SAFETY: a visible object of class `U` (its type checked by `locate_typed`) that is
        // not the tick's: no `&mut` to it exists while the view does.
        (class != self.ticking.index()).then(|| unsafe { &*cell.cast::<U>().as_ptr() })
    }

    /// [`get`](Self::get), saying why not.
    ///
    /// # Errors
    /// [`ArenaError::Ticking`] for a live object of the ticking class; otherwise as
    /// [`Arena::try_get`]: [`ArenaError::Stale`], [`ArenaError::Hidden`] or
    /// [`ArenaError::WrongClass`].
    pub fn try_get<U: 'static>(&self, h: Handle<U>) -> Result<&'a U, ArenaError> {
        match locate_typed(self.table, self.classes, h) {
            Some((class, ..)) if class == self.ticking.index() => Err(ArenaError::Ticking(type_name::<U>())),
            // SAFETY: as in `get`.
            Some((_, _, cell)) => Ok(unsafe { &*cell.cast::<U>().as_ptr() }),
            None => Err(super::why_not_typed(self.table, self.classes, h)),
        }
    }

    /// Whether `h` resolves to an object the view lends (not one of the ticking class).
    pub fn contains<U: 'static>(&self, h: Handle<U>) -> bool {
        self.get(h).is_some()
    }

    /// Every visible object of class `U` with its handle, in memory order, dormant ones
    /// included (as [`Arena::iter`]); nothing for the ticking class or an unregistered one.
    pub fn iter<U: 'static>(&self) -> Iter<'a, U> {
        let entry = self.lent::<U>();
        Iter { entry, cells: LiveCells::of(entry), _class: PhantomData }
    }

    /// Objects of class `U` (as [`Arena::len`]); 0 for the ticking class.
    pub fn len<U: 'static>(&self) -> usize {
        self.lent::<U>().map_or(0, ClassEntry::len)
    }

    /// Whether the view lends no object of class `U`.
    pub fn is_empty<U: 'static>(&self) -> bool {
        self.len::<U>() == 0
    }

    /// `U`'s class entry, if registered and not the ticking class.
    fn lent<U: 'static>(&self) -> Option<&'a ClassEntry> {
        let id = *self.by_type.get(&TypeId::of::<U>())?;
        (id != self.ticking).then(|| &self.classes[id.index()])
    }
}

impl fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ticking = self.classes.get(self.ticking.index()).map(ClassEntry::name);
        f.debug_struct("View").field("ticking", &ticking).field("classes", &self.classes.len()).finish()
    }
}

impl Arena {
    /// [`tick`](Self::tick), with a read-only [`View`] of every other class: `f` gets each
    /// visible, awake object of class `T` mutably, in memory order, and the view, through
    /// which it reads objects of other classes by handle (a missile its target, a turret
    /// the enemies it scans). Objects of `T` itself are the tick's: the view lends none.
    /// See [`View`] for an example.
    pub fn tick_reading<T: 'static>(&mut self, mut f: impl FnMut(&mut T, &View<'_>)) {
        let Some(id) = self.class_of::<T>() else { return };
        self.classes[id.index()].note_all();
        let arena = &*self;
        let entry = &arena.classes[id.index()];
        let view = View::of(arena, id);
        let (geometry, dormant) = (entry.geometry(), entry.dormancy().words(0, entry.live().len()));
        // SAFETY: `entry` is class `T`'s and `&mut self` makes every object ours; the view
        // lends no object of class `T`, so each `&mut T` is the only reference to its object.
        unsafe { visit_words::<T>(geometry.shift(), geometry.bases(), 0, entry.live(), dormant, &mut |t| f(t, &view)) };
    }

    /// [`tick_reading`](Self::tick_reading) split across rayon's threads by work, as
    /// [`par_tick`](Self::par_tick) splits; every thread reads through the same view.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, Handle};
    ///
    /// struct Beacon { strength: u32 }
    /// struct Probe { beacon: Handle<Beacon>, heard: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let beacon = arena.insert(Beacon { strength: 7 });
    /// for _ in 0..5000 {
    ///     arena.insert(Probe { beacon, heard: 0 });
    /// }
    /// arena.par_tick_reading::<Probe>(|p, rest| p.heard = rest.get(p.beacon).map_or(0, |b| b.strength));
    /// assert!(arena.iter::<Probe>().all(|(_, p)| p.heard == 7));
    /// ```
    pub fn par_tick_reading<T: Send + 'static>(&mut self, f: impl Fn(&mut T, &View<'_>) + Sync + Send) {
        let Some(id) = self.class_of::<T>() else { return };
        self.classes[id.index()].note_all();
        let arena = &*self;
        let entry = &arena.classes[id.index()];
        let view = View::of(arena, id);
        let geometry = entry.geometry();
        let (shift, bases, live) = (geometry.shift(), SharedBases(geometry.bases()), entry.live());
        super::ticks::par_chunks(live, entry.dormancy().words(0, live.len()), |_, first, words, dormant| {
            let bases = &bases;
            // SAFETY: as in `par_tick`: the chunks do not overlap, so each `&mut T` goes to
            // one task; the view lends no object of class `T`.
            unsafe { visit_words::<T>(shift, bases.0, first, words, dormant, &mut |t| f(t, &view)) };
        });
    }
}
