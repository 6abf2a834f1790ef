//! Objects that count their hooks and drops, shared by the World tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
// std's lock, not parking_lot's: the drop counter is taken by workers and the test thread
// at once, and parking_lot's contended path casts integers to pointers, which Miri's
// `-Zmiri-strict-provenance` refuses (the crates themselves use std's locks under Miri).
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use respawn::{Handle, Object, Poolable, Trace};

/// Which objects were made and how often each was dropped.
#[derive(Clone, Default)]
pub struct Drops(Arc<Inner>);

#[derive(Default)]
pub struct Inner {
    next: AtomicU64,
    dropped: Mutex<HashMap<u64, u32>>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, u32>> {
        // A test that panicked while holding the lock has failed already; go on counting.
        self.dropped.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drops {
    pub fn make(&self) -> u64 {
        self.0.next.fetch_add(1, Ordering::Relaxed)
    }
    pub fn made(&self) -> u64 {
        self.0.next.load(Ordering::Relaxed)
    }
    pub fn note_drop(&self, id: u64) {
        *self.0.lock().entry(id).or_default() += 1;
    }
    /// Drops so far (of distinct objects, each counted once however often it dropped).
    pub fn count(&self) -> usize {
        self.0.lock().len()
    }
    pub fn dropped(&self, id: u64) -> bool {
        self.0.lock().contains_key(&id)
    }
    /// Every object made so far was dropped exactly once.
    pub fn assert_each_once(&self) {
        let dropped = self.0.lock();
        for id in 0..self.made() {
            assert_eq!(dropped.get(&id).copied().unwrap_or(0), 1, "object {id} dropped {:?} times", dropped.get(&id));
        }
        assert_eq!(dropped.len() as u64, self.made(), "drops of objects never made");
    }
}

/// A pooled object that counts its hooks.
#[derive(Trace, Object)]
pub struct Shot {
    #[trace(skip)]
    pub id: u64,
    pub damage: u32,
    pub spawned: u32,
    pub releases: u32,
    pub resets: u32,
    #[trace(skip)]
    drops: Drops,
}

impl Shot {
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
#[derive(Trace, Object)]
pub struct Projectile {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
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
#[derive(Trace, Object)]
pub struct Ship {
    pub shots: Vec<Handle<Shot>>,
}

/// A plain object that counts its drop.
#[derive(Trace, Object)]
pub struct Counted {
    #[trace(skip)]
    id: u64,
    #[trace(skip)]
    drops: Drops,
}

impl Counted {
    pub fn new(drops: &Drops) -> Self {
        Self { id: drops.make(), drops: drops.clone() }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

/// Polls `done` until it holds; panics after 20 s (workers are asynchronous: this bounds
/// the wait, it does not time anything).
#[track_caller]
pub fn wait_for(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for the workers");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Holds a pool's workers in their `create` while shut; the thread that made it passes (its
/// inline builds on a miss). Its opener opens it on drop: declared after the world, it lets
/// the workers go before a failed assertion's unwinding joins them.
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    caller: ThreadId,
}

impl Gate {
    pub fn new(open: bool) -> Arc<Self> {
        Arc::new(Self { open: Mutex::new(open), opened: Condvar::new(), caller: thread::current().id() })
    }
    /// Called in `create`: waits while the gate is shut, unless on the gate's own thread.
    pub fn pass(&self) {
        if thread::current().id() == self.caller {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
    pub fn set(&self, open: bool) {
        *self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = open;
        self.opened.notify_all();
    }
    pub fn opener(self: &Arc<Self>) -> OpenOnDrop {
        OpenOnDrop(Arc::clone(self))
    }
}

/// Opens its gate when dropped.
pub struct OpenOnDrop(Arc<Gate>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.set(true);
    }
}
