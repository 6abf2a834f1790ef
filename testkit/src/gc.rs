//! A collector test class: a graph node.

use respawn_arena::Handle;
use respawn_gc::{Object, Trace};

use crate::drops::Drops;

/// A graph node: `edges` are traced handles; its drop is noted under `id`.
#[derive(Trace, Debug)]
pub struct Node {
    /// The node's number in its [`Drops`].
    pub id: usize,
    /// Traced handles to other nodes.
    pub edges: Vec<Handle<Node>>,
    #[trace(skip)]
    drops: Drops,
}

impl Object for Node {}

impl Drop for Node {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

impl Node {
    /// Node `id`, with no edges, noting its drop in `drops`.
    pub fn new(id: usize, drops: &Drops) -> Self {
        Self { id, edges: Vec::new(), drops: drops.clone() }
    }
}
