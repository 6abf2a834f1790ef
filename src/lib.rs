#![doc = include_str!("guide.md")]

/// The bump allocator behind [`World::frame_arena`], re-exported so its `Bump` and
/// `bumpalo::collections::Vec` name the same crate version as respawn's.
pub use bumpalo;
pub use respawn_allocator as allocator;
pub use respawn_allocator::{AllocError, ChunkAllocator, ClassId, PermanentPool, SlabConfig};
pub use respawn_arena as arena;
pub use respawn_arena::{
    Arena, ArenaClassStats, ArenaConfig, ArenaError, CellState, ClassLayout, ClassStore, Ended, Freed, FreedCell,
    Handle, Lifecycle, ListenerId, ObjectFlags, RawHandle, Releasable, Root, SideTable, SlabLayout, TickCursor, View,
};
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

/// The README's examples, run as doctests (the README is the repository's front page, not
/// the crate's documentation).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
