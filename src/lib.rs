#![doc = include_str!("guide.md")]

/// The bump allocator behind [`World::frame_arena`], re-exported so its `Bump` and
/// `bumpalo::collections::Vec` name the same crate version as respawn's.
pub use bumpalo;
/// The chunk allocator (`respawn-allocator`): [`allocator::ChunkAllocator`], its classes
/// and slabs, the permanent pool. Engine internals a game does not need; [`SlabConfig`] is
/// at the root.
pub use respawn_allocator as allocator;
pub use respawn_allocator::SlabConfig;
/// The arena and its object table (`respawn-arena`). Beside what the root re-exports, the
/// engine's internals: a class's typed store ([`arena::ClassStore`]), the cells a class
/// hands back ([`arena::FreedCell`], [`arena::Freed`], [`arena::Ended`]), the object
/// flags, slab layouts.
pub use respawn_arena as arena;
pub use respawn_arena::{
    Arena, ArenaClassStats, ArenaConfig, ArenaError, CellState, ClassLayout, Handle, Lifecycle, ListenerId, RawHandle,
    Root, SideTable, TickCursor, View,
};
/// The collector (`respawn-gc`); the root re-exports what a game uses of it.
pub use respawn_gc as gc;
pub use respawn_gc::{
    ChainLink, ClusterId, CollectOptions, GarbageReference, GcError, GcSettings, GcStats, GcStep, Heap, Lifetime,
    MarkPhase, MarkProgress, MarkStep, Object, ObjectRef, PurgeProgress, PurgeThreadStats, Reference, ReferenceChain,
    Referencer, Referrer, RootKind, Trace, Tracer,
};
pub use respawn_pool as pool;
pub use respawn_pool::{Composite, CompositeStats, Parts};
pub use respawn_pool::{
    ConfigError, ConfigLayers, LocalShared, LocalWeakShared, OwnedPooled, Policy, Pool, PoolConfig, PoolError, PoolMut,
    PoolStats, Poolable, Pooled, Pools, Shared, WeakShared,
};

mod batch;
mod commands;
mod panics;
mod schedule;
mod trim;
mod world;
pub use batch::SpawnBatch;
pub use commands::{Applied, CommandBuffer, CommandFailure, CommandKind};
pub use schedule::{TickContext, TickError, TickFunction, TickGroup, TickId};
pub use world::{FrameEnd, World, WorldBuilder, WorldStats};

/// What a game uses, in one import: `use respawn::prelude::*;`.
///
/// The [`World`] and its builder, [`Handle`]s and [`Root`] guards, what a class implements
/// or derives ([`Trace`], [`Object`], [`Poolable`]), pool settings and policies, the
/// collector's settings, the tick's [`View`] and commands, tick functions, side tables,
/// and the errors a game handles. The engine's internals stay in [`arena`], [`gc`],
/// [`pool`] and [`allocator`].
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
/// let mut world = World::builder().pool::<Spark>(PoolConfig::DEFAULT).build().expect("valid settings");
/// let spark: Handle<Spark> = world.spawn_with(|s: &mut Spark| s.heat = 1.0);
/// world.tick::<Spark>(|s| s.heat *= 0.5);
/// assert_eq!(world.get(spark).map(|s| s.heat), Some(0.5));
/// ```
pub mod prelude {
    pub use crate::{
        ArenaError, CollectOptions, CommandBuffer, GcSettings, Handle, Lifetime, Object, Policy, PoolConfig, PoolError,
        PoolStats, Poolable, RawHandle, Root, SideTable, TickFunction, TickGroup, Trace, View, World, WorldBuilder,
    };
}

/// The README's examples, run as doctests (the README is the repository's front page, not
/// the crate's documentation).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
