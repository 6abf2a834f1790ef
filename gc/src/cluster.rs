//! Clusters (UE's GC clusters): objects that live and die together. Reaching any member
//! keeps every member, so the collector reaches a whole cluster at once and never judges
//! its members one by one — until the cluster is dissolved.

use std::fmt;
use std::iter;

use respawn_allocator::sync::{AtomicBool, Ordering};
use respawn_arena::{ObjectTable, Paged, RawHandle, Slot};

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

/// Which cluster the object in a slot is in, and of which generation it was.
#[derive(Clone, Copy, Debug)]
struct Member {
    /// The member's generation; 0 (never a live one) for none.
    generation: u32,
    cluster: u32,
}

impl Member {
    const NONE: Self = Self { generation: 0, cluster: 0 };
}

/// Slot indices a page of the membership array covers (8 KiB of [`Member`]s).
const PAGE: usize = 1024;

/// The heap's clusters. Each live object is in at most one, which `members` records by
/// slot index with the generation of the object that joined: the object table keeps only
/// 16 bytes an object, and an entry left by a released object names an older generation
/// than the slot's, so it is never taken for the slot's next object. An entry whose
/// objects are gone is dissolved and its index reused.
pub(crate) struct Clusters {
    list: Vec<Cluster>,
    free: Vec<u32>,
    members: Paged<Member, PAGE>,
}

impl Default for Clusters {
    fn default() -> Self {
        Self { list: Vec::new(), free: Vec::new(), members: Paged::new(|| Member::NONE) }
    }
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
    /// The cluster of the object in slot `index` (its `slot`), if it is in one.
    #[inline]
    pub(crate) fn cluster_of(&self, index: u32, slot: &Slot) -> Option<u32> {
        let member = self.members.get(index)?;
        (member.generation == slot.generation()).then_some(member.cluster)
    }

    fn join(&mut self, raw: RawHandle, cluster: u32) {
        *self.members.get_or_insert(raw.index()) = Member { generation: raw.generation().get(), cluster };
    }

    /// Forgets `raw`'s membership, if the entry is still its own.
    fn leave(&mut self, raw: RawHandle) {
        if let Some(member) = self.members.get_mut(raw.index()) {
            if member.generation == raw.generation().get() {
                *member = Member::NONE;
            }
        }
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
            if live(table, raw).is_some() {
                self.join(raw, index);
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
    pub(crate) fn dissolve(&mut self, id: ClusterId) -> bool {
        let Some(cluster) = self.list.get_mut(id.0 as usize).filter(|c| c.in_use) else { return false };
        let mut members = std::mem::take(&mut cluster.members);
        for raw in iter::once(cluster.root).chain(members.iter().copied()) {
            // A member gone since leaves its entry too, and its slot's next object is free
            // to join another cluster.
            self.leave(raw);
        }
        if self.in_use() == 1 {
            // The last cluster: give the membership pages back.
            self.members.free_unused(|m| m.generation == 0);
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
                self.dissolve(ClusterId(i as u32));
                dissolved += 1;
                continue;
            }
            let mut members = std::mem::take(&mut cluster.members);
            members.retain(|&m| match live(table, m) {
                Some(slot) if self.cluster_of(m.index(), slot) == Some(i as u32) => {
                    let garbage = slot.flags().lifecycle().is_ending();
                    if garbage {
                        self.leave(m);
                    }
                    !garbage
                }
                _ => {
                    self.leave(m);
                    false
                }
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
    pub(crate) fn end_cycle(&mut self) -> (usize, usize) {
        let (mut kept, mut dissolved) = (0, 0);
        for i in 0..self.list.len() {
            let cluster = &self.list[i];
            if !cluster.in_use {
                continue;
            }
            if cluster.reached.load(Ordering::Relaxed) {
                kept += 1;
            } else {
                self.dissolve(ClusterId(i as u32));
                dissolved += 1;
            }
        }
        (kept, dissolved)
    }
}
