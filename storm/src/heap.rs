//! The binary's heap counter: a counting global allocator over the system's, or, with
//! `--features dhat-heap`, dhat's profiling allocator (whose own counters are read instead).
//!
//! The counters are process-wide: the pools' worker threads and the collector's rayon tasks
//! count too, which is what a game would pay.

/// A reading of the heap counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapReading {
    /// Allocations since the start (reallocations count as one).
    pub allocations: u64,
    /// Bytes allocated since the start.
    pub allocated_bytes: u64,
    /// Bytes live now.
    pub live_bytes: u64,
}

#[cfg(not(feature = "dhat-heap"))]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    use super::HeapReading;

    /// The system allocator, counting. Relaxed counters: each is a sum, read between phases.
    pub struct Counting;

    static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
    static ALLOCATED: AtomicU64 = AtomicU64::new(0);
    static LIVE: AtomicU64 = AtomicU64::new(0);
    static PEAK: AtomicU64 = AtomicU64::new(0);

    fn grew(bytes: usize) {
        ALLOCATIONS.fetch_add(1, Relaxed);
        ALLOCATED.fetch_add(bytes as u64, Relaxed);
        let live = LIVE.fetch_add(bytes as u64, Relaxed) + bytes as u64;
        PEAK.fetch_max(live, Relaxed);
    }

    // SAFETY: every call is forwarded unchanged to `System`; the counting around it touches
    // only atomics and never allocates.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            LIVE.fetch_sub(layout.size() as u64, Relaxed);
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                LIVE.fetch_sub(layout.size() as u64, Relaxed);
                grew(new_size);
            }
            p
        }
    }

    pub fn read() -> HeapReading {
        HeapReading {
            allocations: ALLOCATIONS.load(Relaxed),
            allocated_bytes: ALLOCATED.load(Relaxed),
            live_bytes: LIVE.load(Relaxed),
        }
    }

    /// Starts a new peak from what is live now; returns nothing.
    pub fn reset_peak() {
        PEAK.store(LIVE.load(Relaxed), Relaxed);
    }

    pub fn peak() -> u64 {
        PEAK.load(Relaxed)
    }
}

#[cfg(not(feature = "dhat-heap"))]
#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// What the heap figures are counted by.
#[cfg(not(feature = "dhat-heap"))]
pub const COUNTER: &str = "counting allocator";

/// What the heap figures are counted by.
#[cfg(feature = "dhat-heap")]
pub const COUNTER: &str = "dhat";

#[cfg(feature = "dhat-heap")]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The counters now.
pub fn read() -> HeapReading {
    #[cfg(not(feature = "dhat-heap"))]
    return counting::read();
    #[cfg(feature = "dhat-heap")]
    {
        let s = dhat::HeapStats::get();
        HeapReading { allocations: s.total_blocks, allocated_bytes: s.total_bytes, live_bytes: s.curr_bytes as u64 }
    }
}

/// Forgets the peak so far: [`peak`] reports the most live bytes from now on. dhat keeps
/// one peak for the whole run, so under dhat the peak is the run's.
pub fn reset_peak() {
    #[cfg(not(feature = "dhat-heap"))]
    counting::reset_peak();
}

/// The most bytes live at once since [`reset_peak`].
pub fn peak() -> u64 {
    #[cfg(not(feature = "dhat-heap"))]
    return counting::peak();
    #[cfg(feature = "dhat-heap")]
    return dhat::HeapStats::get().max_bytes as u64;
}
