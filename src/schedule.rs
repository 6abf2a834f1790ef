//! Tick control (UE's `FTickFunction`): tick functions registered per class, run in
//! declared groups, every frame, every N frames or in a budgeted round-robin.
//!
//! ```text
//!  TickSchedule: tick functions sorted by group, then by registration
//!   PrePhysics      [Input every frame] [Ai budget 500, every 2]
//!   DuringPhysics   [Ship every frame]
//!   PostPhysics     [Debris every 4, offset 1]
//!   PostUpdateWork  …
//!  run_ticks(): each group in order; each function whose frame is due runs once a frame
//!   (frame % every == offset), over its class's awake objects — all of them, or at most
//!   `budget` from where its cursor stopped
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use respawn_arena::{Handle, TickCursor};
use respawn_gc::Heap;
use respawn_pool::PoolError;

use crate::World;

/// When, within a frame, a tick function runs: the world runs the groups in this order
/// (UE's tick groups), and a group's functions in the order they were added. A game that
/// steps its physics between groups runs them one at a time
/// ([`World::run_tick_group`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TickGroup {
    /// Before the physics step: input, AI decisions, forces.
    PrePhysics,
    /// Beside the physics step, on objects it does not touch (the default, as in UE).
    #[default]
    DuringPhysics,
    /// After the physics step: what reads its results (cameras, hit reactions).
    PostPhysics,
    /// Last: work that needs every other tick done (UI, bookkeeping).
    PostUpdateWork,
}

impl TickGroup {
    /// Every group, in the order the world runs them.
    pub const ALL: [TickGroup; 4] =
        [TickGroup::PrePhysics, TickGroup::DuringPhysics, TickGroup::PostPhysics, TickGroup::PostUpdateWork];
}

/// What a tick function is told each time it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickContext {
    /// The frame in progress ([`World::frame`]).
    pub frame: u64,
    /// The time since this tick function last ran: the lengths of the frames ended since
    /// ([`World::end_frame`] measures them), so `every(4)` is told four frames' worth. On
    /// its first run, the last frame's length (zero in the first frame). A round-robin's
    /// objects were each ticked about a cycle ago, not `dt` ago.
    pub dt: Duration,
    /// For a round-robin ([`TickFunction::budget`]), the cycle this run belongs to: cycle
    /// `c` is the `c`-th pass over the class (from 0), which ticks each object once, and
    /// every run's objects belong to one cycle. 0 for a function without a budget.
    pub cycle: u64,
}

/// The name [`World::add_tick`] gives a tick function, to remove it with
/// [`World::remove_tick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TickId(u64);

/// A tick function not added: [`World::add_tick`]'s error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TickError {
    /// `every(0)`: a function must run every frame or less often.
    ZeroInterval,
    /// The offset is not below the interval, so no frame is due.
    OffsetBeyondInterval {
        /// The interval, in frames.
        every: u32,
        /// The offset asked for.
        offset: u32,
    },
    /// `budget(0)`: a round-robin must tick at least one object a run.
    ZeroBudget,
}

impl fmt::Display for TickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroInterval => write!(f, "a tick function's interval is 0 frames; use every(1) or more"),
            Self::OffsetBeyondInterval { every, offset } => write!(
                f,
                "a tick function's offset {offset} is not below its interval of {every} frames; use an offset in 0..{every}"
            ),
            Self::ZeroBudget => write!(f, "a tick function's budget is 0 objects; use budget(1) or more"),
        }
    }
}

impl std::error::Error for TickError {}

/// A tick function run over its class's objects: `(heap, the round-robin's cursor and budget
/// if it has one, context)`.
type Run = Box<dyn FnMut(&mut Heap, Option<(&mut TickCursor, usize)>, &TickContext) + Send>;

/// A class's tick function and when it runs, for [`World::add_tick`]: every frame in
/// [`TickGroup::DuringPhysics`] unless told otherwise.
///
/// - [`group`](Self::group): where in the frame it runs;
/// - [`every`](Self::every) and [`offset`](Self::offset): on which frames (frame
///   `f` is due when `f % every == offset`), to spread classes over frames;
/// - [`budget`](Self::budget): at most that many objects a run, in a round-robin that goes
///   on where the last run stopped ([`Arena::tick_budgeted`](respawn_arena::Arena::tick_budgeted)
///   states the guarantee), so each object is ticked once every `ceil(awake / budget)` runs.
///
/// Dormant objects ([`World::set_dormant`]) are skipped by all of them, and count against
/// no budget.
///
/// ```
/// use respawn::{TickFunction, TickGroup};
///
/// struct Crowd { mood: f32 }
///
/// // 500 of the crowd a run, every other frame, after physics.
/// let think = TickFunction::new(|c: &mut Crowd, _| c.mood *= 0.99)
///     .group(TickGroup::PostPhysics)
///     .every(2)
///     .budget(500);
/// # let _ = think;
/// ```
pub struct TickFunction<T> {
    run: Run,
    group: TickGroup,
    every: u32,
    offset: u32,
    budget: Option<usize>,
    _class: PhantomData<fn(&mut T)>,
}

impl<T> fmt::Debug for TickFunction<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickFunction")
            .field("class", &std::any::type_name::<T>())
            .field("group", &self.group)
            .field("every", &self.every)
            .field("offset", &self.offset)
            .field("budget", &self.budget)
            .finish()
    }
}

impl<T: 'static> TickFunction<T> {
    /// `f` over every awake object of `T`, on this thread, in memory order.
    pub fn new(mut f: impl FnMut(&mut T, &TickContext) + Send + 'static) -> Self {
        Self::with_run(Box::new(move |heap, budgeted, cx| match budgeted {
            None => heap.tick::<T>(|t| f(t, cx)),
            Some((cursor, budget)) => {
                heap.tick_budgeted::<T>(cursor, budget, |t| f(t, cx));
            }
        }))
    }

    fn with_run(run: Run) -> Self {
        Self { run, group: TickGroup::default(), every: 1, offset: 0, budget: None, _class: PhantomData }
    }

    /// Runs in `group` (default [`TickGroup::DuringPhysics`]).
    pub fn group(mut self, group: TickGroup) -> Self {
        self.group = group;
        self
    }

    /// Runs every `frames` frames (default 1), on the frames `f` with
    /// `f % frames == offset`.
    pub fn every(mut self, frames: u32) -> Self {
        self.every = frames;
        self
    }

    /// Which frame of each [`every`](Self::every) interval it runs on (default 0; below the
    /// interval): classes with the same interval and different offsets share out the frames.
    pub fn offset(mut self, frame: u32) -> Self {
        self.offset = frame;
        self
    }

    /// Ticks at most `objects` awake objects a run, in a round-robin over the class.
    pub fn budget(mut self, objects: usize) -> Self {
        self.budget = Some(objects);
        self
    }
}

impl<T: Send + 'static> TickFunction<T> {
    /// `f` over every awake object of `T`, split across rayon's threads by work (as
    /// [`World::par_tick`]). With a [`budget`](Self::budget), the round-robin runs on this
    /// thread.
    pub fn parallel(f: impl Fn(&mut T, &TickContext) + Send + Sync + 'static) -> Self {
        Self::with_run(Box::new(move |heap, budgeted, cx| match budgeted {
            None => heap.par_tick::<T>(|t| f(t, cx)),
            Some((cursor, budget)) => {
                heap.tick_budgeted::<T>(cursor, budget, |t| f(t, cx));
            }
        }))
    }
}

/// One added tick function.
struct Entry {
    id: TickId,
    group: TickGroup,
    every: u32,
    offset: u32,
    budget: Option<usize>,
    cursor: TickCursor,
    /// The frame it last ran in, and the world's clock then.
    last: Option<(u64, Duration)>,
    run: Run,
}

/// The world's tick functions, by group and then in the order they were added, and the
/// clock their `dt` is measured by.
#[derive(Default)]
pub(crate) struct TickSchedule {
    entries: Vec<Entry>,
    next_id: u64,
    /// The lengths of the frames ended so far, summed, up to `Duration::MAX`.
    clock: Duration,
    /// The last frame's length.
    last_dt: Duration,
}

impl fmt::Debug for TickSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickSchedule").field("functions", &self.entries.len()).finish()
    }
}

impl TickSchedule {
    /// A frame of length `dt` ended. The clock stops at `Duration::MAX` rather than
    /// overflow (a caller's simulated clock may hand any length).
    pub(crate) fn end_frame(&mut self, dt: Duration) {
        self.clock = self.clock.saturating_add(dt);
        self.last_dt = dt;
    }

    /// Runs the functions of the groups `run` accepts that are due in `frame` and have not
    /// run in it yet.
    fn run(&mut self, heap: &mut Heap, frame: u64, mut run: impl FnMut(TickGroup) -> bool) {
        for entry in &mut self.entries {
            let due = frame % u64::from(entry.every) == u64::from(entry.offset);
            if !due || !run(entry.group) || entry.last.is_some_and(|(f, _)| f == frame) {
                continue;
            }
            let dt = entry.last.map_or(self.last_dt, |(_, then)| self.clock - then);
            entry.last = Some((frame, self.clock));
            let cx = TickContext { frame, dt, cycle: entry.cursor.cycles() };
            let budgeted = entry.budget.map(|budget| (&mut entry.cursor, budget));
            (entry.run)(heap, budgeted, &cx);
        }
    }
}

impl World {
    /// Makes the object `h` names dormant (`true`) or wakes it (`false`). A dormant object
    /// is skipped by [`tick`](Self::tick), [`par_tick`](Self::par_tick) and every tick
    /// function ([`add_tick`](Self::add_tick)), at the cost of a bit in a word the tick
    /// reads anyway; it is alive in every other way: `get` resolves it, [`iter`](Self::iter)
    /// and [`iter_mut`](Self::iter_mut) visit it, the collector keeps it while it is
    /// reachable. Dormancy ends with the object: its pool's next spawn in the cell, under
    /// every policy, starts awake. The class's count is
    /// [`ArenaClassStats::dormant`](respawn_arena::ArenaClassStats::dormant).
    ///
    /// # Errors
    /// Nothing changes on [`PoolError::Stale`] (the object is gone), or
    /// [`PoolError::Arena`] with [`ArenaError::Hidden`](respawn_arena::ArenaError::Hidden)
    /// (destroyed, its purge pending) or [`ArenaError::Permanent`](respawn_arena::ArenaError::Permanent)
    /// (no tick visits a permanent object).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { shots: u32 }
    /// impl Poolable for Turret {
    ///     fn create() -> Self { Turret { shots: 0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Turret>(PoolConfig::DEFAULT).build()?;
    /// let near = world.spawn::<Turret>();
    /// let far = world.spawn::<Turret>();
    /// world.set_dormant(far, true)?; // out of sight: stop ticking it
    ///
    /// world.tick::<Turret>(|t| t.shots += 1);
    /// assert_eq!((world.get(near).unwrap().shots, world.get(far).unwrap().shots), (1, 0));
    /// assert!(world.is_dormant(far));
    /// assert_eq!(world.heap().stats::<Turret>().unwrap().dormant, 1);
    ///
    /// world.set_dormant(far, false)?; // back in sight
    /// world.tick::<Turret>(|t| t.shots += 1);
    /// assert_eq!(world.get(far).unwrap().shots, 1);
    ///
    /// world.destroy(far)?;
    /// assert!(world.set_dormant(far, true).is_err(), "a destroyed object's handle is stale");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn set_dormant<T>(&mut self, h: Handle<T>, dormant: bool) -> Result<(), PoolError> {
        Ok(self.heap_mut().set_dormant(h.raw(), dormant)?)
    }

    /// Whether `h` resolves to a dormant object (see [`set_dormant`](Self::set_dormant)).
    pub fn is_dormant<T>(&self, h: Handle<T>) -> bool {
        self.heap().is_dormant(h.raw())
    }

    /// Adds a tick function for class `T` (see [`TickFunction`]); [`run_ticks`](Self::run_ticks)
    /// runs it from the current frame on.
    ///
    /// # Errors
    /// [`TickError`] for an interval or a budget of 0, or an offset not below the interval;
    /// nothing is added.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, TickFunction, TickGroup, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { x: f32, vx: f32 }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { x: 0.0, vx: 60.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Debris { spin: u32 }
    /// impl Poolable for Debris {
    ///     fn create() -> Self { Debris { spin: 0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Ship>(PoolConfig::DEFAULT).build()?;
    /// world.add_tick(
    ///     TickFunction::new(|s: &mut Ship, cx| s.x += s.vx * cx.dt.as_secs_f32()).group(TickGroup::PrePhysics),
    /// )?;
    /// world.add_tick(TickFunction::new(|d: &mut Debris, _| d.spin += 1).every(4))?;
    ///
    /// let ship = world.spawn::<Ship>();
    /// let debris = world.spawn::<Debris>();
    /// let still = world.spawn::<Debris>();
    /// world.set_dormant(still, true)?;
    /// for _ in 0..8 {
    ///     world.run_ticks();
    ///     world.end_frame_with(std::time::Duration::from_millis(500));
    /// }
    /// assert_eq!(world.get(debris).unwrap().spin, 2, "frames 0 and 4");
    /// assert_eq!(world.get(still).unwrap().spin, 0, "dormant");
    /// assert_eq!(world.get(ship).unwrap().x, 7.0 * 0.5 * 60.0, "frame 0 had no time yet");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_tick<T: 'static>(&mut self, function: TickFunction<T>) -> Result<TickId, TickError> {
        let TickFunction { run, group, every, offset, budget, .. } = function;
        if every == 0 {
            return Err(TickError::ZeroInterval);
        }
        if offset >= every {
            return Err(TickError::OffsetBeyondInterval { every, offset });
        }
        if budget == Some(0) {
            return Err(TickError::ZeroBudget);
        }
        let ticks = &mut self.ticks;
        let id = TickId(ticks.next_id);
        ticks.next_id += 1;
        // After the group's last function: a group runs in the order functions were added.
        let at = ticks.entries.partition_point(|e| e.group <= group);
        let entry = Entry { id, group, every, offset, budget, cursor: TickCursor::new(), last: None, run };
        ticks.entries.insert(at, entry);
        Ok(id)
    }

    /// Removes a tick function; `false` if `id` names none (removed already).
    pub fn remove_tick(&mut self, id: TickId) -> bool {
        let before = self.ticks.entries.len();
        self.ticks.entries.retain(|e| e.id != id);
        self.ticks.entries.len() != before
    }

    /// Runs the tick functions due this frame: group by group in [`TickGroup`] order, and
    /// within a group in the order they were added. Each function runs at most once a
    /// frame, so a game that ran a group already ([`run_tick_group`](Self::run_tick_group))
    /// runs the rest with this. Call it once a frame, before [`end_frame`](Self::end_frame).
    pub fn run_ticks(&mut self) {
        self.run_ticks_where(|_| true);
    }

    /// Runs the tick functions of `group` due this frame, in the order they were added
    /// (each at most once a frame): for a game that steps its physics between
    /// [`TickGroup::PrePhysics`] and [`TickGroup::PostPhysics`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn::{Object, TickFunction, TickGroup, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Body { y: f32 }
    ///
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let mut world = World::new();
    /// world.insert(Body { y: 0.0 });
    /// for (group, name) in [(TickGroup::PostPhysics, "post"), (TickGroup::PrePhysics, "pre")] {
    ///     let log = Arc::clone(&log);
    ///     world.add_tick(TickFunction::new(move |_: &mut Body, _| log.lock().unwrap().push(name)).group(group))?;
    /// }
    ///
    /// world.run_tick_group(TickGroup::PrePhysics);
    /// log.lock().unwrap().push("physics");
    /// world.run_ticks(); // the rest: PostPhysics
    /// assert_eq!(*log.lock().unwrap(), ["pre", "physics", "post"]);
    /// # Ok::<(), respawn::TickError>(())
    /// ```
    pub fn run_tick_group(&mut self, group: TickGroup) {
        self.run_ticks_where(|g| g == group);
    }

    fn run_ticks_where(&mut self, run: impl FnMut(TickGroup) -> bool) {
        let frame = self.frame();
        // Out of the world while it runs, so the functions can borrow the heap.
        let mut ticks = std::mem::take(&mut self.ticks);
        let heap = self.heap_mut();
        let ran = panic::catch_unwind(AssertUnwindSafe(|| ticks.run(heap, frame, run)));
        self.ticks = ticks;
        if let Err(panic) = ran {
            panic::resume_unwind(panic);
        }
    }
}
