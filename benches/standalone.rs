//! respawn's standalone [`Pool`] and [`Shared`] pointer beside their peers, with the 64-byte
//! projectile of `benches/arena.rs`:
//!
//! - `pull_drop`: take an object from a warm pool, write one field, read it, give it back:
//!   respawn's `Pool::pull` (guard dropped), `object-pool` (`Pool::pull` + drop of the
//!   `Reusable`), `sharded-slab` (`Pool::create_with` + `Pool::clear`), `lockfree-object-pool`
//!   (its `Linear`, `SpinLock` and `Mutex` pools' `pull` + drop) and `Box::new` + drop. Single-threaded; no reset
//!   work anywhere (respawn's pool has no `reset`; the lockfree pool's is empty).
//! - `shared`: clone + drop of a strong reference (`Shared`, `LocalShared`, `Arc`, `Rc`), and
//!   making one + dropping it (`Shared::pull` on a warm pool, `Arc::new`).
//!
//! Run with `cargo bench --bench standalone`; see `benches/LOG.md` for the figures.

use std::hint::black_box;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use respawn::pool::{LocalShared, Pool, Shared};

mod common;
use common::Projectile;

/// `sharded_slab::Pool` needs `Default + Clear`.
#[derive(Debug)]
struct SlabItem(Projectile);

impl Default for SlabItem {
    fn default() -> Self {
        Self(Projectile::new(0))
    }
}

impl sharded_slab::Clear for SlabItem {
    fn clear(&mut self) {}
}

/// The same touch for every peer: write the id, read it back.
#[inline(always)]
fn touch(p: &mut Projectile, i: u32) {
    p.id = i;
    black_box(p.id);
}

/// A warm respawn pool: objects built, and this thread's magazines loaded by a first
/// pull/drop round.
fn respawn_pool() -> Arc<Pool<Projectile>> {
    let pool = Pool::builder().capacity(1024).max(4096).workers(0).create(|| Projectile::new(0)).build().unwrap();
    pool.prefill(1024).unwrap();
    let warm: Vec<_> = (0..256).map(|_| pool.pull()).collect();
    drop(warm);
    Arc::new(pool)
}

fn pull_drop(c: &mut Criterion) {
    let mut g = c.benchmark_group("pull_drop");
    g.measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));

    let pool = respawn_pool();
    let mut i = 0u32;
    g.bench_function("respawn_pool", |b| {
        b.iter(|| {
            let mut p = pool.pull();
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });
    g.bench_function("respawn_pool_owned", |b| {
        b.iter(|| {
            let mut p = pool.pull_owned();
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });
    let stats = pool.stats();
    assert_eq!(stats.misses, 0, "the bench pool must stay warm: {stats:?}");

    let op = object_pool::Pool::new(1024, || Projectile::new(0));
    g.bench_function("object_pool", |b| {
        b.iter(|| {
            let mut p = op.pull(|| Projectile::new(0));
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });

    let sp: sharded_slab::Pool<SlabItem> = sharded_slab::Pool::new();
    for key in (0..1024).filter_map(|_| sp.create_with(|_| {})).collect::<Vec<_>>() {
        sp.clear(key);
    }
    g.bench_function("sharded_slab_pool", |b| {
        b.iter(|| {
            let key = sp.create_with(|p| touch(&mut p.0, i)).expect("slab full");
            i = i.wrapping_add(1);
            sp.clear(key);
        })
    });

    let lp = lockfree_object_pool::LinearObjectPool::<Projectile>::new(|| Projectile::new(0), |_| {});
    g.bench_function("lockfree_object_pool_linear", |b| {
        b.iter(|| {
            let mut p = lp.pull();
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });
    let sp_lock = lockfree_object_pool::SpinLockObjectPool::<Projectile>::new(|| Projectile::new(0), |_| {});
    g.bench_function("lockfree_object_pool_spin_lock", |b| {
        b.iter(|| {
            let mut p = sp_lock.pull();
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });
    let mx = lockfree_object_pool::MutexObjectPool::<Projectile>::new(|| Projectile::new(0), |_| {});
    g.bench_function("lockfree_object_pool_mutex", |b| {
        b.iter(|| {
            let mut p = mx.pull();
            touch(&mut p, i);
            i = i.wrapping_add(1);
        })
    });

    g.bench_function("box", |b| {
        b.iter(|| {
            let mut p = Box::new(Projectile::new(0));
            touch(&mut p, i);
            i = i.wrapping_add(1);
            drop(black_box(p));
        })
    });
    g.finish();
}

fn shared(c: &mut Criterion) {
    let mut g = c.benchmark_group("shared");
    g.measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));

    let pool = respawn_pool();
    let s: Shared<Projectile> = Shared::pull(&pool);
    g.bench_function("clone_drop/respawn_shared", |b| b.iter(|| drop(black_box(Shared::clone(&s)))));
    let l: LocalShared<Projectile> = LocalShared::pull(&pool);
    g.bench_function("clone_drop/respawn_local_shared", |b| b.iter(|| drop(black_box(LocalShared::clone(&l)))));
    let a = Arc::new(Projectile::new(0));
    g.bench_function("clone_drop/arc", |b| b.iter(|| drop(black_box(Arc::clone(&a)))));
    let r = Rc::new(Projectile::new(0));
    g.bench_function("clone_drop/rc", |b| b.iter(|| drop(black_box(Rc::clone(&r)))));

    g.bench_function("make_drop/respawn_shared", |b| b.iter(|| drop(black_box(Shared::<Projectile>::pull(&pool)))));
    g.bench_function("make_drop/arc", |b| b.iter(|| drop(black_box(Arc::new(Projectile::new(0))))));
    drop((s, l));
    g.finish();
}

criterion_group!(benches, pull_drop, shared);
criterion_main!(benches);
