//! The configs and program lengths of the random-program tests.

use ::proptest::collection::{vec, VecStrategy};
use ::proptest::strategy::Strategy;
use ::proptest::test_runner::Config;

/// Runs `cases` cases and saves no failure file (a failing case prints its program).
pub fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// [`config`] with `cases` cases, or `miri` cases under Miri.
pub fn scaled(cases: u32, miri: u32) -> Config {
    config(if cfg!(miri) { miri } else { cases })
}

/// Programs of 1 to 299 operations drawn from `op` (1 to 39 under Miri).
pub fn program<S: Strategy>(op: S) -> VecStrategy<S> {
    vec(op, 1..if cfg!(miri) { 40 } else { 300 })
}
