//! The World against a simple model (`tests/model/mod.rs`, shared with the fuzz target
//! `fuzz/fuzz_targets/world.rs`): random programs of spawns (pooled, `try_spawn`, plain
//! inserts, sub-objects), destroys (live, released, forged), lookups, links, owners, roots
//! and guards, ticks, full and incremental collections, purge steps and frames, over the
//! `Reuse`, `Purge` and `Default` policies and a plain class, each owned by the world or
//! declared collected. See the model's docs for what is checked after each step.

mod model;

use model::{Class, Forged, How, Op, Program, Setup, MAX_OPS};
use proptest::prelude::*;

fn class() -> impl Strategy<Value = Class> {
    prop::sample::select(Class::ALL.to_vec())
}

fn setup() -> impl Strategy<Value = Setup> {
    (prop::sample::select(vec![1, 2, 3, u32::MAX]), [0..2u8, 0..2u8], prop::option::of(1..200u16), any::<[bool; 4]>())
        .prop_map(|(max_generation, workers, collect_every_ms, collected)| Setup {
            max_generation,
            workers,
            collect_every_ms,
            collected,
        })
}

fn op() -> impl Strategy<Value = Op> {
    let how = prop::sample::select(vec![How::Spawn, How::TrySpawn, How::Insert]);
    let forged = prop_oneof![Just(Forged::Get), any::<usize>().prop_map(Forged::Link), Just(Forged::Destroy)];
    prop_oneof![
        6 => (class(), how, any::<u32>(), any::<bool>())
            .prop_map(|(class, how, value, rooted)| Op::Spawn { class, how, value, rooted }),
        1 => (class(), any::<usize>()).prop_map(|(class, outer)| Op::SpawnSub { class, outer }),
        4 => any::<usize>().prop_map(Op::Destroy),
        1 => any::<usize>().prop_map(Op::DestroyAgain),
        1 => (any::<bool>(), any::<usize>()).prop_map(|(released, index)| Op::Get { released, index }),
        1 => (any::<usize>(), -2..=2i8, -2..=2i8, forged)
            .prop_map(|(base, index, generation, then)| Op::Forge { base, index, generation, then }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Link(a, b)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::LinkReleased(a, b)),
        1 => (any::<usize>(), any::<Option<usize>>()).prop_map(|(child, outer)| Op::SetOuter { child, outer }),
        1 => any::<usize>().prop_map(Op::Root),
        1 => any::<usize>().prop_map(Op::Unroot),
        1 => any::<usize>().prop_map(Op::Guard),
        1 => any::<usize>().prop_map(Op::Unguard),
        1 => class().prop_map(Op::Tick),
        1 => Just(Op::Collect),
        1 => Just(Op::CollectIncremental),
        1 => prop_oneof![3 => Just(0u8), 1 => 1..5u8].prop_map(Op::Purge),
        1 => any::<u8>().prop_map(Op::EndFrame),
    ]
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::config(128))]

    #[test]
    fn world_matches_the_model(setup in setup(), ops in prop::collection::vec(op(), 1..MAX_OPS)) {
        model::run(&Program { setup, ops });
    }
}
