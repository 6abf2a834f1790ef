//! Why is it alive (UE's `FReferenceChainSearch`), and what still references garbage (UE's
//! `gc.GarbageReferenceTrackingEnabled`): diagnostics over the collector's own edges.
//!
//! Both walk the graph the mark walks, by the mark's rules, without touching a flag: a
//! breadth-first search on one thread from every root, with a parent map on the side. The
//! edges come from the same places the mark takes them: an object's `outer` (a reachable
//! sub-object keeps its owner), its cluster (reaching one member keeps them all), and the
//! handles its class's `trace` reports, through a [`Tracer`] that records instead of
//! claiming. A cold path: it allocates freely.
//!
//! ```text
//!   roots (as phase 2 finds them) ─┐
//!   referencers' reports ──────────┴─► queue ─► visit: outer, cluster, trace ─► queue …
//!                                       seen: index → (parent, how)    ▲ first visit wins,
//!                                                                       so each chain is a
//!                                                                       shortest one
//! ```

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

use respawn_allocator::sync::AtomicU32;
use respawn_arena::{
    short_type_name, Arena, ClassId, CollectorEntries, CollectorEntry, Lifecycle, ObjectFlags, ObjectTable, RawHandle,
    Slot,
};

use crate::cluster::{ClusterId, Clusters};
use crate::frontier::Frontier;
use crate::mark::Keep;
use crate::referencer::Referencers;
use crate::trace::{call_trace, LocalStack, Tracer};

/// An object as a diagnostic names it: its handle and its class. Prints as `Turret#12`: the
/// class without its module path, then the object's index among its class's slots
/// ([`Arena::index_in_class`](respawn_arena::Arena::index_in_class)), as a handle's debug
/// form has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRef {
    /// The object's handle (at the time of the report).
    pub handle: RawHandle,
    /// Its class: the Rust type's full name.
    pub class: &'static str,
    /// Its index among its class's slots.
    pub index_in_class: u32,
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", short_type_name(self.class), self.index_in_class)
    }
}

/// What keeps the first object of a [`ReferenceChain`] alive: the collector keeps it
/// without a reference from another object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RootKind {
    /// Added to the root set by hand ([`Heap::add_to_root`](crate::Heap::add_to_root),
    /// UE's `AddToRoot`: the `ROOT_SET` flag). Named first when a guard holds it too.
    AddToRoot,
    /// Held by this many [`Root`](respawn_arena::Root) guards (UE's `TStrongObjectPtr`).
    Guard(u32),
    /// Carries these of the keep flags asked about
    /// ([`CollectOptions::keep_flags`](crate::CollectOptions::keep_flags)).
    KeepFlags(ObjectFlags),
    /// Reported by the external referencer with this number: the n-th registered with
    /// [`Heap::add_referencer`](crate::Heap::add_referencer) whose guard still lives.
    Referencer(usize),
    /// A permanent object ([`Heap::insert_permanent`](crate::Heap::insert_permanent)):
    /// kept, never scanned, so it keeps nothing else alive.
    Permanent,
    /// An object of a class whose [`Lifetime`](crate::Lifetime) is `Owned` (in a World, every
    /// class not declared collected): kept until it is destroyed, and scanned.
    Owned,
}

impl fmt::Display for RootKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AddToRoot => f.write_str("add_to_root"),
            Self::Guard(1) => f.write_str("Root guard"),
            Self::Guard(n) => write!(f, "{n} Root guards"),
            Self::KeepFlags(flags) => write!(f, "keep flags {flags:?}"),
            Self::Referencer(n) => write!(f, "referencer #{n}"),
            Self::Permanent => f.write_str("permanent"),
            Self::Owned => f.write_str("owned until destroyed"),
        }
    }
}

/// How a link of a [`ReferenceChain`] is reached from the link before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reference {
    /// The first link: kept by the chain's [`RootKind`].
    Root,
    /// A handle the previous object's `trace` reports (a traced field).
    Traced,
    /// The previous object's `outer`: a reachable sub-object keeps its owner (as UE's
    /// Outer; an owner does not keep its sub-objects).
    Outer,
    /// A member of the previous object's cluster: reaching one member keeps them all.
    Cluster,
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Root => "root",
            Self::Traced => "traced",
            Self::Outer => "outer",
            Self::Cluster => "cluster",
        })
    }
}

/// One object of a [`ReferenceChain`] and how the one before it reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainLink {
    /// The object.
    pub object: ObjectRef,
    /// How the previous link reaches it ([`Reference::Root`] for the first link).
    pub reference: Reference,
}

/// A shortest chain of references from a root to an object, as
/// [`Heap::why_alive`](crate::Heap::why_alive) finds it: the root object first, the object
/// asked about last. Prints as
/// `root (Root guard) Radar#3 -> [traced] Projectile#40 -> [outer] Turret#12`: a guard keeps
/// the radar, a field of the radar holds the projectile, and the projectile's owner (its
/// outer) is the turret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceChain {
    /// What keeps the first link alive.
    pub root: RootKind,
    /// The objects from the root to the object asked about; never empty.
    pub links: Vec<ChainLink>,
}

impl ReferenceChain {
    /// The object the chain starts from (kept by [`root`](Self::root)).
    pub fn root_object(&self) -> ObjectRef {
        self.links[0].object
    }

    /// The object asked about.
    pub fn target(&self) -> ObjectRef {
        self.links[self.links.len() - 1].object
    }

    /// References followed from the root object: 0 when the object is a root itself.
    pub fn len(&self) -> usize {
        self.links.len() - 1
    }

    /// Whether the object is a root itself (no reference followed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for ReferenceChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "root ({}) {}", self.root, self.links[0].object)?;
        for link in &self.links[1..] {
            write!(f, " -> [{}] {}", link.reference, link.object)?;
        }
        Ok(())
    }
}

/// What holds a [`GarbageReference`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Referrer {
    /// A traced field of this object, which the collector keeps.
    Object(ObjectRef),
    /// The external referencer with this number (as [`RootKind::Referencer`]).
    Referencer(usize),
}

impl fmt::Display for Referrer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Object(object) => write!(f, "{object}"),
            Self::Referencer(n) => write!(f, "referencer #{n}"),
        }
    }
}

/// A reference that still names an object marked as garbage (UE's garbage reference
/// tracking): the collector ignores it and purges the object anyway, so whoever holds it
/// holds a handle about to go stale. Prints as `Squad#3 -> [traced] Tank#7 (garbage)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GarbageReference {
    /// Who holds the reference: an object the collector keeps, or an external referencer.
    pub from: Referrer,
    /// The garbage object it names.
    pub to: ObjectRef,
}

impl fmt::Display for GarbageReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.from {
            Referrer::Object(_) => write!(f, "{} -> [traced] {} (garbage)", self.from, self.to),
            Referrer::Referencer(_) => write!(f, "{} -> {} (garbage)", self.from, self.to),
        }
    }
}

/// Flags that stop the mark from claiming an object: a slot with none of them is a `Live`
/// object phase 2 may flag white, so a reference reaching it keeps it. (`Unreachable` here is
/// the last collection's verdict on an object still waiting for its purge, which the next
/// collection finishes before it marks; `PERMANENT` objects are kept, and seen as roots,
/// already.)
const UNCLAIMABLE: ObjectFlags = ObjectFlags::LIFECYCLE.union(ObjectFlags::PERMANENT);

/// How the search reached an object.
#[derive(Clone, Copy, Debug)]
enum Step {
    Root(RootKind),
    From(u32, Reference),
}

/// A [`Tracer`] that records, with the buffers it needs, kept across objects.
struct Recorder {
    stack: LocalStack,
    edges: Vec<RawHandle>,
}

impl Recorder {
    fn new() -> Box<Self> {
        Box::new(Self { stack: LocalStack::new(), edges: Vec::new() })
    }

    /// Runs `report` with a recording tracer; returns what it reported.
    fn record(
        &mut self,
        table: &ObjectTable,
        classes: CollectorEntries<'_>,
        report: impl FnOnce(&mut Tracer<'_>),
    ) -> &[RawHandle] {
        self.edges.clear();
        let nothing: [AtomicU32; 0] = [];
        let spill = Frontier::new(&nothing);
        report(&mut Tracer::recording(table, classes, &mut self.stack, &spill, &mut self.edges));
        &self.edges
    }
}

/// The collector's graph, read-only: what the mark reads, and the arena for class names.
pub(crate) struct Graph<'h> {
    arena: &'h Arena,
    clusters: &'h Clusters,
}

impl<'h> Graph<'h> {
    pub(crate) fn new(arena: &'h Arena, clusters: &'h Clusters) -> Self {
        Self { arena, clusters }
    }

    fn table(&self) -> &'h ObjectTable {
        self.arena.table()
    }

    fn name(&self, handle: RawHandle, slot: &Slot) -> ObjectRef {
        let class = self.arena.class_name(ClassId::from_index(slot.class())).unwrap_or("?");
        let index_in_class = self.arena.index_in_class(handle.index()).unwrap_or(handle.index());
        ObjectRef { handle, class, index_in_class }
    }

    fn name_at(&self, index: u32) -> ObjectRef {
        let raw = self.arena.handle_at(index).expect("named objects are live");
        let slot = self.table().slot(index).expect("a live object has a slot");
        self.name(raw, slot)
    }

    /// The slot `raw` names if its generation matches, as [`Tracer::handle`] reads it.
    fn slot_of(&self, raw: RawHandle) -> Option<&'h Slot> {
        self.table().slot(raw.index()).filter(|slot| slot.generation() == raw.generation().get())
    }

    /// What phase 2 would make of the object in `slot`: a root (of which kind, and whether
    /// the mark scans it), or `None`. The rules of `flag_run` in `heap.rs`.
    fn root_kind(slot: &Slot, keep: Keep<'_>) -> Option<(RootKind, bool)> {
        let flags = slot.flags();
        let garbage = match flags.lifecycle() {
            Lifecycle::Live => false,
            Lifecycle::Garbage => true,
            _ => return None,
        };
        let guards = slot.root_count();
        let kind = if flags.contains(ObjectFlags::ROOT_SET) {
            RootKind::AddToRoot
        } else if guards > 0 {
            RootKind::Guard(guards)
        } else if flags.contains(ObjectFlags::PERMANENT) {
            RootKind::Permanent
        } else if !garbage && flags.intersects(keep.flags) {
            RootKind::KeepFlags(flags & keep.flags)
        } else if !garbage && keep.owned(slot.class()) {
            RootKind::Owned
        } else {
            return None;
        };
        // Garbage keeps nothing alive, and permanent objects are never scanned.
        Some((kind, !garbage && !flags.contains(ObjectFlags::PERMANENT)))
    }

    /// Whether the cluster of an object is kept whole by the next mark: its root is live
    /// and not garbage (otherwise the mark's `begin_cycle` dissolves it first).
    fn cluster_holds(&self, cluster: u32) -> bool {
        let Some(mut objects) = self.clusters.objects(ClusterId(cluster)) else { return false };
        let root = objects.next().expect("a cluster has a root");
        self.table().resolve_live(root).is_ok_and(|slot| !slot.flags().lifecycle().is_ending())
    }

    /// The edges out of the object in slot `index` that the mark would follow to an object
    /// it could still claim, in the order its visit takes them: outer, cluster, traced
    /// fields. A cluster's members are edges of the first member visited only, as the mark
    /// reaches each cluster once (`clusters` holds those reached; `None` skips clusters).
    /// Traced handles to garbage go to `garbage`, if asked for.
    fn visit(
        &self,
        index: u32,
        recorder: &mut Recorder,
        out: &mut Vec<(u32, Reference)>,
        clusters: Option<&mut HashSet<u32>>,
        mut garbage: Option<&mut Vec<GarbageReference>>,
    ) {
        let table = self.table();
        let Some(slot) = table.slot(index) else { return };
        let claimable = |slot: &Slot| !slot.flags().intersects(UNCLAIMABLE);
        if let Some(outer) = slot.outer() {
            if table.slot(outer).is_some_and(claimable) {
                out.push((outer, Reference::Outer));
            }
        }
        let cluster = clusters.and_then(|reached| {
            let cluster = self.clusters.cluster_of(index, slot)?;
            (reached.insert(cluster) && self.cluster_holds(cluster)).then_some(cluster)
        });
        if let Some(cluster) = cluster {
            for raw in self.clusters.objects(ClusterId(cluster)).into_iter().flatten() {
                if raw.index() != index && self.slot_of(raw).is_some_and(claimable) {
                    out.push((raw.index(), Reference::Cluster));
                }
            }
        }
        let Some(trace) = self.arena.collector_entry(usize::from(slot.class())).and_then(CollectorEntry::trace) else {
            return;
        };
        let Some(cell) = table.cell(index) else { return };
        // SAFETY: the slot holds a live object of this class (the search reaches only live,
        // non-permanent objects, and the caller borrows the heap, so nothing is released or
        // mutated meanwhile); `trace` reads the object only, and every class's objects are
        // `Sync`.
        let edges = recorder.record(table, self.arena.collector_entries(), |tracer| unsafe {
            call_trace(trace, cell.as_ptr(), tracer)
        });
        for &raw in edges {
            let Some(target) = self.slot_of(raw) else { continue };
            if claimable(target) {
                out.push((raw.index(), Reference::Traced));
            } else if let Some(garbage) = garbage.as_deref_mut() {
                if target.flags().lifecycle().is_ending() {
                    let from = self.name_at(index);
                    garbage.push(GarbageReference { from: Referrer::Object(from), to: self.name(raw, target) });
                }
            }
        }
    }

    /// The breadth-first search from every root (`keep`: the keep flags counted as roots),
    /// stopping once `target` is seen. Returns the parent map. Handles the referencers
    /// report to garbage go to `garbage`, with those of the objects visited, if asked for.
    fn search(
        &self,
        referencers: &mut Referencers,
        keep: ObjectFlags,
        target: Option<u32>,
        mut garbage: Option<&mut Vec<GarbageReference>>,
    ) -> HashMap<u32, Step> {
        let table = self.table();
        let mut seen: HashMap<u32, Step> = HashMap::new();
        let mut queue = VecDeque::new();
        let rules = Keep { classes: self.arena.collector_entries(), flags: keep };
        for (first, run) in table.runs() {
            for (k, slot) in run.iter().enumerate() {
                if let Some((kind, scanned)) = Self::root_kind(slot, rules) {
                    let index = first + k as u32;
                    seen.insert(index, Step::Root(kind));
                    if scanned {
                        queue.push_back(index);
                    }
                }
            }
        }
        let mut recorder = Recorder::new();
        referencers.report_each(|n, report| {
            for &raw in recorder.record(table, self.arena.collector_entries(), |tracer| report(tracer)) {
                let Some(slot) = self.slot_of(raw) else { continue };
                if !slot.flags().intersects(UNCLAIMABLE) {
                    if let Entry::Vacant(entry) = seen.entry(raw.index()) {
                        entry.insert(Step::Root(RootKind::Referencer(n)));
                        queue.push_back(raw.index());
                    }
                } else if let Some(garbage) = garbage.as_deref_mut() {
                    if slot.flags().lifecycle().is_ending() {
                        garbage.push(GarbageReference { from: Referrer::Referencer(n), to: self.name(raw, slot) });
                    }
                }
            }
        });
        let (mut out, mut clusters) = (Vec::new(), HashSet::new());
        while let Some(index) = queue.pop_front() {
            if target.is_some_and(|t| seen.contains_key(&t)) {
                break;
            }
            self.visit(index, &mut recorder, &mut out, Some(&mut clusters), garbage.as_deref_mut());
            for (next, how) in out.drain(..) {
                if let Entry::Vacant(entry) = seen.entry(next) {
                    entry.insert(Step::From(index, how));
                    queue.push_back(next);
                }
            }
        }
        seen
    }

    /// [`Heap::why_alive_with`](crate::Heap::why_alive_with) for a visible object `raw`.
    pub(crate) fn chain(
        &self,
        referencers: &mut Referencers,
        raw: RawHandle,
        keep: ObjectFlags,
    ) -> Option<ReferenceChain> {
        let seen = self.search(referencers, keep, Some(raw.index()), None);
        let mut links = Vec::new();
        let mut at = raw.index();
        loop {
            let object = self.name_at(at);
            match *seen.get(&at)? {
                Step::Root(root) => {
                    links.push(ChainLink { object, reference: Reference::Root });
                    links.reverse();
                    return Some(ReferenceChain { root, links });
                }
                Step::From(parent, reference) => {
                    links.push(ChainLink { object, reference });
                    at = parent;
                }
            }
        }
    }

    /// [`Heap::find_garbage_references`](crate::Heap::find_garbage_references): a whole
    /// search (no keep flags), keeping the references to garbage it meets.
    pub(crate) fn garbage_now(&self, referencers: &mut Referencers) -> Vec<GarbageReference> {
        let mut garbage = Vec::new();
        self.search(referencers, ObjectFlags::empty(), None, Some(&mut garbage));
        garbage
    }

    /// Right after a mark (`GcSettings::track_garbage_references`): the references to
    /// garbage held by the objects the mark scanned (every object it kept but permanent and
    /// pooled ones) and by the referencers, appended to `out`.
    pub(crate) fn garbage_after_mark(&self, referencers: &mut Referencers, out: &mut Vec<GarbageReference>) {
        // What the mark left white is about to go: its references count for nothing.
        let unscanned = UNCLAIMABLE.union(ObjectFlags::MAYBE_UNREACHABLE);
        let table = self.table();
        let mut recorder = Recorder::new();
        let mut edges = Vec::new();
        for (first, run) in table.runs() {
            for (k, slot) in run.iter().enumerate() {
                if !slot.flags().intersects(unscanned) {
                    self.visit(first + k as u32, &mut recorder, &mut edges, None, Some(out));
                    edges.clear();
                }
            }
        }
        referencers.report_each(|n, report| {
            for &raw in recorder.record(table, self.arena.collector_entries(), |tracer| report(tracer)) {
                let Some(slot) = self.slot_of(raw) else { continue };
                if slot.flags().lifecycle().is_ending() {
                    out.push(GarbageReference { from: Referrer::Referencer(n), to: self.name(raw, slot) });
                }
            }
        });
    }
}
