//! AddressSanitizer poisoning of slab memory, under `--cfg respawn_poison`.
//!
//! ASan only knows the memory the system allocator hands out; respawn's slabs are one
//! `mmap` each, carved into cells by respawn itself, so a use-after-free *inside* a slab —
//! a pointer kept past `destroy`, read after the cell went back to the vacant list — is
//! invisible to it. Built with `RUSTFLAGS="-Zsanitizer=address --cfg respawn_poison"`
//! (`scripts/sanitizers.sh`), respawn tells ASan which cells are free:
//!
//! ```text
//!   prepare slab   ── poison the whole slab (every cell free, and the tail after the cells)
//!   hand out cell  ── unpoison it  (insert, take_cell for a pool worker, alloc_cell)
//!   cell back free ── poison it    (vacant list, recycle, retired slot, free_cell)
//!   unmap region   ── unpoison what was prepared (the address range may be mapped again)
//! ```
//!
//! A cell held by a returned-cell token (respawn-arena's `FreedCell`) stays unpoisoned: the
//! token's holder owns it. An access to a poisoned cell aborts with ASan's `use-after-poison`
//! report. Without the cfg both functions are empty and vanish. ASan poisons whole 8-byte
//! granules, so a cell smaller than that (or not aligned to it) may be poisoned only in
//! part: a missed report, never a false one.
//!
//! The cfg needs the ASan runtime to link (it provides the two functions below); set it
//! only together with `-Zsanitizer=address`.

#[cfg(all(respawn_poison, not(miri)))]
extern "C" {
    fn __asan_poison_memory_region(addr: *const u8, size: usize);
    fn __asan_unpoison_memory_region(addr: *const u8, size: usize);
}

/// Whether this build poisons (`--cfg respawn_poison`, outside Miri).
pub const ENABLED: bool = cfg!(all(respawn_poison, not(miri)));

/// Marks `len` bytes at `addr` as off limits: ASan reports any access until
/// [`unpoison`]. A no-op without `--cfg respawn_poison`.
#[inline(always)]
pub fn poison(addr: *const u8, len: usize) {
    #[cfg(all(respawn_poison, not(miri)))]
    // SAFETY: ASan's interface only updates its shadow memory for the range; it accepts
    // any address range of the process and never touches the bytes themselves.
    unsafe {
        __asan_poison_memory_region(addr, len)
    };
    #[cfg(not(all(respawn_poison, not(miri))))]
    let _ = (addr, len);
}

/// Makes `len` bytes at `addr` accessible again. A no-op without `--cfg respawn_poison`.
#[inline(always)]
pub fn unpoison(addr: *const u8, len: usize) {
    #[cfg(all(respawn_poison, not(miri)))]
    // SAFETY: as in `poison`.
    unsafe {
        __asan_unpoison_memory_region(addr, len)
    };
    #[cfg(not(all(respawn_poison, not(miri))))]
    let _ = (addr, len);
}
