//! The World's side of composite precreation (`respawn_pool::Composite`): the builder's
//! registration and the spawn that hands out an owner with its parts.

use respawn_arena::Handle;
use respawn_pool::{Composite, CompositeStats, Parts, PoolConfig, PoolError};

use super::{PendingPool, World, WorldBuilder};
use crate::panics::spawn_failed;

impl WorldBuilder {
    /// Gives `O` a composite pool with `config` (which configuration files may override by
    /// `O::class_name()`): each `O` is precreated with its parts on the pool's workers, and
    /// a spawn hands out the whole set, each part linked to the owner as a sub-object. See
    /// [`Composite`] for the policies, and [`World::spawn_composite`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::Composite;
    ///
    /// #[derive(Trace, Object)]
    /// struct Health { hp: u32 }
    /// impl Poolable for Health {
    ///     fn create() -> Self { Health { hp: 100 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Tower { level: u32 }
    /// impl Poolable for Tower {
    ///     fn create() -> Self { Tower { level: 1 } }
    /// }
    /// impl Composite for Tower {
    ///     type Parts = (Health,);
    ///     fn assemble() -> (Self, Self::Parts) {
    ///         (Tower { level: 1 }, (Health { hp: 100 },))
    ///     }
    /// }
    ///
    /// let mut world = World::builder().composite::<Tower>(PoolConfig::ON_DEMAND).build()?;
    /// let tower = world.spawn::<Tower>(); // the owner's handle; its part came with it
    /// let parts: Vec<_> = world.heap().sub_objects(tower.raw()).collect();
    /// assert_eq!(parts.len(), 1);
    /// assert_eq!(world.get(Handle::<Health>::from_raw(parts[0])).map(|h| h.hp), Some(100));
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn composite<O: Composite>(mut self, config: PoolConfig) -> Self {
        self.pools.push(PendingPool {
            name: O::class_name(),
            config,
            add: Box::new(|pools, config| pools.add_composite::<O>(config)),
        });
        self
    }
}

impl World {
    /// Spawns a composite of `O` (see [`Composite`]): pops a set its workers built, activates
    /// the owner and each part, and links each part to the owner ([`World::set_outer`]'s
    /// link) — no construction and no allocation on this thread once the pool is warm.
    /// Returns the owner's handle and each part's; the parts are also the owner's
    /// sub-objects. [`spawn`](World::spawn) of `O` does the same and returns the owner
    /// alone. Either way, spawn listeners hear of each part, then of the owner.
    ///
    /// # Panics
    /// If `O` has no composite pool, or memory is exhausted (as [`spawn`](World::spawn));
    /// [`try_spawn_composite`](Self::try_spawn_composite) returns those as errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Composite, Object, Policy, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Turret { angle: f32 }
    /// impl Poolable for Turret {
    ///     fn create() -> Self { Turret { angle: 0.0 } }
    ///     fn reset(&mut self) { self.angle = 0.0; }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Health { hp: u32 }
    /// impl Poolable for Health {
    ///     fn create() -> Self { Health { hp: 100 } }
    ///     fn reset(&mut self) { self.hp = 100; }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Tower { level: u32 }
    /// impl Poolable for Tower {
    ///     fn create() -> Self { Tower { level: 1 } }
    /// }
    /// impl Composite for Tower {
    ///     type Parts = (Turret, Health);
    ///     // Runs on the pool's workers: loading meshes, building components…
    ///     fn assemble() -> (Self, Self::Parts) {
    ///         (Tower { level: 1 }, (Turret { angle: 0.0 }, Health { hp: 100 }))
    ///     }
    /// }
    ///
    /// let config = PoolConfig { capacity: 16, low_watermark: 4, policy: Policy::Reuse, ..PoolConfig::EXPENSIVE };
    /// let mut world = World::builder().composite::<Tower>(config).build()?;
    /// world.wait_until_warm(std::time::Duration::from_secs(10))?;
    ///
    /// let (tower, (turret, health)) = world.spawn_composite::<Tower>();
    /// world.get_mut(health).unwrap().hp = 40;
    /// let parts: Vec<_> = world.heap().sub_objects(tower.raw()).collect();
    /// assert!(parts.contains(&turret.raw()) && parts.contains(&health.raw()));
    ///
    /// world.destroy(tower)?; // Reuse: owner and parts reset, ready again as one set
    /// assert!(world.get(tower).is_none() && world.get(health).is_none(), "all stale at once");
    /// let (_, (_, health)) = world.spawn_composite::<Tower>();
    /// assert_eq!(world.get(health).unwrap().hp, 100);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    pub fn spawn_composite<O: Composite>(&mut self) -> (Handle<O>, <O::Parts as Parts>::Handles) {
        match self.try_spawn_composite_with(|_| {}) {
            Ok(spawned) => spawned,
            Err(e) => spawn_failed(O::class_name(), e),
        }
    }

    /// [`spawn_composite`](Self::spawn_composite), returning a failure instead of
    /// panicking.
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `O` has no composite pool; [`PoolError::Arena`] when a
    /// class's memory is exhausted.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::Composite;
    ///
    /// #[derive(Trace, Object)]
    /// struct Health { hp: u32 }
    /// impl Poolable for Health {
    ///     fn create() -> Self { Health { hp: 100 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Tower { level: u32 }
    /// impl Poolable for Tower {
    ///     fn create() -> Self { Tower { level: 1 } }
    /// }
    /// impl Composite for Tower {
    ///     type Parts = (Health,);
    ///     fn assemble() -> (Self, Self::Parts) {
    ///         (Tower { level: 1 }, (Health { hp: 100 },))
    ///     }
    /// }
    ///
    /// let mut world = World::builder().composite::<Tower>(PoolConfig::ON_DEMAND).build()?;
    /// let (tower, (health,)) = world.try_spawn_composite::<Tower>()?;
    /// assert!(world.contains(tower) && world.contains(health));
    ///
    /// // A world that gave `Tower` no composite pool refuses.
    /// let mut bare = World::new();
    /// assert!(matches!(bare.try_spawn_composite::<Tower>(), Err(PoolError::NotPooled(_))));
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn try_spawn_composite<O: Composite>(
        &mut self,
    ) -> Result<(Handle<O>, <O::Parts as Parts>::Handles), PoolError> {
        self.try_spawn_composite_with(|_| {})
    }

    /// [`try_spawn_composite`](Self::try_spawn_composite), running `init` on the owner
    /// before the hooks.
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `O` has no composite pool; [`PoolError::Arena`] when a
    /// class's memory is exhausted.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::Composite;
    ///
    /// #[derive(Trace, Object)]
    /// struct Health { hp: u32 }
    /// impl Poolable for Health {
    ///     fn create() -> Self { Health { hp: 100 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Tower { level: u32 }
    /// impl Poolable for Tower {
    ///     fn create() -> Self { Tower { level: 1 } }
    /// }
    /// impl Composite for Tower {
    ///     type Parts = (Health,);
    ///     fn assemble() -> (Self, Self::Parts) {
    ///         (Tower { level: 1 }, (Health { hp: 100 },))
    ///     }
    /// }
    ///
    /// let mut world = World::builder().composite::<Tower>(PoolConfig::ON_DEMAND).build()?;
    /// let (tower, (health,)) = world.try_spawn_composite_with(|t: &mut Tower| t.level = 3)?;
    /// assert_eq!(world.get(tower).unwrap().level, 3);
    /// assert_eq!(world.get(health).unwrap().hp, 100, "`init` runs on the owner alone");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn try_spawn_composite_with<O: Composite>(
        &mut self,
        init: impl FnOnce(&mut O),
    ) -> Result<(Handle<O>, <O::Parts as Parts>::Handles), PoolError> {
        self.pools.spawn_composite_with(init)
    }

    /// `O`'s composite pool counters (its [`PoolStats`](respawn_pool::PoolStats) per
    /// composite, and the composites reassembled and broken), if it has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::prelude::*;
    /// use respawn::Composite;
    ///
    /// #[derive(Trace, Object)]
    /// struct Health { hp: u32 }
    /// impl Poolable for Health {
    ///     fn create() -> Self { Health { hp: 100 } }
    /// }
    ///
    /// #[derive(Trace, Object)]
    /// struct Tower { level: u32 }
    /// impl Poolable for Tower {
    ///     fn create() -> Self { Tower { level: 1 } }
    /// }
    /// impl Composite for Tower {
    ///     type Parts = (Health,);
    ///     fn assemble() -> (Self, Self::Parts) {
    ///         (Tower { level: 1 }, (Health { hp: 100 },))
    ///     }
    /// }
    ///
    /// // `ON_DEMAND` is `Reuse`: a destroyed tower is kept with its part, as one set.
    /// let mut world = World::builder().composite::<Tower>(PoolConfig::ON_DEMAND).build()?;
    /// let (tower, (health,)) = world.spawn_composite::<Tower>();
    /// world.destroy(health)?; // the part alone: the set is no longer whole…
    /// world.destroy(tower)?; // … so it is destroyed, not kept
    ///
    /// let stats = world.composite_stats::<Tower>().expect("a composite pool");
    /// assert_eq!((stats.parts, stats.pool.spawns, stats.broken), (1, 1, 1));
    /// assert!(world.composite_stats::<Health>().is_none(), "a part, not a composite");
    /// # Ok::<(), PoolError>(())
    /// ```
    pub fn composite_stats<O: 'static>(&self) -> Option<CompositeStats> {
        self.pools.composite_stats::<O>()
    }
}
