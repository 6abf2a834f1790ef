//! One class's end listeners, their class erased.

use std::fmt;
use std::ptr::NonNull;

use crate::RawHandle;

/// An end listener with its class's type erased: called with the object's handle and its
/// cell, which holds a live object of the listener's class.
pub(crate) type ErasedListener = Box<dyn FnMut(RawHandle, NonNull<u8>) + Send>;

/// One class's end listeners, in the order they were added.
#[derive(Default)]
pub(crate) struct EndListeners {
    pub(crate) list: Vec<(u32, ErasedListener)>,
    /// The number the next listener of the class takes.
    pub(crate) next: u32,
}

impl EndListeners {
    /// Whether any listener waits: the release's one test.
    #[inline(always)]
    pub(crate) fn listening(&self) -> bool {
        !self.list.is_empty()
    }
}

impl fmt::Debug for EndListeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndListeners").field("listeners", &self.list.len()).finish()
    }
}
