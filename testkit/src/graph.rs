//! The plain walks the model tests hold the collector to: a breadth-first search from the
//! roots, and an owner's subtree.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Each node reachable from `roots`, with its distance from the nearest root (roots: 0).
///
/// The walk follows `edges(n)` out of a node `n` only if `live(n)`, and enters a node only
/// if it is `live`: a root that is not live (an object marked as garbage, but rooted) is
/// reached, but keeps nothing.
pub fn distances<K, E>(
    roots: impl IntoIterator<Item = K>,
    live: impl Fn(K) -> bool,
    edges: impl Fn(K) -> E,
) -> HashMap<K, usize>
where
    K: Copy + Eq + Hash,
    E: IntoIterator<Item = K>,
{
    let mut dist = HashMap::new();
    let mut queue = VecDeque::new();
    for root in roots {
        if dist.insert(root, 0).is_none() {
            queue.push_back(root);
        }
    }
    while let Some(n) = queue.pop_front() {
        if !live(n) {
            continue;
        }
        let next = dist[&n] + 1;
        for m in edges(n) {
            if live(m) && !dist.contains_key(&m) {
                dist.insert(m, next);
                queue.push_back(m);
            }
        }
    }
    dist
}

/// `top` and every node below it, level by level (`top` first): `children(n)` lists the
/// nodes whose owner is `n`.
pub fn subtree<K, C>(top: K, mut children: impl FnMut(K) -> C) -> Vec<K>
where
    K: Copy,
    C: IntoIterator<Item = K>,
{
    let mut out = vec![top];
    let mut i = 0;
    while i < out.len() {
        let n = out[i];
        out.extend(children(n));
        i += 1;
    }
    out
}
