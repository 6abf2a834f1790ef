//! The chunk allocator: one contiguous reservation per class, prepared ahead of demand.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;
use std::sync::OnceLock;

use crate::ledger::{Acquired, SlabLedger};
use crate::os::{Region, PAGE};
use crate::sync::{Arc, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::{AllocError, ClassId, SlabConfig};

/// The most classes one allocator holds.
pub const MAX_CLASSES: usize = 4096;

/// The largest alignment a class may ask for: cells are aligned within page-aligned slabs.
pub const MAX_ALIGN: usize = PAGE;

/// A whole slab handed to one owner for the allocator's lifetime: `cells` cells of
/// `cell_size` bytes from `base`, pages already faulted in.
///
/// The arena takes its memory this way: each of a slab's cells keeps one object-table slot
/// for life, so it needs the cells in a block, not one at a time.
#[derive(Debug, Clone, Copy)]
pub struct SlabGrant {
    /// The class the slab belongs to.
    pub class: ClassId,
    /// The slab's index in the class's reservation (address order).
    pub index: u32,
    /// The slab's first cell.
    pub base: NonNull<u8>,
    /// Cells in the slab.
    pub cells: u32,
    /// Bytes from one cell to the next.
    pub cell_size: usize,
    /// Bytes from one slab to the next: slab `i` starts at `region base + i × stride`
    /// (see [`ChunkAllocator::region_base`]).
    pub stride: usize,
    /// Whether the caller had to prepare the slab itself (the worker lagged).
    pub inline: bool,
}

/// A snapshot of one class's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Bytes from one cell to the next (the layout's size rounded up to its alignment).
    pub cell_size: usize,
    /// Cells in one slab.
    pub cells_per_slab: u32,
    /// Bytes from one slab to the next (whole pages).
    pub slab_bytes: usize,
    /// Bytes of address space reserved for the class.
    pub reserved_bytes: usize,
    /// Slabs carved from the reservation so far (prepared, granted or serving cells).
    pub carved_slabs: u32,
    /// Slabs prepared ahead and waiting to be used.
    pub prepared_slabs: u32,
    /// Slabs the preparation thread keeps prepared ahead of demand (the class's
    /// [`SlabConfig::spare_slabs`](crate::SlabConfig::spare_slabs)).
    pub spare_slabs: u32,
    /// Slabs granted whole (to the arena).
    pub granted_slabs: u32,
    /// Cells handed out one at a time and not yet freed.
    pub live_cells: usize,
    /// Cells ready to be handed out one at a time without taking a slab.
    pub free_cells: usize,
    /// Cells in use: granted slabs' cells plus live single cells.
    pub cells_in_use: usize,
    /// The most cells ever in use at once.
    pub high_water: usize,
    /// Slabs the caller had to prepare itself because none was ready (the worker lagged).
    pub inline_preparations: u64,
    /// Carved slabs whose pages went back to the OS (`madvise(MADV_DONTNEED)`): emptied by
    /// their owner ([`ChunkAllocator::decommit_slab`], [`ChunkAllocator::trim_cells`]) and
    /// waiting, still reserved, to be committed again before reuse.
    pub decommitted_slabs: u32,
    /// Bytes of the class's slabs committed: carved slabs (granted, prepared, serving
    /// cells) less the decommitted ones, whole slabs each (`slab_bytes`). What the class
    /// holds of the machine's memory, not counting the object table's slots.
    pub committed_bytes: usize,
}

/// The single-cell side of a class: a bump cursor in the current slab, a stack of freed
/// cells, and one allocated-bit per cell of every slab that serves single cells. The bits
/// catch double and foreign frees in release builds.
struct CellState {
    /// Slab being carved into cells and the next cell in it.
    bump: Option<(u32, u32)>,
    /// Freed cells, reused last-in first-out (the warmest first).
    free: Vec<NonNull<u8>>,
    /// Allocated bits per slab; `None` for slabs that are not serving single cells.
    bits: Vec<Option<Box<[u64]>>>,
    /// Single-cell slabs [`trim_cells`](ChunkAllocator::trim_cells) decommitted, their
    /// cells off `free` and their bits kept (all clear): the next slab the bump needs is
    /// one of these, committed again, before a new one is carved.
    parked: Vec<u32>,
}

// SAFETY: the pointers are addresses of cells in a region the allocator owns; the state is
// only reached through the class's mutex.
unsafe impl Send for CellState {}

/// One registered class.
struct Class {
    id: ClassId,
    cell_size: usize,
    config: SlabConfig,
    shift: u32,
    region: Region,
    ledger: SlabLedger,
    cells: Mutex<CellState>,
    granted: AtomicU32,
    live_cells: AtomicUsize,
    high_water: AtomicUsize,
    inline_preparations: AtomicU64,
    /// One bit per slab of the reservation: its pages were given back (decommitted).
    /// Taken on the cold paths only (a trim, a slab's reuse).
    decommitted: Mutex<Vec<u64>>,
    /// Slabs set in `decommitted`, for the stats without the lock.
    decommitted_count: AtomicU32,
}

impl Class {
    fn cells_in_use(&self) -> usize {
        ((self.granted.load(Ordering::Relaxed) as usize) << self.shift) + self.live_cells.load(Ordering::Relaxed)
    }

    fn note_use(&self) {
        self.high_water.fetch_max(self.cells_in_use(), Ordering::Relaxed);
    }

    /// Slabs the worker should have prepared.
    fn target(&self) -> u32 {
        self.config.spare_slabs + self.ledger.wanted()
    }

    /// Prepares slabs until the target is met or the reservation is used up.
    fn top_up(&self) {
        while self.ledger.prepared_len() < self.target() {
            let Some(slab) = self.ledger.carve_for_worker() else { return };
            self.region.prepare(slab as usize);
            self.ledger.publish(slab);
        }
    }

    /// A prepared slab for the caller, prepared inline if the worker has none ready.
    fn take_slab(&self) -> Result<(u32, bool), AllocError> {
        match self.ledger.acquire(|slab| self.region.prepare(slab as usize)) {
            Acquired::Prepared(slab) => Ok((slab, false)),
            Acquired::Inline(slab) => {
                self.inline_preparations.fetch_add(1, Ordering::Relaxed);
                Ok((slab, true))
            }
            Acquired::Exhausted => Err(AllocError::Exhausted { class: self.id, max_slabs: self.config.max_slabs }),
        }
    }

    /// Decommits slab `slab` unless it is already; counted once.
    ///
    /// # Safety
    /// As [`Region::decommit`]: the caller owns the carved slab and nothing in it is alive.
    unsafe fn decommit(&self, slab: u32) -> Result<(), AllocError> {
        let mut bits = self.decommitted.lock();
        let (word, mask) = (slab as usize / 64, 1u64 << (slab % 64));
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        if bits[word] & mask != 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { self.region.decommit(slab as usize) }?;
        bits[word] |= mask;
        self.decommitted_count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Commits slab `slab` again if it was decommitted (a no-op otherwise).
    ///
    /// # Safety
    /// As [`decommit`](Self::decommit).
    unsafe fn recommit(&self, slab: u32) {
        let mut bits = self.decommitted.lock();
        let (word, mask) = (slab as usize / 64, 1u64 << (slab % 64));
        if bits.get(word).is_none_or(|w| w & mask == 0) {
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { self.region.recommit(slab as usize) };
        bits[word] &= !mask;
        self.decommitted_count.fetch_sub(1, Ordering::Relaxed);
    }

    fn cell_ptr(&self, slab: u32, cell: u32) -> NonNull<u8> {
        debug_assert!(cell < self.config.cells_per_slab, "cell {cell} beyond its slab");
        // SAFETY: `cell < cells_per_slab` and `cells_per_slab × cell_size ≤ stride`, so the
        // address stays inside the slab.
        unsafe { self.region.slab_ptr(slab as usize).add(cell as usize * self.cell_size) }
    }
}

struct Shared {
    classes: Box<[OnceLock<Box<Class>>]>,
    count: AtomicUsize,
    register: Mutex<()>,
    shutdown: AtomicBool,
}

impl Shared {
    fn class(&self, id: ClassId) -> Result<&Class, AllocError> {
        // Not `ok_or`: the error has drop glue (`AllocError::Os`), and an eager one is dropped on
        // every success.
        match self.classes.get(id.index()).and_then(OnceLock::get) {
            Some(class) => Ok(class),
            None => Err(AllocError::UnknownClass(id)),
        }
    }

    fn registered(&self) -> impl Iterator<Item = &Class> {
        let n = self.count.load(Ordering::Acquire);
        self.classes[..n].iter().filter_map(|c| c.get().map(|c| &**c))
    }
}

/// Reserves one contiguous region of address space per class and carves it, front to back,
/// into slabs of fixed-size cells; a background thread keeps each class's next slabs
/// prepared so that the caller neither faults nor makes a system call on its hot path.
///
/// Two ways to take memory:
/// - [`alloc_slab`](Self::alloc_slab): a whole slab, for owners that manage cells
///   themselves (the arena); no per-cell bookkeeping here.
/// - [`alloc_cell`](Self::alloc_cell) / [`free_cell`](Self::free_cell): single cells, behind
///   a per-class lock, with an allocated-bit per cell that turns double and wrong-class
///   frees into errors in every build.
///
/// The preparation thread starts with the first class, so an allocator that never
/// registers one (a tool's, a test's) costs no thread. Dropping the allocator stops and
/// joins the thread, then unmaps every region: whatever was placed in the cells must have
/// been dropped by then.
pub struct ChunkAllocator {
    shared: Arc<Shared>,
    /// The preparation thread, started by the first [`register_class`](Self::register_class).
    worker: OnceLock<std::thread::JoinHandle<()>>,
}

impl fmt::Debug for ChunkAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkAllocator").field("classes", &self.shared.count.load(Ordering::Relaxed)).finish()
    }
}

impl Default for ChunkAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkAllocator {
    /// An allocator with no classes. Its preparation thread starts with the first class.
    pub fn new() -> Self {
        let shared = Arc::new(Shared {
            classes: (0..MAX_CLASSES).map(|_| OnceLock::new()).collect(),
            count: AtomicUsize::new(0),
            register: Mutex::new(()),
            shutdown: AtomicBool::new(false),
        });
        Self { shared, worker: OnceLock::new() }
    }

    /// Registers a class of cells that hold `layout`, with its own reservation.
    ///
    /// # Errors
    /// [`AllocError::ZeroSized`], [`AllocError::OverAligned`] (beyond [`MAX_ALIGN`]),
    /// [`AllocError::BadConfig`], [`AllocError::TooManyClasses`], or
    /// [`AllocError::Os`] if the address space cannot be reserved.
    ///
    /// # Panics
    /// If this is the first class and the OS cannot start the preparation thread.
    pub fn register_class(&self, layout: Layout, config: SlabConfig) -> Result<ClassId, AllocError> {
        if layout.size() == 0 {
            return Err(AllocError::ZeroSized);
        }
        if layout.align() > MAX_ALIGN {
            return Err(AllocError::OverAligned { align: layout.align(), max: MAX_ALIGN });
        }
        config.validate()?;
        let cell_size = layout.pad_to_align().size();
        let stride = (cell_size * config.cells_per_slab as usize).next_multiple_of(PAGE);
        let region = Region::reserve(stride, config.max_slabs as usize, config.huge_pages)?;

        let _guard = self.shared.register.lock();
        let index = self.shared.count.load(Ordering::Acquire);
        if index >= MAX_CLASSES {
            return Err(AllocError::TooManyClasses { max: MAX_CLASSES });
        }
        let id = ClassId::from_index(index as u16);
        let class = Class {
            id,
            cell_size,
            config,
            shift: config.cells_per_slab.trailing_zeros(),
            region,
            ledger: SlabLedger::new(config.max_slabs, config.spare_slabs),
            cells: Mutex::new(CellState { bump: None, free: Vec::new(), bits: Vec::new(), parked: Vec::new() }),
            granted: AtomicU32::new(0),
            live_cells: AtomicUsize::new(0),
            high_water: AtomicUsize::new(0),
            inline_preparations: AtomicU64::new(0),
            decommitted: Mutex::new(Vec::new()),
            decommitted_count: AtomicU32::new(0),
        };
        if self.shared.classes[index].set(Box::new(class)).is_err() {
            unreachable!("class slot {index} filled twice under the register lock");
        }
        self.shared.count.store(index + 1, Ordering::Release);
        if self.worker.get().is_none() {
            // Under the register lock: one thread, however many register at once. It is
            // waited for (`spawn_running`), so its start-up lands here, at set-up, and
            // never in the middle of a frame's allocation.
            let shared = Arc::clone(&self.shared);
            let worker = crate::sync::spawn_running("respawn-prepare".into(), move || prepare_loop(&shared))
                .expect("failed to start the slab preparation thread");
            if self.worker.set(worker).is_err() {
                unreachable!("the preparation thread started twice under the register lock");
            }
        }
        self.wake();
        Ok(id)
    }

    /// Takes a whole prepared slab of `class`. The cells are the caller's until the
    /// allocator drops; they are never handed out again.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`] or [`AllocError::Exhausted`].
    pub fn alloc_slab(&self, class: ClassId) -> Result<SlabGrant, AllocError> {
        let c = self.shared.class(class)?;
        let (index, inline) = c.take_slab()?;
        self.wake();
        c.granted.fetch_add(1, Ordering::Relaxed);
        c.note_use();
        Ok(SlabGrant {
            class,
            index,
            base: c.region.slab_ptr(index as usize),
            cells: c.config.cells_per_slab,
            cell_size: c.cell_size,
            stride: c.region.reserved_bytes() / c.config.max_slabs as usize,
            inline,
        })
    }

    /// One cell of `class`, uninitialised, aligned to the class's layout.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`] or [`AllocError::Exhausted`].
    pub fn try_alloc_cell(&self, class: ClassId) -> Result<NonNull<u8>, AllocError> {
        let c = self.shared.class(class)?;
        let mut st = c.cells.lock();
        let ptr = if let Some(ptr) = st.free.pop() {
            let (slab, off) = c.region.locate(ptr.as_ptr()).expect("a freed cell lies in its region");
            set_bit(&mut st, slab, off / c.cell_size, true);
            ptr
        } else {
            let (slab, cell) = match st.bump {
                Some((slab, next)) if next < c.config.cells_per_slab => (slab, next),
                _ => match st.parked.pop() {
                    // A slab a trim gave back: committed again, its bits still all clear.
                    Some(slab) => {
                        // SAFETY: a parked slab serves single cells of this class, none of
                        // them allocated (trimmed with every bit clear), and only the bump
                        // under this lock hands its cells out.
                        unsafe { c.recommit(slab) };
                        (slab, 0)
                    }
                    None => {
                        let (slab, _) = c.take_slab()?;
                        self.wake();
                        let words = (c.config.cells_per_slab as usize).div_ceil(64);
                        if st.bits.len() <= slab as usize {
                            st.bits.resize_with(slab as usize + 1, || None);
                        }
                        st.bits[slab as usize] = Some(vec![0; words].into_boxed_slice());
                        (slab, 0)
                    }
                },
            };
            st.bump = Some((slab, cell + 1));
            set_bit(&mut st, slab as usize, cell as usize, true);
            c.cell_ptr(slab, cell)
        };
        drop(st);
        crate::poison::unpoison(ptr.as_ptr(), c.cell_size);
        c.live_cells.fetch_add(1, Ordering::Relaxed);
        c.note_use();
        Ok(ptr)
    }

    /// One cell of `class`, uninitialised, aligned to the class's layout.
    ///
    /// # Panics
    /// If [`try_alloc_cell`](Self::try_alloc_cell) fails: the class is unknown or its
    /// reservation is used up.
    pub fn alloc_cell(&self, class: ClassId) -> NonNull<u8> {
        self.try_alloc_cell(class).unwrap_or_else(|e| panic!("alloc_cell({class:?}): {e}"))
    }

    /// Returns a cell obtained from [`alloc_cell`](Self::alloc_cell) of the same class.
    /// Whatever the cell held must already have been dropped; the memory may be handed out
    /// again at once.
    ///
    /// # Errors
    /// Nothing changes and the error names the mistake: [`AllocError::WrongClass`],
    /// [`AllocError::ForeignPointer`], [`AllocError::Misaligned`],
    /// [`AllocError::DoubleFree`] (also for cells of slabs granted whole) or
    /// [`AllocError::UnknownClass`]. These checks run in release builds too.
    pub fn free_cell(&self, class: ClassId, ptr: NonNull<u8>) -> Result<(), AllocError> {
        let c = self.shared.class(class)?;
        let Some((slab, off)) = c.region.locate(ptr.as_ptr()) else {
            return Err(match self.class_of(ptr.as_ptr()) {
                Some(found) => AllocError::WrongClass { expected: class, found },
                None => AllocError::ForeignPointer,
            });
        };
        if off % c.cell_size != 0 || off / c.cell_size >= c.config.cells_per_slab as usize {
            return Err(AllocError::Misaligned);
        }
        let mut st = c.cells.lock();
        if !set_bit(&mut st, slab, off / c.cell_size, false) {
            return Err(AllocError::DoubleFree);
        }
        // Poisoned before it is on the free list: once it is, another thread may take it.
        crate::poison::poison(ptr.as_ptr(), c.cell_size);
        st.free.push(ptr);
        drop(st);
        c.live_cells.fetch_sub(1, Ordering::Relaxed);
        Ok(())
    }

    /// Asks the preparation thread to have `cells` more cells of `class` ready (whole slabs,
    /// beyond the spares), and returns at once.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`], or [`AllocError::Exhausted`] if the reservation's
    /// uncarved and prepared slabs together cannot hold `cells` cells; nothing is asked then.
    pub fn reserve(&self, class: ClassId, cells: usize) -> Result<(), AllocError> {
        let c = self.shared.class(class)?;
        let slabs = cells.div_ceil(c.config.cells_per_slab as usize);
        let available = c.ledger.remaining() as usize + c.ledger.prepared_len() as usize;
        if slabs > available {
            return Err(AllocError::Exhausted { class, max_slabs: c.config.max_slabs });
        }
        c.ledger.want(slabs as u32);
        self.wake();
        Ok(())
    }

    /// Asks the preparation thread to have room for `cells` cells of `class` prepared ahead,
    /// beyond the spares, counting what [`reserve`](Self::reserve) and earlier calls asked
    /// for and no allocation has taken yet; returns at once. Unlike `reserve`, asking again
    /// for the same cells asks for nothing more, so a caller can ask on every frame that
    /// it expects to need them soon (a pool near its growth step), and a class asks for no
    /// spare slab between those times. At most what the reservation has left is prepared.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`].
    pub fn prepare_ahead(&self, class: ClassId, cells: usize) -> Result<(), AllocError> {
        let c = self.shared.class(class)?;
        let slabs = cells.div_ceil(c.config.cells_per_slab as usize).min(c.ledger.remaining() as usize);
        if c.ledger.want_at_least(slabs as u32) {
            self.wake();
        }
        Ok(())
    }

    /// Prepares `class`'s spare and reserved slabs on the calling thread, now. For start-up,
    /// before the first frame, so the first spawns find memory ready.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`].
    pub fn prepare_now(&self, class: ClassId) -> Result<(), AllocError> {
        self.shared.class(class)?.top_up();
        Ok(())
    }

    /// Gives the pages of slab `index` of `class` back to the OS (`madvise(MADV_DONTNEED)`)
    /// while its owner keeps it: the address range stays reserved and the slab stays
    /// granted, so cell addresses do not change, but the memory is no longer committed
    /// (counted in [`ClassStats::decommitted_slabs`], out of
    /// [`ClassStats::committed_bytes`]). Call [`recommit_slab`](Self::recommit_slab)
    /// before using it again. Decommitting a decommitted slab does nothing.
    ///
    /// For an owner of whole slabs (the arena, whose trims give back slabs that hold no
    /// object). Slabs serving single cells are trimmed by [`trim_cells`](Self::trim_cells).
    ///
    /// # Safety
    /// The caller owns slab `index` (granted to it by [`alloc_slab`](Self::alloc_slab)),
    /// nothing in it is alive or referenced, and nothing reads or writes it until
    /// `recommit_slab`: its contents are lost (natively they read as zeros).
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`], [`AllocError::Exhausted`] for a slab never carved,
    /// [`AllocError::Os`] if the OS refuses the advice (nothing changes then).
    pub unsafe fn decommit_slab(&self, class: ClassId, index: u32) -> Result<(), AllocError> {
        let c = self.shared.class(class)?;
        if index >= c.ledger.carved() {
            return Err(AllocError::Exhausted { class, max_slabs: c.config.max_slabs });
        }
        // SAFETY: the caller's contract.
        unsafe { c.decommit(index) }
    }

    /// Commits slab `index` of `class` again after [`decommit_slab`](Self::decommit_slab):
    /// its pages are faulted in now, on the calling thread (a slab's cold path, as an
    /// inline preparation is), so its cells take no page fault when used. A slab that is
    /// not decommitted is left alone.
    ///
    /// # Safety
    /// As [`decommit_slab`](Self::decommit_slab): the caller owns the slab, and nothing in
    /// it is alive (every page is written).
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`], [`AllocError::Exhausted`] for a slab never carved.
    pub unsafe fn recommit_slab(&self, class: ClassId, index: u32) -> Result<(), AllocError> {
        let c = self.shared.class(class)?;
        if index >= c.ledger.carved() {
            return Err(AllocError::Exhausted { class, max_slabs: c.config.max_slabs });
        }
        // SAFETY: the caller's contract.
        unsafe { c.recommit(index) };
        Ok(())
    }

    /// Gives back every slab of `class` that serves single cells and has none allocated
    /// (every cell freed with [`free_cell`](Self::free_cell); the one the bump cursor is
    /// carving included, and the cursor starts afresh): its cells leave the free list, its pages go back to the OS, and the
    /// next slab the class needs is one of these, committed again, before a new one is
    /// carved. Returns how many slabs it decommitted. A cold call (it walks the free list):
    /// for a pool that has just dropped its idle objects.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`]; [`AllocError::Os`] if the OS refuses the advice (the
    /// slabs trimmed before stay trimmed, the rest are left as they were).
    pub fn trim_cells(&self, class: ClassId) -> Result<usize, AllocError> {
        let c = self.shared.class(class)?;
        let mut st = c.cells.lock();
        let empty: Vec<u32> = (0..st.bits.len())
            .filter(|&slab| st.bits[slab].as_ref().is_some_and(|bits| bits.iter().all(|&w| w == 0)))
            .filter(|&slab| !st.parked.contains(&(slab as u32)))
            .map(|slab| slab as u32)
            .collect();
        if empty.is_empty() {
            return Ok(0);
        }
        let mut trimmed = Vec::with_capacity(empty.len());
        let mut refused = None;
        for slab in empty {
            // SAFETY: a slab serving single cells belongs to the allocator; every bit clear
            // means no cell of it is handed out, and under the lock nobody takes one.
            match unsafe { c.decommit(slab) } {
                Ok(()) => trimmed.push(slab),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        // `trimmed` is in slab order: a binary search per free cell.
        st.free.retain(|ptr| {
            let (slab, _) = c.region.locate(ptr.as_ptr()).expect("a freed cell lies in its region");
            trimmed.binary_search(&(slab as u32)).is_err()
        });
        let done = trimmed.len();
        // The slab being carved goes too if it is empty: the bump starts afresh on the next.
        if st.bump.is_some_and(|(slab, _)| trimmed.binary_search(&slab).is_ok()) {
            st.bump = None;
        }
        st.parked.extend(trimmed);
        // Reused lowest first (`pop`): the class stays towards the front of its region.
        st.parked.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(e) = refused {
            return Err(e);
        }
        Ok(done)
    }

    /// Whether `ptr` lies in any class's region.
    pub fn contains(&self, ptr: *const u8) -> bool {
        self.class_of(ptr).is_some()
    }

    /// The class whose region holds `ptr`.
    pub fn class_of(&self, ptr: *const u8) -> Option<ClassId> {
        self.shared.registered().find(|c| c.region.locate(ptr).is_some()).map(|c| c.id)
    }

    /// The address range of `class`'s reservation: every cell of the class lies in it, in
    /// slab order. `None` for an unknown class, and under Miri (slabs are separate
    /// allocations there).
    pub fn region(&self, class: ClassId) -> Option<std::ops::Range<usize>> {
        self.shared.class(class).ok()?.region.span()
    }

    /// The first byte of `class`'s reservation: slab `i`'s first cell is at
    /// `base + i × stride` ([`SlabGrant::stride`]), so a cell's address is arithmetic on
    /// its number. `None` for an unknown class, and under Miri (each slab is a separate
    /// allocation there; use the grants' bases).
    pub fn region_base(&self, class: ClassId) -> Option<NonNull<u8>> {
        self.shared.class(class).ok()?.region.base()
    }

    /// Cell size, slab geometry and counters of `class`.
    ///
    /// # Errors
    /// [`AllocError::UnknownClass`].
    pub fn stats(&self, class: ClassId) -> Result<ClassStats, AllocError> {
        let c = self.shared.class(class)?;
        let st = c.cells.lock();
        let bump_left = st.bump.map_or(0, |(_, next)| (c.config.cells_per_slab - next) as usize);
        let free_cells = st.free.len() + bump_left;
        drop(st);
        let decommitted = c.decommitted_count.load(Ordering::Relaxed);
        let slab_bytes = c.region.reserved_bytes() / c.config.max_slabs as usize;
        // Loaded once: the preparation thread may carve between two loads, and
        // `committed_bytes` must be `carved_slabs` less the decommitted ones of one snapshot.
        let carved = c.ledger.carved();
        Ok(ClassStats {
            cell_size: c.cell_size,
            cells_per_slab: c.config.cells_per_slab,
            slab_bytes,
            reserved_bytes: c.region.reserved_bytes(),
            carved_slabs: carved,
            prepared_slabs: c.ledger.prepared_len(),
            spare_slabs: c.config.spare_slabs,
            granted_slabs: c.granted.load(Ordering::Relaxed),
            live_cells: c.live_cells.load(Ordering::Relaxed),
            free_cells,
            cells_in_use: c.cells_in_use(),
            high_water: c.high_water.load(Ordering::Relaxed),
            inline_preparations: c.inline_preparations.load(Ordering::Relaxed),
            decommitted_slabs: decommitted,
            committed_bytes: carved.saturating_sub(decommitted) as usize * slab_bytes,
        })
    }

    /// Classes registered so far.
    pub fn class_count(&self) -> usize {
        self.shared.count.load(Ordering::Acquire)
    }

    fn wake(&self) {
        if let Some(w) = self.worker.get() {
            w.thread().unpark();
        }
    }
}

/// Sets or clears a cell's allocated bit; returns whether the bit changed.
fn set_bit(st: &mut CellState, slab: usize, cell: usize, value: bool) -> bool {
    let Some(Some(bits)) = st.bits.get_mut(slab) else { return false };
    let (word, mask) = (cell / 64, 1u64 << (cell % 64));
    let was = bits[word] & mask != 0;
    if value {
        bits[word] |= mask;
    } else {
        bits[word] &= !mask;
    }
    was != value
}

/// The preparation thread: tops up every class, then parks until a caller takes a slab,
/// reserves, registers a class or shuts it down.
fn prepare_loop(shared: &Shared) {
    while !shared.shutdown.load(Ordering::Acquire) {
        for class in shared.registered() {
            class.top_up();
        }
        std::thread::park();
    }
}

impl Drop for ChunkAllocator {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        if let Some(worker) = self.worker.take() {
            worker.thread().unpark();
            // A panic on the worker would be a bug in `top_up`; surface it, but not while
            // already unwinding.
            if worker.join().is_err() && !std::thread::panicking() {
                panic!("the slab preparation thread panicked");
            }
        }
    }
}
