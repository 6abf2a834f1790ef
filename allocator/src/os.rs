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
