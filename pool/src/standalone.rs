//! [`Pool<T>`]: a pool without a World. Its objects live in cells of its own chunk
//! allocator class, are built ahead of time by its precreation workers into magazines (the
//! same [`Depot`] the World's pools use), and go back to it when the [`Pooled`] guard (or
//! the last [`Shared`](crate::Shared) pointer) drops.
//!
//! ```text
//!   thread A ─ pull ─► A's loaded magazine ──pop──► Pooled<T> ──drop──► reset ─► A's (or B's) magazine
//!                         │ empty: previous magazine, then a full one from the depot     │ full: publish
//!                         │ nothing ready: create() inline (a miss), ask the workers to grow
//!   depot: full ◄── workers' magazines ◄── create() ◄── to_build ◄── cells (grow, Purge drops)
//! ```
//!
//! Each thread that uses a pool has its own pair of magazines (its side of the pool, in a
//! thread-local list of the pools it used, [`Sides`], the last one used cached), so a pull
//! or a return touches no shared cache line and no atomic read-modify-write until a
//! magazine runs dry or fills; then it trades a whole magazine with the depot. A thread that
//! exits hands its magazines back to the depot (its thread-local destructor), where the
//! threads that go on find them. The cells
//! are `Slot<T>`s: the object, then the counts a [`Shared`](crate::Shared) keeps in its cell.

use std::any::type_name;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::sync::Weak;
use std::time::{Duration, Instant};

use respawn_allocator::{ChunkAllocator, ClassId, DropAll, SlabConfig};

use crate::config::short_type_name;
use crate::crew::{Crew, Stopped};
use crate::depot::{self, Depot, Magazine, Magazines, Refilled, Token};
use crate::owned::Owned;
use crate::rc::Counts;
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::{ConfigError, Policy, PoolConfig, PoolError, PoolStats};

/// What a pool cell holds: the object first (so a worker writes a `T` at the cell's start),
/// then the counts a [`Shared`](crate::Shared) object keeps beside it (unused otherwise).
#[repr(C)]
pub(crate) struct Slot<T> {
    pub(crate) value: T,
    pub(crate) counts: Counts,
}

/// Ownership of one cell of a standalone pool's allocator class: empty (to build), or
/// holding an object (in a magazine).
#[derive(Debug)]
pub(crate) struct PoolCell(NonNull<u8>);

// SAFETY: the token is the ownership of its cell; moving it to a worker moves that.
unsafe impl Send for PoolCell {}

impl Token for PoolCell {
    type Map = ();

    #[inline]
    unsafe fn cell(&self, (): &()) -> NonNull<u8> {
        self.0
    }
}

/// One thread's side of a pool: its magazines, and tallies that only it writes (plain
/// load-and-store, no read-modify-write) and anyone may read (stats).
struct Local {
    /// The thread's magazines: reached by that thread alone while it uses the pool, then
    /// handed back to the depot when it exits ([`Locals::hand_back`]), or taken by the
    /// pool's `Drop` ([`Owned::retire`]).
    magazines: Owned<Magazines<PoolCell>>,
    /// Objects in `magazines`, mirrored for stats.
    ready: AtomicUsize,
    tallies: Tallies,
    /// Handed back empty at its thread's exit: the next new side takes it out of the
    /// pool's list ([`Locals::add`]).
    gone: AtomicBool,
}

/// A thread's counts of its pulls and returns (or, in [`Locals::exited`], those of the
/// threads that exited).
#[derive(Default)]
struct Tallies {
    hits: AtomicU64,
    misses: AtomicU64,
    overflow: AtomicU64,
    /// Objects handed back (a `Pooled` dropped, the last strong `Shared` gone).
    released: AtomicU64,
    /// Of those, objects reset and put back among the ready ones.
    reused: AtomicU64,
}

impl Tallies {
    /// Adds `other`'s counts to these (Relaxed: tallies).
    fn add(&self, other: &Tallies) {
        let pairs = [
            (&self.hits, &other.hits),
            (&self.misses, &other.misses),
            (&self.overflow, &other.overflow),
            (&self.released, &other.released),
            (&self.reused, &other.reused),
        ];
        for (to, from) in pairs {
            to.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
}

impl Local {
    fn new() -> Self {
        Self {
            magazines: Owned::new(Magazines::new()),
            ready: AtomicUsize::new(0),
            tallies: Tallies::default(),
            gone: AtomicBool::new(false),
        }
    }
}

/// The calling thread's [`Local`] of a pool ([`Pool::local`]); one made for a single call
/// of a thread past its thread-locals' destructors is handed back when this drops.
struct Mine<'a> {
    local: &'a Local,
    /// For a side made for this call alone: the pool's sides, to hand it back to.
    passing: Option<&'a Locals>,
}

impl std::ops::Deref for Mine<'_> {
    type Target = Tallies;

    fn deref(&self) -> &Tallies {
        &self.local.tallies
    }
}

impl Mine<'_> {
    /// Runs `f` on this thread's magazines. `f` must not run user code (`create`, `reset`,
    /// `T`'s drop), which could pull from or return to this pool and reach the magazines
    /// again while `f` holds them; every caller passes queue operations only.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut Magazines<PoolCell>) -> R) -> R {
        // SAFETY: a `Mine` is the calling thread's side (`Pool::local`), which no other
        // thread reaches while this one uses the pool (its hand-back runs at its exit, the
        // retire in the pool's drop), and `f` does not re-enter the pool.
        unsafe {
            self.local.magazines.with(|magazines| {
                let out = f(magazines);
                self.local.ready.store(magazines.len(), Ordering::Relaxed);
                out
            })
        }
    }
}

impl Drop for Mine<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(locals) = self.passing {
            locals.hand_back(self.local);
        }
    }
}

/// The threads' sides of a pool, and the depot a thread hands its magazines back to when
/// it exits. Shared with the threads that used the pool ([`Sides`]), which may outlive it.
struct Locals {
    /// Tells this pool's side from other pools' in a thread's [`Sides`]: never reused.
    key: u64,
    /// The sides of the threads that use the pool (for the stats and the pool's drop), and
    /// of those that exited until the next new side takes them out.
    all: Mutex<Vec<Arc<Local>>>,
    /// The counts of the threads that exited, their sides taken out of `all`.
    exited: Tallies,
    depot: Arc<Depot<PoolCell>>,
}

impl Locals {
    fn new(depot: Arc<Depot<PoolCell>>) -> Self {
        static KEYS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let key = KEYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self { key, all: Mutex::new(Vec::new()), exited: Tallies::default(), depot }
    }

    /// A new side, counted among the pool's (the sides of threads that exited leave the
    /// list now, their counts kept in `exited`).
    #[cold]
    fn add(&self) -> Arc<Local> {
        let local = Arc::new(Local::new());
        let mut all = self.all.lock();
        all.retain(|side| {
            let gone = side.gone.load(Ordering::Acquire);
            if gone {
                self.exited.add(&side.tallies);
            }
            !gone
        });
        all.push(Arc::clone(&local));
        local
    }

    /// The exit of `local`'s thread: its ready objects go to the depot as published
    /// magazines, for any thread's next pull, and the side is marked gone. (What the depot
    /// cannot take stays in `local`, which stays among the pool's sides for its drop.)
    #[cold]
    fn hand_back(&self, local: &Local) {
        let mut emptied = false;
        local.magazines.give_up(|magazines| {
            for magazine in [&mut magazines.loaded, &mut magazines.previous] {
                if magazine.is_empty() {
                    continue;
                }
                let full = mem::replace(magazine, self.depot.take_empty());
                if let Err(full) = self.depot.publish_local(full) {
                    self.depot.return_empty(mem::replace(magazine, full));
                }
            }
            local.ready.store(magazines.len(), Ordering::Relaxed);
            emptied = magazines.len() == 0;
        });
        if emptied {
            // Release: whoever sees it gone sees the side's last counts.
            local.gone.store(true, Ordering::Release);
        }
    }
}

/// The side of the pool the calling thread used last: the pool's key and the side, which
/// [`Sides`] keeps alive (`(0, null)` once it dropped). No destructor: read at any time.
type Last = Cell<(u64, *const Local)>;

/// The calling thread's sides of the pools it used, handed back when it exits (its
/// thread-local destructor), so that its ready objects serve the threads that go on.
struct Sides(RefCell<Vec<Side>>);

struct Side {
    key: u64,
    local: Arc<Local>,
    locals: Weak<Locals>,
}

impl Drop for Sides {
    fn drop(&mut self) {
        // Nothing reaches the sides through the cache from now on.
        let _ = LAST.try_with(|last| last.set((0, ptr::null())));
        for side in self.0.get_mut().drain(..) {
            if let Some(locals) = side.locals.upgrade() {
                locals.hand_back(&side.local);
            }
        }
    }
}

thread_local! {
    static LAST: Last = const { Cell::new((0, ptr::null())) };
    static SIDES: Sides = const { Sides(RefCell::new(Vec::new())) };
}

/// `count += 1` for a tally only its own thread writes.
#[inline]
fn bump(count: &AtomicU64) {
    count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

type Create<T> = Arc<dyn Fn() -> T + Send + Sync>;
type Reset<T> = Box<dyn Fn(&mut T) + Send + Sync>;

/// A pool of `T`s without a World: objects built ahead of time on worker threads, handed
/// out by [`pull`](Self::pull) as a [`Pooled`] guard, and taken back when the guard drops,
/// by the pool's [`Policy`]: `Reuse` resets the object and keeps it ready; `Purge` drops it
/// and has a worker build a fresh one in its cell.
///
/// `Pool` is `Sync`: any thread may pull and return; each keeps its own magazines, so the
/// warm path (a pop and a push) touches nothing another thread writes. For a guard that
/// outlives the borrow, [`pull_owned`](Self::pull_owned) on an `Arc<Pool<T>>`; for
/// reference-counted objects whose deleter is the pool, [`Shared`](crate::Shared).
///
/// ```
/// use respawn_pool::Pool;
///
/// let pool = Pool::builder()
///     .capacity(64)
///     .low_watermark(16)
///     .workers(1)
///     .create(|| Vec::<u8>::with_capacity(4096))
///     .reset(|buf: &mut Vec<u8>| buf.clear())
///     .build()?;
/// let mut buf = pool.pull();
/// buf.extend_from_slice(b"GET / HTTP/1.1\r\n");
/// assert_eq!(buf.len(), 16);
/// drop(buf); // cleared and ready for the next pull
/// assert_eq!(pool.stats().released, 1);
/// # Ok::<(), respawn_pool::PoolError>(())
/// ```
///
/// Ready objects sit in the magazines of the threads that returned them (two of
/// 128 objects at most per thread) until a magazine fills and goes to the shared depot, or
/// that thread pulls them again: size `max` for the threads that return objects, or
/// `pull` builds overflow objects beyond it (which are freed when they come back). A thread
/// that exits hands what its magazines hold to the depot, where any thread's next pull
/// finds it: short-lived threads leave nothing stranded.
///
/// Dropping the pool stops and joins its workers and drops every object it holds. A
/// [`Pooled`] borrows the pool, so it cannot outlive it; [`OwnedPooled`] and `Shared` keep
/// it alive.
pub struct Pool<T: Send + 'static> {
    /// The depot, the workers and `create`, which they build with (and a miss inline).
    crew: Crew<PoolCell, dyn Fn() -> T + Send + Sync>,
    reset: Option<Reset<T>>,
    /// `locals.key`, at hand for [`local`](Self::local)'s cache check.
    key: u64,
    locals: Arc<Locals>,
    /// Cells taken from `memory` and not given back: at most `max`, except while overflow
    /// objects are out (`pull` beyond `max`); above `max`, returned cells are freed.
    owned: AtomicUsize,
    /// The most cells owned at once.
    high_water: AtomicUsize,
    grown: AtomicU64,
    reset_panics: AtomicU64,
    /// Ready objects [`shrink_to`](Pool::shrink_to) dropped.
    trimmed: AtomicU64,
    class: ClassId,
    /// The cells' memory: dropped after every object (see `Drop`).
    memory: ManuallyDrop<ChunkAllocator>,
    _objects: PhantomData<fn() -> T>,
}

impl<T: Send + 'static> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("name", &self.crew.name())
            .field("config", self.crew.config())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Pool`]: `Pool::builder().capacity(..).max(..).workers(..).create(..).reset(..).build()?`.
pub struct PoolBuilder<T: Send + 'static> {
    name: &'static str,
    config: PoolConfig,
    slab: SlabConfig,
    create: Option<Create<T>>,
    reset: Option<Reset<T>>,
    /// The low watermark was given ([`low_watermark`](PoolBuilder::low_watermark) or
    /// [`config`](PoolBuilder::config)): [`capacity`](PoolBuilder::capacity) leaves it be.
    watermark_given: bool,
    /// The capacity was given ([`capacity`](PoolBuilder::capacity) or
    /// [`config`](PoolBuilder::config)): [`workers`](PoolBuilder::workers)`(0)` leaves it be.
    capacity_given: bool,
}

impl<T: Send + 'static> fmt::Debug for PoolBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("slab", &self.slab)
            .field("create", &self.create.is_some())
            .field("reset", &self.reset.is_some())
            .finish()
    }
}

impl<T: Send + 'static> PoolBuilder<T> {
    /// The name stats and errors use (default: the type's name).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().name("packets").workers(0).create(Vec::<u8>::new).build()?;
    /// assert_eq!(pool.stats().class, "packets");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// All the settings at once (a preset, or a config from a file). The later setters
    /// override single fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Policy, Pool, PoolConfig};
    ///
    /// let pool = Pool::builder()
    ///     .config(PoolConfig::ON_DEMAND) // no workers, `Reuse`
    ///     .max(8)                        // … with one field overridden
    ///     .create(String::new)
    ///     .build()?;
    /// assert_eq!(pool.config(), &PoolConfig { max: 8, ..PoolConfig::ON_DEMAND });
    /// assert_eq!((pool.config().policy, pool.owned()), (Policy::Reuse, 0), "nothing built ahead");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn config(mut self, config: PoolConfig) -> Self {
        self.config = config;
        self.watermark_given = true;
        self.capacity_given = true;
        self
    }

    /// [`PoolConfig::capacity`]: objects the workers build when the pool is built. Unless a
    /// [`low_watermark`](Self::low_watermark) was given, the watermark follows it: a quarter
    /// of the capacity, `PoolConfig::DEFAULT`'s proportion (so a small capacity never starts
    /// the pool at its watermark).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().capacity(8).workers(1).create(|| [0u8; 64]).build()?;
    /// assert_eq!(pool.config().low_watermark, 2, "a quarter of the capacity");
    /// pool.wait_until_warm(Duration::from_secs(10))?;
    /// assert_eq!(pool.stats().ready, 8);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.config.capacity = capacity;
        self.capacity_given = true;
        if !self.watermark_given && self.config.precreate {
            self.config.low_watermark = capacity / 4;
        }
        self
    }

    /// [`PoolConfig::max`]: ceiling on the cells the pool owns.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).capacity(0).max(2).create(String::new).build()?;
    /// let (a, b) = (pool.pull(), pool.pull());
    /// assert!(pool.try_pull().is_err(), "two cells at most …");
    /// let c = pool.pull(); // … but `pull` builds an overflow object
    /// assert_eq!((pool.stats().overflow, pool.owned()), (1, 3));
    /// drop((a, b, c));
    /// assert_eq!(pool.owned(), 2, "the first back was freed: the pool is at `max` again");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn max(mut self, max: usize) -> Self {
        self.config.max = max;
        self
    }

    /// [`PoolConfig::low_watermark`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .capacity(16)
    ///     .low_watermark(8)
    ///     .grow_by(16)
    ///     .create(|| 0u64)
    ///     .build()?;
    /// pool.wait_until_warm(Duration::from_secs(10))?;
    /// assert_eq!(pool.stats().grown, 0);
    /// let held: Vec<_> = (0..10).map(|_| pool.pull()).collect();
    /// pool.wait_until_warm(Duration::from_secs(10))?;
    /// // Fewer than 8 were left with the workers: they built `grow_by` more.
    /// assert_eq!((pool.stats().grown, pool.owned()), (16, 32));
    /// # drop(held);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn low_watermark(mut self, low_watermark: usize) -> Self {
        self.config.low_watermark = low_watermark;
        self.watermark_given = true;
        self
    }

    /// [`PoolConfig::grow_by`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .capacity(4)
    ///     .low_watermark(1)
    ///     .grow_by(32)
    ///     .create(|| 0u64)
    ///     .build()?;
    /// pool.wait_until_warm(Duration::from_secs(10))?;
    /// assert_eq!(pool.owned(), 4);
    /// let first = pool.pull(); // takes all 4: under the watermark, the workers get 32 cells
    /// assert_eq!(pool.owned(), 36, "4, then a step of 32");
    /// # drop(first);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn grow_by(mut self, grow_by: usize) -> Self {
        self.config.grow_by = grow_by;
        self
    }

    /// Precreation threads. `0` means no threads at all: objects are created inline on a
    /// miss, nothing is precreated, and there is no low watermark (`precreate` and
    /// `low_watermark` are set to match, and `capacity` to 0 unless one was given; use
    /// [`prefill`](Pool::prefill) to warm such a pool).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).max(8).create(|| vec![0u8; 1024]).build()?;
    /// assert!(!pool.config().precreate && pool.config().low_watermark == 0);
    /// assert_eq!(pool.config().capacity, 0, "nothing to build ahead: any `max` will do");
    /// assert_eq!(pool.owned(), 0, "nothing built ahead");
    /// let buf = pool.pull(); // built here, inline: a miss
    /// assert_eq!((pool.stats().misses, buf.len()), (1, 1024));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn workers(mut self, workers: usize) -> Self {
        self.config.workers = workers;
        self.config.precreate = workers > 0;
        if workers == 0 {
            self.config.low_watermark = 0;
            if !self.capacity_given {
                self.config.capacity = 0;
            }
        }
        self
    }

    /// What happens to a returned object: [`Policy::Reuse`] (the default: `reset`, then
    /// ready at once) or [`Policy::Purge`] (dropped; a worker builds a fresh one in its cell).
    /// [`Policy::Default`] recycles through a World's collector and is refused here.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Policy, Pool};
    ///
    /// let reuse = Pool::builder().workers(0).create(String::new).build()?;
    /// drop(reuse.pull());
    /// drop(reuse.pull());
    /// assert_eq!(reuse.stats().misses, 1, "`Reuse`: the second pull got the first object back");
    ///
    /// let purge = Pool::builder().workers(0).policy(Policy::Purge).create(String::new).build()?;
    /// drop(purge.pull());
    /// drop(purge.pull());
    /// assert_eq!(purge.stats().misses, 2, "`Purge`: dropped, and built anew");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn policy(mut self, policy: Policy) -> Self {
        self.config.policy = policy;
        self
    }

    /// The slab geometry of the pool's memory (default [`SlabConfig::DEFAULT`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_allocator::SlabConfig;
    /// use respawn_pool::Pool;
    ///
    /// // What a pool holding one object commits, by its slabs' size.
    /// let committed = |slab: SlabConfig| {
    ///     let pool = Pool::builder().workers(0).slab(slab).create(|| [0u64; 4]).build().unwrap();
    ///     let _one = pool.pull();
    ///     pool.stats().committed_bytes
    /// };
    /// let small = committed(SlabConfig { spare_slabs: 0, ..SlabConfig::SMALL });
    /// let default = committed(SlabConfig { spare_slabs: 0, ..SlabConfig::DEFAULT });
    /// assert!(small < default, "one slab of 64 cells, not of 1024");
    /// ```
    pub fn slab(mut self, slab: SlabConfig) -> Self {
        self.slab = slab;
        self
    }

    /// Builds an object: on the workers ahead of time, or inline on a miss. Required.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Pool, PoolError};
    ///
    /// let pool = Pool::builder().workers(0).create(|| Vec::<u8>::with_capacity(1500)).build()?;
    /// assert!(pool.pull().capacity() >= 1500);
    /// let without = Pool::<Vec<u8>>::builder().workers(0).build();
    /// assert!(matches!(without, Err(PoolError::Config(_))), "`create` is required");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn create(mut self, create: impl Fn() -> T + Send + Sync + 'static) -> Self {
        self.create = Some(Arc::new(create));
        self
    }

    /// `Reuse`: readies a returned object for its next pull (default: nothing). If it
    /// panics, the object is dropped instead of being kept half-reset, and the panic goes on.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .workers(0)
    ///     .create(Vec::<u32>::new)
    ///     .reset(|scores: &mut Vec<u32>| scores.clear())
    ///     .build()?;
    /// pool.pull().extend([3, 1, 2]); // back in the pool, cleared, as the guard drops
    /// let scores = pool.pull(); // the same vector: its memory kept
    /// assert!(scores.is_empty() && scores.capacity() >= 3);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn reset(mut self, reset: impl Fn(&mut T) + Send + Sync + 'static) -> Self {
        self.reset = Some(Box::new(reset));
        self
    }

    /// Validates the settings, takes the pool's memory and starts its workers, which build
    /// `capacity` objects.
    ///
    /// # Errors
    /// [`PoolError::Config`] for an invalid config (see [`PoolConfig::validate`]), no
    /// `create`, or `Policy::Default`; [`PoolError::Alloc`] if the memory cannot be
    /// reserved.
    ///
    /// # Panics
    /// If the OS cannot start a thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Pool, PoolError};
    ///
    /// let pool = Pool::builder().capacity(4).create(|| [0u8; 32]).build()?;
    /// assert_eq!(pool.owned(), 4, "four cells, for the worker to build in");
    /// let bad = Pool::builder().capacity(8).max(4).create(|| [0u8; 32]).build();
    /// assert!(matches!(bad, Err(PoolError::Config(_))), "max below capacity");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn build(self) -> Result<Pool<T>, PoolError> {
        let Self { name, config, slab, create, reset, .. } = self;
        let invalid = |key, message: &str| ConfigError::Invalid {
            file: None,
            class: Some(name.to_owned()),
            key,
            message: message.to_owned(),
        };
        config.validate().map_err(|e| e.in_class(name))?;
        if config.policy == Policy::Default {
            return Err(invalid(
                "policy",
                "a pool without a World has no collector to recycle through: use Policy::Reuse or Policy::Purge",
            )
            .into());
        }
        let Some(create) = create else {
            return Err(invalid("create", "a pool needs a `create` closure to build its objects").into());
        };
        if config.idle_trim.is_some() {
            return Err(invalid(
                "idle_trim",
                "a pool without a World has no frame upkeep to trim in: set idle_trim to None and call \
                 Pool::shrink_to (or Pool::clear) when the pool should give memory back",
            )
            .into());
        }
        let memory = ChunkAllocator::new();
        let class = memory.register_class(std::alloc::Layout::new::<Slot<T>>(), slab).map_err(PoolError::Alloc)?;
        let crew = Crew::start(name, config, (), create);
        let locals = Arc::new(Locals::new(Arc::clone(crew.depot())));
        let pool = Pool {
            crew,
            reset,
            key: locals.key,
            locals,
            owned: AtomicUsize::new(0),
            high_water: AtomicUsize::new(0),
            grown: AtomicU64::new(0),
            reset_panics: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            class,
            memory: ManuallyDrop::new(memory),
            _objects: PhantomData,
        };
        if config.precreate {
            pool.grow(config.capacity, false)?;
        }
        Ok(pool)
    }
}

/// What [`Pool::take`] does at `max` with nothing ready.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtMax {
    /// Build an overflow object anyway; its cell is freed when it comes back.
    Overflow,
    /// Refuse: [`PoolError::Exhausted`].
    Refuse,
}

impl<T: Send + 'static> Pool<T> {
    /// A builder with the defaults: [`PoolConfig::DEFAULT`]'s sizes and one worker, with
    /// [`Policy::Reuse`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Policy, Pool, PoolConfig, PoolError};
    ///
    /// let pool = Pool::builder()
    ///     .name("decoders")
    ///     .config(PoolConfig::EXPENSIVE) // a preset's sizes, two workers, `Purge` …
    ///     .capacity(16)                  // … with single fields overridden
    ///     .low_watermark(4)              // (the preset's 256 would be above the new capacity)
    ///     .create(|| vec![0u8; 4096])
    ///     .build()?;
    /// assert_eq!(pool.config().policy, Policy::Purge);
    /// assert_eq!(pool.stats().class, "decoders");
    ///
    /// // `Default` recycles through a World's collector: a standalone pool refuses it.
    /// let refused = Pool::builder().policy(Policy::Default).create(String::new).build();
    /// assert!(matches!(refused, Err(PoolError::Config(_))));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn builder() -> PoolBuilder<T> {
        PoolBuilder {
            name: short_type_name(type_name::<T>()),
            config: PoolConfig { policy: Policy::Reuse, ..PoolConfig::DEFAULT },
            slab: SlabConfig::DEFAULT,
            create: None,
            reset: None,
            watermark_given: false,
            capacity_given: false,
        }
    }

    /// An object: a ready one (no construction, no allocation), or one built inline if
    /// none is ready — beyond `max` an overflow object, whose cell is freed when it comes
    /// back.
    ///
    /// # Panics
    /// If the pool's memory reservation is used up, or `create` panics (the cell goes back
    /// to the allocator, and the panic goes on).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .workers(0) // nothing precreated: objects are built on demand
    ///     .create(|| String::with_capacity(64))
    ///     .reset(String::clear)
    ///     .build()?;
    /// {
    ///     let mut line = pool.pull(); // nothing ready: built inline, a miss
    ///     line.push_str("hello");
    /// } // back in the pool, cleared
    /// let line = pool.pull(); // the same string: a hit
    /// assert!(line.is_empty() && line.capacity() >= 64);
    /// assert_eq!((pool.stats().hits, pool.stats().misses), (1, 1));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    #[inline]
    pub fn pull(&self) -> Pooled<'_, T> {
        match self.take(AtMax::Overflow) {
            Ok(cell) => Pooled { pool: self, cell },
            Err(e) => panic!("Pool::<{}>::pull: {e}", self.crew.name()),
        }
    }

    /// An object, or an error instead of an overflow object when the pool owns `max` cells
    /// and none is ready.
    ///
    /// # Errors
    /// [`PoolError::Exhausted`], or [`PoolError::Alloc`] if the memory reservation is used
    /// up.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Pool, PoolError};
    ///
    /// let pool = Pool::builder().workers(0).capacity(0).max(2).create(|| [0u64; 8]).build()?;
    /// let a = pool.try_pull()?;
    /// let b = pool.try_pull()?;
    /// // The pool owns `max` cells, all in use: refused instead of an overflow object.
    /// assert!(matches!(pool.try_pull(), Err(PoolError::Exhausted { max: 2, .. })));
    /// drop(a);
    /// assert!(pool.try_pull().is_ok(), "`a`'s object, ready again");
    /// # drop(b);
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn try_pull(&self) -> Result<Pooled<'_, T>, PoolError> {
        self.take(AtMax::Refuse).map(|cell| Pooled { pool: self, cell })
    }

    /// [`pull`](Self::pull) for a guard that owns a reference to the pool and so may outlive
    /// the caller's borrow (move it to another thread, store it): sharded-slab's `get_owned`.
    ///
    /// # Panics
    /// As [`pull`](Self::pull).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().capacity(8).low_watermark(2).create(Vec::<u32>::new).reset(Vec::clear).build()?;
    /// let pool = Arc::new(pool);
    /// let mut job = pool.pull_owned();
    /// job.extend([1, 2, 3]);
    /// // The guard moves to another thread, and goes back to the pool from there.
    /// let sum = std::thread::spawn(move || job.iter().sum::<u32>()).join().unwrap();
    /// assert_eq!(sum, 6);
    /// assert_eq!(pool.stats().released, 1);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn pull_owned(self: &Arc<Self>) -> OwnedPooled<T> {
        match self.take(AtMax::Overflow) {
            Ok(cell) => OwnedPooled { pool: Arc::clone(self), cell },
            Err(e) => panic!("Pool::<{}>::pull_owned: {e}", self.crew.name()),
        }
    }

    /// [`try_pull`](Self::try_pull) for an [`OwnedPooled`].
    ///
    /// # Errors
    /// As [`try_pull`](Self::try_pull).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use respawn_pool::{Pool, PoolError};
    ///
    /// let pool = Pool::builder().workers(0).capacity(0).max(1).create(String::new).build()?;
    /// let pool = Arc::new(pool);
    /// let mut line = pool.try_pull_owned()?;
    /// assert!(matches!(pool.try_pull_owned(), Err(PoolError::Exhausted { max: 1, .. })));
    /// // The guard is not tied to a borrow: it may go to another thread and come back.
    /// let worker = std::thread::spawn(move || {
    ///     line.push_str("done");
    ///     line
    /// });
    /// drop(worker.join().unwrap()); // back in the pool, from this thread
    /// assert_eq!(pool.try_pull_owned()?.as_str(), "done", "the same object (no `reset`)");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn try_pull_owned(self: &Arc<Self>) -> Result<OwnedPooled<T>, PoolError> {
        self.take(AtMax::Refuse).map(|cell| OwnedPooled { pool: Arc::clone(self), cell })
    }

    /// Builds up to `n` objects on the calling thread (within `max`) and makes them ready
    /// for any thread: warms a pool that has no workers. Returns how many were built.
    ///
    /// # Errors
    /// [`PoolError::Alloc`] if the memory reservation is used up.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).create(|| [0u8; 256]).build()?;
    /// assert_eq!(pool.prefill(100)?, 100);
    /// let held: Vec<_> = (0..100).map(|_| pool.pull()).collect();
    /// assert_eq!(pool.stats().misses, 0);
    /// # drop(held);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn prefill(&self, n: usize) -> Result<usize, PoolError> {
        // Published as it fills, and what is left when done (or when `create` panics).
        let mut batch = Batch { pool: self, magazine: Magazine::new() };
        let mut built = 0;
        while built < n && self.reserve(AtMax::Refuse).is_ok() {
            let cell = self.alloc_reserved()?;
            let value = self.create_in(cell);
            // SAFETY: a fresh cell of `Slot<T>` layout, ours alone; written once.
            unsafe { cell.cast::<T>().as_ptr().write(value) };
            batch.magazine.push(PoolCell(cell));
            built += 1;
            if batch.magazine.is_full() {
                self.publish(mem::replace(&mut batch.magazine, Magazine::new()));
            }
        }
        Ok(built)
    }

    /// Waits until the workers' precreation is ready to pull — nothing queued or being
    /// built, nothing held back in a worker's partial magazine — so that the pulls that
    /// follow are hits. A pool without workers is warm at once (see
    /// [`prefill`](Self::prefill)). Polls every 100 µs.
    ///
    /// # Errors
    /// [`PoolError::NotWarm`] when `timeout` runs out first (the workers keep building).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().capacity(512).workers(1).create(|| Box::new([0u64; 16])).build()?;
    /// // `build` returned as soon as the worker started; wait for its 512 objects.
    /// pool.wait_until_warm(Duration::from_secs(10))?;
    /// assert!(pool.stats().available() >= 512);
    ///
    /// let held: Vec<_> = (0..512).map(|_| pool.pull()).collect();
    /// assert_eq!(pool.stats().misses, 0);
    /// # drop(held);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn wait_until_warm(&self, timeout: Duration) -> Result<(), PoolError> {
        let start = Instant::now();
        while !self.crew.depot().is_warm() {
            // Out of cells to build, a worker publishes its partial magazine at once.
            self.crew.depot().request_flush();
            let waited = start.elapsed();
            if waited >= timeout {
                let d = self.crew.depot().snapshot();
                return Err(PoolError::NotWarm {
                    class: self.crew.name(),
                    ready: d.published,
                    on_the_way: d.building + d.held,
                    waited,
                });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(())
    }

    /// The pool's name, configuration and counters. `in_use` counts objects pulled and not
    /// handed back (a [`Shared`](crate::Shared) object's until its last strong reference
    /// goes); `high_water` is the most cells the pool owned at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).create(String::new).build()?;
    /// let a = pool.pull();
    /// let b = pool.pull();
    /// drop(a);
    ///
    /// let stats = pool.stats();
    /// assert_eq!(stats.class, "String");
    /// assert_eq!((stats.spawns, stats.misses), (2, 2), "nothing precreated");
    /// assert_eq!((stats.in_use, stats.released), (1, 1));
    /// assert_eq!(stats.recycled_reuse, 1, "`Reuse`: kept for the next pull");
    /// assert_eq!(stats.high_water, 2);
    /// # drop(b);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn stats(&self) -> PoolStats {
        let (tallies, mut local_ready) = (Tallies::default(), 0);
        let consumers = {
            // Under the lock, as a thread's exit moves its counts to `exited`.
            let all = self.locals.all.lock();
            for local in all.iter() {
                tallies.add(&local.tallies);
                local_ready += local.ready.load(Ordering::Relaxed);
            }
            tallies.add(&self.locals.exited);
            all.len()
        };
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (hits, misses, overflow) = (count(&tallies.hits), count(&tallies.misses), count(&tallies.overflow));
        let (released, reused) = (count(&tallies.released), count(&tallies.reused));
        let d = self.crew.depot().snapshot();
        PoolStats {
            class: self.crew.name(),
            policy: self.crew.config().policy,
            spawns: hits + misses,
            hits,
            misses,
            overflow,
            ready: d.published + d.held + local_ready,
            in_use: (hits + misses).saturating_sub(released) as usize,
            high_water: self.high_water.load(Ordering::Relaxed),
            released,
            recycled_reuse: reused,
            recycled_purge: d.ended_purge,
            recycled_gc: 0,
            returned: d.returned,
            retired: 0,
            grown: self.grown.load(Ordering::Relaxed),
            // Each thread that used the pool has its pair of magazines (and its entry).
            side_bytes: self.crew.depot().side_bytes(consumers) + consumers * mem::size_of::<Local>(),
            trimmed: self.trimmed.load(Ordering::Relaxed),
            committed_bytes: self.memory.stats(self.class).map_or(0, |m| m.committed_bytes),
            ..d.pool_stats()
        }
    }

    /// `reset` calls that panicked (the object was dropped instead of kept).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::panic::{self, AssertUnwindSafe};
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder()
    ///     .workers(0)
    ///     .create(Vec::<u8>::new)
    ///     .reset(|buf: &mut Vec<u8>| assert!(buf.len() < 4, "too big to keep"))
    ///     .build()?;
    /// let mut big = pool.pull();
    /// big.extend([0; 8]);
    /// assert!(panic::catch_unwind(AssertUnwindSafe(|| drop(big))).is_err());
    /// assert_eq!(pool.reset_panics(), 1);
    /// assert_eq!(pool.owned(), 0, "dropped, not kept half-reset");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn reset_panics(&self) -> u64 {
        self.reset_panics.load(Ordering::Relaxed)
    }

    /// The pool's settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Policy, Pool};
    ///
    /// let pool = Pool::builder().workers(0).max(1000).create(String::new).build()?;
    /// assert_eq!(pool.config().max, 1000);
    /// assert_eq!(pool.config().policy, Policy::Reuse, "the builder's default");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn config(&self) -> &PoolConfig {
        self.crew.config()
    }

    /// Cells the pool owns now: objects in use, ready, being built.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).create(String::new).build()?;
    /// assert_eq!(pool.owned(), 0);
    /// let (a, b) = (pool.pull(), pool.pull());
    /// drop(a);
    /// assert_eq!(pool.owned(), 2, "one in use, one ready");
    /// pool.clear()?;
    /// assert_eq!(pool.owned(), 1, "the ready one dropped, its cell freed");
    /// # drop(b);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn owned(&self) -> usize {
        self.owned.load(Ordering::Relaxed)
    }

    /// The calling thread's side of the pool: the one it used last, from a cache.
    #[inline]
    fn local(&self) -> Mine<'_> {
        let (key, local) = LAST.with(Cell::get);
        if key == self.key {
            // SAFETY: the cache holds this pool's side of this thread, which the thread's
            // `Sides` keeps alive (and clears the cache when it drops).
            return Mine { local: unsafe { &*local }, passing: None };
        }
        self.local_slow()
    }

    /// [`local`](Self::local) of a thread that used another pool last, or this one first:
    /// its side from its `Sides` (a new one on its first use), cached.
    #[cold]
    #[inline(never)]
    fn local_slow(&self) -> Mine<'_> {
        let key = self.key;
        let found = SIDES.try_with(|sides| {
            let mut all = sides.0.borrow_mut();
            let local = match all.iter().find(|side| side.key == key) {
                Some(side) => Arc::as_ptr(&side.local),
                None => {
                    // The sides of pools that were dropped go as a new one comes.
                    all.retain(|side| side.locals.strong_count() > 0);
                    let local = self.locals.add();
                    let at = Arc::as_ptr(&local);
                    all.push(Side { key, local, locals: Arc::downgrade(&self.locals) });
                    at
                }
            };
            LAST.with(|last| last.set((key, local)));
            local
        });
        match found {
            // SAFETY: the thread's `Sides` keeps the side alive, and the pool's `all` does
            // while the pool lives.
            Ok(local) => Mine { local: unsafe { &*local }, passing: None },
            // The thread is past its thread-locals' destructors: a side for this call
            // alone, kept among the pool's (its counts, and what the depot could not take)
            // and handed back when the call ends.
            Err(_) => {
                let local = self.locals.add();
                // SAFETY: the pool's `all` keeps the side alive while the pool lives (a gone
                // side leaves it only in `add`, and this one is not gone before the `Mine`
                // hands it back as it drops).
                Mine { local: unsafe { &*Arc::as_ptr(&local) }, passing: Some(&self.locals) }
            }
        }
    }

    /// A cell holding a ready object, or a miss built inline.
    #[inline]
    pub(crate) fn take(&self, at_max: AtMax) -> Result<NonNull<u8>, PoolError> {
        let local = self.local();
        match local.with(Magazines::pop) {
            Some(cell) => {
                bump(&local.hits);
                Ok(cell.0)
            }
            None => self.take_slow(local, at_max),
        }
    }

    #[cold]
    #[inline(never)]
    fn take_slow(&self, local: Mine<'_>, at_max: AtMax) -> Result<NonNull<u8>, PoolError> {
        let depot = self.crew.depot();
        let refilled = local.with(|m| match m.refill(depot) {
            Refilled::Nothing => None,
            Refilled::Previous | Refilled::Depot => m.pop(),
        });
        if let Some(cell) = refilled {
            bump(&local.hits);
            if self.crew.config().precreate && self.available() < self.crew.config().low_watermark {
                let _ = self.grow(self.crew.config().grow_by, true);
            }
            return Ok(cell.0);
        }
        // Nothing ready anywhere this thread can see: let workers hand over what they hold,
        // grow if too little is on its way, and build one here.
        // The miss takes its cell before any growth, which could take the last one below `max`.
        self.recycle_spare();
        let overflow = self.reserve(at_max)?;
        let cell = self.alloc_reserved()?;
        if self.crew.config().workers > 0 {
            depot.request_flush();
            if self.available() < self.crew.config().low_watermark.max(1) {
                let _ = self.grow(self.crew.config().grow_by.max(1), true);
            }
        }
        let value = self.create_in(cell);
        // SAFETY: a fresh cell of `Slot<T>` layout, ours alone; written once.
        unsafe { cell.cast::<T>().as_ptr().write(value) };
        bump(&local.misses);
        if overflow {
            bump(&local.overflow);
        }
        Ok(cell)
    }

    /// Runs `create` for the object of `cell`; if it panics, the cell goes back to the
    /// allocator and the panic goes on.
    fn create_in(&self, cell: NonNull<u8>) -> T {
        let guard = FreeOnUnwind { pool: self, cell };
        let value = self.crew.recipe()();
        mem::forget(guard);
        value
    }

    /// Objects ready or on their way (built, held by workers, queued to be built), not
    /// counting other threads' magazines.
    fn available(&self) -> usize {
        self.crew.depot().on_the_way()
    }

    /// Counts one more owned cell; `Ok(true)` for an overflow cell (beyond `max`).
    fn reserve(&self, at_max: AtMax) -> Result<bool, PoolError> {
        let max = self.crew.config().max;
        let reserved = self.owned.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < max).then_some(n + 1));
        let owned = match (reserved, at_max) {
            (Ok(n), _) => n + 1,
            (Err(_), AtMax::Refuse) => return Err(PoolError::Exhausted { class: self.crew.name(), max }),
            (Err(_), AtMax::Overflow) => self.owned.fetch_add(1, Ordering::Relaxed) + 1,
        };
        self.high_water.fetch_max(owned, Ordering::Relaxed);
        Ok(reserved.is_err())
    }

    /// A cell for a reservation just made; the reservation is undone if there is none.
    fn alloc_reserved(&self) -> Result<NonNull<u8>, PoolError> {
        self.memory.try_alloc_cell(self.class).map_err(|e| {
            self.owned.fetch_sub(1, Ordering::Relaxed);
            PoolError::Alloc(e)
        })
    }

    /// Gives an empty cell back to the allocator.
    fn free(&self, cell: NonNull<u8>) {
        let freed = self.memory.free_cell(self.class, cell);
        debug_assert!(freed.is_ok(), "a pool cell belongs to its class: {freed:?}");
        self.owned.fetch_sub(1, Ordering::Relaxed);
        self.crew.depot().count_returned();
    }

    /// Frees the cells the workers gave up (a `create` that panicked, a full build queue).
    fn recycle_spare(&self) {
        self.crew.depot().drain_spare(|cell| {
            let freed = self.memory.free_cell(self.class, cell.0);
            debug_assert!(freed.is_ok(), "a pool cell belongs to its class: {freed:?}");
            self.owned.fetch_sub(1, Ordering::Relaxed);
        });
    }

    /// Queues up to `n` new cells (within `max`) for the workers; `growth`: counted in
    /// `grown` (not the first `capacity`).
    fn grow(&self, n: usize, growth: bool) -> Result<(), PoolError> {
        let (queued, failed) = self.crew.grow(n, || match self.reserve(AtMax::Refuse) {
            Ok(_) => self.alloc_reserved().map(|cell| Some(PoolCell(cell))),
            // At `max`.
            Err(_) => Ok(None),
        });
        if growth {
            self.grown.fetch_add(queued as u64, Ordering::Relaxed);
        }
        failed
    }

    /// Publishes a magazine of objects built on this thread, for any thread to take; drops
    /// them if the depot is full.
    fn publish(&self, magazine: Magazine<PoolCell>) {
        if let Err(mut magazine) = self.crew.depot().publish_local(magazine) {
            while let Some(cell) = magazine.pop() {
                // SAFETY: the magazine's cells hold objects built just now, ours alone.
                unsafe { ptr::drop_in_place(cell.0.cast::<T>().as_ptr()) };
                self.free(cell.0);
            }
        }
    }

    /// Takes back the object in `cell` (a `Pooled` dropped, or the last strong `Shared`
    /// with no weak one left), by the pool's policy.
    ///
    /// # Safety
    /// `cell` is a cell of this pool holding an object the caller owns alone and gives up.
    #[inline]
    pub(crate) unsafe fn put(&self, cell: NonNull<u8>) {
        let object = cell.cast::<T>();
        if self.crew.config().policy != Policy::Reuse {
            // SAFETY: the caller's contract; the object is dropped once, here.
            unsafe { self.drop_object(cell) };
            // SAFETY: dropped just now; the cell is ours.
            unsafe { self.put_empty(cell) };
            return;
        }
        if let Some(reset) = &self.reset {
            let guard = DropOnUnwind { pool: self, cell };
            // SAFETY: the caller's contract: the object is ours alone.
            reset(unsafe { &mut *object.as_ptr() });
            mem::forget(guard);
        }
        let local = self.local();
        bump(&local.released);
        let kept = self.owned.load(Ordering::Relaxed) <= self.crew.config().max
            && local.with(|m| m.push(self.crew.depot(), PoolCell(cell))).is_ok();
        if kept {
            bump(&local.reused);
        } else {
            // Above `max` (an overflow object came back) or the depot is full: shrink.
            // SAFETY: the object is still ours (not pushed); dropped once, here.
            unsafe { ptr::drop_in_place(object.as_ptr()) };
            self.free(cell);
        }
    }

    /// Drops the object in `cell` in place and counts it handed back; the cell stays the
    /// caller's (a `Shared` object whose `WeakShared`s still name the cell).
    ///
    /// # Safety
    /// `cell` is a cell of this pool holding an object the caller owns alone.
    pub(crate) unsafe fn drop_object(&self, cell: NonNull<u8>) {
        bump(&self.local().released);
        // A panicking destructor still ends the object: count it, then let the panic go on.
        // SAFETY: the caller's contract; dropped once.
        unsafe { ptr::drop_in_place(cell.cast::<T>().as_ptr()) };
    }

    /// Takes back a cell whose object has been dropped: queued for a worker to rebuild, or
    /// freed when the pool has no workers, is shutting down or is above `max`.
    ///
    /// # Safety
    /// `cell` is a cell of this pool that holds no object, and the caller gives it up.
    pub(crate) unsafe fn put_empty(&self, cell: NonNull<u8>) {
        if self.crew.config().workers == 0 || self.owned.load(Ordering::Relaxed) > self.crew.config().max {
            self.free(cell);
        } else if let Err(cell) = self.crew.depot().purged(PoolCell(cell)) {
            // Shutting down: nothing will rebuild it.
            self.free(cell.0);
        }
    }
}

impl<T: Send + 'static> Drop for Pool<T> {
    fn drop(&mut self) {
        // A panicking destructor in one step does not skip the others.
        let mut drops = DropAll::new();
        // The threads' magazines first: a thread exiting from now on finds its entry
        // retired and hands nothing to the depot, which the shutdown empties next.
        for local in self.locals.all.lock().iter() {
            // SAFETY: `&mut self`: no thread pulls or returns any more (every guard borrows
            // the pool or keeps it alive); a thread exiting now may still hand its magazines
            // back, which `retire` waits out. Every cell in them holds a `T` the pool alone
            // owns, built by `create` or reset.
            unsafe {
                local.magazines.retire(|magazines| magazines.drop_built(&mut drops, self.crew.recipe(), &()));
            }
        }
        let panicked = match self.crew.shutdown(&mut drops) {
            Stopped::Joined { panicked } => panicked,
            // The pool's last owner went away inside `create` on one of its own workers: that
            // worker is still building into a cell, so neither the objects nor the memory can
            // go. Leak them rather than free what is in use.
            Stopped::OnAWorker => return,
        };
        // SAFETY: every object is dropped (the pool's above; `Pooled` borrows the pool, and
        // `OwnedPooled` and `Shared` keep it alive); nothing uses the memory any more.
        unsafe { ManuallyDrop::drop(&mut self.memory) };
        if panicked && !std::thread::panicking() && !drops.panicked() {
            panic!("a precreation worker of the {} pool panicked", self.crew.name());
        }
    }
}

/// Objects [`Pool::prefill`] built and has not published yet: published when it drops.
struct Batch<'a, T: Send + 'static> {
    pool: &'a Pool<T>,
    magazine: Magazine<PoolCell>,
}

impl<T: Send + 'static> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        if !self.magazine.is_empty() {
            self.pool.publish(mem::replace(&mut self.magazine, Magazine::new()));
        }
    }
}

/// Frees a cell if `create` panics while building its object.
struct FreeOnUnwind<'a, T: Send + 'static> {
    pool: &'a Pool<T>,
    cell: NonNull<u8>,
}

impl<T: Send + 'static> Drop for FreeOnUnwind<'_, T> {
    fn drop(&mut self) {
        self.pool.free(self.cell);
    }
}

/// If `reset` panics: drops the half-reset object and takes its cell back empty.
struct DropOnUnwind<'a, T: Send + 'static> {
    pool: &'a Pool<T>,
    cell: NonNull<u8>,
}

impl<T: Send + 'static> Drop for DropOnUnwind<'_, T> {
    fn drop(&mut self) {
        self.pool.reset_panics.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `put`'s caller gave us the object; `reset` did not finish, so it was not
        // pushed anywhere: we drop it once and take the cell back.
        unsafe {
            self.pool.drop_object(self.cell);
            self.pool.put_empty(self.cell);
        }
    }
}

/// An object pulled from a [`Pool`]: derefs to `T`; dropping it hands the object back by
/// the pool's policy. Borrows the pool (see [`OwnedPooled`] for one that does not).
///
/// It cannot outlive its pool:
///
/// ```compile_fail,E0505
/// use respawn_pool::Pool;
/// let pool = Pool::builder().workers(0).create(|| 0u64).build().unwrap();
/// let object = pool.pull();
/// drop(pool); // error: `pool` is still borrowed by `object`
/// drop(object);
/// ```
pub struct Pooled<'a, T: Send + 'static> {
    pool: &'a Pool<T>,
    cell: NonNull<u8>,
}

// SAFETY: a `Pooled` owns its object (`T: Send` moves with it) and returns it through the
// pool, which any thread may use (`Pool: Sync`).
unsafe impl<T: Send + 'static> Send for Pooled<'_, T> {}
// SAFETY: `&Pooled` gives `&T` only.
unsafe impl<T: Send + Sync + 'static> Sync for Pooled<'_, T> {}

impl<T: Send + 'static> Pooled<'_, T> {
    /// The pool the object came from.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::{Pool, Pooled};
    ///
    /// let pool = Pool::builder().workers(0).create(String::new).build()?;
    /// let line = pool.pull();
    /// assert!(std::ptr::eq(Pooled::pool(&line), &pool));
    /// assert_eq!(Pooled::pool(&line).stats().in_use, 1);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn pool(this: &Self) -> &Pool<T> {
        this.pool
    }
}

impl<T: Send + 'static> Deref for Pooled<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the cell holds the object this guard owns until it drops.
        unsafe { &*self.cell.cast::<T>().as_ptr() }
    }
}

impl<T: Send + 'static> DerefMut for Pooled<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.cell.cast::<T>().as_ptr() }
    }
}

impl<T: Send + 'static> Drop for Pooled<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owned the object in its pool's cell, and gives it up once.
        unsafe { self.pool.put(self.cell) };
    }
}

impl<T: Send + fmt::Debug + 'static> fmt::Debug for Pooled<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A [`Pooled`] that holds an `Arc` of its pool instead of a borrow
/// ([`Pool::pull_owned`]): it may be stored or sent anywhere, and the pool lives until the
/// last of these (and of its `Shared` objects) is gone.
pub struct OwnedPooled<T: Send + 'static> {
    pool: Arc<Pool<T>>,
    cell: NonNull<u8>,
}

// SAFETY: as for `Pooled`; the `Arc` is `Send + Sync` because `Pool` is.
unsafe impl<T: Send + 'static> Send for OwnedPooled<T> {}
// SAFETY: `&OwnedPooled` gives `&T` only.
unsafe impl<T: Send + Sync + 'static> Sync for OwnedPooled<T> {}

impl<T: Send + 'static> OwnedPooled<T> {
    /// The pool the object came from.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use respawn_pool::{OwnedPooled, Pool};
    ///
    /// let pool = Arc::new(Pool::builder().workers(0).create(String::new).build()?);
    /// let line = pool.pull_owned();
    /// assert!(Arc::ptr_eq(OwnedPooled::pool(&line), &pool));
    /// assert_eq!(Arc::strong_count(&pool), 2, "the guard keeps the pool alive");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn pool(this: &Self) -> &Arc<Pool<T>> {
        &this.pool
    }
}

impl<T: Send + 'static> Deref for OwnedPooled<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the cell holds the object this guard owns until it drops.
        unsafe { &*self.cell.cast::<T>().as_ptr() }
    }
}

impl<T: Send + 'static> DerefMut for OwnedPooled<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.cell.cast::<T>().as_ptr() }
    }
}

impl<T: Send + 'static> Drop for OwnedPooled<T> {
    fn drop(&mut self) {
        // SAFETY: the guard owned the object in its pool's cell, and gives it up once. The
        // `Arc` field drops after this, so the pool outlives the call.
        unsafe { self.pool.put(self.cell) };
    }
}

impl<T: Send + fmt::Debug + 'static> fmt::Debug for OwnedPooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Send + 'static> Pool<T> {
    /// Keeps at most `n` objects ready (or queued for the workers) of those this thread
    /// and the depot hold, drops the others (each once), frees their cells, and gives back
    /// the memory of the slabs left without an object (`madvise(MADV_DONTNEED)`; they
    /// serve again, committed anew, before a new slab is carved). Objects in use are
    /// untouched, and so are the ready objects in *other* threads' magazines (each thread's
    /// are its own; at most 256 per thread), those a worker is building and those it holds
    /// in its partial magazine. The cells kept are the lowest in the pool's memory, so the
    /// dropped ones empty as many slabs as they can. Returns how many objects it dropped
    /// (also counted in [`PoolStats::trimmed`]).
    ///
    /// A pool below its `low_watermark` grows back at the next pull that refills, as
    /// configured.
    ///
    /// # Errors
    /// [`PoolError::Alloc`] if the OS refused to decommit a slab (the objects are dropped
    /// and their cells free all the same).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_allocator::SlabConfig;
    /// use respawn_pool::Pool;
    ///
    /// // No slabs prepared ahead, so what is committed is what the objects need.
    /// let slab = SlabConfig { spare_slabs: 0, ..SlabConfig::DEFAULT };
    /// let pool = Pool::builder().workers(0).slab(slab).create(|| [0u64; 8]).build()?;
    /// let burst: Vec<_> = (0..5000).map(|_| pool.pull()).collect();
    /// drop(burst); // `Reuse`: 5000 objects ready
    /// let peak = pool.stats().committed_bytes;
    ///
    /// assert_eq!(pool.shrink_to(100)?, 4900);
    /// let stats = pool.stats();
    /// assert_eq!((stats.ready, stats.trimmed), (100, 4900));
    /// assert!(stats.committed_bytes < peak / 4, "the burst's slabs went back");
    /// assert_eq!(pool.clear()?, 100);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn shrink_to(&self, n: usize) -> Result<usize, PoolError> {
        let mut ready: Vec<PoolCell> = self.local().with(|m| {
            let mut cells = Vec::with_capacity(m.len());
            cells.extend(std::iter::from_fn(|| m.loaded.pop()));
            cells.extend(std::iter::from_fn(|| m.previous.pop()));
            cells
        });
        self.crew.depot().take_published(&mut ready);
        let mut queued = Vec::new();
        self.crew.depot().take_queued(&mut queued);
        let gone = depot::lowest_first(&mut ready, n, |cell| cell.0);
        let gone_queued = depot::lowest_first(&mut queued, n - ready.len(), |cell| cell.0);

        // Kept: back among this thread's ready objects, the lowest on top.
        let depot = self.crew.depot();
        let overflow: Vec<PoolCell> =
            self.local().with(|m| ready.into_iter().rev().filter_map(|cell| m.push(depot, cell).err()).collect());
        if !queued.is_empty() {
            self.crew.depot().request_growth(queued);
        }
        let dropped = gone.len() + overflow.len();
        // A panicking destructor does not stop the others; the first panic goes on after.
        let mut drops = respawn_allocator::DropAll::new();
        for cell in gone.into_iter().chain(overflow) {
            // SAFETY: a ready cell holds a built `T` the pool alone owns (taken out of the
            // magazines above); the cell is freed right after, so this is its one drop.
            drops.run(|| unsafe { ptr::drop_in_place(cell.0.cast::<T>().as_ptr()) });
            self.free(cell.0);
        }
        for cell in gone_queued {
            // A queued cell holds no object (a standalone pool's `Purge` drops before it
            // queues).
            self.free(cell.0);
        }
        self.recycle_spare();
        self.trimmed.fetch_add(dropped as u64, Ordering::Relaxed);
        let trimmed = self.memory.trim_cells(self.class);
        drop(drops);
        trimmed.map(|_| dropped).map_err(PoolError::Alloc)
    }

    /// Drops every ready object this thread and the depot hold (Unity's
    /// `ObjectPool.Clear`): [`shrink_to(0)`](Self::shrink_to).
    ///
    /// # Errors
    /// As [`shrink_to`](Self::shrink_to).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_pool::Pool;
    ///
    /// let pool = Pool::builder().workers(0).create(|| vec![0u8; 4096]).build()?;
    /// let burst: Vec<_> = (0..10).map(|_| pool.pull()).collect();
    /// drop(burst); // `Reuse`: ten buffers ready
    /// assert_eq!(pool.clear()?, 10);
    /// assert_eq!((pool.stats().ready, pool.owned()), (0, 0));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn clear(&self) -> Result<usize, PoolError> {
        self.shrink_to(0)
    }
}
