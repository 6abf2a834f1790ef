//! Every OS memory call of respawn: reserve, advise, touch and release.
//!
//! A class's [`Region`] is one anonymous `MAP_NORESERVE` mapping carved into slabs of
//! `stride` bytes. Under `cfg(miri)` (which cannot `mmap`) each slab is instead its own
//! `std::alloc` allocation, made when the slab is prepared, so Miri sees every slab as a
//! separate object and can report an access that strays out of one. Nothing outside this
//! module knows which of the two it runs on.

use std::io;
use std::ptr::NonNull;

/// The page size assumed for touching and alignment. Slab strides are multiples of it.
pub const PAGE: usize = 4096;

#[cfg(miri)]
use crate::sync::{AtomicPtr, Ordering};

/// One class's virtual reservation, carved into `slabs` slabs of `stride` bytes.
pub(crate) struct Region {
    stride: usize,
    slabs: usize,
    #[cfg(not(miri))]
    base: NonNull<u8>,
    /// Keeps the mapping alive; unmapped on drop. All access goes through `base`.
    #[cfg(not(miri))]
    _map: memmap2::MmapMut,
    /// Slab `i`'s allocation, null until prepared. Written once, before the slab is published.
    #[cfg(miri)]
    slab_ptrs: Box<[AtomicPtr<u8>]>,
    /// One past the highest slab prepared: what to unpoison before the unmap.
    #[cfg(all(respawn_poison, not(miri)))]
    prepared_end: std::sync::atomic::AtomicUsize,
}

// SAFETY: `Region` is a handle to memory it owns; the raw base pointer is only used to
// compute slab addresses. Which thread may write a slab is decided by the ledger, not here.
unsafe impl Send for Region {}
// SAFETY: as above; `&Region` methods only compute addresses or touch slabs that the caller
// exclusively owns (documented on `prepare`).
unsafe impl Sync for Region {}

impl Region {
    /// Reserves `slabs × stride` bytes of address space without committing memory.
    pub(crate) fn reserve(stride: usize, slabs: usize, huge_pages: bool) -> io::Result<Self> {
        debug_assert!(stride % PAGE == 0, "slab stride must be whole pages");
        let len = stride
            .checked_mul(slabs)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "reservation overflows usize"))?;
        #[cfg(not(miri))]
        {
            let mut map = memmap2::MmapOptions::new().len(len).no_reserve_swap().map_anon()?;
            if huge_pages {
                // Transparent huge pages: a hint, so a kernel without THP is not an error.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            let base = NonNull::new(map.as_mut_ptr()).expect("mmap returned a null mapping");
            Ok(Self {
                stride,
                slabs,
                base,
                _map: map,
                #[cfg(respawn_poison)]
                prepared_end: std::sync::atomic::AtomicUsize::new(0),
            })
        }
        #[cfg(miri)]
        {
            let _ = (len, huge_pages);
            let slab_ptrs = (0..slabs).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
            Ok(Self { stride, slabs, slab_ptrs })
        }
    }

    /// Bytes of address space reserved.
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.stride * self.slabs
    }

    /// Commits slab `i`: its pages are faulted in (written once each), so the first touch
    /// by the slab's user takes no page fault.
    ///
    /// The caller must own slab `i` exclusively (it carved it from the ledger) and call this
    /// once, before publishing the slab to anybody else.
    pub(crate) fn prepare(&self, i: usize) {
        assert!(i < self.slabs, "slab {i} outside a reservation of {}", self.slabs);
        #[cfg(not(miri))]
        {
            let start = self.slab_ptr(i).as_ptr();
            for page in (0..self.stride).step_by(PAGE) {
                // SAFETY: `page < stride` so the byte lies inside slab `i`, inside the live
                // mapping; the caller owns the slab, so nobody else reads or writes it now.
                unsafe { start.add(page).write_volatile(0) };
            }
            // Every cell starts free: off limits until the arena or `alloc_cell` hands it out.
            crate::poison::poison(start, self.stride);
            #[cfg(respawn_poison)]
            self.prepared_end.fetch_max(i + 1, std::sync::atomic::Ordering::Relaxed);
        }
        #[cfg(miri)]
        {
            let layout = std::alloc::Layout::from_size_align(self.stride, PAGE).expect("slab layout");
            // SAFETY: `stride` is non-zero (whole pages, at least one).
            let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
            let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
            let old = self.slab_ptrs[i].swap(ptr.as_ptr(), Ordering::Release);
            assert!(old.is_null(), "slab {i} prepared twice");
        }
    }

    /// Gives slab `i`'s pages back to the OS (`madvise(MADV_DONTNEED)`): the address range
    /// stays reserved and the slab stays its owner's, but its memory is no longer
    /// committed, and reads as zeros when next touched. Poisoning is left as it is.
    ///
    /// Under Miri (no `madvise`) the slab is zero-filled instead, which is what a reader
    /// would see natively; off Unix it is a no-op.
    ///
    /// # Safety
    /// The caller owns prepared slab `i` exclusively, nothing in it is alive (no object,
    /// no reference into it), and nobody uses it again before [`recommit`](Self::recommit).
    pub(crate) unsafe fn decommit(&self, i: usize) -> io::Result<()> {
        assert!(i < self.slabs, "slab {i} outside a reservation of {}", self.slabs);
        #[cfg(all(unix, not(miri)))]
        {
            // SAFETY: the range is slab `i`, inside the mapping; the caller's contract says
            // nothing in it is alive or referenced, so losing its contents breaks nothing.
            unsafe {
                self._map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, i * self.stride, self.stride)
            }
        }
        #[cfg(miri)]
        {
            let start = self.slab_ptr(i).as_ptr();
            // SAFETY: slab `i` is one live allocation of `stride` bytes (prepared), the
            // caller's alone and holding nothing alive.
            unsafe { start.write_bytes(0, self.stride) };
            Ok(())
        }
        #[cfg(not(any(unix, miri)))]
        {
            Ok(())
        }
    }

    /// Commits decommitted slab `i` again: its pages are faulted in (written once each, as
    /// [`prepare`](Self::prepare) does), so its next user takes no page fault. The slab's
    /// poisoning is reset to all-free, as a prepared slab's is.
    ///
    /// # Safety
    /// As [`decommit`](Self::decommit): the caller owns slab `i`, and nothing in it is alive.
    pub(crate) unsafe fn recommit(&self, i: usize) {
        assert!(i < self.slabs, "slab {i} outside a reservation of {}", self.slabs);
        #[cfg(not(miri))]
        {
            let start = self.slab_ptr(i).as_ptr();
            // The writes below touch cells that are poisoned as free.
            crate::poison::unpoison(start, self.stride);
            for page in (0..self.stride).step_by(PAGE) {
                // SAFETY: `page < stride`, inside slab `i` and the live mapping; the caller
                // owns the slab and nothing in it is alive.
                unsafe { start.add(page).write_volatile(0) };
            }
            crate::poison::poison(start, self.stride);
        }
    }

    /// The first byte of slab `i`. Under Miri the slab must have been prepared.
    pub(crate) fn slab_ptr(&self, i: usize) -> NonNull<u8> {
        debug_assert!(i < self.slabs, "slab {i} outside a reservation of {}", self.slabs);
        #[cfg(not(miri))]
        {
            // SAFETY: `i < slabs`, so the offset stays inside (or one past) the mapping.
            unsafe { self.base.add(i * self.stride) }
        }
        #[cfg(miri)]
        {
            NonNull::new(self.slab_ptrs[i].load(Ordering::Acquire)).expect("slab used before it was prepared")
        }
    }

    /// Which slab holds `ptr`, and at what byte offset in it; `None` if outside the region.
    pub(crate) fn locate(&self, ptr: *const u8) -> Option<(usize, usize)> {
        let addr = ptr as usize;
        #[cfg(not(miri))]
        {
            let off = addr.checked_sub(self.base.as_ptr() as usize)?;
            (off < self.reserved_bytes()).then(|| (off / self.stride, off % self.stride))
        }
        #[cfg(miri)]
        {
            self.slab_ptrs.iter().enumerate().find_map(|(i, p)| {
                let start = p.load(Ordering::Acquire) as usize;
                (start != 0 && addr >= start && addr < start + self.stride).then(|| (i, addr - start))
            })
        }
    }

    /// The first byte of the reservation (Miri: `None`, slabs are separate allocations).
    pub(crate) fn base(&self) -> Option<NonNull<u8>> {
        #[cfg(not(miri))]
        {
            Some(self.base)
        }
        #[cfg(miri)]
        {
            None
        }
    }

    /// The address range of the whole reservation (one contiguous range; Miri: `None`).
    pub(crate) fn span(&self) -> Option<std::ops::Range<usize>> {
        #[cfg(not(miri))]
        {
            let start = self.base.as_ptr() as usize;
            Some(start..start + self.reserved_bytes())
        }
        #[cfg(miri)]
        {
            None
        }
    }
}

#[cfg(all(respawn_poison, not(miri)))]
impl Drop for Region {
    fn drop(&mut self) {
        // The mapping goes away after this, and the OS may map the range again for someone
        // else: ASan must not keep it poisoned. Only the prepared prefix was ever poisoned.
        let end = *self.prepared_end.get_mut();
        crate::poison::unpoison(self.base.as_ptr(), end * self.stride);
    }
}

#[cfg(miri)]
impl Drop for Region {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.stride, PAGE).expect("slab layout");
        for p in self.slab_ptrs.iter() {
            let p = p.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: `p` came from `alloc_zeroed(layout)` in `prepare` and is freed once.
                unsafe { std::alloc::dealloc(p, layout) };
            }
        }
    }
}

/// One contiguous block of `len` bytes, committed lazily by the OS (the permanent pool's).
pub(crate) struct Block {
    base: NonNull<u8>,
    len: usize,
    #[cfg(not(miri))]
    _map: memmap2::MmapMut,
}

// SAFETY: a handle to memory it owns; who writes which bytes is decided by the bump cursor.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    /// Maps `len` (> 0) bytes of zeroed memory.
    pub(crate) fn map(len: usize) -> io::Result<Self> {
        debug_assert!(len > 0, "an empty block");
        #[cfg(not(miri))]
        {
            let mut map = memmap2::MmapOptions::new().len(len).no_reserve_swap().map_anon()?;
            let base = NonNull::new(map.as_mut_ptr()).expect("mmap returned a null mapping");
            Ok(Self { base, len, _map: map })
        }
        #[cfg(miri)]
        {
            let layout = std::alloc::Layout::from_size_align(len, PAGE)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            // SAFETY: `len > 0`.
            let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
            let base = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
            Ok(Self { base, len })
        }
    }

    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(miri)]
impl Drop for Block {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, PAGE).expect("block layout");
        // SAFETY: `base` came from `alloc_zeroed(layout)` in `map` and is freed once.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), layout) };
    }
}

/// A zero-filled table of `blocks` blocks of `block` bytes each, for per-cell side data that
/// must never move (respawn-arena's object slots). Native: one `MAP_NORESERVE` mapping, so a
/// block's pages are committed by the OS on first touch and the address of entry `i` is
/// `base + i × entry size`: pure arithmetic. Under Miri each block is its own zeroed
/// allocation, made by [`commit`](Self::commit), so Miri sees a stray access out of one.
///
/// Unlike a class region's slabs, blocks are not rounded to whole pages (a page may hold the
/// end of one block and the start of the next) and are not prefaulted: nothing is written
/// here, so two owners of neighbouring blocks never touch the same bytes.
pub struct SideRegion {
    block: usize,
    blocks: usize,
    #[cfg(not(miri))]
    base: NonNull<u8>,
    #[cfg(not(miri))]
    _map: memmap2::MmapMut,
    #[cfg(miri)]
    block_ptrs: Box<[AtomicPtr<u8>]>,
}

// SAFETY: a handle to zeroed memory it owns; who writes which entry is decided by its user
// (the arena, under `&mut`, and atomics for everyone else).
unsafe impl Send for SideRegion {}
// SAFETY: as above.
unsafe impl Sync for SideRegion {}

/// Alignment of a side region's blocks (native: the mapping's, a page).
const SIDE_ALIGN: usize = 16;

impl SideRegion {
    /// Reserves `blocks × block` bytes of zeroed address space (`block` a multiple of 16).
    ///
    /// # Errors
    /// If the OS refuses the mapping, or the size overflows.
    pub fn reserve(block: usize, blocks: usize) -> io::Result<Self> {
        assert!(block > 0 && block % SIDE_ALIGN == 0, "a side block is a non-zero multiple of {SIDE_ALIGN} bytes");
        let len = block
            .checked_mul(blocks)
            .filter(|&l| l > 0)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "side region size overflows usize"))?;
        #[cfg(not(miri))]
        {
            let mut map = memmap2::MmapOptions::new().len(len).no_reserve_swap().map_anon()?;
            let base = NonNull::new(map.as_mut_ptr()).expect("mmap returned a null mapping");
            Ok(Self { block, blocks, base, _map: map })
        }
        #[cfg(miri)]
        {
            let _ = len;
            let block_ptrs = (0..blocks).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
            Ok(Self { block, blocks, block_ptrs })
        }
    }

    /// Makes block `i` usable (Miri: allocates it; native: nothing, the OS commits pages on
    /// first touch). Call it once per block, under the owner's exclusive access, before
    /// anybody reads the block.
    pub fn commit(&self, i: usize) {
        assert!(i < self.blocks, "block {i} outside a side region of {}", self.blocks);
        #[cfg(miri)]
        {
            let layout = std::alloc::Layout::from_size_align(self.block, SIDE_ALIGN).expect("block layout");
            // SAFETY: `block` is non-zero.
            let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
            let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
            let old = self.block_ptrs[i].swap(ptr.as_ptr(), Ordering::Release);
            assert!(old.is_null(), "side block {i} committed twice");
        }
    }

    /// The first byte of the region: entry `i` of the whole table is `base + i × size`.
    /// `None` under Miri, where blocks are separate allocations (use
    /// [`block_ptr`](Self::block_ptr)).
    #[inline]
    pub fn base(&self) -> Option<NonNull<u8>> {
        #[cfg(not(miri))]
        {
            Some(self.base)
        }
        #[cfg(miri)]
        {
            None
        }
    }

    /// The first byte of block `i`, if it is inside the region (and, under Miri, committed).
    #[inline]
    pub fn block_ptr(&self, i: usize) -> Option<NonNull<u8>> {
        if i >= self.blocks {
            return None;
        }
        #[cfg(not(miri))]
        {
            // SAFETY: `i < blocks`, so the offset stays inside the mapping.
            Some(unsafe { self.base.add(i * self.block) })
        }
        #[cfg(miri)]
        {
            NonNull::new(self.block_ptrs[i].load(Ordering::Acquire))
        }
    }

    /// Bytes per block.
    pub fn block_bytes(&self) -> usize {
        self.block
    }
}

impl std::fmt::Debug for SideRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SideRegion").field("block", &self.block).field("blocks", &self.blocks).finish()
    }
}

#[cfg(miri)]
impl Drop for SideRegion {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.block, SIDE_ALIGN).expect("block layout");
        for p in self.block_ptrs.iter() {
            let p = p.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: `p` came from `alloc_zeroed(layout)` in `commit` and is freed once.
                unsafe { std::alloc::dealloc(p, layout) };
            }
        }
    }
}
