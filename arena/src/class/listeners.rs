//! One class's lifecycle listeners, their class erased: told of each object that begins
//! (spawn listeners) and of each that ends (end listeners).

use std::fmt;
use std::ptr::NonNull;

use crate::RawHandle;

/// A listener with its class's type erased: called with the object's handle and its cell,
/// which holds a live object of the listener's class.
pub(crate) type ErasedListener = Box<dyn FnMut(RawHandle, NonNull<u8>) + Send>;

/// Which of a class's lists a listener is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Heard {
    /// Told of each object that begins, once it is complete.
    Spawn,
    /// Told of each object that ends, while it is still in its cell.
    End,
}

/// One class's listeners, each list in the order its listeners were added. Both lists
/// number their listeners from one counter, so a number names one listener of the class.
#[derive(Default)]
pub(crate) struct Listeners {
    spawns: Vec<(u32, ErasedListener)>,
    ends: Vec<(u32, ErasedListener)>,
    /// The number the next listener of the class takes.
    next: u32,
}

impl Listeners {
    /// Whether any end listener waits: the release's one test.
    #[inline(always)]
    pub(crate) fn listening_to_ends(&self) -> bool {
        !self.ends.is_empty()
    }

    /// Whether any spawn listener waits.
    #[inline(always)]
    pub(crate) fn listening_to_spawns(&self) -> bool {
        !self.spawns.is_empty()
    }

    /// How many listeners the list `heard` holds.
    pub(crate) fn len(&self, heard: Heard) -> usize {
        match heard {
            Heard::Spawn => self.spawns.len(),
            Heard::End => self.ends.len(),
        }
    }

    fn list_mut(&mut self, heard: Heard) -> &mut Vec<(u32, ErasedListener)> {
        match heard {
            Heard::Spawn => &mut self.spawns,
            Heard::End => &mut self.ends,
        }
    }

    /// Adds `listener` to the list `heard`; returns its number in the class.
    pub(crate) fn add(&mut self, heard: Heard, listener: ErasedListener) -> u32 {
        let n = self.next;
        self.next = n.checked_add(1).expect("at most u32::MAX listeners per class");
        self.list_mut(heard).push((n, listener));
        n
    }

    /// Removes listener `n`, from whichever list holds it; `false` if none does.
    pub(crate) fn remove(&mut self, n: u32) -> bool {
        let before = self.spawns.len() + self.ends.len();
        self.spawns.retain(|(k, _)| *k != n);
        self.ends.retain(|(k, _)| *k != n);
        self.spawns.len() + self.ends.len() < before
    }

    /// Calls each listener of the list `heard` with the object's handle and cell.
    pub(crate) fn tell(&mut self, heard: Heard, raw: RawHandle, cell: NonNull<u8>) {
        for (_, listener) in self.list_mut(heard) {
            listener(raw, cell);
        }
    }
}

impl fmt::Debug for Listeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listeners").field("spawns", &self.spawns.len()).field("ends", &self.ends.len()).finish()
    }
}
