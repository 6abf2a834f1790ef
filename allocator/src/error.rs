//! Errors of the allocator: every misuse ends here, never in undefined behaviour.

use std::fmt;

use crate::ClassId;

/// Why an allocator call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum AllocError {
    /// A class was registered with a zero-sized layout; cells must hold at least one byte.
    ZeroSized,
    /// A class's alignment exceeds what a slab can guarantee (the page size).
    OverAligned {
        /// The alignment asked for.
        align: usize,
        /// The largest alignment supported.
        max: usize,
    },
    /// The slab configuration is invalid; the message says what to change.
    BadConfig(&'static str),
    /// The allocator already holds its maximum number of classes.
    TooManyClasses {
        /// The limit.
        max: usize,
    },
    /// No class with this id was registered with this allocator.
    UnknownClass(ClassId),
    /// The class's reservation has no slab left to carve.
    Exhausted {
        /// The class whose reservation is used up.
        class: ClassId,
        /// Slabs in the reservation (raise `SlabConfig::max_slabs`).
        max_slabs: u32,
    },
    /// The permanent pool has no room left.
    Full {
        /// The pool's capacity in bytes (give it a larger one).
        capacity: usize,
    },
    /// The pointer lies in another class's region.
    WrongClass {
        /// The class the caller named.
        expected: ClassId,
        /// The class whose region holds the pointer.
        found: ClassId,
    },
    /// The pointer lies in no region of this allocator.
    ForeignPointer,
    /// The pointer is inside the class's region but not at the start of a cell.
    Misaligned,
    /// The cell is not allocated: it was freed already, or never handed out as a cell
    /// (it belongs to a slab granted whole, or one never carved).
    DoubleFree,
    /// The operating system refused the reservation.
    Os(std::io::Error),
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroSized => f.write_str("zero-sized layouts have no cells; give the class at least one byte"),
            Self::OverAligned { align, max } => {
                write!(f, "alignment {align} exceeds the largest supported alignment {max}")
            }
            Self::BadConfig(msg) => write!(f, "invalid slab configuration: {msg}"),
            Self::TooManyClasses { max } => write!(f, "the allocator already holds its maximum of {max} classes"),
            Self::UnknownClass(id) => write!(f, "class {id:?} is not registered with this allocator"),
            Self::Exhausted { class, max_slabs } => {
                write!(f, "class {class:?} used all {max_slabs} slabs of its reservation; raise SlabConfig::max_slabs")
            }
            Self::Full { capacity } => {
                write!(f, "the permanent pool's {capacity} bytes are used up; give it a larger capacity")
            }
            Self::WrongClass { expected, found } => {
                write!(f, "pointer belongs to class {found:?}, not to class {expected:?}")
            }
            Self::ForeignPointer => f.write_str("pointer was not allocated by this allocator"),
            Self::Misaligned => f.write_str("pointer is inside the class's region but not at the start of a cell"),
            Self::DoubleFree => f.write_str("cell is not allocated (double free, or never handed out as a cell)"),
            Self::Os(e) => write!(f, "the OS refused the reservation: {e}"),
        }
    }
}

impl std::error::Error for AllocError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Os(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for AllocError {
    fn from(e: std::io::Error) -> Self {
        Self::Os(e)
    }
}
