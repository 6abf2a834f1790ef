//! [`Shared<T>`] and [`WeakShared<T>`]: UE's `TSharedPtr` / `TWeakPtr` (and `Arc` /
//! `Weak`) with the pool as the deleter. The counts live in the object's pool cell (see
//! `rc.rs` for the protocol); the last strong reference hands the object back to its
//! [`Pool`], and the cell is reused only once the last weak reference is gone too.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use crate::rc::{Counts, Mode, StrongDropped, ThreadSafe};
use crate::standalone::{AtMax, Slot};
use crate::sync::Arc;
use crate::{NotThreadSafe, Pool, PoolError};

/// A reference-counted object from a [`Pool`] whose deleter is the pool (UE's
/// `TSharedRef`/`TSharedPtr` made with `MakeShared`, and a custom deleter). The counts sit
/// in the object's own cell, so making one allocates nothing on a warm pool.
///
/// - [`clone`](Clone::clone) adds a strong reference; [`downgrade`](Self::downgrade) makes a
///   [`WeakShared`], which [`upgrade`](WeakShared::upgrade)s only while a strong reference
///   exists (UE's `Pin`).
/// - When the last strong reference goes, the pool takes the object back by its policy
///   (`Reuse`: reset and ready again; `Purge`: dropped and rebuilt by a worker). If
///   `WeakShared`s still name it, the object is dropped in place instead, and the cell goes
///   back only with the last of them: a `WeakShared` never reaches an object that reused
///   its cell.
/// - `M` is UE's `ESPMode`: [`ThreadSafe`] (the default; atomic counts, `Send + Sync` when
///   `T` is) or [`NotThreadSafe`] (plain counts, neither `Send` nor `Sync`;
///   [`LocalShared`]).
/// - Each object keeps its pool alive (one `Arc` count per object, not per pointer).
///
/// ```
/// use std::sync::Arc;
/// use respawn_pool::{Pool, Shared};
///
/// let pool = Arc::new(Pool::builder().create(|| String::with_capacity(64)).reset(String::clear).build()?);
/// let name: Shared<String> = Shared::pull(&pool);
/// let weak = Shared::downgrade(&name);
/// let other = Shared::clone(&name);
/// assert_eq!(Shared::strong_count(&name), 2);
/// drop((name, other));
/// assert!(weak.upgrade().is_none()); // the object went back to the pool
/// # Ok::<(), respawn_pool::PoolError>(())
/// ```
pub struct Shared<T: Send + 'static, M: Mode = ThreadSafe> {
    cell: NonNull<Slot<T>>,
    /// `Arc::into_raw` of the object's pool: taken once per object, given back by whoever
    /// returns the cell.
    pool: NonNull<Pool<T>>,
    _owns: PhantomData<(T, M)>,
}

/// A [`Shared`] with plain (not thread-safe) counts: UE's `ESPMode::NotThreadSafe`. It
/// cannot leave its thread:
///
/// ```compile_fail,E0277
/// use std::sync::Arc;
/// use respawn_pool::{LocalShared, Pool};
///
/// let pool = Arc::new(Pool::builder().workers(0).create(|| 0u32).build().unwrap());
/// let local: LocalShared<u32> = LocalShared::pull(&pool);
/// std::thread::spawn(move || drop(local)); // error: `NotThreadSafe` is not `Send`
/// ```
pub type LocalShared<T> = Shared<T, NotThreadSafe>;

/// A weak reference to a [`Shared`] object (UE's `TWeakPtr`): it keeps the cell from being
/// reused, not the object alive.
pub struct WeakShared<T: Send + 'static, M: Mode = ThreadSafe> {
    cell: NonNull<Slot<T>>,
    pool: NonNull<Pool<T>>,
    _owns: PhantomData<(T, M)>,
}

/// A [`WeakShared`] with plain counts.
pub type LocalWeakShared<T> = WeakShared<T, NotThreadSafe>;

// SAFETY: as `Arc<T>`: the object is shared between the pointers' threads (`T: Sync`) and
// may be dropped or reset on any of them (`T: Send`); the counts are atomic in the modes
// that are `Send`/`Sync` (`ThreadSafe`; `NotThreadSafe` is neither, which keeps its
// pointers on one thread). The pool is `Sync`.
unsafe impl<T: Send + Sync + 'static, M: Mode + Send + Sync> Send for Shared<T, M> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync + 'static, M: Mode + Send + Sync> Sync for Shared<T, M> {}
// SAFETY: as for `Shared`.
unsafe impl<T: Send + Sync + 'static, M: Mode + Send + Sync> Send for WeakShared<T, M> {}
// SAFETY: as for `Shared`.
unsafe impl<T: Send + Sync + 'static, M: Mode + Send + Sync> Sync for WeakShared<T, M> {}

impl<T: Send + 'static, M: Mode> Shared<T, M> {
    /// An object from `pool` (a ready one, or built inline; beyond `max` an overflow
    /// object), as the only strong reference.
    ///
    /// # Panics
    /// As [`Pool::pull`].
    pub fn pull(pool: &Arc<Pool<T>>) -> Self {
        Self::try_take(pool, AtMax::Overflow).unwrap_or_else(|e| panic!("Shared::pull: {e}"))
    }

    /// [`pull`](Self::pull), refusing at `max` instead of building an overflow object.
    ///
    /// # Errors
    /// As [`Pool::try_pull`].
    pub fn try_pull(pool: &Arc<Pool<T>>) -> Result<Self, PoolError> {
        Self::try_take(pool, AtMax::Refuse)
    }

    fn try_take(pool: &Arc<Pool<T>>, at_max: AtMax) -> Result<Self, PoolError> {
        let cell = pool.take(at_max)?.cast::<Slot<T>>();
        // SAFETY: the cell is ours alone, `Slot<T>`-sized; its counts are written, not read.
        unsafe { ptr::addr_of_mut!((*cell.as_ptr()).counts).write(Counts::new(1)) };
        Ok(Self { cell, pool: into_raw(pool), _owns: PhantomData })
    }

    /// An object from `pool` that gets a weak reference to itself before anyone else sees
    /// it (`Arc::new_cyclic`, UE's `TSharedFromThis`): `init` runs on the object with a
    /// `WeakShared` that does not upgrade yet, and may keep a clone of it.
    ///
    /// Under `Reuse`, an object that holds a weak reference to itself is dropped (not
    /// reset) when its last strong reference goes, since its own `WeakShared` still names
    /// the cell; a worker rebuilds the cell once that is gone.
    ///
    /// # Panics
    /// As [`Pool::pull`]; a panic in `init` drops the object and goes on.
    pub fn pull_cyclic(pool: &Arc<Pool<T>>, init: impl FnOnce(&mut T, &WeakShared<T, M>)) -> Self {
        let cell = pool.take(AtMax::Overflow).unwrap_or_else(|e| panic!("Shared::pull_cyclic: {e}")).cast::<Slot<T>>();
        // SAFETY: as in `try_take`. No strong reference yet: upgrades fail until `publish`.
        unsafe { ptr::addr_of_mut!((*cell.as_ptr()).counts).write(Counts::new(0)) };
        let pool = into_raw(pool);
        // The strong side's weak count, until the object is published.
        let strong_side = WeakShared::<T, M> { cell, pool, _owns: PhantomData };
        let me = WeakShared::clone(&strong_side);
        {
            let unwind = DropUnpublished(&strong_side);
            // SAFETY: the object is ours alone: no strong reference exists, and `me` gives
            // no access while the strong count is zero.
            init(unsafe { &mut (*cell.as_ptr()).value }, &me);
            std::mem::forget(unwind);
        }
        // The strong side's weak count is now the new `Shared`'s.
        std::mem::forget(strong_side);
        // SAFETY: the counts were written above.
        unsafe { (*cell.as_ptr()).counts.publish() };
        Self { cell, pool, _owns: PhantomData }
    }

    #[inline]
    fn counts(&self) -> &Counts {
        // SAFETY: while a strong reference exists the cell holds the object and its counts.
        unsafe { &(*self.cell.as_ptr()).counts }
    }

    /// A weak reference to the object.
    pub fn downgrade(this: &Self) -> WeakShared<T, M> {
        this.counts().clone_weak::<M>();
        WeakShared { cell: this.cell, pool: this.pool, _owns: PhantomData }
    }

    /// Strong references to the object.
    pub fn strong_count(this: &Self) -> usize {
        this.counts().strong() as usize
    }

    /// Weak references to the object.
    pub fn weak_count(this: &Self) -> usize {
        this.counts().weak() as usize
    }

    /// Whether this is the only strong reference (UE's `IsUnique`). `WeakShared`s may
    /// exist; see [`get_mut`](Self::get_mut).
    pub fn is_unique(this: &Self) -> bool {
        this.counts().strong() == 1
    }

    /// The object, mutably, if no other strong or weak reference exists.
    pub fn get_mut(this: &mut Self) -> Option<&mut T> {
        let unique = this.counts().strong() == 1 && this.counts().weak() == 0;
        // SAFETY: no other pointer to the object exists, and `&mut this` keeps new ones
        // from being made; the object lives while `this` does.
        unique.then(|| unsafe { &mut (*this.cell.as_ptr()).value })
    }

    /// Whether two pointers name the same object.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        this.cell == other.cell
    }

    /// The pool the object came from.
    pub fn pool(this: &Self) -> &Pool<T> {
        // SAFETY: the object holds a reference to its pool (`into_raw`).
        unsafe { this.pool.as_ref() }
    }
}

/// `Arc::into_raw` of a clone of `pool`: the object's hold on its pool.
fn into_raw<T: Send + 'static>(pool: &Arc<Pool<T>>) -> NonNull<Pool<T>> {
    let raw = Arc::into_raw(Arc::clone(pool)).cast_mut();
    // SAFETY: `Arc::into_raw` never returns null.
    unsafe { NonNull::new_unchecked(raw) }
}

/// Gives back the cell of an object whose counts both reached zero, and the object's hold
/// on its pool.
///
/// # Safety
/// The caller took the weak count to zero: the cell (no object in it) is its alone, and
/// `pool` is the object's `into_raw` hold, released here once.
unsafe fn release_cell<T: Send + 'static>(cell: NonNull<Slot<T>>, pool: NonNull<Pool<T>>) {
    // SAFETY: the caller's contract.
    let pool = unsafe { Arc::from_raw(pool.as_ptr().cast_const()) };
    // SAFETY: as above: the cell holds no object and nobody else names it.
    unsafe { pool.put_empty(cell.cast()) };
}

/// Drops an object whose `pull_cyclic` `init` panicked, and gives up the strong side's
/// weak count.
struct DropUnpublished<'a, T: Send + 'static, M: Mode>(&'a WeakShared<T, M>);

impl<T: Send + 'static, M: Mode> Drop for DropUnpublished<'_, T, M> {
    fn drop(&mut self) {
        let WeakShared { cell, pool, .. } = *self.0;
        // SAFETY: the object was never published: ours alone, dropped once here. The
        // `strong_side` weak it guards drops right after, as the unwinding goes on.
        unsafe { pool.as_ref().drop_object(cell.cast()) };
    }
}

impl<T: Send + 'static, M: Mode> Clone for Shared<T, M> {
    #[inline]
    fn clone(&self) -> Self {
        self.counts().clone_strong::<M>();
        Self { cell: self.cell, pool: self.pool, _owns: PhantomData }
    }
}

impl<T: Send + 'static, M: Mode> Deref for Shared<T, M> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the object lives while a strong reference does.
        unsafe { &(*self.cell.as_ptr()).value }
    }
}

impl<T: Send + 'static, M: Mode> Drop for Shared<T, M> {
    #[inline]
    fn drop(&mut self) {
        match self.counts().drop_strong::<M>() {
            StrongDropped::Others => {}
            StrongDropped::Alone => {
                // SAFETY: the object's `into_raw` hold, released once (by us: no weak left).
                let pool = unsafe { Arc::from_raw(self.pool.as_ptr().cast_const()) };
                // SAFETY: the last strong reference with no weak one: the object and its
                // cell are ours alone.
                unsafe { pool.put(self.cell.cast()) };
            }
            StrongDropped::Watched => {
                // SAFETY: the last strong reference: the object is ours to end; the cell
                // stays named by the `WeakShared`s.
                unsafe { Shared::pool(self).drop_object(self.cell.cast()) };
                if self.counts().drop_weak::<M>() {
                    // SAFETY: the weak count reached zero under us: ours alone.
                    unsafe { release_cell(self.cell, self.pool) };
                }
            }
        }
    }
}

impl<T: Send + fmt::Debug + 'static, M: Mode> fmt::Debug for Shared<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Send + fmt::Display + 'static, M: Mode> fmt::Display for Shared<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: Send + 'static, M: Mode> WeakShared<T, M> {
    #[inline]
    fn counts(&self) -> &Counts {
        // SAFETY: while a weak reference exists the cell is not reused, and its counts stay.
        unsafe { &(*self.cell.as_ptr()).counts }
    }

    /// A strong reference, if the object is still alive (UE's `Pin`); never one to an
    /// object that reused the cell.
    pub fn upgrade(&self) -> Option<Shared<T, M>> {
        self.counts().upgrade::<M>().then(|| Shared { cell: self.cell, pool: self.pool, _owns: PhantomData })
    }

    /// Strong references to the object (0 once it is gone).
    pub fn strong_count(&self) -> usize {
        self.counts().strong() as usize
    }

    /// Weak references to the object, this one included.
    pub fn weak_count(&self) -> usize {
        self.counts().weak() as usize
    }

    /// Whether two weak references name the same object.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.cell == other.cell
    }
}

impl<T: Send + 'static, M: Mode> Clone for WeakShared<T, M> {
    #[inline]
    fn clone(&self) -> Self {
        self.counts().clone_weak::<M>();
        Self { cell: self.cell, pool: self.pool, _owns: PhantomData }
    }
}

impl<T: Send + 'static, M: Mode> Drop for WeakShared<T, M> {
    #[inline]
    fn drop(&mut self) {
        if self.counts().drop_weak::<M>() {
            // SAFETY: we took the weak count to zero: the object is gone (the strong side's
            // weak went last of all strong references) and the cell is ours.
            unsafe { release_cell(self.cell, self.pool) };
        }
    }
}

impl<T: Send + 'static, M: Mode> fmt::Debug for WeakShared<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(WeakShared)")
    }
}
