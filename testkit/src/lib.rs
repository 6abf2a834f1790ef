//! Scaffolding shared by respawn's integration tests (those under `*/tests/`), so that each
//! test file says what it checks rather than how it counts.
//!
//! - [`drops`]: a ledger that numbers objects and records each drop, to prove every object
//!   is dropped exactly once;
//! - [`graph`]: the plain walks the model tests check the collector against;
//! - [`proptest`]: the configs and program lengths of the random-program tests;
//! - [`threads`]: a gate that holds worker threads, and a bounded wait for them;
//! - [`rng`], [`fs`]: a deterministic xorshift and a temporary directory;
//! - `gc` (feature `gc`) and `world` (feature `world`): test classes for the collector and
//!   the World.
//!
//! Only integration tests use it: a crate's unit tests would see its types from a second
//! compilation of the crate.

pub mod drops;
pub mod fs;
pub mod graph;
pub mod proptest;
pub mod rng;
pub mod threads;

#[cfg(all(feature = "gc", not(loom)))]
pub mod gc;
#[cfg(all(feature = "world", not(loom)))]
pub mod world;
