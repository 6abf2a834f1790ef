//! Clusters (UE's GC clusters): objects that live and die together. Reaching any member
//! keeps every member, so the collector reaches a whole cluster at once and never judges
//! its members one by one — until the cluster is dissolved.

use std::collections::HashMap;
use std::fmt;
use std::iter;

use respawn_allocator::sync::{AtomicBool, Ordering};
use respawn_arena::{ObjectFlags, ObjectTable, RawHandle, Slot};

use crate::trace::Tracer;

/// Names a cluster made by [`Heap::create_cluster`](crate::Heap::create_cluster).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClusterId(pub(crate) u32);

struct Cluster {
    root: RawHandle,
    members: Vec<RawHandle>,
    /// Set by the first task that reaches a member in the current collection.
    reached: AtomicBool,
    in_use: bool,
}

/// The heap's clusters. Each live object is in at most one: its slot carries
/// [`ObjectFlags::IN_CLUSTER`] (hot, read by the mark) and `member_of` says which (cold:
/// the object table keeps only 16 bytes an object). The flag goes with the object when it
/// is released, so a stale `member_of` entry is never read. An entry whose objects are
/// gone is dissolved and its index reused.
#[derive(Default)]
pub(crate) struct Clusters {
    list: Vec<Cluster>,
    free: Vec<u32>,
    member_of: HashMap<u32, u32>,
}

impl fmt::Debug for Clusters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clusters").field("in_use", &self.in_use()).finish()
    }
}

/// The slot of `raw` if it still names a live object.
fn live(table: &ObjectTable, raw: RawHandle) -> Option<&Slot> {
    table.resolve_live(raw).ok()
}

impl Clusters {
    /// The cluster of the object in slot `index`, if its flags say it is in one.
    #[inline]
    pub(crate) fn cluster_of(&self, index: u32, slot: &Slot) -> Option<u32> {
        if !slot.flags().contains(ObjectFlags::IN_CLUSTER) {
            return None;
        }
        self.member_of.get(&index).copied()
    }

    fn join(&mut self, index: u32, slot: &Slot, cluster: u32) {
        self.member_of.insert(index, cluster);
        slot.insert_flags(ObjectFlags::IN_CLUSTER);
    }

    fn leave(&mut self, index: u32, slot: &Slot) {
        self.member_of.remove(&index);
        slot.remove_flags(ObjectFlags::IN_CLUSTER);
    }

    pub(crate) fn in_use(&self) -> usize {
        self.list.len() - self.free.len()
    }

    /// Records a cluster (the caller validated the objects) and stamps its index in their
    /// slots.
    pub(crate) fn create(&mut self, table: &ObjectTable, root: RawHandle, members: &[RawHandle]) -> ClusterId {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.list.push(Cluster { root, members: Vec::new(), reached: AtomicBool::new(false), in_use: false });
                (self.list.len() - 1) as u32
            }
        };
        let cluster = &mut self.list[index as usize];
        cluster.root = root;
        cluster.members.clear();
        cluster.members.extend(members.iter().copied().filter(|&m| m != root));
        cluster.in_use = true;
        // A reused entry may have been reached by the mark running now (incremental), before
        // it was dissolved: the new cluster is not.
        cluster.reached.store(false, Ordering::Relaxed);
        let objects: Vec<RawHandle> = iter::once(root).chain(cluster.members.iter().copied()).collect();
        for raw in objects {
            if let Some(slot) = live(table, raw) {
                self.join(raw.index(), slot, index);
            }
        }
        ClusterId(index)
    }

    /// The root and members of a cluster in use.
    pub(crate) fn objects(&self, id: ClusterId) -> Option<impl Iterator<Item = RawHandle> + '_> {
        let cluster = self.list.get(id.0 as usize).filter(|c| c.in_use)?;
        Some(iter::once(cluster.root).chain(cluster.members.iter().copied()))
    }

    /// Cuts every object of the cluster loose and frees the entry.
    pub(crate) fn dissolve(&mut self, table: &ObjectTable, id: ClusterId) -> bool {
        let Some(cluster) = self.list.get_mut(id.0 as usize).filter(|c| c.in_use) else { return false };
        let mut members = std::mem::take(&mut cluster.members);
        for raw in iter::once(cluster.root).chain(members.iter().copied()) {
            let Some(slot) = live(table, raw) else { continue };
            if self.cluster_of(raw.index(), slot) == Some(id.0) {
                self.leave(raw.index(), slot);
            }
        }
        members.clear();
        let cluster = &mut self.list[id.0 as usize];
        cluster.members = members;
        cluster.in_use = false;
        cluster.members.clear();
        self.free.push(id.0);
        true
    }

    /// Before a mark: clusters whose root is gone or garbage are dissolved (their members
    /// are judged one by one); members that are gone or garbage leave their cluster, so a
    /// garbage member is purged while the rest lives on. Returns the clusters dissolved.
    pub(crate) fn begin_cycle(&mut self, table: &ObjectTable) -> usize {
        let mut dissolved = 0;
        for i in 0..self.list.len() {
            let cluster = &mut self.list[i];
            if !cluster.in_use {
                continue;
            }
            cluster.reached.store(false, Ordering::Relaxed);
            let root_ok = live(table, cluster.root).is_some_and(|s| !s.flags().lifecycle().is_ending());
            if !root_ok {
                self.dissolve(table, ClusterId(i as u32));
                dissolved += 1;
                continue;
            }
            let mut members = std::mem::take(&mut cluster.members);
            members.retain(|&m| match live(table, m) {
                Some(slot) if self.cluster_of(m.index(), slot) == Some(i as u32) => {
                    let garbage = slot.flags().lifecycle().is_ending();
                    if garbage {
                        self.leave(m.index(), slot);
                    }
                    !garbage
                }
                _ => false,
            });
            self.list[i].members = members;
        }
        dissolved
    }

    /// Phase 4, from inside the mark: the first task to reach any object of cluster `index`
    /// claims every other one, so the whole cluster is kept and traced.
    #[inline]
    pub(crate) fn reach(&self, index: u32, tracer: &mut Tracer<'_>) {
        let Some(cluster) = self.list.get(index as usize) else { return };
        if cluster.reached.load(Ordering::Relaxed) || cluster.reached.swap(true, Ordering::AcqRel) {
            return;
        }
        for raw in iter::once(cluster.root).chain(cluster.members.iter().copied()) {
            let Some(slot) = tracer.slot_of(raw) else { continue };
            tracer.claim(raw.index(), slot);
        }
    }

    /// After a mark: clusters nobody reached are dissolved (their objects are unreachable
    /// and about to be purged). Returns `(kept, dissolved)`.
    pub(crate) fn end_cycle(&mut self, table: &ObjectTable) -> (usize, usize) {
        let (mut kept, mut dissolved) = (0, 0);
        for i in 0..self.list.len() {
            let cluster = &self.list[i];
            if !cluster.in_use {
                continue;
            }
            if cluster.reached.load(Ordering::Relaxed) {
                kept += 1;
            } else {
                self.dissolve(table, ClusterId(i as u32));
                dissolved += 1;
            }
        }
        (kept, dissolved)
    }
}
