//! One class's dormancy bitmap: which of its objects the tick skips.

use std::fmt;

/// One class's dormancy bitmap and the count of its set bits.
#[derive(Default)]
pub(crate) struct Dormancy {
    /// One bit per cell number, set while the cell's object is dormant; as long as the live
    /// bitmap was when the class's first object went dormant, and grown as later ones do
    /// (a missing word reads as all awake). Empty until then.
    words: Vec<u64>,
    /// Set bits in `words`: dormant objects that have not ended (hidden ones included).
    count: usize,
}

impl Dormancy {
    /// Whether any object of the class is dormant: the release's one test.
    #[inline(always)]
    pub(crate) fn any(&self) -> bool {
        self.count != 0
    }

    /// Dormant objects of the class.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Bytes of the bitmap, at its capacity.
    pub(crate) fn bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// The words that lie beside live words `first..first + len` (fewer, or none, where the
    /// bitmap is shorter: those cells are awake).
    #[inline]
    pub(crate) fn words(&self, first: usize, len: usize) -> &[u64] {
        let start = first.min(self.words.len());
        let end = first.saturating_add(len).min(self.words.len());
        &self.words[start..end]
    }

    /// Whether cell `n`'s object is dormant.
    #[inline]
    pub(crate) fn contains(&self, n: u32) -> bool {
        self.words.get((n >> 6) as usize).is_some_and(|w| w & (1u64 << (n & 63)) != 0)
    }

    /// Makes cell `n`'s object dormant or awake; `live_words` is the length of the class's
    /// live bitmap (which covers `n`).
    pub(crate) fn set(&mut self, n: u32, dormant: bool, live_words: usize) {
        let (word, bit) = ((n >> 6) as usize, 1u64 << (n & 63));
        if self.contains(n) == dormant {
            return;
        }
        if dormant {
            if self.words.len() <= word {
                self.words.resize(live_words, 0);
            }
            self.words[word] |= bit;
            self.count += 1;
        } else {
            self.words[word] &= !bit;
            self.count -= 1;
        }
    }

    /// Cell `n`'s object ended: it is awake (the cell's next object starts so). Called by
    /// the release only when [`any`](Self::any) says the class has a dormant object.
    #[cold]
    #[inline(never)]
    pub(crate) fn ended(&mut self, n: u32) {
        if self.contains(n) {
            self.words[(n >> 6) as usize] &= !(1u64 << (n & 63));
            self.count -= 1;
        }
    }
}

impl fmt::Debug for Dormancy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dormancy").field("count", &self.count).finish()
    }
}
