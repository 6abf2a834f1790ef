//! The binary's heap counter: a counting global allocator over the system's, or, with
//! `--features dhat-heap`, over dhat's profiling allocator (which then records the profile
//! while this wrapper keeps counting).
//!
//! dhat keeps one peak for the whole process and cannot start a new one, so its figures
//! cannot give each scenario its own peak; the wrapper can ([`reset_peak`]), in both builds.
//! Under dhat the wrapper counts only the outermost allocator call on each thread: the
//! allocations dhat makes for its own bookkeeping while it records one (nested inside it)
//! are not the storm's and are left out.
//!
//! The counters are process-wide: the pools' worker threads and the collector's rayon tasks
//! count too, which is what a game would pay.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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

/// The allocator `A`, counting. Relaxed counters: each is a sum, read between phases.
pub struct Counting<A>(A);

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

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes as u64, Relaxed);
}

/// Whether this call is the thread's outermost allocator call, for as long as it lives.
/// Under dhat, dhat's own allocations happen inside one of ours and are not counted; without
/// dhat every call is outermost.
struct Call {
    outermost: bool,
}

#[cfg(feature = "dhat-heap")]
thread_local! {
    /// Set while the thread is inside one of the wrapper's calls. Const-initialised and
    /// without a destructor, so reading it never allocates, even while a thread exits.
    static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Call {
    #[inline]
    fn enter() -> Self {
        #[cfg(feature = "dhat-heap")]
        return Call { outermost: !INSIDE.with(|inside| inside.replace(true)) };
        #[cfg(not(feature = "dhat-heap"))]
        Call { outermost: true }
    }
}

#[cfg(feature = "dhat-heap")]
impl Drop for Call {
    #[inline]
    fn drop(&mut self) {
        if self.outermost {
            INSIDE.with(|inside| inside.set(false));
        }
    }
}

// SAFETY: every call is forwarded unchanged to `A`; the counting around it touches only
// atomics (and, under dhat, a const thread-local flag) and never allocates.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let call = Call::enter();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { self.0.alloc(layout) };
        if call.outermost && !p.is_null() {
            grew(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let call = Call::enter();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if call.outermost && !p.is_null() {
            grew(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let call = Call::enter();
        if call.outermost {
            shrank(layout.size());
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let call = Call::enter();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if call.outermost && !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }
}

#[cfg(not(feature = "dhat-heap"))]
#[global_allocator]
static ALLOC: Counting<std::alloc::System> = Counting(std::alloc::System);

#[cfg(feature = "dhat-heap")]
#[global_allocator]
static ALLOC: Counting<dhat::Alloc> = Counting(dhat::Alloc);

/// What the heap figures are counted by.
#[cfg(not(feature = "dhat-heap"))]
pub const COUNTER: &str = "counting allocator";

/// What the heap figures are counted by.
#[cfg(feature = "dhat-heap")]
pub const COUNTER: &str = "counting allocator over dhat";

/// The counters now.
pub fn read() -> HeapReading {
    HeapReading {
        allocations: ALLOCATIONS.load(Relaxed),
        allocated_bytes: ALLOCATED.load(Relaxed),
        live_bytes: LIVE.load(Relaxed),
    }
}

/// Forgets the peak so far: [`peak`] reports the most live bytes from now on.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The most bytes live at once since [`reset_peak`].
pub fn peak() -> u64 {
    PEAK.load(Relaxed)
}
