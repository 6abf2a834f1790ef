//! How a class's reservation is cut into slabs.

use crate::AllocError;

/// The shape of one class's memory: how many cells a slab holds, how many slabs the
/// reservation has room for, and how many the background thread keeps prepared.
///
/// ```
/// use respawn_allocator::SlabConfig;
/// let cfg = SlabConfig { spare_slabs: 4, ..SlabConfig::DEFAULT };
/// assert!(cfg.validate().is_ok());
/// assert!(SlabConfig { cells_per_slab: 1000, ..cfg }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlabConfig {
    /// Cells in one slab; a power of two, so a cell number splits into slab and bit with a
    /// shift and a mask.
    pub cells_per_slab: u32,
    /// Slabs the background thread keeps prepared (pages faulted in) ahead of demand.
    pub spare_slabs: u32,
    /// Slabs the class's reservation has room for; the reservation is this many strides of
    /// address space, reserved up front but committed only as slabs are prepared.
    pub max_slabs: u32,
    /// Ask for transparent huge pages on the reservation (a hint; ignored where unsupported).
    pub huge_pages: bool,
}

impl SlabConfig {
    /// 1024 cells a slab, two spare slabs, room for 4096 slabs (4 Mi cells).
    pub const DEFAULT: Self = Self { cells_per_slab: 1024, spare_slabs: 2, max_slabs: 4096, huge_pages: false };
    /// Small slabs and a small reservation: tests, Miri, classes with few objects.
    pub const SMALL: Self = Self { cells_per_slab: 64, spare_slabs: 1, max_slabs: 256, huge_pages: false };
    /// Big slabs, four spares, room for 64 Mi cells, transparent huge pages: classes with
    /// millions of objects.
    pub const LARGE: Self = Self { cells_per_slab: 4096, spare_slabs: 4, max_slabs: 16384, huge_pages: true };

    /// Checks the configuration; the error says what to change.
    ///
    /// # Errors
    /// [`AllocError::BadConfig`] if `cells_per_slab` is zero, not a power of two or above
    /// 2²⁰, if `max_slabs` is zero, or if `spare_slabs` exceeds `max_slabs`.
    pub fn validate(&self) -> Result<(), AllocError> {
        if self.cells_per_slab == 0 || !self.cells_per_slab.is_power_of_two() {
            return Err(AllocError::BadConfig("cells_per_slab must be a power of two (e.g. 1024)"));
        }
        if self.cells_per_slab > 1 << 20 {
            return Err(AllocError::BadConfig("cells_per_slab must be at most 1048576"));
        }
        if self.max_slabs == 0 {
            return Err(AllocError::BadConfig("max_slabs must be at least 1"));
        }
        if self.spare_slabs > self.max_slabs {
            return Err(AllocError::BadConfig("spare_slabs must not exceed max_slabs"));
        }
        if u64::from(self.max_slabs) * u64::from(self.cells_per_slab) > u64::from(u32::MAX) {
            return Err(AllocError::BadConfig("max_slabs × cells_per_slab must fit in 32 bits; lower one of them"));
        }
        Ok(())
    }
}

impl Default for SlabConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}
