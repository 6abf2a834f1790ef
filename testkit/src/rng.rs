//! A deterministic random number generator.

/// A small xorshift: the same seed draws the same sequence; tests need variety, not
/// statistics. The seed must not be 0.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}
