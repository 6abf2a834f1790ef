//! The world's collector calls beyond a whole collection: its settings at run time, the
//! incremental mark in slices, how long a class's objects live, and a tick in shares. Each is the
//! heap's own call ([`Heap`](respawn_gc::Heap)), and the pools take what a collection
//! ended once it ends, as after [`World::collect_garbage`].

use std::time::Duration;

use respawn_arena::{ArenaError, TickCursor};
use respawn_gc::{CollectOptions, GcError, GcSettings, GcStats, Lifetime, MarkStep, Object};

use super::World;

impl World {
    /// Replaces the collector's settings (what the builder's [`gc`](super::WorldBuilder::gc)
    /// set): the interval between timed collections, the purge budget, the threads… from the
    /// next collection on. `async_purge` applies to the classes registered from now on.
    ///
    /// # Errors
    /// [`GcError::BadSettings`]; the old settings stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::{GcSettings, World};
    ///
    /// let mut world = World::new();
    /// // A loading screen: no timed collection until the level is in.
    /// let playing = *world.heap().settings();
    /// world.set_gc_settings(GcSettings { time_between_collections: None, ..playing })?;
    /// // … load …
    /// world.set_gc_settings(playing)?;
    /// assert_eq!(world.heap().settings().time_between_collections, playing.time_between_collections);
    /// # Ok::<(), respawn::GcError>(())
    /// ```
    pub fn set_gc_settings(&mut self, settings: GcSettings) -> Result<(), GcError> {
        self.heap_mut().set_settings(settings)
    }

    /// Starts an incremental collection now (UE's incremental reachability analysis): the
    /// mark then runs in slices of [`mark_slice`](Self::mark_slice), between frames, while
    /// the game goes on changing handles (a write barrier keeps the mark right), and the
    /// slice that ends it purges as `options` say. `false` if one is already running. (With
    /// [`GcSettings::incremental_mark_budget`] set, the timed collections of
    /// [`end_frame`](Self::end_frame) mark in slices on their own.) A whole collection
    /// ([`collect_garbage`](Self::collect_garbage)) drops a running mark and decides from
    /// scratch.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::{CollectOptions, MarkStep, Object, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut world = World::builder().collected::<Spark>().build()?;
    /// let kept = world.insert(Spark { heat: 1.0 });
    /// let _root = world.root(kept)?;
    /// let lost = world.insert(Spark { heat: 2.0 });
    ///
    /// assert!(world.start_incremental_collection(CollectOptions::FULL));
    /// let stats = loop {
    ///     // One slice per frame, 100 µs each.
    ///     if let MarkStep::Done(stats) = world.mark_slice(Duration::from_micros(100)) {
    ///         break stats;
    ///     }
    /// };
    /// assert!(world.contains(kept) && !world.contains(lost));
    /// assert_eq!(stats.purged, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_incremental_collection(&mut self, options: CollectOptions) -> bool {
        self.heap_mut().start_incremental_collection(options)
    }

    /// Whether an incremental mark is running (started and not finished).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// let mut world = World::new();
    /// assert!(!world.is_marking());
    /// assert!(world.start_incremental_collection(CollectOptions::FULL));
    /// assert!(world.is_marking());
    /// world.finish_mark();
    /// assert!(!world.is_marking());
    /// ```
    pub fn is_marking(&self) -> bool {
        self.pools.heap().is_marking()
    }

    /// Runs one slice of the incremental mark, for about `budget`; the slice that ends it
    /// returns [`MarkStep::Done`], and the pools then take the objects it ended. See
    /// [`start_incremental_collection`](Self::start_incremental_collection) and
    /// [`Heap::mark_slice`](respawn_gc::Heap::mark_slice).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::prelude::*;
    /// use respawn::MarkStep;
    ///
    /// #[derive(Trace, Object)]
    /// struct Mote { age: u32 }
    ///
    /// let mut world = World::builder().collected::<Mote>().build()?;
    /// let kept = world.insert(Mote { age: 0 });
    /// world.add_to_root(kept)?;
    /// for age in 1..=1000 {
    ///     world.insert(Mote { age });
    /// }
    /// assert_eq!(world.mark_slice(Duration::from_micros(50)), MarkStep::Idle, "no mark running");
    ///
    /// world.start_incremental_collection(CollectOptions::FULL);
    /// let stats = loop {
    ///     // One slice a frame; the game runs between them.
    ///     if let MarkStep::Done(stats) = world.mark_slice(Duration::from_micros(50)) {
    ///         break stats;
    ///     }
    /// };
    /// assert_eq!(stats.purged, 1000);
    /// assert_eq!(world.len::<Mote>(), 1);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn mark_slice(&mut self, budget: Duration) -> MarkStep {
        let step = self.heap_mut().mark_slice(budget);
        self.marked(step)
    }

    /// [`mark_slice`](Self::mark_slice) against your own clock (a frame clock, or a
    /// simulated one): see [`Heap::mark_slice_timed`](respawn_gc::Heap::mark_slice_timed).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::{CollectOptions, MarkStep, World};
    ///
    /// let mut world = World::new();
    /// world.start_incremental_collection(CollectOptions::FULL);
    /// // A clock that advances a microsecond a reading: slices of a few objects each.
    /// let mut now = Duration::ZERO;
    /// let mut clock = || { now += Duration::from_micros(1); now };
    /// while !matches!(world.mark_slice_timed(Duration::from_micros(4), &mut clock), MarkStep::Done(_)) {}
    /// assert!(!world.is_marking());
    /// ```
    pub fn mark_slice_timed(&mut self, budget: Duration, now: impl FnMut() -> Duration) -> MarkStep {
        let step = self.heap_mut().mark_slice_timed(budget, now);
        self.marked(step)
    }

    /// Runs the rest of the incremental mark in one slice, to its end (a level change that
    /// cannot wait). `None` if no incremental mark is running.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut world = World::builder().collected::<Spark>().build()?;
    /// let lost = world.insert(Spark { heat: 1.0 });
    /// assert!(world.finish_mark().is_none(), "no mark running");
    ///
    /// world.start_incremental_collection(CollectOptions::FULL);
    /// // The level changes: the rest of the mark, now.
    /// let stats = world.finish_mark().expect("a mark was running");
    /// assert_eq!(stats.purged, 1);
    /// assert!(!world.contains(lost) && !world.is_marking());
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn finish_mark(&mut self) -> Option<GcStats> {
        let stats = self.heap_mut().finish_mark()?;
        self.pools.maintain();
        Some(stats)
    }

    /// After a slice: once the mark ended, the pools take what it ended.
    fn marked(&mut self, step: MarkStep) -> MarkStep {
        if matches!(step, MarkStep::Done(_)) {
            self.pools.maintain();
        }
        step
    }

    /// Sets how long `T`'s objects live from the next collection on: [`Lifetime::Owned`]
    /// (kept until destroyed) or [`Lifetime::Collected`] (kept while something reaches
    /// them), as the builder's [`collected`](super::WorldBuilder::collected) declares it at
    /// build. A mark already under way keeps the rule it began with for the objects it
    /// flagged already.
    ///
    /// # Errors
    /// [`ArenaError`] if `T` cannot be registered (its memory cannot be reserved).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Lifetime, Object, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Decal { alpha: f32 }
    ///
    /// let mut world = World::new();
    /// let decal = world.insert(Decal { alpha: 1.0 });
    /// world.collect_garbage();
    /// assert!(world.contains(decal), "owned by default: kept until destroyed");
    ///
    /// // Past the level's start, decals nothing refers to may go.
    /// world.set_lifetime::<Decal>(Lifetime::Collected)?;
    /// world.collect_garbage();
    /// assert!(!world.contains(decal));
    /// # Ok::<(), respawn::ArenaError>(())
    /// ```
    pub fn set_lifetime<T: Object>(&mut self, lifetime: Lifetime) -> Result<(), ArenaError> {
        self.heap_mut().set_lifetime::<T>(lifetime)
    }

    /// Ticks at most `budget` awake objects of `T`, from where `cursor` stopped, and
    /// returns how many it ticked: a class too big to tick whole every frame (AI that
    /// thinks every few frames) ticks a share a frame. See
    /// [`Arena::tick_budgeted`](respawn_arena::Arena::tick_budgeted).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, TickCursor, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Brain { thoughts: u32 }
    ///
    /// let mut world = World::new();
    /// for _ in 0..10 {
    ///     world.insert(Brain { thoughts: 0 });
    /// }
    /// let mut cursor = TickCursor::default();
    /// // Four brains a frame: after three frames every one has thought once or more.
    /// for _ in 0..3 {
    ///     world.tick_budgeted(&mut cursor, 4, |b: &mut Brain| b.thoughts += 1);
    /// }
    /// assert!(world.iter::<Brain>().all(|(_, b)| b.thoughts >= 1));
    /// ```
    pub fn tick_budgeted<T: 'static>(
        &mut self,
        cursor: &mut TickCursor,
        budget: usize,
        f: impl FnMut(&mut T),
    ) -> usize {
        self.heap_mut().tick_budgeted(cursor, budget, f)
    }
}
