//! The World tests' classes: pooled and plain objects that count their hooks and drops.

use respawn::{Handle, Object, Poolable, Trace};

use crate::drops::Drops;

/// A pooled object that counts its hooks.
#[derive(Trace, Object, Debug)]
pub struct Shot {
    /// Its number in its [`Drops`].
    #[trace(skip)]
    pub id: usize,
    /// Game state the tests set; `reset` zeroes it.
    pub damage: u32,
    /// `on_spawn` calls.
    pub spawned: u32,
    /// `on_release` calls.
    pub releases: u32,
    /// `reset` calls.
    pub resets: u32,
    #[trace(skip)]
    drops: Drops,
}

impl Shot {
    /// A shot numbered by `drops`, noting its drop there.
    pub fn new(drops: &Drops) -> Self {
        Self { id: drops.make(), damage: 0, spawned: 0, releases: 0, resets: 0, drops: drops.clone() }
    }
}

impl Drop for Shot {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

impl Poolable for Shot {
    fn create() -> Self {
        unreachable!("the tests build Shots with a closure that counts them")
    }
    fn on_spawn(&mut self) {
        self.spawned += 1;
    }
    fn on_release(&mut self) {
        self.releases += 1;
    }
    fn reset(&mut self) {
        self.damage = 0;
        self.resets += 1;
    }
}

/// A small pooled projectile for the allocation tests.
#[derive(Trace, Object, Debug)]
pub struct Projectile {
    /// Position.
    pub pos: [f32; 3],
    /// Velocity.
    pub vel: [f32; 3],
    /// Seconds left.
    pub life: f32,
}

impl Poolable for Projectile {
    fn create() -> Self {
        Self { pos: [0.0; 3], vel: [0.0; 3], life: 0.0 }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// A plain collected object that references pooled ones.
#[derive(Trace, Object, Debug)]
pub struct Ship {
    /// Traced handles to its shots.
    pub shots: Vec<Handle<Shot>>,
}

/// A plain object that counts its drop.
#[derive(Trace, Object, Debug)]
pub struct Counted {
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    drops: Drops,
}

impl Counted {
    /// An object numbered by `drops`, noting its drop there.
    pub fn new(drops: &Drops) -> Self {
        Self { id: drops.make(), drops: drops.clone() }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}
