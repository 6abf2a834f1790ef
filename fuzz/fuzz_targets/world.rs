//! Fuzzes the `World` against the model in `tests/model/mod.rs` (the one `tests/world_model.rs`
//! runs under proptest): each input decodes to a world setup (generation ceiling, pool
//! workers, collection period, which classes the world owns and which are collected) and up to `MAX_OPS` operations — spawn (pooled, `try_spawn`,
//! plain insert, sub-object), destroy (live, released, forged handles), get, links, owners,
//! `add_to_root` / `remove_from_root`, RAII root guards, tick, full and incremental
//! collections, purge steps, frames — over the `Reuse`, `Purge` and `Default` pool policies
//! and a plain class. It panics when a handle value is issued twice, a stale or forged
//! handle resolves, a live object reads wrong, `iter` / `len` / a pool's `in_use` disagree
//! with the model, the survivors of a collection are not exactly the model's reachable set,
//! a purge step's counts are off, an object is not dropped exactly once, or a thread of the
//! world outlives it.
//!
//! Run it from `fuzz/` (or the repository root) with one job — each world's pool workers
//! are threads already; the corpus is `corpus/world/`, whose `seed-*` files are kept:
//!
//! ```text
//! export CARGO_TARGET_DIR=/work/fuzz-target   # optional; the default is fuzz/target
//! cargo +nightly fuzz run world -- -max_total_time=660 -max_len=2048
//! cargo +nightly fuzz fmt world <input>       # an input as its `Program`
//! cargo +nightly fuzz tmin world <crash>      # minimize a crash
//! cargo +nightly fuzz run world artifacts/world/retired-slot-in-use-leak
//! ```
//!
//! The last line replays a reproducer of a bug the fuzzer found (fixed; see "Bugs this model
//! found" in `tests/model/mod.rs`): it passes now.

#![no_main]

#[path = "../../tests/model/mod.rs"]
mod model;

use std::fmt;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use model::{Class, Forged, How, Op, Program, Setup, MAX_OPS};

/// A [`Program`] decoded from the fuzzer's bytes: one byte picks each op (weighted like the
/// proptest's strategy) and small fields follow, so that byte mutations make small edits.
struct Input(Program);

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let setup = setup(u)?;
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            ops.push(op(u)?);
        }
        Ok(Input(Program { setup, ops }))
    }
}

fn setup(u: &mut Unstructured<'_>) -> Result<Setup> {
    let max_generation = [u32::MAX, 1, 2, 3][usize::from(u.arbitrary::<u8>()? % 4)];
    let workers: u8 = u.arbitrary()?;
    let every: u8 = u.arbitrary()?;
    Ok(Setup {
        max_generation,
        workers: [workers & 1, (workers >> 1) & 1],
        collect_every_ms: (every != 0).then(|| u16::from(every)),
        // The upper bits: which classes the world owns (kept until destroyed); a clear bit
        // declares the class collected, so inputs made before owned classes replay as then.
        collected: [0, 1, 2, 3].map(|bit| workers & (4 << bit) == 0),
    })
}

fn index(u: &mut Unstructured<'_>) -> Result<usize> {
    Ok(usize::from(u.arbitrary::<u8>()?))
}

fn class(u: &mut Unstructured<'_>) -> Result<Class> {
    Ok(Class::ALL[usize::from(u.arbitrary::<u8>()?) % Class::ALL.len()])
}

fn op(u: &mut Unstructured<'_>) -> Result<Op> {
    // Weights: spawn 6, destroy 4, link 2, everything else 1 (27 in all).
    Ok(match u.arbitrary::<u8>()? % 27 {
        0..=5 => {
            let class = class(u)?;
            let how = [How::Spawn, How::Spawn, How::TrySpawn, How::Insert][usize::from(u.arbitrary::<u8>()? % 4)];
            Op::Spawn { class, how, value: u.arbitrary()?, rooted: u.arbitrary()? }
        }
        6 => Op::SpawnSub { class: class(u)?, outer: index(u)? },
        7..=10 => Op::Destroy(index(u)?),
        11 => Op::DestroyAgain(index(u)?),
        12 => Op::Get { released: u.arbitrary()?, index: index(u)? },
        13 => {
            let (base, index, generation) = (index(u)?, u.arbitrary()?, u.arbitrary()?);
            let then = match u.arbitrary::<u8>()? % 3 {
                0 => Forged::Get,
                1 => Forged::Link(usize::from(u.arbitrary::<u8>()?)),
                _ => Forged::Destroy,
            };
            Op::Forge { base, index, generation, then }
        }
        14 | 15 => Op::Link(index(u)?, index(u)?),
        16 => Op::LinkReleased(index(u)?, index(u)?),
        17 => {
            let child = index(u)?;
            let outer: u8 = u.arbitrary()?;
            // Cutting loose is the rarer edit: one value in eight.
            Op::SetOuter { child, outer: (!outer.is_multiple_of(8)).then_some(usize::from(outer / 8)) }
        }
        18 => Op::Root(index(u)?),
        19 => Op::Unroot(index(u)?),
        20 => Op::Guard(index(u)?),
        21 => Op::Unguard(index(u)?),
        22 => Op::Tick(class(u)?),
        23 => Op::Collect,
        24 => Op::CollectIncremental,
        25 => Op::Purge(u.arbitrary::<u8>()? % 8),
        _ => Op::EndFrame(u.arbitrary()?),
    })
}

/// Threads of this process (Linux; 0 elsewhere).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

fuzz_target!(|input: Input| {
    let before = threads();
    model::run(&input.0);
    // Dropping the world must join its threads (pool workers, the slab preparer). A joined
    // thread can linger in /proc for a moment after `join` returns: allow it a second.
    let start = std::time::Instant::now();
    while threads() > before {
        assert!(start.elapsed().as_secs() < 1, "{} threads outlived their world", threads() - before);
        std::thread::yield_now();
    }
});
