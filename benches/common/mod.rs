//! What the bench files share.

/// A tiny xorshift64: reproducible indices without the rand crate, the same sequence for
/// every peer.
pub struct XorShift(u64);

impl XorShift {
    pub fn new() -> Self {
        Self(0x9E37_79B9_7F4A_7C15)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // The modulo bias is below 1e-14 for the sizes used here.
        (self.0 % n as u64) as usize
    }
}
