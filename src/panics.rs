//! The spawn paths' panic, out of line: shared by the World and its composites.

use respawn_pool::PoolError;

/// `World::spawn`'s panic, out of line so that the spawn itself stays small enough to
/// inline.
#[cold]
#[inline(never)]
pub(crate) fn spawn_failed(class: &str, e: PoolError) -> ! {
    panic!("World::spawn::<{class}>: {e}")
}
