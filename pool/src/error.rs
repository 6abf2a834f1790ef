//! Errors of the pools.

use std::fmt;
use std::time::Duration;

use respawn_allocator::AllocError;
use respawn_arena::ArenaError;
use respawn_gc::GcError;

use crate::ConfigError;

/// Why a pool call failed. Nothing is changed when one is returned.
#[derive(Debug)]
#[non_exhaustive]
pub enum PoolError {
    /// The handle's object is gone (released and its slot reused, or never there).
    Stale,
    /// The handle's object was released already (a second `destroy`): found in O(1) from
    /// the slot's flags and generation.
    AlreadyReleased,
    /// The pool holds `max` objects and has none ready (`try_spawn`).
    Exhausted {
        /// The class's configuration name.
        class: &'static str,
        /// Its `max`.
        max: usize,
    },
    /// The class has a pool already.
    AlreadyPooled(&'static str),
    /// The class has no pool (`prefill` of a class registered without one).
    NotPooled(&'static str),
    /// A pool was still warming up when `wait_until_warm`'s time ran out.
    NotWarm {
        /// The class's configuration name.
        class: &'static str,
        /// Objects a spawn could pop then.
        ready: usize,
        /// Objects still queued, being built, or held in a worker's partial magazine.
        on_the_way: usize,
        /// How long it waited.
        waited: Duration,
    },
    /// A pool's configuration is invalid.
    Config(ConfigError),
    /// The arena refused (wrong class, rooted, permanent, allocator exhausted …).
    Arena(ArenaError),
    /// The collector refused.
    Gc(GcError),
    /// A standalone [`Pool`](crate::Pool)'s memory could not be reserved, or its
    /// reservation is used up.
    Alloc(AllocError),
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stale => f.write_str("stale handle: the object it was made for is gone"),
            Self::AlreadyReleased => f.write_str("the object was released already (destroyed twice?)"),
            Self::Exhausted { class, max } => {
                write!(f, "the {class} pool is at its max ({max}) with nothing ready: raise max or release objects")
            }
            Self::AlreadyPooled(class) => write!(f, "class {class} has a pool already"),
            Self::NotPooled(class) => write!(f, "class {class} has no pool: give it one with the builder's `pool`"),
            Self::NotWarm { class, ready, on_the_way, waited } => write!(
                f,
                "the {class} pool was still warming up after {waited:.1?}: {ready} objects ready, {on_the_way} still \
                 being built (are its workers starved of a core, or is `create` slow?)"
            ),
            Self::Config(e) => write!(f, "{e}"),
            Self::Arena(e) => write!(f, "{e}"),
            Self::Gc(e) => write!(f, "{e}"),
            Self::Alloc(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(e) => Some(e),
            Self::Arena(e) => Some(e),
            Self::Gc(e) => Some(e),
            Self::Alloc(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ArenaError> for PoolError {
    fn from(e: ArenaError) -> Self {
        match e {
            ArenaError::Stale => Self::Stale,
            e => Self::Arena(e),
        }
    }
}

impl From<GcError> for PoolError {
    fn from(e: GcError) -> Self {
        match e {
            GcError::Arena(e) => e.into(),
            e => Self::Gc(e),
        }
    }
}

impl From<ConfigError> for PoolError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}
