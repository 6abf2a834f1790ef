//! Test classes shared by the collector's tests.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use respawn_arena::Handle;
use respawn_gc::{Object, Trace};

/// Drop counters, one per test object id.
#[derive(Clone, Debug, Default)]
pub struct Drops(Arc<std::sync::Mutex<Vec<Arc<AtomicU32>>>>);

impl Drops {
    pub fn counter(&self, id: usize) -> Arc<AtomicU32> {
        let mut v = self.0.lock().unwrap();
        while v.len() <= id {
            v.push(Arc::new(AtomicU32::new(0)));
        }
        Arc::clone(&v[id])
    }

    pub fn get(&self, id: usize) -> u32 {
        self.counter(id).load(Ordering::SeqCst)
    }

    pub fn total(&self) -> u32 {
        self.0.lock().unwrap().iter().map(|c| c.load(Ordering::SeqCst)).sum()
    }
}

/// A graph node: edges are traced handles; drops are counted.
#[derive(Trace, Debug)]
pub struct Node {
    pub id: usize,
    pub edges: Vec<Handle<Node>>,
    #[trace(skip)]
    pub drops: Arc<AtomicU32>,
}

impl Object for Node {}

impl Drop for Node {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl Node {
    pub fn new(id: usize, drops: &Drops) -> Self {
        Self { id, edges: Vec::new(), drops: drops.counter(id) }
    }
}
