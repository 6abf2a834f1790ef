//! [`World::spawn_batch`]'s iterator.

use std::fmt;
use std::iter::FusedIterator;

use respawn_arena::Handle;
use respawn_pool::Poolable;

use crate::World;

/// The handles of the objects [`World::spawn_batch`] spawns, as hecs' and bevy's
/// `SpawnBatchIter`: each `next` spawns one object, and dropping the iterator spawns the
/// ones not taken yet, so the whole batch exists once it is gone, however far it was
/// iterated. It borrows the world mutably until then.
///
/// ```
/// use respawn::{Object, PoolConfig, Poolable, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Mote { id: usize }
/// impl Poolable for Mote {
///     fn create() -> Self { Mote { id: 0 } }
/// }
///
/// let mut world = World::builder().pool::<Mote>(PoolConfig::ON_DEMAND).build()?;
/// let mut batch = world.spawn_batch(10, |i, m: &mut Mote| m.id = i);
/// assert_eq!(batch.len(), 10);
/// let first = batch.next().unwrap();
/// drop(batch); // the other nine are spawned now
/// assert_eq!((world.get(first).unwrap().id, world.len::<Mote>()), (0, 10));
/// # Ok::<(), respawn::PoolError>(())
/// ```
pub struct SpawnBatch<'w, T: Poolable, F: FnMut(usize, &mut T)> {
    world: &'w mut World,
    init: F,
    /// The next object's number in the batch.
    next: usize,
    n: usize,
    _class: std::marker::PhantomData<fn() -> T>,
}

impl<'w, T: Poolable, F: FnMut(usize, &mut T)> SpawnBatch<'w, T, F> {
    pub(crate) fn new(world: &'w mut World, n: usize, init: F) -> Self {
        Self { world, init, next: 0, n, _class: std::marker::PhantomData }
    }
}

impl<T: Poolable, F: FnMut(usize, &mut T)> Iterator for SpawnBatch<'_, T, F> {
    type Item = Handle<T>;

    #[inline]
    fn next(&mut self) -> Option<Handle<T>> {
        if self.next == self.n {
            return None;
        }
        let i = self.next;
        // Counted first: a panicking `init` is not called again for the same number.
        self.next += 1;
        let init = &mut self.init;
        Some(self.world.spawn_with(|object: &mut T| init(i, object)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.n - self.next;
        (left, Some(left))
    }
}

impl<T: Poolable, F: FnMut(usize, &mut T)> ExactSizeIterator for SpawnBatch<'_, T, F> {}
impl<T: Poolable, F: FnMut(usize, &mut T)> FusedIterator for SpawnBatch<'_, T, F> {}

impl<T: Poolable, F: FnMut(usize, &mut T)> Drop for SpawnBatch<'_, T, F> {
    fn drop(&mut self) {
        // The rest of the batch, unless the thread is unwinding: a panic in the loop that
        // iterated the batch (or in `init`) must not run `init` again.
        if !std::thread::panicking() {
            for _ in self.by_ref() {}
        }
    }
}

impl<T: Poolable, F: FnMut(usize, &mut T)> fmt::Debug for SpawnBatch<'_, T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpawnBatch").field("spawned", &self.next).field("n", &self.n).finish()
    }
}
