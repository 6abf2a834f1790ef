//! Errors of the collector.

use std::fmt;

use respawn_arena::ArenaError;

/// Why a collector call failed. Nothing is changed when one is returned.
#[derive(Debug)]
#[non_exhaustive]
pub enum GcError {
    /// The arena refused (stale or hidden handle, wrong class, rooted object, ...).
    Arena(ArenaError),
    /// The class is registered with the collector already.
    AlreadyRegistered(&'static str),
    /// The object is permanent: the collector disregards it.
    Permanent,
    /// The object is in a cluster already.
    InCluster,
    /// The cluster id names no cluster (dissolved already?).
    UnknownCluster,
    /// A setting is out of range; the message says what to change.
    BadSettings(&'static str),
    /// The heap's own threads ([`GcSettings::threads`](crate::GcSettings::threads)) could
    /// not be started.
    Threads,
}

impl fmt::Display for GcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Arena(e) => write!(f, "{e}"),
            Self::AlreadyRegistered(name) => {
                write!(f, "class {} is registered with the collector already", respawn_arena::short_type_name(name))
            }
            Self::Permanent => f.write_str("the object is permanent; the collector disregards it"),
            Self::InCluster => f.write_str("the object is in a cluster already; dissolve that cluster first"),
            Self::UnknownCluster => f.write_str("no such cluster (dissolved already?)"),
            Self::BadSettings(msg) => write!(f, "bad GC settings: {msg}"),
            Self::Threads => f.write_str("the collector's threads could not be started (GcSettings::threads)"),
        }
    }
}

impl std::error::Error for GcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Arena(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ArenaError> for GcError {
    fn from(e: ArenaError) -> Self {
        Self::Arena(e)
    }
}
