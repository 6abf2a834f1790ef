//! The permanent pool: one contiguous block for objects that live for the whole run.

use std::alloc::Layout;
use std::fmt;
use std::mem;
use std::ptr::{self, NonNull};

use crate::os::{Block, PAGE};
use crate::sync::{AtomicPtr, AtomicUsize, Ordering};
use crate::AllocError;

/// What the pool records in front of each object that needs dropping: a singly linked,
/// push-only stack, walked once when the pool drops.
struct DropEntry {
    drop: unsafe fn(*mut u8),
    object: *mut u8,
    next: *mut DropEntry,
}

/// A value that did not fit: the error, and the value itself so nothing is lost.
#[derive(Debug)]
pub struct Rejected<T, E = AllocError> {
    /// Why it was rejected.
    pub error: E,
    /// The value, handed back untouched.
    pub value: T,
}

/// One contiguous block, bump-allocated by many threads at once without a lock, never freed
/// piece by piece: UE's permanent object pool, for objects created at start-up that live for
/// the whole run and that the GC should disregard.
///
/// ```text
///   block: [ obj | entry obj | obj | entry obj | ……… free ……… ]
///          ^ base                              ^ cursor      ^ base + capacity
/// ```
///
/// [`contains`](Self::contains) answers "does this object reside in the permanent pool" with
/// two comparisons. Values placed with [`alloc`](Self::alloc) are dropped, newest first, when
/// the pool drops; raw space from [`try_alloc_layout`](Self::try_alloc_layout) is the
/// caller's to manage.
///
/// ```
/// use respawn_allocator::PermanentPool;
/// let pool = PermanentPool::new(64 * 1024).unwrap();
/// let config = pool.alloc(String::from("loaded once"));
/// assert!(pool.contains((config as *const String).cast()));
/// ```
pub struct PermanentPool {
    block: Block,
    /// Offset of the first free byte; only grows.
    cursor: AtomicUsize,
    /// Newest drop entry, or null.
    drops: AtomicPtr<DropEntry>,
}

// SAFETY: every value in the pool is `Send` (enforced by `alloc`), and is dropped once, by
// whichever thread drops the pool. Distinct callers receive disjoint byte ranges.
unsafe impl Send for PermanentPool {}
// SAFETY: `&self` methods only reserve disjoint ranges (atomic cursor) and push to a
// lock-free stack; no `&self` method reads an object.
unsafe impl Sync for PermanentPool {}

impl fmt::Debug for PermanentPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermanentPool").field("used", &self.used()).field("capacity", &self.capacity()).finish()
    }
}

impl PermanentPool {
    /// A pool of `capacity` bytes (rounded up to whole pages), committed lazily by the OS.
    ///
    /// # Errors
    /// [`AllocError::BadConfig`] for a zero capacity, [`AllocError::Os`] if the block cannot
    /// be mapped.
    pub fn new(capacity: usize) -> Result<Self, AllocError> {
        if capacity == 0 {
            return Err(AllocError::BadConfig("the permanent pool needs a capacity above zero"));
        }
        let block = Block::map(capacity.next_multiple_of(PAGE))?;
        Ok(Self { block, cursor: AtomicUsize::new(0), drops: AtomicPtr::new(ptr::null_mut()) })
    }

    /// Bytes in the block.
    pub fn capacity(&self) -> usize {
        self.block.len()
    }

    /// Bytes handed out so far (including padding and drop entries).
    pub fn used(&self) -> usize {
        self.cursor.load(Ordering::Relaxed)
    }

    /// Whether `ptr` lies in the pool's block. O(1): an address range check.
    pub fn contains(&self, ptr: *const u8) -> bool {
        let start = self.block.base().as_ptr() as usize;
        (start..start + self.block.len()).contains(&(ptr as usize))
    }

    /// Reserves room for a `prefix` followed by a `layout`, each aligned, for this caller
    /// alone; returns both addresses.
    fn bump(&self, prefix: Layout, layout: Layout) -> Result<(NonNull<u8>, NonNull<u8>), AllocError> {
        let base = self.block.base().as_ptr() as usize;
        let mut cur = self.cursor.load(Ordering::Relaxed);
        loop {
            let prefix_at = (base + cur).next_multiple_of(prefix.align()) - base;
            let object_at = (base + prefix_at + prefix.size()).next_multiple_of(layout.align()) - base;
            let Some(end) = object_at.checked_add(layout.size()).filter(|&e| e <= self.block.len()) else {
                return Err(AllocError::Full { capacity: self.block.len() });
            };
            match self.cursor.compare_exchange_weak(cur, end, Ordering::Relaxed, Ordering::Relaxed) {
                // SAFETY: both offsets are below `end ≤ len`, so inside the block.
                Ok(_) => return Ok(unsafe { (self.block.base().add(prefix_at), self.block.base().add(object_at)) }),
                Err(now) => cur = now,
            }
        }
    }

    /// Raw space for one `layout`, uninitialised; never freed individually and never dropped
    /// by the pool.
    ///
    /// # Errors
    /// [`AllocError::OverAligned`] beyond the page size, [`AllocError::Full`] when full.
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        if layout.align() > PAGE {
            return Err(AllocError::OverAligned { align: layout.align(), max: PAGE });
        }
        Ok(self.bump(Layout::new::<()>(), layout)?.1)
    }

    /// Moves `value` into the pool for the rest of the pool's life; it is dropped when the
    /// pool drops.
    ///
    /// # Errors
    /// [`Rejected`] with the value if it does not fit or is over-aligned.
    #[expect(clippy::mut_from_ref, reason = "each call hands out a fresh, disjoint range, as bumpalo does")]
    pub fn try_alloc<T: Send>(&self, value: T) -> Result<&mut T, Rejected<T>> {
        let layout = Layout::new::<T>();
        if layout.align() > PAGE {
            return Err(Rejected { error: AllocError::OverAligned { align: layout.align(), max: PAGE }, value });
        }
        let entry = if mem::needs_drop::<T>() { Layout::new::<DropEntry>() } else { Layout::new::<()>() };
        let (entry_ptr, object) = match self.bump(entry, layout) {
            Ok((e, o)) => (e.cast::<DropEntry>(), o.cast::<T>()),
            Err(error) => return Err(Rejected { error, value }),
        };
        // SAFETY: `bump` reserved the range for this call alone, inside the block, aligned
        // and large enough for `T`.
        unsafe { object.write(value) };
        if mem::needs_drop::<T>() {
            /// # Safety
            /// `p` points to a live `T` placed by `try_alloc`, dropped once, by the pool.
            unsafe fn drop_as<T>(p: *mut u8) {
                // SAFETY: the caller (the pool's `Drop`) passes the `T` placed by `try_alloc`,
                // once.
                unsafe { ptr::drop_in_place(p.cast::<T>()) }
            }
            let mut head = self.drops.load(Ordering::Relaxed);
            loop {
                let e = DropEntry { drop: drop_as::<T>, object: object.as_ptr().cast(), next: head };
                // SAFETY: `bump` reserved an aligned `DropEntry` before the object for this call.
                unsafe { entry_ptr.write(e) };
                match self.drops.compare_exchange_weak(head, entry_ptr.as_ptr(), Ordering::Release, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(now) => head = now,
                }
            }
        }
        // SAFETY: the object was just written and nobody else has its address.
        Ok(unsafe { &mut *object.as_ptr() })
    }

    /// Moves `value` into the pool; see [`try_alloc`](Self::try_alloc).
    ///
    /// # Panics
    /// If the value does not fit.
    pub fn alloc<T: Send>(&self, value: T) -> &mut T {
        match self.try_alloc(value) {
            Ok(v) => v,
            Err(r) => panic!("PermanentPool::alloc: {}", r.error),
        }
    }
}

impl Drop for PermanentPool {
    fn drop(&mut self) {
        let mut entry = *self.drops.get_mut();
        while !entry.is_null() {
            // SAFETY: every entry was fully written before it was pushed, lies in the block
            // (still mapped), and is visited once; `&mut self` means no pusher is running.
            let DropEntry { drop, object, next } = unsafe { entry.read() };
            // SAFETY: `drop` is `drop_as::<T>` for the `T` at `object`, dropped exactly once.
            unsafe { drop(object) };
            entry = next;
        }
    }
}
