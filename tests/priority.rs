//! Precreation workers run below the game thread's priority (nice +10 on Linux), so on a
//! busy machine they yield to the frame.
#![cfg(target_os = "linux")]

use respawn::{PoolConfig, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::threads::wait_for;
use respawn_testkit::world::Shot;

/// `(thread name, nice)` of every thread of this process.
fn threads() -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        let (Ok(comm), Ok(stat)) =
            (std::fs::read_to_string(dir.join("comm")), std::fs::read_to_string(dir.join("stat")))
        else {
            continue; // the thread ended meanwhile
        };
        // Fields after the parenthesised name: state is field 3, nice field 19.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let nice: i64 = rest.split_whitespace().nth(16).unwrap().parse().unwrap();
        out.push((comm.trim().to_string(), nice));
    }
    out
}

#[test]
fn workers_run_at_background_priority() {
    let drops = Drops::default();
    let d = drops.clone();
    let world = World::builder()
        .pool_with::<Shot>(
            PoolConfig { workers: 2, capacity: 8, low_watermark: 2, ..PoolConfig::EXPENSIVE },
            move || Shot::new(&d),
        )
        .build()
        .unwrap();
    wait_for(|| world.pool_stats::<Shot>().unwrap().available() == 8);
    // One worker may have built all 8 before the other first ran: a thread that has not
    // started yet still carries its creator's name. Wait until both have started.
    let pool_threads = || threads().into_iter().filter(|(name, _)| name.starts_with("respawn-pool")).count();
    wait_for(|| pool_threads() == 2);
    // The test thread's own nice value; the test harness names the thread after the test.
    let own = threads().into_iter().find(|(name, _)| name.starts_with("workers_run")).map_or(0, |t| t.1);
    // A worker sets its priority first thing, a moment after it is named.
    wait_for(|| threads().iter().all(|(name, nice)| !name.starts_with("respawn-pool") || *nice != own));
    let all = threads();
    for (name, nice) in all.iter().filter(|(name, _)| name.starts_with("respawn-pool")) {
        assert_eq!(*nice, own + 10, "{name} runs at nice {nice}, the test thread at {own}: {all:?}");
    }
}
