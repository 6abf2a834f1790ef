//! Errors of the arena.

use std::fmt;

use respawn_allocator::AllocError;

use crate::{Lifecycle, ObjectFlags};

/// Why an arena call failed. Nothing is changed when one is returned.
#[derive(Debug)]
#[non_exhaustive]
pub enum ArenaError {
    /// The handle's object is gone: its slot was released (the generation moved on) or
    /// never held an object.
    Stale,
    /// The object exists but is flagged out of reach of handles (garbage, in its pool, or
    /// unreachable in a running collection).
    Hidden(ObjectFlags),
    /// The handle names an object of another class.
    WrongClass {
        /// The class the caller's type names.
        expected: &'static str,
        /// The class of the object in the slot.
        found: &'static str,
    },
    /// The type was never registered (and the call does not register it).
    Unregistered(&'static str),
    /// The type is registered already.
    AlreadyRegistered(&'static str),
    /// The object is in the root set; take it out of the root set before removing it.
    Rooted,
    /// `remove_from_root` on an object that was not added to the root set.
    NotRooted,
    /// These flags are the arena's own; set them through the operation that owns them.
    ReservedFlags(ObjectFlags),
    /// The object's lifecycle has no move from `from` to `to` (see
    /// [`Lifecycle::may_become`](crate::Lifecycle::may_become)).
    Transition {
        /// The object's state.
        from: Lifecycle,
        /// The state asked for.
        to: Lifecycle,
    },
    /// The object table has no room left. Its 2³² − 1 slot indices are handed out in
    /// blocks of [`BLOCK_SLOTS`](crate::BLOCK_SLOTS) (1 Mi): each class registered reserves
    /// `max_slabs × cells_per_slab` slots rounded up to whole blocks, and the permanent pool
    /// one block. So an arena holds at most about 1 000 classes of
    /// [`SlabConfig::DEFAULT`](respawn_allocator::SlabConfig::DEFAULT) (4 blocks each),
    /// 4 000 of `SMALL` (1 block) or 63 of `LARGE` (64 blocks); mixing presets shares the
    /// 4 096 blocks. A smaller `max_slabs` makes room for more classes.
    TableFull,
    /// The owner given to `set_outer` is the object itself or one of its sub-objects.
    OuterCycle,
    /// The object is permanent: it lives until its arena drops.
    Permanent,
    /// The object is of the class being ticked: its objects are lent to the tick, not to
    /// the tick's [`View`](crate::View) of the other classes. Names the class.
    Ticking(&'static str),
    /// The allocator refused (reservation exhausted, bad layout, ...).
    Alloc(AllocError),
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = |name: &str| short_type_name(name);
        match self {
            Self::Stale => f.write_str("stale handle: the object it was made for is gone"),
            Self::Hidden(flags) => write!(f, "the object is {flags:?}: out of reach of handles"),
            Self::WrongClass { expected, found } => {
                write!(f, "a handle of class {} names an object of class {}", class(expected), class(found))
            }
            Self::Unregistered(name) => write!(f, "class {} is not registered with this arena", class(name)),
            Self::AlreadyRegistered(name) => write!(f, "class {} is registered already", class(name)),
            Self::Rooted => f.write_str("the object is in the root set; remove it from the root set first"),
            Self::NotRooted => f.write_str("the object is not in the root set"),
            Self::ReservedFlags(flags) => write!(f, "flags {flags:?} are set by the arena alone"),
            Self::Transition { from, to } => write!(f, "an object cannot move from {from:?} to {to:?}"),
            Self::TableFull => f.write_str("the object table is full"),
            Self::OuterCycle => f.write_str("an object cannot be owned by itself or by one of its sub-objects"),
            Self::Permanent => f.write_str("the object is permanent: it lives until its arena drops"),
            Self::Ticking(name) => {
                write!(f, "class {} is being ticked: its objects are the tick's, not the view's", class(name))
            }
            Self::Alloc(e) => write!(f, "allocator: {e}"),
        }
    }
}

impl std::error::Error for ArenaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Alloc(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AllocError> for ArenaError {
    fn from(e: AllocError) -> Self {
        Self::Alloc(e)
    }
}

/// A class's name as every message gives it: its type's name with each path's module
/// prefix dropped (`game::units::Turret` → `Turret`, `a::Wrap<b::Inner>` → `Wrap<Inner>`).
pub fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut path_start = 0;
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("::") {
            out.truncate(path_start);
            rest = after;
            continue;
        }
        out.push(c);
        if !(c.is_alphanumeric() || c == '_') {
            path_start = out.len();
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names_drop_module_paths() {
        assert_eq!(short_type_name("game::units::Turret"), "Turret");
        assert_eq!(short_type_name("Turret"), "Turret");
        assert_eq!(short_type_name("a::Wrap<b::c::Inner, u32>"), "Wrap<Inner, u32>");
        assert_eq!(short_type_name("alloc::vec::Vec<(a::X, [b::Y; 4])>"), "Vec<(X, [Y; 4])>");
    }
}
