//! Errors of the pools.

use std::fmt;
use std::time::Duration;

use respawn_allocator::AllocError;
#[cfg(feature = "world")]
use respawn_arena::ArenaError;
#[cfg(feature = "world")]
use respawn_gc::GcError;

use crate::ConfigError;

/// Why a pool call failed. Nothing is changed when one is returned.
///
/// The variants about handles, classes, the arena and the collector (`Stale`,
/// `AlreadyReleased`, `AlreadyPooled`, `NotPooled`, `Arena`, `Gc`) come with the `world`
/// feature: a standalone [`Pool`](crate::Pool) never returns them.
#[derive(Debug)]
#[non_exhaustive]
pub enum PoolError {
    /// The handle's object is gone (released and its slot reused, or never there).
    #[cfg(feature = "world")]
    Stale,
    /// The handle's object was released already (a second `destroy`): found in O(1) from
    /// the slot's flags and generation.
    #[cfg(feature = "world")]
    AlreadyReleased,
    /// The pool holds `max` objects and has none ready (`try_spawn`).
    Exhausted {
        /// The class's configuration name.
        class: &'static str,
        /// Its `max`.
        max: usize,
    },
    /// The class has a pool already.
    #[cfg(feature = "world")]
    AlreadyPooled(&'static str),
    /// The class has no pool: a call that needs one (`prefill`, a trim, a composite
    /// spawn), or any spawn of it where pools are required
    /// ([`Pools::set_require_pools`](crate::Pools::set_require_pools)).
    #[cfg(feature = "world")]
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
    #[cfg(feature = "world")]
    Arena(ArenaError),
    /// The collector refused.
    #[cfg(feature = "world")]
    Gc(GcError),
    /// A standalone [`Pool`](crate::Pool)'s memory could not be reserved, or its
    /// reservation is used up.
    Alloc(AllocError),
    /// A [`Composite`](crate::Composite) class cannot have a composite pool as declared.
    #[cfg(feature = "world")]
    Composite {
        /// The owner class's configuration name.
        class: &'static str,
        /// What is wrong, and what to change.
        reason: &'static str,
    },
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "world")]
            Self::Stale => f.write_str("stale handle: the object it was made for is gone"),
            #[cfg(feature = "world")]
            Self::AlreadyReleased => f.write_str("the object was released already (destroyed twice?)"),
            Self::Exhausted { class, max } => {
                write!(f, "the {class} pool is at its max ({max}) with nothing ready: raise max or release objects")
            }
            #[cfg(feature = "world")]
            Self::AlreadyPooled(class) => write!(f, "class {class} has a pool already"),
            #[cfg(feature = "world")]
            Self::NotPooled(class) => write!(
                f,
                "class {class} has no pool: add `.pool::<{class}>(config)` to the World builder (`.composite` for \
                 a composite's owner)"
            ),
            Self::NotWarm { class, ready, on_the_way, waited } => write!(
                f,
                "the {class} pool was still warming up after {waited:.1?}: {ready} objects ready, {on_the_way} still \
                 being built (are its workers starved of a core, or is `create` slow?)"
            ),
            Self::Config(e) => write!(f, "{e}"),
            #[cfg(feature = "world")]
            Self::Arena(e) => write!(f, "{e}"),
            #[cfg(feature = "world")]
            Self::Gc(e) => write!(f, "{e}"),
            Self::Alloc(e) => write!(f, "{e}"),
            #[cfg(feature = "world")]
            Self::Composite { class, reason } => write!(f, "composite {class} refused: {reason}"),
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(e) => Some(e),
            #[cfg(feature = "world")]
            Self::Arena(e) => Some(e),
            #[cfg(feature = "world")]
            Self::Gc(e) => Some(e),
            Self::Alloc(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "world")]
impl From<ArenaError> for PoolError {
    fn from(e: ArenaError) -> Self {
        match e {
            ArenaError::Stale => Self::Stale,
            e => Self::Arena(e),
        }
    }
}

#[cfg(feature = "world")]
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

#[cfg(feature = "world")]
/// A release the collector's walk refused ([`Heap::subtree`](respawn_gc::Heap::subtree)):
/// a rooted or permanent object (or sub-object), as the arena names them.
pub(crate) fn refusal(e: GcError) -> PoolError {
    match e {
        GcError::Permanent => PoolError::Arena(ArenaError::Permanent),
        e => e.into(),
    }
}
