//! Commands recorded while a class ticks and applied to the world when the tick ends
//! (hecs' `CommandBuffer`, bevy's `Commands`): [`World::tick_with`],
//! [`World::par_tick_with`], and a [`CommandBuffer`] filled anywhere and applied by
//! [`World::apply`].
//!
//! ```text
//!  tick_with::<T>(f)                      par_tick_with::<T>(f)
//!  ┌───────────────────────────┐          ┌── chunk 0 ──┐┌── chunk 1 ──┐┌── chunk 2 ──┐  (a slab each,
//!  │ f(h, obj, &mut buffer)    │          │ queue A     ││ queue B     ││ queue A     │   any thread)
//!  │ for each live T, in       │          └─────────────┘└─────────────┘└─────────────┘
//!  │ memory order              │              runs (chunk, start..end) sorted by chunk
//!  └─────────────┬─────────────┘                            │
//!                ▼                                          ▼
//!      apply, in the order recorded  ◄──── the same order as tick_with's, whatever thread ran
//!      (destroy, spawn, set_outer …)        which chunk
//!                │
//!                ▼
//!      Applied { applied, failed } + World::command_failures()
//! ```
//!
//! Nothing here allocates once warm: a buffer's command list and the bump that holds its
//! spawn closures keep their memory between frames (the world keeps its buffers), and the
//! failure list, the per-thread queues and the merge order are kept by the world too.

use std::error::Error;
use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};

use bumpalo::Bump;
use respawn_arena::{Handle, RawHandle};
use respawn_pool::{PoolError, Poolable};

use crate::World;

/// Commands for the world, recorded now and applied later, in the order recorded: by
/// [`World::tick_with`] and [`World::par_tick_with`] when their tick ends, or by
/// [`World::apply`] for a buffer filled anywhere else.
///
/// A command returns nothing: a spawned object has no handle until the command is applied
/// (to learn it then, add a spawn listener with [`World::on_spawn`]). A command that fails
/// when it is applied — a stale handle, a second destroy of one object, a wrong class, a
/// rooted object — changes nothing, and is counted in [`Applied::failed`] and listed by
/// [`World::command_failures`].
///
/// Recording allocates nothing once the buffer is warm: the command list keeps its
/// capacity, and spawn commands' init closures are moved into the buffer's own bump arena,
/// reset when the buffer is emptied. Applying empties the buffer; dropping or
/// [`clear`](Self::clear)ing it drops the closures of commands never applied.
///
/// ```
/// use respawn::{CommandBuffer, Object, PoolConfig, Poolable, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Crate { loot: u32 }
/// impl Poolable for Crate {
///     fn create() -> Self { Crate { loot: 0 } }
/// }
///
/// let mut world = World::builder().pool::<Crate>(PoolConfig::ON_DEMAND).build()?;
/// let old = world.spawn::<Crate>();
///
/// let mut commands = CommandBuffer::new();
/// commands.destroy(old);
/// commands.spawn_with(|c: &mut Crate| c.loot = 50);
/// commands.destroy(old); // a second destroy of the same object
/// assert_eq!(commands.len(), 3);
///
/// let applied = world.apply(&mut commands);
/// assert_eq!((applied.applied, applied.failed), (2, 1));
/// assert_eq!(world.command_failures()[0].index, 2);
/// assert!(commands.is_empty() && !world.contains(old));
/// assert_eq!(world.iter::<Crate>().map(|(_, c)| c.loot).collect::<Vec<_>>(), [50]);
/// # Ok::<(), respawn::PoolError>(())
/// ```
#[derive(Default)]
pub struct CommandBuffer {
    /// The commands, in the order recorded. A command taken out to be applied is replaced
    /// by `Done`, so a spawn's closure is read or dropped exactly once.
    commands: Vec<Command>,
    /// The init closures of the spawn commands in `commands`, each written once by
    /// `spawn_with` and read (applied) or dropped in place (cleared) once. Reset only when
    /// `commands` is empty, so no command points into freed memory.
    inits: Bump,
    /// Bytes the closures in `inits` take, alignment included (at most).
    init_bytes: usize,
}

// SAFETY: the buffer owns everything its pointers reach: the init closures live in its
// own bump, and each is `Send` (`spawn_with` requires it), so moving the buffer to another
// thread moves them with it. It is not `Sync`: its `Bump` is not.
unsafe impl Send for CommandBuffer {}

impl fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandBuffer").field("commands", &self.commands.len()).finish()
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        self.clear();
    }
}

impl CommandBuffer {
    /// An empty buffer; it allocates on its first commands.
    pub fn new() -> Self {
        Self::default()
    }

    /// Commands recorded and not yet applied.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command waits.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Drops every command not yet applied (the closures of spawn commands unrun), keeping
    /// the buffer's memory for the next ones.
    pub fn clear(&mut self) {
        for command in self.commands.drain(..) {
            if let Command::Spawn { init, ops, .. } = command {
                // SAFETY: a spawn command still in the buffer holds its closure, never read
                // (an applied one was replaced by `Done`); drained, this is its last copy.
                unsafe { (ops.drop)(init) };
            }
        }
        // Empty: no command points into the bump any more. (A closure whose drop panicked
        // leaves the drain unfinished and the bump as it is, which is safe: nothing refers
        // to it, and the next clear resets it.)
        self.inits.reset();
        self.init_bytes = 0;
    }

    /// Makes room, in an empty buffer, for `commands` commands whose closures take `bytes`,
    /// so that a batch that size records without allocating.
    fn make_room(&mut self, commands: usize, bytes: usize) {
        debug_assert!(self.commands.is_empty(), "room is made in an empty buffer");
        self.commands.reserve(commands);
        // After a reset the bump holds one chunk, all of it free.
        if self.inits.chunk_capacity() < bytes {
            // Grown geometrically, as the command list is: a batch that grows frame after
            // frame makes a new chunk a logarithmic number of times.
            self.inits = Bump::with_capacity(bytes.next_power_of_two());
        }
    }

    /// Destroys `h`'s object by its class's policy, as [`World::destroy`] (its
    /// sub-objects with it, its destroy listeners told).
    pub fn destroy<U: 'static>(&mut self, h: Handle<U>) {
        self.commands.push(Command::Destroy { handle: h.raw(), ops: &Class::<U>::OPS });
    }

    /// Spawns an object of `U` from its pool, as [`World::spawn`].
    pub fn spawn<U: Poolable>(&mut self) {
        self.spawn_with(|_: &mut U| {});
    }

    /// Spawns an object of `U` and runs `init` on it before its `on_spawn` hook, as
    /// [`World::spawn_with`]. The closure is moved into the buffer (it must be `'static`
    /// and `Send`: it may be recorded on another thread and runs when applied).
    pub fn spawn_with<U: Poolable>(&mut self, init: impl FnOnce(&mut U) + Send + 'static) {
        self.push_spawn(None, init);
    }

    /// Spawns an object of `U` as a sub-object of `outer`, as [`World::spawn_sub_with`]:
    /// nothing is spawned, and the command fails, if `outer` no longer resolves when the
    /// command is applied.
    pub fn spawn_sub_with<U: Poolable, O: 'static>(
        &mut self,
        outer: Handle<O>,
        init: impl FnOnce(&mut U) + Send + 'static,
    ) {
        self.push_spawn(Some(outer.raw()), init);
    }

    /// Records `outer` as `child`'s owner, or cuts it loose with `None`, as
    /// [`World::set_outer`].
    pub fn set_outer<U: 'static>(&mut self, child: Handle<U>, outer: Option<RawHandle>) {
        self.commands.push(Command::SetOuter { child: child.raw(), outer, ops: &Class::<U>::OPS });
    }

    /// Adds the object to the root set, as [`World::add_to_root`].
    pub fn add_to_root<U: 'static>(&mut self, h: Handle<U>) {
        self.commands.push(Command::AddToRoot { handle: h.raw(), ops: &Class::<U>::OPS });
    }

    /// Takes the object out of the root set, as [`World::remove_from_root`] (before a
    /// destroy of a rooted object, which the world refuses).
    pub fn remove_from_root<U: 'static>(&mut self, h: Handle<U>) {
        self.commands.push(Command::RemoveFromRoot { handle: h.raw(), ops: &Class::<U>::OPS });
    }

    fn push_spawn<U: Poolable, F: FnOnce(&mut U) + Send + 'static>(&mut self, outer: Option<RawHandle>, init: F) {
        let init = NonNull::from(self.inits.alloc(init)).cast::<u8>();
        self.init_bytes += mem::size_of::<F>() + mem::align_of::<F>() - 1;
        self.commands.push(Command::Spawn { init, outer, ops: &Spawner::<U, F>::OPS });
    }
}

/// One recorded command. Handles are kept raw, with a per-class table of functions that
/// knows the type again.
enum Command {
    Destroy {
        handle: RawHandle,
        ops: &'static ClassOps,
    },
    SetOuter {
        child: RawHandle,
        outer: Option<RawHandle>,
        ops: &'static ClassOps,
    },
    AddToRoot {
        handle: RawHandle,
        ops: &'static ClassOps,
    },
    RemoveFromRoot {
        handle: RawHandle,
        ops: &'static ClassOps,
    },
    /// `init` points to the closure, an `F` of `ops`' instantiation, in the buffer's bump.
    Spawn {
        init: NonNull<u8>,
        outer: Option<RawHandle>,
        ops: &'static SpawnOps,
    },
    /// Taken out to be applied.
    Done,
}

/// What a command needs to know of the class `U` of its handle.
struct ClassOps {
    class: fn() -> &'static str,
    destroy: fn(&mut World, RawHandle) -> Result<(), PoolError>,
}

/// The functions of class `U`, one static table per class.
struct Class<U>(PhantomData<fn() -> U>);

impl<U: 'static> Class<U> {
    const OPS: ClassOps = ClassOps { class: std::any::type_name::<U>, destroy: Self::destroy };

    fn destroy(world: &mut World, h: RawHandle) -> Result<(), PoolError> {
        world.destroy(Handle::<U>::from_raw(h))
    }
}

/// Reads a spawn command's closure out of its pointer and spawns with it, under the outer
/// if any.
type SpawnFn = unsafe fn(NonNull<u8>, &mut World, Option<RawHandle>) -> Result<(), PoolError>;

/// What a spawn command needs to run or drop its init closure, of type `F`, for class `U`.
struct SpawnOps {
    class: fn() -> &'static str,
    /// Reads the closure out and spawns with it.
    ///
    /// # Safety
    /// The pointer holds the `F` this table was made for, never read, and the caller hands
    /// over its ownership: nothing reads or drops it afterwards.
    spawn: SpawnFn,
    /// Drops the closure unrun.
    ///
    /// # Safety
    /// As `spawn`.
    drop: unsafe fn(NonNull<u8>),
}

/// The functions of a spawn of `U` with an init closure `F`: one static table per pair.
struct Spawner<U, F>(PhantomData<fn() -> (U, F)>);

impl<U: Poolable, F: FnOnce(&mut U) + Send + 'static> Spawner<U, F> {
    const OPS: SpawnOps = SpawnOps { class: std::any::type_name::<U>, spawn: Self::spawn, drop: Self::drop };

    /// # Safety
    /// See [`SpawnOps::spawn`].
    unsafe fn spawn(init: NonNull<u8>, world: &mut World, outer: Option<RawHandle>) -> Result<(), PoolError> {
        debug_assert!(init.cast::<F>().is_aligned(), "a spawn closure out of place");
        // SAFETY: the caller's contract: an unread `F`, now ours (moved out of the bump,
        // whose memory stays until the buffer is empty).
        let init = unsafe { init.cast::<F>().as_ptr().read() };
        match outer {
            None => world.pools_mut().spawn_with(init).map(drop),
            Some(outer) => world.spawn_sub_with(Handle::<()>::from_raw(outer), init).map(drop),
        }
    }

    /// # Safety
    /// See [`SpawnOps::drop`].
    unsafe fn drop(init: NonNull<u8>) {
        // SAFETY: the caller's contract: an unread `F`, dropped once, here.
        unsafe { init.cast::<F>().as_ptr().drop_in_place() };
    }
}

impl Command {
    fn kind(&self) -> CommandKind {
        match self {
            Command::Destroy { .. } => CommandKind::Destroy,
            Command::SetOuter { .. } => CommandKind::SetOuter,
            Command::AddToRoot { .. } => CommandKind::AddToRoot,
            Command::RemoveFromRoot { .. } => CommandKind::RemoveFromRoot,
            Command::Spawn { outer: None, .. } => CommandKind::Spawn,
            Command::Spawn { outer: Some(_), .. } => CommandKind::SpawnSub,
            Command::Done => unreachable!("an applied command is not looked at again"),
        }
    }

    fn class(&self) -> &'static str {
        match self {
            Command::Destroy { ops, .. }
            | Command::SetOuter { ops, .. }
            | Command::AddToRoot { ops, .. }
            | Command::RemoveFromRoot { ops, .. } => (ops.class)(),
            Command::Spawn { ops, .. } => (ops.class)(),
            Command::Done => unreachable!("an applied command is not looked at again"),
        }
    }

    /// The handle the command names: its object's, or a sub-object spawn's outer.
    fn handle(&self) -> Option<RawHandle> {
        match *self {
            Command::Destroy { handle, .. }
            | Command::AddToRoot { handle, .. }
            | Command::RemoveFromRoot { handle, .. } => Some(handle),
            Command::SetOuter { child, .. } => Some(child),
            Command::Spawn { outer, .. } => outer,
            Command::Done => None,
        }
    }

    /// Applies the command to `world`.
    ///
    /// # Safety
    /// The command was taken out of its buffer (replaced by `Done`): this is the only copy
    /// of a spawn command, so its closure is read here once and never again.
    unsafe fn run(&self, world: &mut World) -> Result<(), PoolError> {
        match *self {
            Command::Destroy { handle, ops } => (ops.destroy)(world, handle),
            Command::SetOuter { child, outer, .. } => world.set_outer(Handle::<()>::from_raw(child), outer),
            Command::AddToRoot { handle, .. } => world.add_to_root(Handle::<()>::from_raw(handle)),
            Command::RemoveFromRoot { handle, .. } => world.remove_from_root(Handle::<()>::from_raw(handle)),
            // SAFETY: the caller's contract: the only copy, so the closure is unread and
            // handed over.
            Command::Spawn { init, outer, ops } => unsafe { (ops.spawn)(init, world, outer) },
            Command::Done => unreachable!("a command is applied once"),
        }
    }
}

/// What a command did, as [`CommandFailure::kind`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// [`CommandBuffer::destroy`].
    Destroy,
    /// [`CommandBuffer::spawn`] or [`CommandBuffer::spawn_with`].
    Spawn,
    /// [`CommandBuffer::spawn_sub_with`].
    SpawnSub,
    /// [`CommandBuffer::set_outer`].
    SetOuter,
    /// [`CommandBuffer::add_to_root`].
    AddToRoot,
    /// [`CommandBuffer::remove_from_root`].
    RemoveFromRoot,
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandKind::Destroy => "destroy",
            CommandKind::Spawn => "spawn",
            CommandKind::SpawnSub => "spawn_sub",
            CommandKind::SetOuter => "set_outer",
            CommandKind::AddToRoot => "add_to_root",
            CommandKind::RemoveFromRoot => "remove_from_root",
        })
    }
}

/// A command the world refused when it applied it; it changed nothing. Listed by
/// [`World::command_failures`].
#[derive(Debug)]
pub struct CommandFailure {
    /// The command's place in the order applied (0 for the first).
    pub index: usize,
    /// What it was.
    pub kind: CommandKind,
    /// The Rust type its handle was typed with, or that it spawned.
    pub class: &'static str,
    /// The handle it named: the object's (a sub-object spawn: the outer's; a plain spawn:
    /// none).
    pub handle: Option<RawHandle>,
    /// Why the world refused: [`PoolError::Stale`] or [`PoolError::AlreadyReleased`] for a
    /// handle whose object is gone (destroyed by an earlier command, say), [`PoolError::Arena`]
    /// for a wrong class, a rooted or a permanent object, …
    pub error: PoolError,
}

impl fmt::Display for CommandFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "command {} ({} of {}", self.index, self.kind, self.class)?;
        if let Some(h) = self.handle {
            write!(f, " {h:?}")?;
        }
        write!(f, "): {}", self.error)
    }
}

impl Error for CommandFailure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.error)
    }
}

/// What applying a batch of commands did: returned by [`World::tick_with`],
/// [`World::par_tick_with`] and [`World::apply`]. The failures themselves are in
/// [`World::command_failures`] until the next batch is applied.
#[must_use = "a command can fail (a stale handle, a second destroy): check `failed`"]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Applied {
    /// Commands that took effect.
    pub applied: usize,
    /// Commands the world refused (each changed nothing).
    pub failed: usize,
}

impl Applied {
    /// Whether every command took effect.
    pub fn is_ok(&self) -> bool {
        self.failed == 0
    }
}

/// The buffers the world keeps between ticks, so that commands allocate nothing when warm.
#[derive(Default)]
pub(crate) struct CommandState {
    /// `tick_with`'s buffer (empty between calls).
    buffer: CommandBuffer,
    /// `par_tick_with`'s queues, one per task running at once (empty between calls).
    queues: Vec<Queue>,
    /// `par_tick_with`'s runs of all queues, sorted into chunk order to be applied.
    order: Vec<(Run, usize)>,
    /// The last batch's failures.
    failures: Vec<CommandFailure>,
}

/// A command queue of `par_tick_with`: taken by one task for one chunk at a time.
#[derive(Default)]
struct Queue {
    buffer: CommandBuffer,
    /// Which commands each chunk the queue served recorded.
    runs: Vec<Run>,
}

/// Commands `start..end` of a queue, recorded while chunk `chunk` was ticked.
#[derive(Clone, Copy, Debug)]
struct Run {
    chunk: usize,
    start: usize,
    end: usize,
}

/// A queue lent to the task ticking one chunk; given back, with the chunk's run noted, when
/// the chunk is done (or its tick panics).
struct Lease<'a> {
    spare: &'a Mutex<Vec<Queue>>,
    queue: Queue,
    chunk: usize,
    start: usize,
}

impl<'a> Lease<'a> {
    fn take(spare: &'a Mutex<Vec<Queue>>, chunk: usize) -> Self {
        // Allocates only a queue the world never had: more tasks at once than before.
        let queue = spare.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default();
        let start = queue.buffer.len();
        Lease { spare, queue, chunk, start }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let end = self.queue.buffer.len();
        if end > self.start {
            self.queue.runs.push(Run { chunk: self.chunk, start: self.start, end });
        }
        let queue = mem::take(&mut self.queue);
        self.spare.lock().unwrap_or_else(PoisonError::into_inner).push(queue);
    }
}

/// Empties the buffers it holds when dropped: after they were applied, or when a command
/// panicked while they were (the rest are dropped unapplied).
struct EmptyOnDrop<'a>(&'a mut [Queue]);

impl Drop for EmptyOnDrop<'_> {
    fn drop(&mut self) {
        for queue in self.0.iter_mut() {
            queue.runs.clear();
            queue.buffer.clear();
        }
    }
}

/// The count and the failures of the batch being applied, held outside the world while
/// each command has it mutably.
struct Tally {
    index: usize,
    applied: usize,
    failures: Vec<CommandFailure>,
}

impl Tally {
    fn start(world: &mut World) -> Self {
        let mut failures = mem::take(&mut world.commands.failures);
        failures.clear();
        Tally { index: 0, applied: 0, failures }
    }

    /// Takes the command out of its buffer and applies it.
    fn run(&mut self, world: &mut World, slot: &mut Command) {
        let command = mem::replace(slot, Command::Done);
        // SAFETY: taken out of its buffer just now, which keeps `Done` in its place: this
        // is the command's only copy.
        match unsafe { command.run(world) } {
            Ok(()) => self.applied += 1,
            Err(error) => self.failures.push(CommandFailure {
                index: self.index,
                kind: command.kind(),
                class: command.class(),
                handle: command.handle(),
                error,
            }),
        }
        self.index += 1;
    }

    fn finish(self, world: &mut World) -> Applied {
        let failed = self.failures.len();
        world.commands.failures = self.failures;
        Applied { applied: self.applied, failed }
    }
}

impl World {
    /// [`tick`](Self::tick) with each object's handle and a command buffer: `f` may record
    /// commands — destroy this object or another, spawn an object of any class with an
    /// init closure, relink an outer, root or unroot — which the world applies **when the
    /// tick ends, before `tick_with` returns**, in the order recorded. Until then nothing
    /// changes: every object is visited, a destroyed one included, and a spawned one has no
    /// handle yet (a command returns nothing). From that point a destroyed object's handles
    /// are stale.
    ///
    /// A command the world refuses when applying it (a handle gone stale, a second destroy
    /// of one object, a wrong class, a rooted object) changes nothing; the returned
    /// [`Applied`] counts it, and [`command_failures`](Self::command_failures) says which
    /// and why. Recording and applying allocate nothing once warm: the world keeps the
    /// buffer between calls.
    ///
    /// # Panics
    /// If `f` panics, the panic goes on, and the commands recorded before it are dropped
    /// unapplied (their closures dropped unrun): the world is as the tick left it, objects
    /// and all. If applying a command panics (an init closure, an `on_spawn` hook, a
    /// listener), the commands before it stay applied and the ones after it are dropped.
    ///
    /// # Examples
    ///
    /// A projectile that hits destroys itself and leaves an impact, of another class:
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Shot { x: f32 }
    /// impl Poolable for Shot {
    ///     fn create() -> Self { Shot { x: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Impact { x: f32 }
    /// impl Poolable for Impact {
    ///     fn create() -> Self { Impact { x: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Shot>(PoolConfig::ON_DEMAND)
    ///     .pool::<Impact>(PoolConfig::ON_DEMAND)
    ///     .build()?;
    /// let near = world.spawn_with(|s: &mut Shot| s.x = 9.0);
    /// let far = world.spawn_with(|s: &mut Shot| s.x = 0.0);
    ///
    /// let wall = 10.0;
    /// let applied = world.tick_with::<Shot>(|h, shot, commands| {
    ///     shot.x += 2.0;
    ///     if shot.x >= wall {
    ///         commands.destroy(h);
    ///         let x = shot.x;
    ///         commands.spawn_with(move |i: &mut Impact| i.x = x);
    ///     }
    /// });
    /// assert!(applied.is_ok() && applied.applied == 2);
    /// assert!(!world.contains(near), "stale once the tick returned");
    /// assert_eq!(world.get(far).unwrap().x, 2.0);
    /// assert_eq!(world.iter::<Impact>().map(|(_, i)| i.x).collect::<Vec<_>>(), [11.0]);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn tick_with<T: 'static>(&mut self, f: impl FnMut(Handle<T>, &mut T, &mut CommandBuffer)) -> Applied {
        // Out of the world while the tick borrows it; a panic drops it (and the commands).
        let mut buffer = mem::take(&mut self.commands.buffer);
        self.tick_recording(&mut buffer, f);
        let applied = self.apply(&mut buffer);
        self.commands.buffer = buffer;
        applied
    }

    /// [`tick_with`](Self::tick_with) into a command buffer of your own, applied when you
    /// call [`apply`](Self::apply): several classes' ticks can record into one buffer and
    /// be applied together, and a game can time its tick and the changes apart.
    ///
    /// ```
    /// use respawn::{CommandBuffer, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { life: u32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { life: 0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let short = world.spawn_with(|s: &mut Spark| s.life = 1);
    /// let long = world.spawn_with(|s: &mut Spark| s.life = 5);
    ///
    /// let mut commands = CommandBuffer::new();
    /// world.tick_recording::<Spark>(&mut commands, |h, spark, commands| {
    ///     spark.life -= 1;
    ///     if spark.life == 0 {
    ///         commands.destroy(h);
    ///     }
    /// });
    /// assert!(world.contains(short), "recorded, not applied yet");
    /// assert_eq!(world.apply(&mut commands).applied, 1);
    /// assert!(!world.contains(short) && world.contains(long));
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn tick_recording<T: 'static>(
        &mut self,
        commands: &mut CommandBuffer,
        mut f: impl FnMut(Handle<T>, &mut T, &mut CommandBuffer),
    ) {
        self.heap_mut().tick_handles(|h, object| f(h, object, commands));
    }

    /// [`tick_with`](Self::tick_with) split across rayon's threads by work, as
    /// [`par_tick`](Self::par_tick): each task records into a command queue of its own (the
    /// world keeps the queues between calls), and when the tick ends the world applies
    /// them **in the order `tick_with` would have recorded them** — chunk by chunk in
    /// memory order — whichever thread ticked which chunk. So the outcome is the same as
    /// `tick_with`'s, failures and the handles of spawned objects included, given the same
    /// `f`.
    ///
    /// # Panics
    /// As [`tick_with`](Self::tick_with): if `f` panics on any thread, the panic goes on
    /// once the other tasks are done, and every command recorded is dropped unapplied.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Mote { age: u32 }
    /// impl Poolable for Mote {
    ///     fn create() -> Self { Mote { age: 0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Mote>(PoolConfig::ON_DEMAND).build()?;
    /// for age in 0..10_000 {
    ///     world.spawn_with(|m: &mut Mote| m.age = age);
    /// }
    /// // Motes age; the old ones go, and each leaves a young one behind.
    /// let applied = world.par_tick_with::<Mote>(|h, m, commands| {
    ///     m.age += 1;
    ///     if m.age > 9_000 {
    ///         commands.destroy(h);
    ///         commands.spawn_with(|young: &mut Mote| young.age = 0);
    ///     }
    /// });
    /// assert_eq!((applied.applied, applied.failed), (2000, 0));
    /// assert_eq!(world.len::<Mote>(), 10_000);
    /// assert_eq!(world.iter::<Mote>().filter(|(_, m)| m.age == 0).count(), 1000);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn par_tick_with<T: Send + 'static>(
        &mut self,
        f: impl Fn(Handle<T>, &mut T, &mut CommandBuffer) + Sync + Send,
    ) -> Applied {
        // A queue per thread that may tick a chunk, made before the tick: a thread that
        // joins in late must not have to grow a queue from nothing in a warm frame.
        let threads = self.heap().settings().threads.unwrap_or_else(rayon::current_num_threads);
        if self.commands.queues.len() < threads {
            self.commands.queues.resize_with(threads, Queue::default);
        }
        let spare = Mutex::new(mem::take(&mut self.commands.queues));
        self.heap_mut().par_tick_chunks(
            |chunk| Lease::take(&spare, chunk),
            |lease, h, object| f(h, object, &mut lease.queue.buffer),
        );
        let mut queues = spare.into_inner().unwrap_or_else(PoisonError::into_inner);
        let applied = self.apply_queues(&mut queues);
        self.commands.queues = queues;
        applied
    }

    /// Applies the commands of `commands`, in the order recorded, and empties it; see
    /// [`CommandBuffer`]. A refused command changes nothing and is counted in
    /// [`Applied::failed`]; [`command_failures`](Self::command_failures) lists them.
    ///
    /// # Panics
    /// If applying a command panics (an init closure, an `on_spawn` hook, a listener): the
    /// panic goes on, the commands before it stay applied, and the rest are dropped.
    pub fn apply(&mut self, commands: &mut CommandBuffer) -> Applied {
        let mut queue = Queue { buffer: mem::take(commands), runs: Vec::new() };
        let (len, bytes) = (queue.buffer.len(), queue.buffer.init_bytes);
        let applied = {
            let queues = EmptyOnDrop(std::slice::from_mut(&mut queue));
            let mut tally = Tally::start(self);
            for slot in &mut queues.0[0].buffer.commands {
                tally.run(self, slot);
            }
            drop(queues);
            tally.finish(self)
        };
        // Bump grows chunk by chunk and keeps the last one: room for the whole batch in one.
        queue.buffer.make_room(len, bytes);
        *commands = mem::take(&mut queue.buffer);
        applied
    }

    /// The commands the last batch applied ([`tick_with`](Self::tick_with),
    /// [`par_tick_with`](Self::par_tick_with) or [`apply`](Self::apply)) refused, in the
    /// order applied; empty if it had none.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{CommandKind, Object, PoolConfig, PoolError, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Drone { hp: i32 }
    /// impl Poolable for Drone {
    ///     fn create() -> Self { Drone { hp: 10 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Drone>(PoolConfig::ON_DEMAND).build()?;
    /// let target = world.spawn::<Drone>();
    /// world.spawn::<Drone>();
    /// world.spawn::<Drone>();
    /// // Every drone shoots the target down: one destroy takes, the others find it gone.
    /// let applied = world.tick_with::<Drone>(|_, _, commands| commands.destroy(target));
    /// assert_eq!((applied.applied, applied.failed), (1, 2));
    /// let failure = &world.command_failures()[0];
    /// assert_eq!((failure.index, failure.kind, failure.handle), (1, CommandKind::Destroy, Some(target.raw())));
    /// assert!(matches!(failure.error, PoolError::AlreadyReleased | PoolError::Stale));
    /// println!("{failure}"); // command 1 (destroy of …Drone 0v1): …
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn command_failures(&self) -> &[CommandFailure] {
        &self.commands.failures
    }

    /// Applies `par_tick_with`'s queues: their runs in chunk order, each run's commands in
    /// the order recorded; then empties them.
    fn apply_queues(&mut self, queues: &mut [Queue]) -> Applied {
        let guard = EmptyOnDrop(&mut *queues);
        let mut order = mem::take(&mut self.commands.order);
        order.clear();
        let (mut len, mut bytes) = (0, 0);
        for (q, queue) in guard.0.iter().enumerate() {
            order.extend(queue.runs.iter().map(|&run| (run, q)));
            len += queue.buffer.len();
            bytes += queue.buffer.init_bytes;
        }
        // A chunk is ticked by one task, so the keys are distinct and the order total.
        order.sort_unstable_by_key(|(run, _)| run.chunk);
        let mut tally = Tally::start(self);
        for &(run, q) in &order {
            for slot in &mut guard.0[q].buffer.commands[run.start..run.end] {
                tally.run(self, slot);
            }
        }
        let runs = order.len();
        self.commands.order = order;
        drop(guard);
        // Which task ticks which chunks changes from call to call, so each queue keeps room
        // for the whole batch: a warm batch of this size never allocates, however the
        // chunks fall.
        for queue in queues.iter_mut() {
            queue.runs.reserve(runs);
            queue.buffer.make_room(len, bytes);
        }
        tally.finish(self)
    }
}
