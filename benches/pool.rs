//! Pool benches (being written).
fn main() {}
