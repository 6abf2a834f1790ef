//! The `World`: the heap, its pools, the frame rhythm.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bumpalo::Bump;
use respawn_arena::{ArenaConfig, ClassId, ClassLayout, Handle, ListenerId, RawHandle, Root, View};
use respawn_gc::{
    ClusterId, CollectOptions, GarbageReference, GcSettings, GcStats, GcStep, Heap, Lifetime, Object, PurgeProgress,
    ReferenceChain, Referencer, Tracer,
};
use respawn_pool::{ConfigLayers, PoolConfig, PoolError, PoolMut, PoolStats, Poolable, Pools};

use crate::batch::SpawnBatch;
use crate::commands::CommandState;
use crate::panics::spawn_failed;
use crate::schedule::TickSchedule;

mod collector;
mod composite;

/// Adds one class's pool with its final (merged) configuration.
type AddPool = Box<dyn FnOnce(&mut Pools, PoolConfig) -> Result<(), PoolError>>;

/// One class's pool registration, applied when the world is built (after the
/// configuration files are merged over `config`).
struct PendingPool {
    name: &'static str,
    config: PoolConfig,
    add: AddPool,
}

/// Builds a [`World`]: its pooled classes, configuration files, collector settings.
///
/// ```
/// use respawn::{Object, PoolConfig, Poolable, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Spark { heat: f32 }
/// impl Poolable for Spark {
///     fn create() -> Self { Spark { heat: 0.0 } }
/// }
///
/// let world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build().unwrap();
/// assert!(world.pools().is_pooled::<Spark>());
/// ```
pub struct WorldBuilder {
    pools: Vec<PendingPool>,
    files: Vec<(PathBuf, bool)>,
    layers: ConfigLayers,
    gc: GcSettings,
    arena: ArenaConfig,
    /// Classes declared [`Lifetime::Collected`], applied when the world is built.
    collected: Vec<(&'static str, SetLifetime)>,
    require_pools: bool,
}

/// Declares one class [`Lifetime::Collected`] in a world's heap.
type SetLifetime = fn(&mut Heap) -> Result<(), respawn_arena::ArenaError>;

fn collected<T: Object>(heap: &mut Heap) -> Result<(), respawn_arena::ArenaError> {
    heap.set_lifetime::<T>(Lifetime::Collected)
}

impl fmt::Debug for WorldBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.pools.iter().map(|p| p.name).collect();
        let collected: Vec<_> = self.collected.iter().map(|c| c.0).collect();
        f.debug_struct("WorldBuilder")
            .field("pools", &names)
            .field("files", &self.files)
            .field("collected", &collected)
            .finish()
    }
}

impl WorldBuilder {
    /// Gives `T` a pool with `config` (which configuration files may override by
    /// `T::class_name()`).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// assert_eq!(world.pools().config::<Spark>(), Some(&PoolConfig::ON_DEMAND));
    /// world.spawn::<Spark>(); // from the pool
    /// assert_eq!(world.pool_stats::<Spark>().unwrap().spawns, 1);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn pool<T: Poolable>(self, config: PoolConfig) -> Self {
        self.pool_with::<T>(config, T::create)
    }

    /// Gives `T` a pool whose objects `create` builds instead of `T::create` (a closure
    /// can capture shared assets).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock {
    ///     #[trace(skip)] // holds no handle
    ///     mesh: Arc<Vec<[f32; 3]>>,
    /// }
    /// impl Poolable for Rock {
    ///     fn create() -> Self { Rock { mesh: Arc::new(Vec::new()) } }
    /// }
    ///
    /// // One mesh, loaded once, shared by every rock the pool builds.
    /// let mesh = Arc::new(vec![[0.0, 1.0, 0.0]; 3]);
    /// let shared = Arc::clone(&mesh);
    /// let mut world = World::builder()
    ///     .pool_with::<Rock>(PoolConfig::ON_DEMAND, move || Rock { mesh: Arc::clone(&shared) })
    ///     .build()?;
    /// let rock = world.spawn::<Rock>();
    /// assert!(Arc::ptr_eq(&world.get(rock).unwrap().mesh, &mesh));
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn pool_with<T: Poolable>(
        mut self,
        config: PoolConfig,
        create: impl Fn() -> T + Send + Sync + 'static,
    ) -> Self {
        self.pools.push(PendingPool {
            name: T::class_name(),
            config,
            add: Box::new(move |pools, config| pools.add_with::<T>(config, create)),
        });
        self
    }

    /// Adds a configuration layer: a TOML file of `[ClassName]` tables, applied over the
    /// configs given in code and over earlier files. Read at [`build`](Self::build).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let dir = std::env::temp_dir().join(format!("respawn-doc-config-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("pools.toml");
    /// std::fs::write(&path, "[Spark]\nmax = 64\n")?;
    ///
    /// let world =
    ///     World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).config_file(&path).build()?;
    /// let config = world.pools().config::<Spark>().unwrap();
    /// assert_eq!(config.max, 64, "the file's");
    /// assert_eq!(config.policy, Policy::Reuse, "the code's: the file does not set it");
    ///
    /// // A file that cannot be read is refused at `build`.
    /// let missing = World::builder().config_file(dir.join("missing.toml")).build();
    /// assert!(matches!(missing, Err(PoolError::Config(_))));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.files.push((path.into(), false));
        self
    }

    /// Adds `path` and then, if it exists, its platform layer (`pools.toml` →
    /// `pools.linux.toml` on Linux; see [`ConfigLayers::push_platform`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::ConfigLayers;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let dir = std::env::temp_dir().join(format!("respawn-doc-platform-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let base = dir.join("pools.toml");
    /// std::fs::write(&base, "[Spark]\nmax = 64\nworkers = 0\n")?;
    /// // This platform's layer (`pools.linux.toml` on Linux) overrides the base file.
    /// let platform = ConfigLayers::platform_path(&base, std::env::consts::OS);
    /// std::fs::write(&platform, "[Spark]\nmax = 32\n")?;
    ///
    /// let world =
    ///     World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).platform_config(&base).build()?;
    /// let config = world.pools().config::<Spark>().unwrap();
    /// assert_eq!((config.max, config.workers), (32, 0));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn platform_config(mut self, path: impl Into<PathBuf>) -> Self {
        self.files.push((path.into(), true));
        self
    }

    /// Adds configuration layers loaded already.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::pool::ConfigFile;
    /// use respawn::prelude::*;
    /// use respawn::ConfigLayers;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// // Layers read already (here from text; `ConfigLayers::push_file` reads a file).
    /// let mut layers = ConfigLayers::new();
    /// layers.push(ConfigFile::parse("defaults.toml", "[Spark]\nmax = 64\npolicy = \"purge\"\n")?);
    /// layers.push(ConfigFile::parse("tuned.toml", "[Spark]\nmax = 128\n")?);
    ///
    /// let world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).config(layers).build()?;
    /// let config = world.pools().config::<Spark>().unwrap();
    /// assert_eq!((config.max, config.policy), (128, Policy::Purge), "the later layer wins");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(mut self, layers: ConfigLayers) -> Self {
        for file in layers.files() {
            self.layers.push(file.clone());
        }
        self
    }

    /// The collector's settings (default: [`GcSettings::DEFAULT`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// let world = World::builder().gc(GcSettings::SINGLE_THREADED).build()?;
    /// assert_eq!(world.heap().settings(), &GcSettings::SINGLE_THREADED);
    ///
    /// // Settings that `GcSettings::validate` refuses fail the build.
    /// let bad = GcSettings { min_objects_per_task: 0, ..GcSettings::DEFAULT };
    /// assert!(matches!(World::builder().gc(bad).build(), Err(PoolError::Gc(_))));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn gc(mut self, settings: GcSettings) -> Self {
        self.gc = settings;
        self
    }

    /// The arena's settings (default: [`ArenaConfig::DEFAULT`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::ArenaConfig;
    ///
    /// // A 1 MiB permanent pool instead of the default 16 MiB.
    /// let config = ArenaConfig { permanent_bytes: 1 << 20, ..ArenaConfig::DEFAULT };
    /// let world = World::builder().arena(config).build()?;
    /// assert_eq!(world.heap().arena().config(), &config);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn arena(mut self, config: ArenaConfig) -> Self {
        self.arena = config;
        self
    }

    /// Declares `T` [`Lifetime::Collected`]: its objects live only while something
    /// references them (a root, a guard, a referencer, a handle in a kept object), as UE's
    /// plain objects (`NewObject`) and a script's temporaries do, and the first collection
    /// after the last reference goes purges them, routing pooled ones back to their pool.
    ///
    /// Every other class is [`Lifetime::Owned`]: the world keeps what it spawns until the
    /// game destroys it, as a level keeps its actors, and no collection reclaims it before.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Handle, Lifetime, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Enemy { target: Option<Handle<Waypoint>> }
    /// impl Poolable for Enemy {
    ///     fn create() -> Self { Enemy { target: None } }
    /// }
    ///
    /// // A path point lives while some enemy walks to it.
    /// #[derive(Trace, Object)]
    /// struct Waypoint { pos: [f32; 2] }
    /// impl Poolable for Waypoint {
    ///     fn create() -> Self { Waypoint { pos: [0.0; 2] } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Enemy>(PoolConfig::DEFAULT)
    ///     .collected::<Waypoint>()
    ///     .build()?;
    /// assert_eq!(world.lifetime::<Enemy>(), Lifetime::Owned);
    /// assert_eq!(world.lifetime::<Waypoint>(), Lifetime::Collected);
    ///
    /// let enemy = world.spawn::<Enemy>(); // nothing references it: kept all the same
    /// let near = world.spawn_with(|w: &mut Waypoint| w.pos = [1.0, 2.0]);
    /// let far = world.spawn_with(|w: &mut Waypoint| w.pos = [9.0, 9.0]);
    /// world.get_mut(enemy).unwrap().target = Some(near);
    ///
    /// world.collect_garbage();
    /// assert!(world.contains(enemy) && world.contains(near), "the enemy holds its waypoint");
    /// assert!(!world.contains(far), "nothing held it");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn collected<T: Object>(mut self) -> Self {
        self.collected.push((std::any::type_name::<T>(), collected::<T>));
        self
    }

    /// Whether every class the world spawns must have a pool (default: `false`). With
    /// `true`, spawning a class that has none ([`World::try_spawn`], [`World::spawn_sub`],
    /// [`Pools::try_spawn_with`]) returns [`PoolError::NotPooled`] and [`World::spawn`]
    /// panics with it, instead of building the object on the game thread (which
    /// [`WorldStats::unpooled_spawns`] counts). See [`Pools::set_require_pools`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Debris { mass: f32 }
    /// impl Poolable for Debris {
    ///     fn create() -> Self { Debris { mass: 1.0 } }
    /// }
    ///
    /// let mut world =
    ///     World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).require_pools(true).build()?;
    /// assert!(world.try_spawn::<Spark>().is_ok());
    /// // `Debris` has no pool: refused, rather than built on the game thread.
    /// assert!(matches!(world.try_spawn::<Debris>(), Err(PoolError::NotPooled(_))));
    /// assert_eq!(world.stats().unpooled_spawns, 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn require_pools(mut self, on: bool) -> Self {
        self.require_pools = on;
        self
    }

    /// Reads the configuration files, merges them over the code's configs, validates
    /// everything, and starts the pools' workers.
    ///
    /// # Errors
    /// [`PoolError::Config`] naming the file, class and key at fault (unreadable file, bad
    /// TOML, unknown class, a value out of range); [`PoolError::Gc`] for bad GC settings;
    /// [`PoolError::AlreadyPooled`] for a class given two pools.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, PoolError, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// assert!(world.pools().is_pooled::<Spark>());
    ///
    /// // A class given two pools.
    /// let twice = World::builder()
    ///     .pool::<Spark>(PoolConfig::PROJECTILES)
    ///     .pool::<Spark>(PoolConfig::DEFAULT)
    ///     .build();
    /// assert!(matches!(twice, Err(PoolError::AlreadyPooled(_))));
    ///
    /// // A config that breaks a rule of `PoolConfig::validate`: more to precreate than `max`.
    /// let config = PoolConfig { capacity: 5000, max: 4096, ..PoolConfig::PROJECTILES };
    /// let invalid = World::builder().pool::<Spark>(config).build();
    /// assert!(matches!(invalid, Err(PoolError::Config(_))));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn build(self) -> Result<World, PoolError> {
        let mut layers = self.layers;
        for (path, platform) in &self.files {
            layers.push_file(path)?;
            if *platform {
                layers.push_platform(path)?;
            }
        }
        layers.check_classes(self.pools.iter().map(|p| p.name))?;
        let mut configs = Vec::with_capacity(self.pools.len());
        for pending in &self.pools {
            let mut config = pending.config;
            layers.apply(pending.name, &mut config)?;
            configs.push(config);
        }
        let mut heap = Heap::with_config(self.arena, self.gc)?;
        // What the world spawns, it keeps until the game destroys it.
        heap.set_default_lifetime(Lifetime::Owned);
        let mut pools = Pools::new(heap);
        pools.set_require_pools(self.require_pools);
        for (pending, config) in self.pools.into_iter().zip(configs) {
            (pending.add)(&mut pools, config)?;
        }
        for (_, set) in self.collected {
            set(heap_of(&mut pools)).map_err(PoolError::Arena)?;
        }
        Ok(World {
            pools,
            frame: Bump::new(),
            last_frame: None,
            frames: 0,
            ticks: TickSchedule::default(),
            commands: CommandState::default(),
        })
    }
}

/// What [`World::end_frame`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameEnd {
    /// The frame's number (0 for the first).
    pub frame: u64,
    /// The time the collector's schedule advanced by.
    pub dt: Duration,
    /// What the collector did: a purge slice, a collection, or nothing.
    pub gc: GcStep,
    /// Bytes the frame arena handed out this frame (alignment padding included).
    pub frame_bytes: usize,
}

/// Figures of the whole world.
#[derive(Clone, Debug)]
pub struct WorldStats {
    /// Every pool's counters.
    pub pools: Vec<PoolStats>,
    /// The last collection's figures.
    pub gc: GcStats,
    /// Objects waiting to be purged.
    pub pending_purge: usize,
    /// Bytes of slabs committed over every class (pooled or not; each pool's share is its
    /// [`PoolStats::committed_bytes`]): what trims and the idle trim give back.
    pub committed_bytes: usize,
    /// Objects spawned of classes without a pool, each built on the game thread by
    /// `T::create` ([`Pools::unpooled_spawns`]). A game that means to pool every class it
    /// spawns can check it stays 0, or refuse such spawns:
    /// [`WorldBuilder::require_pools`].
    pub unpooled_spawns: u64,
}

/// respawn's world: objects in class-contiguous memory behind generational handles, pools
/// that build them ahead of time on worker threads, a garbage collector, and a frame
/// rhythm for games.
///
/// ```
/// use respawn::{Handle, Object, Policy, PoolConfig, Poolable, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Projectile { pos: [f32; 2], vel: [f32; 2], life: f32 }
///
/// impl Poolable for Projectile {
///     fn create() -> Self {
///         Projectile { pos: [0.0; 2], vel: [0.0; 2], life: 0.0 }
///     }
///     fn reset(&mut self) {
///         *self = Self::create();
///     }
/// }
///
/// let config = PoolConfig { capacity: 1024, low_watermark: 256, policy: Policy::Reuse, ..PoolConfig::PROJECTILES };
/// let mut world = World::builder().pool::<Projectile>(config).build()?;
///
/// let shot = world.spawn_with(|p: &mut Projectile| {
///     p.vel = [10.0, 0.0];
///     p.life = 1.0;
/// });
/// world.tick::<Projectile>(|p| {
///     p.pos[0] += p.vel[0] / 60.0;
///     p.life -= 1.0 / 60.0;
/// });
/// assert!(world.get(shot).unwrap().pos[0] > 0.0);
///
/// world.destroy(shot)?; // Reuse: reset and ready again at once
/// assert!(world.get(shot).is_none(), "stale at once");
/// assert!(world.destroy(shot).is_err(), "released already");
/// world.end_frame();
/// # Ok::<(), respawn::PoolError>(())
/// ```
pub struct World {
    pools: Pools,
    frame: Bump,
    last_frame: Option<Instant>,
    frames: u64,
    /// Tick functions by group ([`add_tick`](Self::add_tick), src/schedule.rs).
    pub(crate) ticks: TickSchedule,
    /// The command buffers of `tick_with`, `par_tick_with` and `apply`, kept warm.
    pub(crate) commands: CommandState,
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World").field("pools", &self.pools).field("frames", &self.frames).finish()
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// A world with no pools and the default settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Crate { loot: u32 }
    /// impl Poolable for Crate {
    ///     fn create() -> Self { Crate { loot: 0 } }
    /// }
    ///
    /// let mut world = World::new();
    /// assert!(world.pools().stats().is_empty(), "no pools");
    /// assert_eq!(world.heap().settings(), &GcSettings::DEFAULT);
    /// // A class without a pool spawns all the same: built on this thread by `create`.
    /// let loot = world.spawn_with(|c: &mut Crate| c.loot = 5);
    /// assert_eq!(world.get(loot).unwrap().loot, 5);
    /// assert_eq!(world.stats().unpooled_spawns, 1);
    /// ```
    pub fn new() -> Self {
        Self::builder().build().expect("the default settings are valid")
    }

    /// Starts building a world: its pooled classes, configuration files and collector
    /// settings; see [`WorldBuilder`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{GcSettings, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Rocket { fuel: f32 }
    /// impl Poolable for Rocket {
    ///     fn create() -> Self { Rocket { fuel: 100.0 } } // think 20 µs of set-up
    /// }
    ///
    /// let world = World::builder()
    ///     .pool::<Spark>(PoolConfig::PROJECTILES) // many, cheap, `Reuse`
    ///     .pool::<Rocket>(PoolConfig::EXPENSIVE)  // two workers, `Purge`
    ///     .gc(GcSettings::LOW_LATENCY)            // a collection every 10 s, 1 ms slices
    ///     .build()?;
    /// assert_eq!(world.pools().config::<Rocket>(), Some(&PoolConfig::EXPENSIVE));
    /// assert_eq!(world.heap().settings(), &GcSettings::LOW_LATENCY);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn builder() -> WorldBuilder {
        WorldBuilder {
            pools: Vec::new(),
            files: Vec::new(),
            layers: ConfigLayers::new(),
            gc: GcSettings::DEFAULT,
            arena: ArenaConfig::DEFAULT,
            collected: Vec::new(),
            require_pools: false,
        }
    }

    /// Spawns an object of `T` from its pool (see [`Pools::spawn_with`]); built inline by
    /// `T::create` if nothing is ready or `T` has no pool.
    ///
    /// # Panics
    /// If the class's memory is exhausted (its reservation or the object table), or `T`
    /// has no pool in a world built with [`require_pools`](WorldBuilder::require_pools);
    /// see [`try_spawn`](Self::try_spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 100.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// let spark = world.spawn::<Spark>();
    /// assert_eq!(world.get(spark).unwrap().heat, 100.0);
    /// assert_eq!(world.pool_stats::<Spark>().unwrap().spawns, 1);
    ///
    /// // A class without a pool spawns too: built inline by `create`.
    /// let mut bare = World::new();
    /// let spark = bare.spawn::<Spark>();
    /// assert!(bare.contains(spark) && bare.pool_stats::<Spark>().is_none());
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    #[inline]
    pub fn spawn<T: Poolable>(&mut self) -> Handle<T> {
        self.spawn_with(|_| {})
    }

    /// Spawns an object and runs `init` on it before its `on_spawn` hook.
    ///
    /// # Panics
    /// As [`spawn`](Self::spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rocket { fuel: f32, armed: bool }
    /// impl Poolable for Rocket {
    ///     fn create() -> Self { Rocket { fuel: 0.0, armed: false } }
    ///     // Runs after `spawn_with`'s initialiser.
    ///     fn on_spawn(&mut self) { self.armed = self.fuel > 0.0; }
    /// }
    ///
    /// let mut world = World::builder().pool::<Rocket>(PoolConfig::EXPENSIVE).build()?;
    /// let rocket = world.spawn_with(|r: &mut Rocket| r.fuel = 30.0);
    /// let r = world.get(rocket).unwrap();
    /// assert!(r.fuel == 30.0 && r.armed);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    #[inline(always)]
    pub fn spawn_with<T: Poolable>(&mut self, init: impl FnOnce(&mut T)) -> Handle<T> {
        match self.pools.spawn_with(init) {
            Ok(h) => h,
            Err(e) => spawn_failed(T::class_name(), e),
        }
    }

    /// Spawns an object, refusing at the pool's `max` instead of building an overflow
    /// object.
    ///
    /// # Errors
    /// [`PoolError::Exhausted`], or [`PoolError::Arena`] when memory is exhausted;
    /// [`PoolError::NotPooled`] if `T` has no pool and the world
    /// [requires pools](WorldBuilder::require_pools).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// // Room for two sparks at most.
    /// let config = PoolConfig { max: 2, ..PoolConfig::ON_DEMAND };
    /// let mut world = World::builder().pool::<Spark>(config).build()?;
    /// let first = world.try_spawn::<Spark>()?;
    /// world.try_spawn::<Spark>()?;
    /// assert!(matches!(world.try_spawn::<Spark>(), Err(PoolError::Exhausted { max: 2, .. })));
    ///
    /// // `Reuse`: a destroyed spark is ready again, so the next one succeeds.
    /// world.destroy(first)?;
    /// assert!(world.try_spawn::<Spark>().is_ok());
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn try_spawn<T: Poolable>(&mut self) -> Result<Handle<T>, PoolError> {
        self.pools.try_spawn_with(|_| {})
    }

    /// Spawns `n` objects of `T`, running `init(i, object)` on the `i`th before its
    /// `on_spawn` hook, and returns their handles as an iterator, as hecs' and bevy's
    /// `spawn_batch` do: each `next` spawns one (a pop from the pool, as
    /// [`spawn_with`](Self::spawn_with)), and dropping the iterator spawns the rest, so all
    /// `n` exist once it is gone, whether it was collected, partly iterated or dropped at
    /// once. It allocates nothing: extend a `Vec` of your own, or use the handles as they
    /// come. The iterator borrows the world mutably while it lives.
    ///
    /// # Panics
    /// As [`spawn`](Self::spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { pos: [f32; 2] }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { pos: [0.0; 2] } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// // A ring of sparks.
    /// let mut ring = Vec::with_capacity(16);
    /// ring.extend(world.spawn_batch(16, |i, s: &mut Spark| {
    ///     let a = i as f32 / 16.0 * std::f32::consts::TAU;
    ///     s.pos = [a.cos(), a.sin()];
    /// }));
    /// assert_eq!(ring.len(), 16);
    /// assert!((world.get(ring[4]).unwrap().pos[1] - 1.0).abs() < 1e-6);
    ///
    /// // Not iterated: spawned all the same, when the iterator drops.
    /// world.spawn_batch(8, |_, _: &mut Spark| {});
    /// assert_eq!(world.len::<Spark>(), 24);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn spawn_batch<T: Poolable, F: FnMut(usize, &mut T)>(&mut self, n: usize, init: F) -> SpawnBatch<'_, T, F> {
        SpawnBatch::new(self, n, init)
    }

    /// Spawns an object as a sub-object of `outer` (UE's `NewObject(Outer)`): it is destroyed
    /// with its owner, and keeps its owner alive while it is alive itself. Like every object
    /// the world spawns it lives until destroyed, unless its class is
    /// [`collected`](WorldBuilder::collected): then, as in UE, the owner does not keep it
    /// alive (reference it, or root it, to keep it).
    ///
    /// # Errors
    /// [`PoolError::Stale`] / [`PoolError::Arena`] if `outer` does not resolve (nothing is
    /// spawned then), or as [`try_spawn`](Self::try_spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { ammo: u32 }
    /// impl Poolable for Turret {
    ///     fn create() -> Self { Turret { ammo: 30 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Barrel { heat: f32 }
    /// impl Poolable for Barrel {
    ///     fn create() -> Self { Barrel { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Decal { age: f32 }
    /// impl Poolable for Decal {
    ///     fn create() -> Self { Decal { age: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Turret>(PoolConfig::DEFAULT)
    ///     .pool::<Barrel>(PoolConfig::DEFAULT)
    ///     .collected::<Decal>() // lives only while referenced
    ///     .build()?;
    /// let turret = world.spawn::<Turret>();
    /// let barrel = world.spawn_sub::<Barrel, _>(turret)?;
    /// let scorch = world.spawn_sub::<Decal, _>(turret)?;
    ///
    /// // Both owned by the world: kept with nothing referencing them. The collected decal's
    /// // owner does not keep it.
    /// world.collect_garbage();
    /// assert!(world.contains(barrel) && world.contains(turret));
    /// assert!(!world.contains(scorch), "nothing reached it");
    ///
    /// // Destroying the owner takes its sub-objects with it.
    /// world.destroy(turret)?;
    /// assert!(!world.contains(barrel));
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn spawn_sub<T: Poolable, O>(&mut self, outer: Handle<O>) -> Result<Handle<T>, PoolError> {
        self.spawn_sub_with(outer, |_| {})
    }

    /// [`spawn_sub`](Self::spawn_sub), running `init` on the object before its `on_spawn`
    /// hook (a turret's projectile: owned by the turret, launched from its muzzle).
    ///
    /// # Errors
    /// As [`spawn_sub`](Self::spawn_sub).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { muzzle: [f32; 2] }
    /// impl Poolable for Turret {
    ///     fn create() -> Self { Turret { muzzle: [0.0; 2] } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Shell { pos: [f32; 2] }
    /// impl Poolable for Shell {
    ///     fn create() -> Self { Shell { pos: [0.0; 2] } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Turret>(PoolConfig::ON_DEMAND)
    ///     .pool::<Shell>(PoolConfig::ON_DEMAND)
    ///     .build()?;
    /// let turret = world.spawn_with(|t: &mut Turret| t.muzzle = [4.0, 1.0]);
    /// let muzzle = world.get(turret).unwrap().muzzle;
    /// let shell = world.spawn_sub_with(turret, |s: &mut Shell| s.pos = muzzle)?;
    /// assert_eq!(world.get(shell).unwrap().pos, [4.0, 1.0]);
    ///
    /// world.destroy(turret)?; // its shells go with it
    /// assert!(!world.contains(shell));
    /// assert!(world.spawn_sub_with(turret, |_: &mut Shell| {}).is_err(), "no owner, no spawn");
    /// assert_eq!(world.len::<Shell>(), 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn spawn_sub_with<T: Poolable, O>(
        &mut self,
        outer: Handle<O>,
        init: impl FnOnce(&mut T),
    ) -> Result<Handle<T>, PoolError> {
        self.pools.heap().table().resolve(outer.raw())?;
        let h = self.pools.spawn_with(init)?;
        self.heap_mut().set_outer(h.raw(), Some(outer.raw()))?;
        Ok(h)
    }

    /// Places `value` in the permanent pool, flagged `PERMANENT`: never collected, never
    /// destroyed, dropped when the world drops (UE's disregard-for-GC objects). Not visited
    /// by `tick`.
    ///
    /// # Errors
    /// [`PoolError::Arena`] when the permanent pool is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Rules { gravity: f32 }
    ///
    /// // Even in a class whose objects live only while referenced…
    /// let mut world = World::builder().collected::<Rules>().build()?;
    /// let rules = world.spawn_permanent(Rules { gravity: 9.8 })?;
    /// world.collect_garbage();
    /// // … a permanent object stays, and cannot be destroyed.
    /// assert_eq!(world.get(rules).unwrap().gravity, 9.8);
    /// assert!(matches!(world.destroy(rules), Err(PoolError::Arena(ArenaError::Permanent))));
    ///
    /// let mut ticked = 0;
    /// world.tick::<Rules>(|_| ticked += 1);
    /// assert_eq!(ticked, 0, "not visited by `tick`");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn spawn_permanent<T: Object>(&mut self, value: T) -> Result<Handle<T>, PoolError> {
        let h = self.heap_mut().insert_permanent(value).map_err(|r| PoolError::Arena(r.error))?;
        self.heap_mut().notify_spawn(h.raw())?;
        Ok(h)
    }

    /// Places `value` in the world, built by the caller (no pool involved, even if its class
    /// has one). It lives as its class's [`Lifetime`] says: until destroyed, unless the
    /// class was declared [`collected`](WorldBuilder::collected).
    ///
    /// # Panics
    /// If the class's memory is exhausted.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Boss { hp: u32 }
    /// impl Poolable for Boss {
    ///     fn create() -> Self { Boss { hp: 100 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Boss>(PoolConfig::ON_DEMAND).build()?;
    /// // Built by the level loader, not by the pool.
    /// let boss = world.insert(Boss { hp: 5000 });
    /// assert_eq!(world.get(boss).unwrap().hp, 5000);
    /// assert_eq!(world.pool_stats::<Boss>().unwrap().spawns, 0, "the pool was not involved");
    /// world.collect_garbage();
    /// assert!(world.contains(boss), "kept until destroyed");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn insert<T: Object>(&mut self, value: T) -> Handle<T> {
        match self.pools.insert(value) {
            Ok(h) => h,
            Err(e) => panic!("World::insert::<{}>: {e}", std::any::type_name::<T>()),
        }
    }

    /// The typed view of `T`'s pool, if `T` has one: [`spawn_with`](PoolMut::spawn_with)
    /// and [`destroy`](PoolMut::destroy) for a run of calls on one class, with the pool
    /// found once, here, instead of on every call. The view borrows the world mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// let mut sparks = world.pool_mut::<Spark>().expect("a pooled class");
    /// let s = sparks.spawn_with(|s| s.heat = 9.0);
    /// sparks.destroy(s)?;
    /// assert!(world.get(s).is_none());
    ///
    /// #[derive(Trace, Object)]
    /// struct Rock;
    /// impl Poolable for Rock {
    ///     fn create() -> Self { Rock }
    /// }
    /// assert!(world.pool_mut::<Rock>().is_none(), "no pool, no view");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    #[inline]
    pub fn pool_mut<T: Poolable>(&mut self) -> Option<PoolMut<'_, T>> {
        self.pools.pool_mut::<T>()
    }

    /// How long `T`'s objects live in this world: [`Lifetime::Owned`] (kept until destroyed)
    /// unless the builder declared the class [`collected`](WorldBuilder::collected).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { hp: u32 }
    ///
    /// #[derive(Trace, Object)]
    /// struct Decal { alpha: f32 }
    ///
    /// let world = World::builder().collected::<Decal>().build()?;
    /// assert_eq!(world.lifetime::<Ship>(), Lifetime::Owned);
    /// assert_eq!(world.lifetime::<Decal>(), Lifetime::Collected);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn lifetime<T: 'static>(&self) -> Lifetime {
        self.pools.heap().lifetime::<T>()
    }

    /// The object `h` names, if it resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let spark = world.spawn_with(|s: &mut Spark| s.heat = 40.0);
    /// assert_eq!(world.get(spark).map(|s| s.heat), Some(40.0));
    /// world.destroy(spark)?;
    /// assert!(world.get(spark).is_none(), "a stale handle resolves to nothing");
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn get<T: 'static>(&self, h: Handle<T>) -> Option<&T> {
        self.pools.heap().get(h)
    }

    /// The object `h` names, mutably, if it resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let spark = world.spawn::<Spark>();
    /// if let Some(s) = world.get_mut(spark) {
    ///     s.heat += 15.0;
    /// }
    /// assert_eq!(world.get(spark).unwrap().heat, 15.0);
    /// world.destroy(spark)?;
    /// assert!(world.get_mut(spark).is_none());
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn get_mut<T: 'static>(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.heap_mut().get_mut(h)
    }

    /// The objects `handles` name, mutably and all at once, or `None` if any does not
    /// resolve or two name the same object; see [`Arena::get_disjoint_mut`](respawn_arena::Arena::get_disjoint_mut).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { cargo: u32 }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { cargo: 0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Ship>(PoolConfig::DEFAULT).build()?;
    /// let a = world.spawn_with(|s: &mut Ship| s.cargo = 30);
    /// let b = world.spawn::<Ship>();
    ///
    /// let [from, to] = world.get_disjoint_mut([a, b]).expect("two live ships");
    /// to.cargo += std::mem::take(&mut from.cargo);
    /// assert_eq!(world.get(b).unwrap().cargo, 30);
    ///
    /// assert!(world.get_disjoint_mut([a, a]).is_none(), "one ship twice");
    /// world.destroy(b)?;
    /// assert!(world.get_disjoint_mut([a, b]).is_none(), "a stale handle");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn get_disjoint_mut<T: 'static, const N: usize>(&mut self, handles: [Handle<T>; N]) -> Option<[&mut T; N]> {
        // A lookup: it ends and hides nothing behind the collector's back.
        self.heap_mut().get_disjoint_mut(handles)
    }

    /// Whether `h` resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let spark = world.spawn::<Spark>();
    /// assert!(world.contains(spark));
    /// world.destroy(spark)?;
    /// assert!(!world.contains(spark));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn contains<T: 'static>(&self, h: Handle<T>) -> bool {
        self.pools.heap().contains(h)
    }

    /// Takes the object back by its class's policy; see [`Pools::destroy`]. Handles to it
    /// stop resolving at once.
    ///
    /// # Errors
    /// [`PoolError::Stale`], [`PoolError::AlreadyReleased`], or [`PoolError::Arena`] for a
    /// wrong class, a rooted or a permanent object; nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, PoolError, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// let spark = world.spawn::<Spark>();
    /// world.destroy(spark)?; // `Reuse`: reset, and ready for the next spawn
    /// assert!(world.get(spark).is_none(), "stale at once");
    ///
    /// // A second destroy is refused, and changes nothing.
    /// assert!(matches!(world.destroy(spark), Err(PoolError::AlreadyReleased)));
    ///
    /// // The next spawn may take the same cell; the old handle still never resolves.
    /// let next = world.spawn::<Spark>();
    /// assert!(world.get(next).is_some() && world.get(spark).is_none());
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn destroy<T: 'static>(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        self.pools.destroy(h)
    }

    /// Adds a spawn listener for class `T` (UE's `FUObjectCreateListener`): `listener` is
    /// called with the handle and the object of every `T` the world spawns — [`spawn`](Self::spawn),
    /// [`spawn_with`](Self::spawn_with), [`try_spawn`](Self::try_spawn),
    /// [`spawn_batch`](Self::spawn_batch), [`spawn_sub`](Self::spawn_sub),
    /// [`insert`](Self::insert), [`spawn_permanent`](Self::spawn_permanent) — once it is
    /// complete: after `init` and [`Poolable::on_spawn`] (a composite's parts before their
    /// owner). A class may have several listeners; they run in the order they were added.
    /// The listeners sit in the class's record in the arena, and the pools tell them, so a
    /// spawn or an insert through [`pools_mut`](Self::pools_mut) is told too; objects placed
    /// through the heap or the arena directly are not, unless their maker calls
    /// [`Heap::notify_spawn`].
    ///
    /// A listener cannot reach the world (it runs inside the spawn): it records what it
    /// needs in its own state — a spatial hash, a network-id map — usually behind an `Arc`.
    /// A class without spawn listeners pays one test of a byte in each spawn.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn::{Handle, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { pos: [i32; 2] }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { pos: [0; 2] } }
    /// }
    ///
    /// // A spatial hash: ships by grid cell.
    /// type Grid = Vec<([i32; 2], Handle<Ship>)>;
    /// let grid: Arc<Mutex<Grid>> = Arc::default();
    ///
    /// let mut world = World::builder().pool::<Ship>(PoolConfig::DEFAULT).build()?;
    /// let g = Arc::clone(&grid);
    /// world.on_spawn(move |h, ship: &Ship| g.lock().unwrap().push((ship.pos, h)));
    /// let g = Arc::clone(&grid);
    /// world.on_destroy(move |h, _: &Ship| g.lock().unwrap().retain(|&(_, s)| s != h));
    ///
    /// let a = world.spawn_with(|s: &mut Ship| s.pos = [3, 4]); // seen after `init`
    /// let b = world.spawn::<Ship>();
    /// assert_eq!(*grid.lock().unwrap(), [([3, 4], a), ([0, 0], b)]);
    /// world.destroy(a)?;
    /// assert_eq!(*grid.lock().unwrap(), [([0, 0], b)]);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn on_spawn<T: Object>(&mut self, listener: impl FnMut(Handle<T>, &T) + Send + 'static) -> ListenerId {
        match self.heap_mut().add_spawn_listener(listener) {
            Ok(id) => id,
            Err(e) => panic!("World::on_spawn::<{}>: {e}", std::any::type_name::<T>()),
        }
    }

    /// Adds a destroy listener for class `T` (UE's `FUObjectDeleteListener`): `listener`
    /// is called with the handle and the object, still intact, once for every object of
    /// `T` that ends, however it ends:
    ///
    /// | how it ends | when the listener hears |
    /// |---|---|
    /// | [`destroy`](Self::destroy), any [`Policy`](crate::Policy) | inside `destroy`, before anything changes: before [`Poolable::on_release`], before `reset` (`Reuse`), before the drop (`Purge`), and under `Default` when the object is marked as garbage — the moment its handles stop resolving — not at the later purge |
    /// | as a sub-object of an object destroyed so | in the same `destroy`, sub-objects before their owners |
    /// | purged by the collector, unreachable (a [`collected`](WorldBuilder::collected) class; [`collect_garbage`](Self::collect_garbage), [`purge`](Self::purge), [`end_frame`](Self::end_frame)) | in the purge, after its `begin_destroy` and `finish_destroy`, before its drop |
    /// | [`Heap::destroy_now`], [`Heap::mark_as_garbage`] then a purge, an arena `remove` or `destroy`, a retired slot (through [`pools_mut`](Self::pools_mut)) | when its slot is released |
    ///
    /// The seam is the arena's: a class's end listeners sit in its class record, and the
    /// release of a slot — the one place every end passes — tells them unless the pool's
    /// `destroy` told them first ([`Arena::notify_end`](respawn_arena::Arena::notify_end),
    /// which flags the object [`ObjectFlags::END_NOTIFIED`](respawn_arena::ObjectFlags::END_NOTIFIED)).
    /// Objects still alive when the world drops end without a word, and a permanent object
    /// never ends.
    ///
    /// Cost: a class without end listeners pays one test of a byte (its record's hooks) in
    /// each `destroy` and each release. An owner's `destroy` tells its subtree from the walk
    /// that checks it, after one look at the classes.
    ///
    /// # Panics
    /// If `T` cannot be registered (a zero-sized type, or the object table is full).
    ///
    /// # Examples
    ///
    /// Under every policy the listener hears at `destroy`; an object of a
    /// [`collected`](WorldBuilder::collected) class nobody destroyed, when the collector
    /// purges it:
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn::{Object, Policy, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Drone { id: u32 }
    /// impl Poolable for Drone {
    ///     fn create() -> Self { Drone { id: 0 } }
    ///     fn reset(&mut self) { self.id = 0; }
    /// }
    ///
    /// let config = PoolConfig { policy: Policy::Reuse, ..PoolConfig::ON_DEMAND };
    /// let mut world = World::builder().pool::<Drone>(config).collected::<Drone>().build()?;
    /// let ended = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&ended);
    /// let id = world.on_destroy(move |_, d: &Drone| log.lock().unwrap().push(d.id));
    ///
    /// let a = world.spawn_with(|d: &mut Drone| d.id = 1);
    /// let _b = world.spawn_with(|d: &mut Drone| d.id = 2);
    /// world.destroy(a)?; // heard before `reset` clears the id
    /// assert_eq!(*ended.lock().unwrap(), [1]);
    /// world.collect_garbage(); // nothing roots `_b`: purged
    /// assert_eq!(*ended.lock().unwrap(), [1, 2]);
    ///
    /// assert!(world.remove_listener(id));
    /// let c = world.spawn::<Drone>();
    /// world.destroy(c)?;
    /// assert_eq!(ended.lock().unwrap().len(), 2, "a removed listener hears nothing");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn on_destroy<T: Object>(&mut self, listener: impl FnMut(Handle<T>, &T) + Send + 'static) -> ListenerId {
        // The heap registers `T` with the collector first, if it is new.
        match self.heap_mut().add_end_listener(listener) {
            Ok(id) => id,
            Err(e) => panic!("World::on_destroy::<{}>: {e}", std::any::type_name::<T>()),
        }
    }

    /// Removes a listener added by [`on_spawn`](Self::on_spawn) or
    /// [`on_destroy`](Self::on_destroy); `false` if it was removed already. It is not
    /// called again, even for an object whose end has begun (garbage awaiting its purge).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use respawn::{Object, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Crate { loot: u32 }
    ///
    /// let mut world = World::new();
    /// let spawned = Arc::new(AtomicU32::new(0));
    /// let count = Arc::clone(&spawned);
    /// let id = world.on_spawn(move |_, _: &Crate| _ = count.fetch_add(1, Ordering::Relaxed));
    /// world.insert(Crate { loot: 1 });
    /// assert!(world.remove_listener(id));
    /// assert!(!world.remove_listener(id), "removed already");
    /// world.insert(Crate { loot: 2 });
    /// assert_eq!(spawned.load(Ordering::Relaxed), 1);
    /// ```
    pub fn remove_listener(&mut self, id: ListenerId) -> bool {
        self.heap_mut().remove_listener(id)
    }

    /// An RAII root: the object survives collections while the guard lives, and refuses to
    /// be destroyed. The world keeps what it spawns anyway: a guard is for an object of a
    /// [`collected`](WorldBuilder::collected) class, or to pin one across a destroy.
    ///
    /// # Errors
    /// [`PoolError::Stale`] or [`PoolError::Arena`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world =
    ///     World::builder().pool::<Spark>(PoolConfig::PROJECTILES).collected::<Spark>().build()?;
    /// let spark = world.spawn::<Spark>();
    /// {
    ///     let _guard = world.root(spark)?;
    ///     world.collect_garbage();
    ///     assert!(world.contains(spark));
    /// } // the guard drops: no longer a root
    /// world.collect_garbage();
    /// assert!(!world.contains(spark), "nothing reached it: purged");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn root<T: 'static>(&mut self, h: Handle<T>) -> Result<Root<T>, PoolError> {
        Ok(self.heap_mut().root(h)?)
    }

    /// Adds the object to the root set by hand (UE's `AddToRoot`): every collection keeps
    /// it, and `destroy` refuses it until [`remove_from_root`](Self::remove_from_root).
    /// Objects the world spawns need no root to stay: this is for objects of
    /// [`collected`](WorldBuilder::collected) classes, and for pinning.
    ///
    /// # Errors
    /// [`PoolError::Stale`] or [`PoolError::Arena`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{ArenaError, Object, PoolConfig, PoolError, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world =
    ///     World::builder().pool::<Spark>(PoolConfig::PROJECTILES).collected::<Spark>().build()?;
    /// let sun = world.spawn::<Spark>();
    /// let stray = world.spawn::<Spark>();
    /// world.add_to_root(sun)?;
    /// world.collect_garbage();
    /// assert!(world.contains(sun));
    /// assert!(!world.contains(stray), "nothing reached it: purged");
    ///
    /// // A root cannot be destroyed: take it out of the root set first.
    /// assert!(matches!(world.destroy(sun), Err(PoolError::Arena(ArenaError::Rooted))));
    /// world.remove_from_root(sun)?;
    /// world.destroy(sun)?;
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn add_to_root<T>(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        Ok(self.heap_mut().add_to_root(h.raw())?)
    }

    /// Takes the object out of the root set (UE's `RemoveFromRoot`).
    ///
    /// # Errors
    /// [`PoolError::Stale`] or [`PoolError::Arena`] if it was not added.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world =
    ///     World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).collected::<Spark>().build()?;
    /// let sun = world.spawn::<Spark>();
    /// world.add_to_root(sun)?;
    /// world.collect_garbage();
    /// assert!(world.contains(sun), "a root");
    ///
    /// world.remove_from_root(sun)?;
    /// assert!(world.remove_from_root(sun).is_err(), "not a root any more");
    /// world.collect_garbage();
    /// assert!(!world.contains(sun), "nothing reached it: purged");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn remove_from_root<T>(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        Ok(self.heap_mut().remove_from_root(h.raw())?)
    }

    /// Records `outer` as `child`'s owner (or cuts it loose with `None`).
    ///
    /// # Errors
    /// As [`Arena::set_outer`](respawn_arena::Arena::set_outer).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { hp: u32 }
    ///
    /// #[derive(Trace, Object)]
    /// struct Cargo { mass: u32 }
    ///
    /// let mut world = World::new();
    /// let ship = world.insert(Ship { hp: 100 });
    /// let ore = world.insert(Cargo { mass: 5 });
    /// let fuel = world.insert(Cargo { mass: 8 });
    /// world.set_outer(ore, Some(ship.raw()))?;
    /// world.set_outer(fuel, Some(ship.raw()))?;
    /// assert_eq!(world.heap().sub_objects(ship.raw()).count(), 2);
    ///
    /// world.set_outer(fuel, None)?; // unloaded: cut loose from the ship
    /// world.destroy(ship)?;
    /// assert!(!world.contains(ore), "destroyed with its owner");
    /// assert!(world.contains(fuel));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn set_outer<T>(&mut self, child: Handle<T>, outer: Option<RawHandle>) -> Result<(), PoolError> {
        Ok(self.heap_mut().set_outer(child.raw(), outer)?)
    }

    /// Calls `f` on every live object of `T`, in memory order: one pass over the class's
    /// contiguous slabs. Objects in pools, garbage, permanent and dormant objects
    /// ([`set_dormant`](Self::set_dormant)) are not visited.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// let a = world.spawn_with(|s: &mut Spark| s.heat = 10.0);
    /// let b = world.spawn_with(|s: &mut Spark| s.heat = 20.0);
    /// world.tick::<Spark>(|s| s.heat *= 0.5);
    /// assert_eq!((world.get(a).unwrap().heat, world.get(b).unwrap().heat), (5.0, 10.0));
    ///
    /// world.destroy(a)?;
    /// let mut visited = 0;
    /// world.tick::<Spark>(|_| visited += 1);
    /// assert_eq!(visited, 1, "a destroyed object is not visited");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn tick<T: 'static>(&mut self, f: impl FnMut(&mut T)) {
        self.heap_mut().tick(f);
    }

    /// [`tick`](Self::tick) split across rayon's threads by work: chunks of cells holding
    /// about equal numbers of objects, a few a thread, so a thousand heavy objects use every
    /// core as a million light ones do.
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
    /// let mut world = World::builder().pool::<Mote>(PoolConfig::PROJECTILES).build()?;
    /// for age in 0..10_000 {
    ///     world.spawn_with(|m: &mut Mote| m.age = age);
    /// }
    /// // `f` is `Fn + Sync`: each object is handed to one thread, once.
    /// world.par_tick::<Mote>(|m| m.age += 1);
    /// let total: u64 = world.iter::<Mote>().map(|(_, m)| u64::from(m.age)).sum();
    /// assert_eq!(total, (1..=10_000).sum::<u64>());
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn par_tick<T: Send + 'static>(&mut self, f: impl Fn(&mut T) + Sync + Send) {
        self.heap_mut().par_tick(f);
    }

    /// [`tick`](Self::tick), reading the rest of the world: `f` gets every live, awake
    /// object of `T` mutably, in memory order, and a read-only [`View`] of every *other*
    /// class, through which it reads objects by handle or walks a class — a homing missile
    /// steers toward its target, a turret scans the ships in range — with no copy of
    /// positions into a side table each frame. Objects of `T` are the tick's: the view
    /// lends none of them ([`View::try_get`] says [`ArenaError::Ticking`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Handle, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { x: f32 }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { x: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Missile { target: Option<Handle<Ship>>, x: f32 }
    /// impl Poolable for Missile {
    ///     fn create() -> Self { Missile { target: None, x: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Ship>(PoolConfig::DEFAULT)
    ///     .pool::<Missile>(PoolConfig::PROJECTILES)
    ///     .build()?;
    /// let ship = world.spawn_with(|s: &mut Ship| s.x = 100.0);
    /// let missile = world.spawn_with(|m: &mut Missile| m.target = Some(ship));
    /// // Each frame every missile closes half the distance to its target.
    /// world.tick_reading::<Missile>(|m, rest| {
    ///     if let Some(target) = m.target.and_then(|h| rest.get(h)) {
    ///         m.x += (target.x - m.x) * 0.5;
    ///     }
    /// });
    /// assert_eq!(world.get(missile).unwrap().x, 50.0);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    ///
    /// [`ArenaError::Ticking`]: respawn_arena::ArenaError::Ticking
    pub fn tick_reading<T: 'static>(&mut self, f: impl FnMut(&mut T, &View<'_>)) {
        self.heap_mut().tick_reading(f);
    }

    /// [`tick_reading`](Self::tick_reading) split across rayon's threads by work;
    /// every thread reads through the one view.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { x: f32 }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { x: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Missile { target: Option<Handle<Ship>>, x: f32 }
    /// impl Poolable for Missile {
    ///     fn create() -> Self { Missile { target: None, x: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Ship>(PoolConfig::ON_DEMAND)
    ///     .pool::<Missile>(PoolConfig::ON_DEMAND)
    ///     .build()?;
    /// let ship = world.spawn_with(|s: &mut Ship| s.x = 100.0);
    /// for _ in 0..1000 {
    ///     world.spawn_with(|m: &mut Missile| m.target = Some(ship));
    /// }
    /// // Each missile closes half the distance to its target, on every thread at once.
    /// world.par_tick_reading::<Missile>(|m, rest| {
    ///     if let Some(target) = m.target.and_then(|h| rest.get(h)) {
    ///         m.x += (target.x - m.x) * 0.5;
    ///     }
    /// });
    /// assert!(world.iter::<Missile>().all(|(_, m)| m.x == 50.0));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn par_tick_reading<T: Send + 'static>(&mut self, f: impl Fn(&mut T, &View<'_>) + Sync + Send) {
        self.heap_mut().par_tick_reading(f);
    }

    /// Every live object of `T` with its handle, in memory order, dormant ones included
    /// (skip them with [`is_dormant`](Self::is_dormant)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let cold = world.spawn_with(|s: &mut Spark| s.heat = 10.0);
    /// let hot = world.spawn_with(|s: &mut Spark| s.heat = 20.0);
    /// assert_eq!(world.iter::<Spark>().map(|(_, s)| s.heat).sum::<f32>(), 30.0);
    ///
    /// world.destroy(cold)?;
    /// let left: Vec<Handle<Spark>> = world.iter::<Spark>().map(|(h, _)| h).collect();
    /// assert_eq!(left, [hot]);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn iter<T: 'static>(&self) -> respawn_arena::Iter<'_, T> {
        self.pools.heap().iter()
    }

    /// Every live object of `T` with its handle, mutably, in memory order: a
    /// [`tick`](Self::tick) that knows which object it holds (to fill a side table, or to
    /// collect the ones to destroy).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Handle, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { life: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { life: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// world.spawn_with(|s: &mut Spark| s.life = 0.01);
    /// world.spawn_with(|s: &mut Spark| s.life = 1.0);
    ///
    /// let mut spent: Vec<Handle<Spark>> = Vec::new();
    /// for (h, s) in world.iter_mut::<Spark>() {
    ///     s.life -= 0.5;
    ///     if s.life <= 0.0 {
    ///         spent.push(h);
    ///     }
    /// }
    /// for h in spent {
    ///     world.destroy(h)?;
    /// }
    /// assert_eq!(world.iter::<Spark>().count(), 1);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn iter_mut<T: 'static>(&mut self) -> respawn_arena::IterMut<'_, T> {
        // Lends objects as `tick` does: it ends and hides nothing behind the collector's back.
        self.heap_mut().iter_mut()
    }

    /// Objects of `T` in the world: live ones and garbage awaiting its purge; not the ready
    /// objects its pool keeps (a destroyed `Reuse` object is ready again, so not counted),
    /// nor permanent ones.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Crate { loot: u32 }
    /// impl Poolable for Crate {
    ///     fn create() -> Self { Crate { loot: 0 } }
    /// }
    ///
    /// let config = PoolConfig { policy: Policy::Default, ..PoolConfig::ON_DEMAND };
    /// let mut world = World::builder().pool::<Crate>(config).build()?;
    /// let crates: Vec<_> = (0..3).map(|_| world.spawn::<Crate>()).collect();
    /// assert_eq!(world.len::<Crate>(), 3);
    ///
    /// world.destroy(crates[0])?; // `Default`: garbage, counted until the collector purges it
    /// assert_eq!(world.len::<Crate>(), 3);
    /// world.collect_garbage();
    /// assert_eq!(world.len::<Crate>(), 2);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn len<T: 'static>(&self) -> usize {
        self.pools.heap().len::<T>()
    }

    /// Whether the world holds no object of `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// assert!(world.is_empty::<Spark>());
    /// let spark = world.spawn::<Spark>();
    /// assert!(!world.is_empty::<Spark>());
    /// world.destroy(spark)?; // `Reuse`: back in the pool, which does not count
    /// assert!(world.is_empty::<Spark>());
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn is_empty<T: 'static>(&self) -> bool {
        self.len::<T>() == 0
    }

    /// Registers an external referencer (UE's `FGCObject`): a system outside the world — a
    /// spatial hash, a network-id map — whose `report` tells every collection which handles
    /// it holds; those objects are kept (and traced) until the returned [`Referencer`]
    /// drops. See [`Heap::add_referencer`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn::{Handle, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { hull: u32 }
    /// impl Poolable for Ship {
    ///     fn create() -> Self { Ship { hull: 100 } }
    /// }
    ///
    /// // Ships live while something references them.
    /// let mut world = World::builder().pool::<Ship>(PoolConfig::DEFAULT).collected::<Ship>().build()?;
    /// let ship = world.spawn::<Ship>();
    /// // The network layer's id map holds the ship; nothing in the world does.
    /// let by_net_id: Arc<Mutex<Vec<Handle<Ship>>>> = Arc::new(Mutex::new(vec![ship]));
    /// let ids = Arc::clone(&by_net_id);
    /// let net = world.add_referencer(move |t| ids.lock().unwrap().iter().for_each(|h| t.handle(h.raw())));
    /// world.collect_garbage();
    /// assert!(world.get(ship).is_some());
    /// drop(net); // the network layer shuts down
    /// world.collect_garbage();
    /// assert!(world.get(ship).is_none());
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn add_referencer(&mut self, report: impl for<'t> FnMut(&mut Tracer<'t>) + Send + 'static) -> Referencer {
        self.heap_mut().add_referencer(report)
    }

    /// Why the object is alive: a shortest chain of references from a root to it, by the
    /// rules the next collection marks by, naming the root (`add_to_root`, a `Root` guard,
    /// a referencer, permanence) and each link (a traced field, an outer, a cluster); `None`
    /// if the next collection would purge it. A diagnostic: see [`Heap::why_alive`].
    ///
    /// # Errors
    /// [`PoolError::Stale`], or [`PoolError::Arena`] with [`ArenaError::Hidden`]
    /// (garbage, pending purge, in its pool).
    ///
    /// [`ArenaError::Hidden`]: respawn_arena::ArenaError::Hidden
    ///
    /// ```
    /// use respawn::{Handle, Object, PoolConfig, Poolable, RootKind, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { target: Option<Handle<Drone>> }
    /// #[derive(Trace, Object)]
    /// struct Drone { hp: u32 }
    /// impl Poolable for Drone {
    ///     fn create() -> Self { Drone { hp: 10 } }
    /// }
    ///
    /// // Drones live only while something targets them.
    /// let mut world = World::builder().pool::<Drone>(PoolConfig::DEFAULT).collected::<Drone>().build()?;
    /// let drone = world.spawn::<Drone>();
    /// let turret = world.insert(Turret { target: Some(drone) }); // the world keeps it
    /// let chain = world.why_alive(drone)?.expect("the turret targets it");
    /// assert_eq!(chain.root, RootKind::Owned);
    /// println!("{chain}"); // root (owned until destroyed) Turret#… -> [traced] Drone#…
    ///
    /// let _guard = world.root(drone)?;
    /// assert_eq!(world.why_alive(drone)?.unwrap().root, RootKind::Guard(1));
    /// # let _ = turret;
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn why_alive<T>(&mut self, h: Handle<T>) -> Result<Option<ReferenceChain>, PoolError> {
        Ok(self.heap_mut().why_alive(h)?)
    }

    /// References that objects the next collection would keep (and external referencers)
    /// still hold to objects marked as garbage — destroyed under `Policy::Default` and not yet
    /// purged. See [`Heap::find_garbage_references`]; for a record taken by each collection,
    /// [`GcSettings::track_garbage_references`] and [`Heap::garbage_references`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::Referrer;
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { target: Option<Handle<Drone>> }
    ///
    /// #[derive(Trace, Object)]
    /// struct Drone { hp: u32 }
    ///
    /// let mut world = World::new();
    /// let drone = world.insert(Drone { hp: 10 });
    /// let turret = world.insert(Turret { target: Some(drone) });
    /// world.destroy(drone)?; // garbage now, but the turret still names it
    ///
    /// let found = world.find_garbage_references();
    /// assert_eq!(found.len(), 1);
    /// assert_eq!(found[0].to.handle, drone.raw());
    /// assert!(matches!(&found[0].from, Referrer::Object(o) if o.handle == turret.raw()));
    ///
    /// world.get_mut(turret).unwrap().target = None;
    /// assert!(world.find_garbage_references().is_empty());
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn find_garbage_references(&mut self) -> Vec<GarbageReference> {
        self.heap_mut().find_garbage_references()
    }

    /// Makes a cluster of `root` and `members` (UE's GC clusters): reaching any of them keeps
    /// all of them, so the collector reaches the cluster at once instead of judging its
    /// members one by one. As [`Heap::create_cluster`].
    ///
    /// # Errors
    /// As `Heap::create_cluster`: nothing changes if an object is stale or hidden,
    /// permanent, pooled, or in a cluster already.
    ///
    /// ```
    /// use respawn::{Object, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Part {
    ///     id: u32,
    /// }
    ///
    /// let mut world = World::builder().collected::<Part>().build()?;
    /// let [body, wheel] = [0, 1].map(|id| world.insert(Part { id }));
    /// let cluster = world.create_cluster(body.raw(), &[wheel.raw()])?;
    /// let _root = world.root(wheel)?; // reaching one member keeps them all
    /// world.collect_garbage();
    /// assert!(world.get(body).is_some());
    /// world.dissolve_cluster(cluster)?;
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn create_cluster(&mut self, root: RawHandle, members: &[RawHandle]) -> Result<ClusterId, PoolError> {
        Ok(self.heap_mut().create_cluster(root, members)?)
    }

    /// Dissolves a cluster: its objects are judged one by one again. As
    /// [`Heap::dissolve_cluster`].
    ///
    /// # Errors
    /// [`GcError::UnknownCluster`](respawn_gc::GcError::UnknownCluster) (as [`PoolError::Gc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::GcError;
    ///
    /// #[derive(Trace, Object)]
    /// struct Part { id: u32 }
    ///
    /// let mut world = World::builder().collected::<Part>().build()?;
    /// let [body, wheel] = [0, 1].map(|id| world.insert(Part { id }));
    /// let cluster = world.create_cluster(body.raw(), &[wheel.raw()])?;
    /// world.dissolve_cluster(cluster)?;
    ///
    /// // Judged one by one again: the rooted wheel no longer keeps the body.
    /// let _root = world.root(wheel)?;
    /// world.collect_garbage();
    /// assert!(world.contains(wheel) && !world.contains(body));
    /// let again = world.dissolve_cluster(cluster);
    /// assert!(matches!(again, Err(PoolError::Gc(GcError::UnknownCluster))), "dissolved already");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn dissolve_cluster(&mut self, id: ClusterId) -> Result<(), PoolError> {
        Ok(self.heap_mut().dissolve_cluster(id)?)
    }

    /// Runs a full collection now and purges what it found; returned cells go back to their
    /// pools for rebuilding. An incremental mark running
    /// ([`GcSettings::incremental_mark_budget`]) is dropped: this collection decides from
    /// scratch.
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
    /// let kept = world.insert(Spark { heat: 1.0 });
    /// let _root = world.root(kept)?;
    /// world.insert(Spark { heat: 2.0 }); // nothing references it
    ///
    /// let stats = world.collect_garbage();
    /// assert_eq!((stats.unreachable, stats.purged), (1, 1));
    /// assert!(world.contains(kept));
    /// assert_eq!(world.len::<Spark>(), 1);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn collect_garbage(&mut self) -> GcStats {
        self.collect_garbage_with(CollectOptions::FULL)
    }

    /// Runs a collection with `options` (e.g. [`CollectOptions::INCREMENTAL`], leaving the
    /// purge to [`purge`](Self::purge) or [`end_frame`](Self::end_frame)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut world = World::builder().collected::<Spark>().build()?;
    /// let lost = world.insert(Spark { heat: 2.0 });
    ///
    /// let stats = world.collect_garbage_with(CollectOptions::INCREMENTAL);
    /// assert_eq!((stats.unreachable, stats.purged), (1, 0), "found, left for the purge");
    /// assert!(!world.contains(lost), "hidden at once");
    /// assert_eq!(world.stats().pending_purge, 1);
    /// while !world.purge(Duration::from_millis(1)).is_done() {}
    /// assert_eq!(world.stats().pending_purge, 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn collect_garbage_with(&mut self, options: CollectOptions) -> GcStats {
        let stats = self.heap_mut().collect_garbage(options);
        self.pools.maintain();
        stats
    }

    /// Purges pending objects for at most `budget` (overrunning it by at most one
    /// object's destruction).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut world = World::builder().collected::<Spark>().build()?;
    /// for heat in 0..100 {
    ///     world.insert(Spark { heat: heat as f32 });
    /// }
    /// world.collect_garbage_with(CollectOptions::INCREMENTAL); // finds all 100, purges none
    /// assert_eq!(world.len::<Spark>(), 100);
    ///
    /// // A slice a frame, until nothing is left.
    /// let mut purged = 0;
    /// loop {
    ///     let step = world.purge(Duration::from_micros(500));
    ///     purged += step.purged;
    ///     if step.is_done() {
    ///         break;
    ///     }
    /// }
    /// assert_eq!(purged, 100);
    /// assert_eq!(world.len::<Spark>(), 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn purge(&mut self, budget: Duration) -> PurgeProgress {
        let progress = self.heap_mut().purge(Some(budget));
        self.pools.maintain();
        progress
    }

    /// Ends a frame, timed by the wall clock since the previous `end_frame`; see
    /// [`end_frame_with`](Self::end_frame_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{GcStep, World};
    ///
    /// let mut world = World::new();
    /// let hits = world.frame_arena().alloc_slice_fill_copy(16, 0u32); // this frame's scratch
    /// hits[0] = 7;
    ///
    /// let end = world.end_frame();
    /// assert_eq!(end.frame, 0);
    /// assert_eq!(end.gc, GcStep::Idle, "no collection due, nothing to purge");
    /// assert!(end.frame_bytes >= 64, "the scratch, freed now");
    /// assert_eq!(world.end_frame().frame, 1);
    /// ```
    pub fn end_frame(&mut self) -> FrameEnd {
        let now = Instant::now();
        let dt = self.last_frame.map_or(Duration::ZERO, |last| now - last);
        self.last_frame = Some(now);
        self.end_frame_with(dt)
    }

    /// Ends a frame of length `dt` (a fixed time step, or a simulated clock): runs the
    /// collector's schedule — one purge slice within [`GcSettings::purge_budget`], or a
    /// collection once [`GcSettings::time_between_collections`] has passed — then the
    /// pools' upkeep (cells back to the arena, workers woken, growth, and the idle trim of
    /// pools with [`PoolConfig::idle_trim`], whose clock is this `dt`), and resets the
    /// frame arena. With [`GcSettings::incremental_mark_budget`], a collection is marked
    /// over frames instead, a slice per frame ([`GcStep::Marked`]) until the one that
    /// finishes it ([`GcStep::Collected`]); the game goes on between slices as it likes
    /// (see [`Heap::start_incremental_collection`](respawn_gc::Heap::start_incremental_collection)).
    ///
    /// # Examples
    ///
    /// A `Default` pool's destroyed object waits for a collection, then for a purge slice:
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::{GcSettings, GcStep, Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Crate { loot: u32 }
    /// impl Poolable for Crate {
    ///     fn create() -> Self { Crate { loot: 0 } }
    /// }
    ///
    /// let gc = GcSettings { time_between_collections: Some(Duration::from_secs(1)), ..GcSettings::DEFAULT };
    /// let mut world = World::builder().pool::<Crate>(PoolConfig::DEFAULT).gc(gc).build()?;
    /// let dt = Duration::from_millis(500);
    ///
    /// let crate_ = world.spawn::<Crate>();
    /// world.destroy(crate_)?; // `Default`: garbage, hidden at once
    /// assert_eq!(world.end_frame_with(dt).gc, GcStep::Idle); // 0.5 s: nothing due
    /// assert!(matches!(world.end_frame_with(dt).gc, GcStep::Collected(_))); // 1 s: collected
    /// assert_eq!(world.len::<Crate>(), 1, "found, not purged yet");
    /// assert!(matches!(world.end_frame_with(dt).gc, GcStep::Purged(p) if p.is_done()));
    /// assert_eq!(world.len::<Crate>(), 0);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn end_frame_with(&mut self, dt: Duration) -> FrameEnd {
        let gc = self.heap_mut().update(dt);
        self.pools.maintain_for(dt);
        let frame_bytes = self.frame.iter_allocated_chunks().map(<[_]>::len).sum();
        self.frame.reset();
        let frame = self.frames;
        self.frames += 1;
        self.ticks.end_frame(dt);
        FrameEnd { frame, dt, gc, frame_bytes }
    }

    /// The number of the frame in progress: 0 until the first [`end_frame`](Self::end_frame),
    /// then one more at each (the number the next `end_frame` reports). Tick functions
    /// that run every N frames count by it.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// let mut world = World::new();
    /// assert_eq!(world.frame(), 0);
    /// world.end_frame();
    /// assert_eq!(world.frame(), 1);
    /// assert_eq!(world.end_frame().frame, 1, "the number `end_frame` reports");
    /// assert_eq!(world.frame(), 2);
    /// ```
    pub fn frame(&self) -> u64 {
        self.frames
    }

    /// The per-frame scratch arena for temporaries (hit lists, spawn requests): allocation
    /// is a pointer bump, and [`end_frame`](Self::end_frame) frees everything at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::bumpalo::collections::Vec as FrameVec;
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::PROJECTILES).build()?;
    /// world.spawn_with(|s: &mut Spark| s.heat = 900.0);
    /// world.spawn_with(|s: &mut Spark| s.heat = 20.0);
    ///
    /// let hot = world.iter::<Spark>().filter(|(_, s)| s.heat > 500.0).map(|(h, _)| h);
    /// let hot = FrameVec::from_iter_in(hot, world.frame_arena());
    /// assert_eq!(hot.len(), 1);
    /// // To change the world while such a list lives, see `with_frame_arena`.
    /// drop(hot);
    /// world.end_frame();
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn frame_arena(&self) -> &Bump {
        &self.frame
    }

    /// Lends the frame arena beside the world itself, so temporaries (a hit list, spawn
    /// requests) can live across calls that change the world:
    ///
    /// ```
    /// # use respawn::{Object, PoolConfig, Poolable, Trace, World};
    /// # #[derive(Trace, Object)] struct Shot { life: f32 }
    /// # impl Poolable for Shot { fn create() -> Self { Shot { life: 1.0 } } }
    /// # let mut world = World::builder().pool::<Shot>(PoolConfig::PROJECTILES).build().unwrap();
    /// # world.spawn_with(|s: &mut Shot| s.life = -1.0);
    /// let dead = world.with_frame_arena(|world, frame| {
    ///     let mut dead = bumpalo::collections::Vec::new_in(frame);
    ///     dead.extend(world.iter::<Shot>().filter(|(_, s)| s.life <= 0.0).map(|(h, _)| h));
    ///     for &h in &dead {
    ///         world.destroy(h).unwrap();
    ///     }
    ///     dead.len()
    /// });
    /// assert_eq!(dead, 1);
    /// ```
    ///
    /// The arena is the same one [`frame_arena`](Self::frame_arena) returns between calls;
    /// inside `f`, `world.frame_arena()` is a separate, empty arena dropped when `f` returns.
    pub fn with_frame_arena<R>(&mut self, f: impl FnOnce(&mut World, &Bump) -> R) -> R {
        // An empty `Bump` allocates nothing, so lending costs two moves.
        let frame = std::mem::take(&mut self.frame);
        let out = f(self, &frame);
        self.frame = frame;
        out
    }

    /// What every cell of every class's slabs holds (live, in pool, garbage, free), for a
    /// memory-layout picture; see [`Arena::layout`](respawn_arena::Arena::layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::CellState;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let spent = world.spawn::<Spark>();
    /// world.spawn::<Spark>();
    /// world.destroy(spent)?; // `Reuse`: kept by the pool
    ///
    /// let layouts = world.layouts();
    /// let sparks = layouts.iter().find(|l| l.name.ends_with("Spark")).expect("Spark's slabs");
    /// assert_eq!(sparks.count(CellState::Live), 1);
    /// assert_eq!(sparks.count(CellState::Pooled), 1);
    /// assert!(sparks.cells() >= 2);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn layouts(&self) -> Vec<ClassLayout> {
        self.pools.heap().arena().layouts()
    }

    /// Waits until every pool's precreation is ready to pop, so that the first frames'
    /// spawns are hits. [`build`](WorldBuilder::build) returns as soon as the workers have
    /// started; until they publish their first magazines, a spawn builds its object inline
    /// (a miss). Call this once after `build`, before the first frame.
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { life: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { life: 0.0 } }
    /// }
    ///
    /// let mut world = World::builder()
    ///     .pool::<Spark>(PoolConfig { capacity: 256, low_watermark: 64, ..PoolConfig::PROJECTILES })
    ///     .build()?;
    /// world.wait_until_warm(Duration::from_secs(10))?;
    /// for _ in 0..256 {
    ///     world.spawn::<Spark>();
    /// }
    /// assert_eq!(world.pool_stats::<Spark>().unwrap().misses, 0);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    ///
    /// # Errors
    /// [`PoolError::NotWarm`] naming the first pool still warming when `timeout` ran out;
    /// it keeps warming in the background.
    pub fn wait_until_warm(&mut self, timeout: Duration) -> Result<(), PoolError> {
        self.pools.wait_until_warm(timeout)
    }

    /// Builds up to `n` objects of `T` on this thread (within the pool's `max`), ready for
    /// the next spawns: warms a pool now, with or without workers. Returns how many it
    /// built.
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `T` has no pool; [`PoolError::Arena`] when its memory is
    /// exhausted.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, PoolError, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Ember { heat: f32 }
    /// impl Poolable for Ember {
    ///     fn create() -> Self { Ember { heat: 0.0 } }
    /// }
    ///
    /// // No workers: built on demand, or ahead of time by `prefill` (a loading screen).
    /// let config = PoolConfig { max: 100, ..PoolConfig::ON_DEMAND };
    /// let mut world = World::builder().pool::<Spark>(config).build()?;
    /// assert_eq!(world.prefill::<Spark>(64)?, 64);
    /// assert_eq!(world.prefill::<Spark>(64)?, 36, "within `max`");
    /// for _ in 0..100 {
    ///     world.spawn::<Spark>();
    /// }
    /// assert_eq!(world.pool_stats::<Spark>().unwrap().misses, 0);
    ///
    /// assert!(matches!(world.prefill::<Ember>(1), Err(PoolError::NotPooled(_))));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn prefill<T: Poolable>(&mut self, n: usize) -> Result<usize, PoolError> {
        self.pools.prefill::<T>(n)
    }

    /// `T`'s pool counters, if it has a pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// // `ON_DEMAND`: no workers, `Reuse`.
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let first = world.spawn::<Spark>(); // nothing ready: built inline, a miss
    /// world.destroy(first)?; // reset and kept
    /// world.spawn::<Spark>(); // the kept one: a hit
    ///
    /// let stats = world.pool_stats::<Spark>().unwrap();
    /// assert_eq!((stats.spawns, stats.hits, stats.misses), (2, 1, 1));
    /// assert_eq!((stats.in_use, stats.recycled_reuse), (1, 1));
    /// assert_eq!(stats.hit_rate(), 0.5);
    /// assert!(world.pool_stats::<String>().is_none(), "no pool");
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn pool_stats<T: 'static>(&self) -> Option<PoolStats> {
        self.pools.stats_of::<T>()
    }

    /// Figures of every pool and of the collector.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Debris { mass: f32 }
    /// impl Poolable for Debris {
    ///     fn create() -> Self { Debris { mass: 1.0 } }
    /// }
    ///
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// world.spawn::<Spark>();
    /// world.spawn::<Debris>(); // no pool: built on the game thread
    ///
    /// let stats = world.stats();
    /// assert_eq!(stats.pools.len(), 1);
    /// assert_eq!((stats.pools[0].class, stats.pools[0].in_use), ("Spark", 1));
    /// assert_eq!(stats.unpooled_spawns, 1);
    /// assert!(stats.committed_bytes > 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn stats(&self) -> WorldStats {
        let heap = self.pools.heap();
        let alloc = heap.arena().allocator();
        let committed_bytes = (0..alloc.class_count())
            .filter_map(|i| alloc.stats(ClassId::from_index(i as u16)).ok())
            .map(|m| m.committed_bytes)
            .sum();
        WorldStats {
            pools: self.pools.stats(),
            gc: *heap.gc_stats(),
            pending_purge: heap.pending_purge(),
            committed_bytes,
            unpooled_spawns: self.pools.unpooled_spawns(),
        }
    }

    /// The pools (and through them, the heap) for what the world does not wrap.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Debris { mass: f32 }
    ///
    /// let world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let pools = world.pools();
    /// assert!(pools.is_pooled::<Spark>() && !pools.is_pooled::<Debris>());
    /// assert_eq!(pools.policy::<Spark>(), Policy::Reuse);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The pools, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// // A pool added to a running world (a level that brings a new class).
    /// let mut world = World::new();
    /// world.pools_mut().add::<Spark>(PoolConfig::ON_DEMAND)?;
    /// world.spawn::<Spark>();
    /// assert_eq!(world.pool_stats::<Spark>().unwrap().spawns, 1);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn pools_mut(&mut self) -> &mut Pools {
        &mut self.pools
    }

    /// The heap: flags, clusters, arena statistics.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { hp: u32 }
    ///
    /// #[derive(Trace, Object)]
    /// struct Cargo { mass: u32 }
    ///
    /// let mut world = World::new();
    /// let ship = world.insert(Ship { hp: 100 });
    /// let ore = world.insert(Cargo { mass: 5 });
    /// world.set_outer(ore, Some(ship.raw()))?;
    /// let heap = world.heap();
    /// assert_eq!(heap.sub_objects(ship.raw()).collect::<Vec<_>>(), [ore.raw()]);
    /// assert_eq!(heap.pending_purge(), 0);
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn heap(&self) -> &Heap {
        self.pools.heap()
    }

    /// The heap, mutably, for the world's own calls to it ([`heap_of`]).
    #[inline(always)]
    pub(crate) fn heap_mut(&mut self) -> &mut Heap {
        heap_of(&mut self.pools)
    }
}

/// The pools' heap, mutably, for the world's own calls to it: every caller calls the
/// heap's methods through the reference and nothing else, so none replaces the heap.
#[inline(always)]
pub(crate) fn heap_of(pools: &mut Pools) -> &mut Heap {
    // SAFETY: the world's code never replaces the heap (see above), which is all
    // `Pools::heap_mut` asks.
    unsafe { pools.heap_mut() }
}
