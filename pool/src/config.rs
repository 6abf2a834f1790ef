//! Pool configuration: per-class settings as data, named presets, validation, and TOML
//! layers that override what code registered.
//!
//! ```text
//!   code:  World::builder().pool::<Projectile>(PoolConfig::PROJECTILES)
//!            │
//!            ▼  ConfigLayers::apply("Projectile", &mut config)
//!   conf/pools.toml          [Projectile] capacity = 8192     ← defaults layer
//!   conf/pools.linux.toml    [Projectile] workers = 2         ← platform layer
//!            │
//!            ▼  validated after every layer that touched the class
//!   PoolConfig { capacity: 8192, workers: 2, ..PoolConfig::PROJECTILES }
//! ```
//!
//! A configuration file names classes by their short name as top-level tables; every key
//! is optional and an unknown key is an error:
//!
//! ```toml
//! [Projectile]
//! capacity = 4096
//! policy = "reuse"     # "default", "purge" or "reuse"
//! workers = 2
//!
//! [Turret]
//! max = 64
//! idle_trim_ms = 10000 # ready objects beyond capacity unused for 10 s are dropped; 0: never
//! ```
//!
//! Every error names the file (when there is one), the class and the key, and says what
//! to change.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// How a pooled class recycles released objects (the table in ARCHITECTURE.md §3.2).
///
/// Under every policy, handles to a released object are stale at once; the policies
/// differ in what happens to the object and when its cell is ready again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// The released object becomes `Garbage`; the next GC purges it, and its class
    /// returns the cell to the pool, where a worker builds a fresh object in it.
    /// The cell is ready again after a GC and an asynchronous precreation.
    #[default]
    Default,
    /// The object and its sub-objects are destroyed now, without a mark phase; their
    /// cells go back to the pool and are rebuilt asynchronously by the workers.
    Purge,
    /// The class's `reset` hook runs and the object stays in its cell, kept by its class
    /// (`InPool`) for the next spawn: no drop, no GC, ready again immediately.
    Reuse,
}

impl Policy {
    /// Every policy, in declaration order.
    pub const ALL: [Policy; 3] = [Policy::Default, Policy::Purge, Policy::Reuse];

    /// The name configuration files use for this policy: `"default"`, `"purge"` or
    /// `"reuse"`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Default => "default",
            Policy::Purge => "purge",
            Policy::Reuse => "reuse",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = UnknownPolicy;

    /// Parses a policy name, ignoring ASCII case (`"Reuse"` is [`Policy::Reuse`]).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|policy| policy.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownPolicy(name.to_owned()))
    }
}

/// A string that names no [`Policy`]; holds the string as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown policy {:?}: expected one of ", self.0)?;
        for (i, policy) in Policy::ALL.into_iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}{policy}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownPolicy {}

/// One class's pool settings: registered in code, overridable from [`ConfigLayers`], and
/// checked by [`PoolConfig::validate`].
///
/// Invariants of a valid config (each is one rule of `validate`):
/// `1 ≤ max`, `capacity ≤ max`, `low_watermark ≤ max`, `workers ≤ MAX_WORKERS`,
/// `precreate ⇒ workers ≥ 1`, `low_watermark > 0 ⇒ precreate`,
/// `capacity > 0 ⇒ low_watermark < capacity`, and `idle_trim` is `None` or at least a
/// millisecond.
///
/// The presets' sizes are absolute: `PoolConfig { capacity: 64, ..PoolConfig::DEFAULT }`
/// keeps `DEFAULT`'s `low_watermark` of 64, which `validate` refuses; set the watermark
/// with the capacity (`low_watermark: 16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// Objects precreated on the workers when the pool is built (only if `precreate`).
    /// Zero is allowed: the pool then starts empty and grows on demand.
    pub capacity: usize,
    /// Ceiling on the cells the pool owns: in use + ready + being built. Beyond it
    /// `try_spawn` errs and `spawn` makes an unpooled overflow object. At least 1 and at
    /// least `capacity`.
    pub max: usize,
    /// When fewer objects than this are ready, the workers grow the pool by `grow_by`,
    /// up to `max`. At most `max`; nonzero only with `precreate`. Below `capacity` when
    /// `capacity` is nonzero: a pool that starts at its watermark grows at once, before
    /// anything is spawned (a quarter of `capacity` is a good start; 0 grows only on a
    /// miss). With `capacity` 0 nothing is precreated up front and the watermark alone
    /// fills the pool, from its first spawn.
    pub low_watermark: usize,
    /// Objects built per growth step at the low watermark.
    pub grow_by: usize,
    /// How released objects are recycled.
    pub policy: Policy,
    /// Whether worker threads build `capacity` objects when the pool is built and grow it
    /// at the low watermark. Without it objects are created inline, on demand.
    pub precreate: bool,
    /// Precreation threads for this class: at least 1 with `precreate`, at most
    /// [`PoolConfig::MAX_WORKERS`].
    pub workers: usize,
    /// Give idle memory back: ready objects beyond `capacity` that no spawn needed for this
    /// long (of frame time, as `World::end_frame_with` passes it) are dropped during the
    /// frame upkeep, and the slabs they leave empty are decommitted. `None` (every preset)
    /// keeps whatever the pool grew to. At least a millisecond; a file sets it in
    /// milliseconds (`idle_trim_ms`, 0 for `None`).
    pub idle_trim: Option<Duration>,
}

impl PoolConfig {
    /// The largest `workers` a config may ask for.
    pub const MAX_WORKERS: usize = 64;

    /// The shortest `idle_trim` a config may ask for.
    pub const MIN_IDLE_TRIM: Duration = Duration::from_millis(1);

    /// A middle-of-the-road pool for classes with no special needs: a few hundred objects
    /// precreated on one worker, recycled through the GC ([`Policy::Default`]).
    pub const DEFAULT: PoolConfig = PoolConfig {
        capacity: 256,
        max: 65_536,
        low_watermark: 64,
        grow_by: 256,
        policy: Policy::Default,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };

    /// Many cheap, short-lived objects (projectiles, particles, hit events): thousands
    /// ready up front, grown in large steps, and recycled in place ([`Policy::Reuse`]) so
    /// a release costs no drop and no GC.
    pub const PROJECTILES: PoolConfig = PoolConfig {
        capacity: 4096,
        max: 1 << 20,
        low_watermark: 1024,
        grow_by: 1024,
        policy: Policy::Reuse,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };

    /// Objects whose constructors take tens of microseconds: two workers keep a deep
    /// ready queue so the game thread never constructs one inline, and released objects
    /// are destroyed at once and rebuilt in the background ([`Policy::Purge`]).
    pub const EXPENSIVE: PoolConfig = PoolConfig {
        capacity: 512,
        max: 16_384,
        low_watermark: 256,
        grow_by: 256,
        policy: Policy::Purge,
        precreate: true,
        workers: 2,
        idle_trim: None,
    };

    /// No threads, nothing precreated: objects are created on demand and released ones
    /// are kept for the next spawn ([`Policy::Reuse`]), like Unity's `ObjectPool<T>`.
    pub const ON_DEMAND: PoolConfig = PoolConfig {
        capacity: 0,
        max: 65_536,
        low_watermark: 0,
        grow_by: 0,
        policy: Policy::Reuse,
        precreate: false,
        workers: 0,
        idle_trim: None,
    };

    /// Checks the invariants listed on [`PoolConfig`].
    ///
    /// # Errors
    ///
    /// The first problem found, as [`ConfigError::Invalid`] with no file or class, `key`
    /// naming the field to change, and a message that gives the offending values and the
    /// fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let Self { capacity, max, low_watermark, grow_by, policy: _, precreate, workers, idle_trim } = *self;
        let invalid = |key, message: String| Err(ConfigError::Invalid { file: None, class: None, key, message });

        if max == 0 {
            return invalid("max", "max is 0: a pool must be able to hold at least one object; set max ≥ 1".into());
        }
        if max < capacity {
            return invalid(
                "max",
                format!(
                    "max ({max}) is below capacity ({capacity}): raise max to at least {capacity} or lower capacity"
                ),
            );
        }
        if low_watermark > max {
            return invalid(
                "low_watermark",
                format!(
                    "low_watermark ({low_watermark}) is above max ({max}), so the pool could never refill to it: \
                     lower low_watermark to at most {max} or raise max"
                ),
            );
        }
        if precreate && workers == 0 {
            return invalid(
                "workers",
                "precreate needs at least one worker thread: set workers ≥ 1 or precreate = false".into(),
            );
        }
        if workers > Self::MAX_WORKERS {
            return invalid(
                "workers",
                format!(
                    "workers ({workers}) is above the limit of {limit} threads per class: set workers ≤ {limit}",
                    limit = Self::MAX_WORKERS
                ),
            );
        }
        if precreate && grow_by == 0 && max > capacity && low_watermark > 0 {
            return invalid(
                "grow_by",
                format!(
                    "grow_by is 0 with low_watermark {low_watermark} and max ({max}) above capacity ({capacity}): \
                     the pool could never grow past capacity; set grow_by ≥ 1 or max = {capacity}"
                ),
            );
        }
        if low_watermark > 0 && !precreate {
            return invalid(
                "low_watermark",
                format!(
                    "low_watermark ({low_watermark}) needs precreate: growth at the watermark is done by the workers' \
                     precreation; set precreate = true or low_watermark = 0"
                ),
            );
        }
        if capacity > 0 && low_watermark >= capacity {
            return invalid(
                "low_watermark",
                format!(
                    "low_watermark ({low_watermark}) must be below capacity ({capacity}): the pool would start at its \
                     watermark and grow at once; lower low_watermark, e.g. to capacity / 4 = {quarter} (0 grows \
                     only on a miss), or raise capacity above it",
                    quarter = capacity / 4
                ),
            );
        }
        if let Some(idle) = idle_trim.filter(|idle| *idle < Self::MIN_IDLE_TRIM) {
            return invalid(
                "idle_trim",
                format!(
                    "idle_trim ({idle:?}) is below a millisecond: the pool would drop its ready objects every frame; \
                     set idle_trim to None to never trim, or to a time objects may sit unused (e.g. 10 s)"
                ),
            );
        }
        Ok(())
    }
}

impl Default for PoolConfig {
    /// [`PoolConfig::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One class's settings from one file: only the keys the file sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
// `expecting` words the error for a top-level `key = value` outside any class table.
#[serde(deny_unknown_fields, expecting = "a class table: settings go under a class header such as [Projectile]")]
pub struct PoolConfigPatch {
    /// Overrides [`PoolConfig::capacity`].
    pub capacity: Option<usize>,
    /// Overrides [`PoolConfig::max`].
    pub max: Option<usize>,
    /// Overrides [`PoolConfig::low_watermark`].
    pub low_watermark: Option<usize>,
    /// Overrides [`PoolConfig::grow_by`].
    pub grow_by: Option<usize>,
    /// Overrides [`PoolConfig::policy`].
    pub policy: Option<Policy>,
    /// Overrides [`PoolConfig::precreate`].
    pub precreate: Option<bool>,
    /// Overrides [`PoolConfig::workers`].
    pub workers: Option<usize>,
    /// Overrides [`PoolConfig::idle_trim`], in milliseconds; 0 turns idle trimming off.
    pub idle_trim_ms: Option<u64>,
}

impl PoolConfigPatch {
    /// Overwrites the fields of `config` this patch sets and leaves the others alone.
    /// Does not validate: see [`ConfigLayers::apply`].
    pub fn apply(&self, config: &mut PoolConfig) {
        // Destructured so that a new field cannot be forgotten here.
        let Self { capacity, max, low_watermark, grow_by, policy, precreate, workers, idle_trim_ms } = *self;
        set(&mut config.capacity, capacity);
        set(&mut config.max, max);
        set(&mut config.low_watermark, low_watermark);
        set(&mut config.grow_by, grow_by);
        set(&mut config.policy, policy);
        set(&mut config.precreate, precreate);
        set(&mut config.workers, workers);
        set(&mut config.idle_trim, idle_trim_ms.map(|ms| (ms > 0).then(|| Duration::from_millis(ms))));
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// A parsed configuration file: a patch per class it names.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// Where the text came from; used in error messages only.
    path: PathBuf,
    classes: BTreeMap<String, PoolConfigPatch>,
}

impl ConfigFile {
    /// Reads and parses the file at `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Io`] naming the file if it cannot be read; otherwise as
    /// [`ConfigFile::parse`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = fs::read_to_string(path).map_err(|error| ConfigError::Io { file: path.to_owned(), error })?;
        Self::parse(path, &text)
    }

    /// Parses `text` as a configuration file; `path` is used in messages only.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Parse`] naming the file, with toml's message (line, column and the
    /// offending key) for malformed TOML, a top-level value that is not a class table, a
    /// value of the wrong type, a negative number, an unknown key or an unknown policy.
    pub fn parse(path: impl Into<PathBuf>, text: &str) -> Result<Self, ConfigError> {
        let path = path.into();
        match toml::from_str(text) {
            Ok(classes) => Ok(Self { path, classes }),
            Err(error) => Err(ConfigError::Parse { file: path, message: error.to_string().trim_end().to_owned() }),
        }
    }

    /// The path given to [`ConfigFile::load`] or [`ConfigFile::parse`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every class the file names, with its patch, sorted by class name.
    pub fn classes(&self) -> impl Iterator<Item = (&str, &PoolConfigPatch)> {
        self.classes.iter().map(|(class, patch)| (class.as_str(), patch))
    }

    /// The patch for `class`, if the file names it.
    pub fn get(&self, class: &str) -> Option<&PoolConfigPatch> {
        self.classes.get(class)
    }
}

/// Configuration files applied in order (defaults first, then a platform file), over
/// what code registered.
#[derive(Clone, Debug, Default)]
pub struct ConfigLayers {
    /// Lowest precedence first: a later file overrides an earlier one key by key.
    files: Vec<ConfigFile>,
}

impl ConfigLayers {
    /// No layers: [`ConfigLayers::apply`] only validates.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `file` on top of the layers so far.
    pub fn push(&mut self, file: ConfigFile) {
        self.files.push(file);
    }

    /// Loads the file at `path` and adds it on top of the layers so far.
    ///
    /// # Errors
    ///
    /// As [`ConfigFile::load`]; nothing is pushed on error.
    pub fn push_file(&mut self, path: impl AsRef<Path>) -> Result<(), ConfigError> {
        self.push(ConfigFile::load(path)?);
        Ok(())
    }

    /// The platform layer beside `base`: for `conf/pools.toml` on Linux,
    /// `conf/pools.linux.toml` ([`std::env::consts::OS`]). Pushed if it exists; returns
    /// whether it was.
    ///
    /// # Errors
    ///
    /// A platform file that exists but cannot be read or parsed, as
    /// [`ConfigFile::load`]. A missing one is not an error.
    pub fn push_platform(&mut self, base: impl AsRef<Path>) -> Result<bool, ConfigError> {
        let path = Self::platform_path(base.as_ref(), std::env::consts::OS);
        // Reading rather than checking `exists` first: no window between check and use.
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(ConfigError::Io { file: path, error }),
        };
        self.push(ConfigFile::parse(path, &text)?);
        Ok(true)
    }

    /// The platform file beside `base` for `os`: `os` goes between the file stem and the
    /// extension (`conf/pools.toml`, `"linux"` → `conf/pools.linux.toml`), or is appended
    /// when there is no extension (`pools` → `pools.linux`).
    pub fn platform_path(base: &Path, os: &str) -> PathBuf {
        let mut name = base.file_stem().unwrap_or_default().to_owned();
        name.push(".");
        name.push(os);
        if let Some(extension) = base.extension() {
            name.push(".");
            name.push(extension);
        }
        base.with_file_name(name)
    }

    /// The layers, lowest precedence first.
    pub fn files(&self) -> &[ConfigFile] {
        &self.files
    }

    /// Whether no file has been pushed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Applies every layer's patch for `class` in order over `config` (what code
    /// registered), validating the registered config first and the result after each
    /// layer that names the class.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] naming the class, the key, and the file of the first layer
    /// whose result is invalid (no file if the registered config already was). `config`
    /// is left unchanged on error.
    pub fn apply(&self, class: &str, config: &mut PoolConfig) -> Result<(), ConfigError> {
        let mut merged = *config;
        merged.validate().map_err(|error| error.located(None, class))?;
        for file in &self.files {
            if let Some(patch) = file.get(class) {
                patch.apply(&mut merged);
                merged.validate().map_err(|error| error.located(Some(file.path()), class))?;
            }
        }
        *config = merged;
        Ok(())
    }

    /// Checks that every class a file names is one of `known`, the classes registered in
    /// code, so that a misspelt class name is not silently ignored.
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownClass`] for the first unknown class, naming its file and the
    /// known classes (sorted).
    pub fn check_classes<'a>(&self, known: impl IntoIterator<Item = &'a str> + Clone) -> Result<(), ConfigError> {
        for file in &self.files {
            for (class, _) in file.classes() {
                if !known.clone().into_iter().any(|name| name == class) {
                    let mut known: Vec<String> = known.into_iter().map(str::to_owned).collect();
                    known.sort();
                    known.dedup();
                    return Err(ConfigError::UnknownClass { file: file.path.clone(), class: class.to_owned(), known });
                }
            }
        }
        Ok(())
    }
}

/// The name a configuration file gives a class, from its type's full name:
/// `a::b::Name<c::D>` → `Name<c::D>`, the last path segment before any generic arguments.
pub(crate) fn short_type_name(full: &'static str) -> &'static str {
    let head = full.find('<').map_or(full, |i| &full[..i]);
    let start = head.rfind("::").map_or(0, |i| i + 2);
    &full[start..]
}

/// What went wrong while loading, merging or validating pool configuration.
///
/// `Display` gives one line a user can act on (toml's messages add a few lines showing
/// the offending text), starting with the file when there is one.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// A config breaks one of [`PoolConfig::validate`]'s rules.
    Invalid {
        /// The layer whose result was invalid; `None` for a config built in code.
        file: Option<PathBuf>,
        /// The class being configured, when known.
        class: Option<String>,
        /// The field to change.
        key: &'static str,
        /// What is wrong, with the values, and what to change.
        message: String,
    },
    /// A file could not be read.
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// A file is not valid TOML or does not have the expected shape.
    Parse {
        /// The file.
        file: PathBuf,
        /// toml's message, naming line, column and key, with trailing whitespace trimmed.
        message: String,
    },
    /// A file configures a class that code did not register.
    UnknownClass {
        /// The file.
        file: PathBuf,
        /// The class the file names.
        class: String,
        /// The classes registered in code.
        known: Vec<String>,
    },
}

impl ConfigError {
    /// Names the class an [`Invalid`](Self::Invalid) error is about, if it names none yet
    /// (errors from [`PoolConfig::validate`] know no class).
    pub fn in_class(self, class: &str) -> Self {
        match self {
            ConfigError::Invalid { file, class: None, key, message } => {
                ConfigError::Invalid { file, class: Some(class.to_owned()), key, message }
            }
            other => other,
        }
    }

    /// Attaches the file and class an `Invalid` error arose in; other errors already name
    /// their file.
    fn located(self, in_file: Option<&Path>, in_class: &str) -> Self {
        match self {
            ConfigError::Invalid { key, message, .. } => ConfigError::Invalid {
                file: in_file.map(Path::to_owned),
                class: Some(in_class.to_owned()),
                key,
                message,
            },
            other => other,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Invalid { file, class, key, message } => {
                if let Some(file) = file {
                    write!(f, "{}: ", file.display())?;
                }
                if let Some(class) = class {
                    write!(f, "class {class}, ")?;
                }
                write!(f, "{key}: {message}")
            }
            ConfigError::Io { file, error } => write!(f, "{}: cannot read: {error}", file.display()),
            ConfigError::Parse { file, message } => write!(f, "{}: {message}", file.display()),
            ConfigError::UnknownClass { file, class, known } => {
                write!(f, "{}: unknown class {class} (the table [{class}]); ", file.display())?;
                if known.is_empty() {
                    f.write_str("no classes are registered in code")
                } else {
                    write!(f, "classes registered in code: {}", known.join(", "))
                }
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The slab configuration of a class registered for a pool of `config`: the arena's, but
/// for a precreating pool no spare slab, and slabs no larger than its `capacity` needs (at
/// least 64 cells, and enough that the reservation holds `max`); for a pool that builds on
/// demand at most one growth step's spare slabs.
///
/// A precreating pool's ready objects are its buffer ahead of demand: spawns pop them, and
/// only a growth step at the low watermark takes new cells. The pool asks for that step's
/// memory when its stock comes within a step of the watermark
/// ([`Arena::prepare_ahead`](respawn_arena::Arena::prepare_ahead)), so the growth takes no
/// page fault; a spare slab kept the rest of the time would sit empty behind a full pool
/// (a 1024-cell slab of a 136-byte class is 136 KiB, for a pool of a few hundred). A pool
/// that builds on demand has no such buffer: its class keeps up to a growth step's slabs
/// prepared, as a class without a pool does.
#[cfg(feature = "world")]
pub(crate) fn pooled_slabs(arena: respawn_arena::SlabConfig, config: &PoolConfig) -> respawn_arena::SlabConfig {
    /// The smallest slab a pool's size chooses: below it, a slab's fixed costs (its base,
    /// a table run, a tick's step from one slab to the next) weigh on too few cells.
    const MIN_CELLS: usize = 64;
    if !config.precreate {
        let step = u32::try_from(config.grow_by.div_ceil(arena.cells_per_slab as usize)).unwrap_or(u32::MAX);
        return respawn_arena::SlabConfig { spare_slabs: arena.spare_slabs.min(step.max(1)), ..arena };
    }
    let mut cells_per_slab = arena.cells_per_slab;
    if config.capacity > 0 {
        let whole_max = config.max.div_ceil(arena.max_slabs.max(1) as usize);
        let fits = config.capacity.max(whole_max).max(MIN_CELLS).next_power_of_two();
        cells_per_slab = cells_per_slab.min(u32::try_from(fits).unwrap_or(u32::MAX));
    }
    respawn_arena::SlabConfig { cells_per_slab, spare_slabs: 0, ..arena }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names() {
        assert_eq!(short_type_name("Projectile"), "Projectile");
        assert_eq!(short_type_name("game::weapons::Projectile"), "Projectile");
        assert_eq!(short_type_name("game::Wrapper<alloc::string::String>"), "Wrapper<alloc::string::String>");
    }
}
