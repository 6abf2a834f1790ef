//! External referencers (UE's `FGCObject` and `AddReferencedObjects`; gc-arena's
//! `DynamicRootSet`): systems outside the heap — a spatial hash, a network-id map, a
//! script VM — that hold handles the collector must keep alive.

use std::fmt;

use respawn_allocator::sync::{Arc, AtomicBool, Ordering};

use crate::Tracer;

/// What a referencer runs in each collection: it reports every handle it holds.
pub(crate) type Report = Box<dyn for<'t> FnMut(&mut Tracer<'t>) + Send>;

/// The registration of an external referencer, from
/// [`Heap::add_referencer`](crate::Heap::add_referencer): while it lives, every collection
/// calls the referencer's report, and whatever it reports is kept as a root would be (and
/// traced). Dropping it removes the referencer: from the next collection on, what only it
/// kept is collected. It may be dropped on any thread, and it may outlive the heap.
#[must_use = "dropping the Referencer removes the referencer at once"]
pub struct Referencer {
    alive: Arc<AtomicBool>,
}

impl Drop for Referencer {
    fn drop(&mut self) {
        // Release: the heap, seeing it dropped, sees everything before the drop.
        self.alive.store(false, Ordering::Release);
    }
}

impl fmt::Debug for Referencer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Referencer").field("alive", &self.alive.load(Ordering::Relaxed)).finish()
    }
}

/// The heap's referencers: each report with the flag its [`Referencer`] clears on drop.
#[derive(Default)]
pub(crate) struct Referencers {
    entries: Vec<(Arc<AtomicBool>, Report)>,
}

impl Referencers {
    /// Registers `report`; dropping the returned guard removes it.
    pub(crate) fn add(&mut self, report: Report) -> Referencer {
        let alive = Arc::new(AtomicBool::new(true));
        self.entries.push((Arc::clone(&alive), report));
        Referencer { alive }
    }

    /// Forgets the referencers whose guards were dropped, then lets every other one report
    /// to `tracer`.
    pub(crate) fn report_all(&mut self, tracer: &mut Tracer<'_>) {
        self.entries.retain(|(alive, _)| alive.load(Ordering::Acquire));
        for (_, report) in &mut self.entries {
            report(tracer);
        }
    }

    /// Lets every referencer whose guard still lives report, numbered in registration order
    /// among them, without forgetting the dropped ones (a diagnostic outside a collection:
    /// `crate::why`).
    pub(crate) fn report_each(&mut self, mut each: impl FnMut(usize, &mut Report)) {
        let live = self.entries.iter_mut().filter(|(alive, _)| alive.load(Ordering::Acquire));
        for (n, (_, report)) in live.enumerate() {
            each(n, report);
        }
    }

    /// Referencers whose guard still lives (a dropped guard's entry is cleared at the next
    /// collection, but stops counting at once).
    pub(crate) fn len(&self) -> usize {
        self.entries.iter().filter(|(alive, _)| alive.load(Ordering::Acquire)).count()
    }
}

impl fmt::Debug for Referencers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Referencers").field("len", &self.len()).finish()
    }
}
