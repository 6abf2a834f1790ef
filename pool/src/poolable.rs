//! The hooks a pooled class implements.

use respawn_gc::Object;

use crate::config::short_type_name;

/// A class whose objects live in a pool: built ahead of time by workers, handed out by
/// `spawn`, taken back by `destroy` according to the pool's [`Policy`](crate::Policy).
///
/// The hooks are Unity's `ObjectPool<T>` callbacks and UE's spawn/destroy events; the
/// collector's own hooks ([`Object::begin_destroy`] and friends) still run whenever an
/// object is really destroyed (`Default` and `Purge`, and unreachable objects).
///
/// | hook | runs | on |
/// |---|---|---|
/// | [`create`](Self::create) | to build an object: on a worker, or inline on a miss | any thread |
/// | [`on_spawn`](Self::on_spawn) | when `spawn` hands the object out, after `spawn_with`'s initialiser | game thread |
/// | [`on_release`](Self::on_release) | when `destroy` takes it back, whatever the policy | game thread |
/// | [`reset`](Self::reset) | `Reuse` only: after `on_release`, before it waits in the pool | game thread |
///
/// Needs the `world` feature (on by default).
///
/// ```
/// use respawn_gc::{Object, Trace};
/// use respawn_pool::Poolable;
///
/// #[derive(Trace, Object)]
/// struct Projectile { pos: [f32; 3], vel: [f32; 3], life: f32 }
///
/// impl Poolable for Projectile {
///     fn create() -> Self {
///         Projectile { pos: [0.0; 3], vel: [0.0; 3], life: 0.0 }
///     }
///     fn reset(&mut self) {
///         *self = Self::create();
///     }
/// }
/// assert_eq!(Projectile::class_name(), "Projectile");
/// ```
pub trait Poolable: Object + Sized {
    /// Builds a fresh object. Workers call it off the game thread, so it must not need the
    /// world; it may be slow (that is what precreation hides).
    fn create() -> Self;

    /// The object is being handed out by `spawn`.
    fn on_spawn(&mut self) {}

    /// The object is being taken back by `destroy`.
    fn on_release(&mut self) {}

    /// `Reuse`: makes a released object ready for its next spawn (Unity's release action,
    /// UE's `ResetForPool`). The default does nothing.
    fn reset(&mut self) {}

    /// The name configuration files use for the class: the type's name without its module
    /// path (`game::weapons::Projectile` → `Projectile`).
    fn class_name() -> &'static str {
        short_type_name(std::any::type_name::<Self>())
    }
}
