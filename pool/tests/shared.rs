//! `Shared<T>` / `WeakShared<T>` with the pool as deleter: counts, upgrade, the object going
//! back at the last strong reference, the cell kept from reuse until the last weak one,
//! the cyclic constructor, pointers that outlive the pool's handle, the single-thread
//! flavour, and a random-program test of the counts against a model.

use std::collections::HashMap;
use std::sync::Arc;

use proptest::prelude::*;
use respawn_pool::{LocalShared, Policy, Pool, Shared, WeakShared};
use respawn_testkit::drops::Drops;

#[derive(Debug)]
struct Obj {
    id: usize,
    value: u64,
    /// A weak pointer to itself (`pull_cyclic`).
    me: Option<WeakShared<Obj>>,
    drops: Drops,
}

impl Obj {
    /// A new object, numbered by `drops`.
    fn new(drops: &Drops) -> Self {
        Obj { id: drops.make(), value: 0, me: None, drops: drops.clone() }
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

fn pool(drops: &Drops, workers: usize, policy: Policy) -> Arc<Pool<Obj>> {
    let d = drops.clone();
    Arc::new(
        Pool::builder()
            .capacity(0)
            .max(64)
            .workers(workers)
            .policy(policy)
            .create(move || Obj::new(&d))
            .reset(|o: &mut Obj| o.value = 0)
            .build()
            .unwrap(),
    )
}

fn addr<T>(s: &Shared<T>) -> *const T
where
    T: Send + 'static,
{
    &**s
}

#[test]
fn counts_clone_downgrade_upgrade() {
    let drops = Drops::default();
    let p = pool(&drops, 0, Policy::Reuse);
    let a: Shared<Obj> = Shared::pull(&p);
    assert!(Shared::is_unique(&a));
    let b = a.clone();
    assert!(Shared::ptr_eq(&a, &b));
    assert_eq!((Shared::strong_count(&a), Shared::weak_count(&a)), (2, 0));
    assert!(!Shared::is_unique(&a));
    let w = Shared::downgrade(&a);
    assert_eq!((w.strong_count(), w.weak_count()), (2, 1));
    let c = w.upgrade().expect("alive");
    assert_eq!(Shared::strong_count(&c), 3);
    drop((a, b, c));
    assert_eq!(w.strong_count(), 0);
    assert!(w.upgrade().is_none(), "no upgrade once the last strong reference is gone");
    drop(w);
    let s = p.stats();
    assert_eq!((s.spawns, s.released, s.in_use), (1, 1, 0));
    drop(p);
    drops.assert_each_once();
}

#[test]
fn get_mut_only_when_alone() {
    let drops = Drops::default();
    let p = pool(&drops, 0, Policy::Reuse);
    let mut a: Shared<Obj> = Shared::pull(&p);
    Shared::get_mut(&mut a).unwrap().value = 3;
    let w = Shared::downgrade(&a);
    assert!(Shared::get_mut(&mut a).is_none(), "a weak reference exists");
    drop(w);
    let b = a.clone();
    assert!(Shared::get_mut(&mut a).is_none(), "another strong reference exists");
    drop(b);
    assert_eq!(a.value, 3);
}

#[test]
fn without_weak_references_the_object_goes_back_whole() {
    let drops = Drops::default();
    let p = pool(&drops, 0, Policy::Reuse);
    let a: Shared<Obj> = Shared::pull(&p);
    let (id, at) = (a.id, addr(&a));
    drop(a);
    assert!(drops.ids().is_empty(), "Reuse keeps the object");
    let b: Shared<Obj> = Shared::pull(&p);
    assert_eq!((b.id, addr(&b)), (id, at), "the same object, from the same cell");
    assert_eq!(p.stats().recycled_reuse, 1);
}

#[test]
fn a_weak_reference_keeps_the_cell_from_reuse_but_not_the_object_alive() {
    for policy in [Policy::Reuse, Policy::Purge] {
        let drops = Drops::default();
        let p = pool(&drops, 0, policy);
        let a: Shared<Obj> = Shared::pull(&p);
        let (id, at) = (a.id, addr(&a));
        let w = Shared::downgrade(&a);
        drop(a);
        assert_eq!(drops.ids(), vec![id], "{policy:?}: dropped at the last strong reference");
        assert!(w.upgrade().is_none());
        // Every cell the pool hands out now is another one.
        let others: Vec<Shared<Obj>> = (0..8).map(|_| Shared::pull(&p)).collect();
        assert!(others.iter().all(|o| addr(o) != at), "{policy:?}: the cell was reused under a weak reference");
        assert_eq!(p.owned(), 9);
        drop(w);
        assert_eq!(p.owned(), 8, "{policy:?}: the empty cell went back with the last weak (no workers: freed)");
        drop(others);
        drop(p);
        drops.assert_each_once();
    }
}

#[test]
fn with_workers_the_cell_of_a_watched_object_is_rebuilt() {
    let drops = Drops::default();
    let p = pool(&drops, 1, Policy::Reuse);
    let a: Shared<Obj> = Shared::pull(&p);
    let w = Shared::downgrade(&a);
    drop(a);
    drop(w);
    let start = std::time::Instant::now();
    while p.stats().precreated < 1 {
        assert!(start.elapsed().as_secs() < 30);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(p.stats().recycled_purge, 1, "the empty cell went to the workers");
    drop(p);
    drops.assert_each_once();
}

#[test]
fn the_cyclic_constructor_gives_the_object_a_weak_pointer_to_itself() {
    for policy in [Policy::Reuse, Policy::Purge] {
        let drops = Drops::default();
        let p = pool(&drops, 0, policy);
        let a = Shared::pull_cyclic(&p, |o: &mut Obj, me: &WeakShared<Obj>| {
            assert!(me.upgrade().is_none(), "no upgrade before the object is published");
            o.me = Some(me.clone());
        });
        let me = a.me.as_ref().unwrap().upgrade().expect("the object reaches itself");
        assert!(Shared::ptr_eq(&a, &me));
        assert_eq!((Shared::strong_count(&a), Shared::weak_count(&a)), (2, 1));
        let id = a.id;
        drop((a, me));
        assert_eq!(drops.ids(), vec![id], "{policy:?}: the object (and its own weak) dropped");
        assert_eq!(p.owned(), 0, "{policy:?}: its own weak was the last: the cell went back");
        drop(p);
        drops.assert_each_once();
    }
}

#[test]
fn a_panic_in_the_cyclic_constructor_drops_the_object_and_frees_the_cell() {
    let drops = Drops::default();
    let p = pool(&drops, 0, Policy::Reuse);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Shared::pull_cyclic(&p, |o: &mut Obj, me: &WeakShared<Obj>| {
            o.me = Some(me.clone());
            panic!("init fails");
        })
    }));
    assert!(r.is_err());
    assert_eq!(drops.ids().len(), 1);
    assert_eq!(p.owned(), 0);
    assert_eq!(p.stats().in_use, 0);
    drop(p);
    drops.assert_each_once();
}

#[test]
fn pointers_outlive_the_pool_handle() {
    let drops = Drops::default();
    let p = pool(&drops, 1, Policy::Reuse);
    let a: Shared<Obj> = Shared::pull(&p);
    let w = Shared::downgrade(&a);
    drop(p); // the object keeps its pool
    let t = std::thread::spawn(move || {
        assert_eq!(a.value, 0);
        drop(a);
    });
    t.join().unwrap();
    assert!(w.upgrade().is_none());
    drop(w); // the last weak: the cell goes back and the pool ends here
    drops.assert_each_once();
}

#[test]
fn local_shared_counts_without_atomics() {
    let drops = Drops::default();
    let p = pool(&drops, 0, Policy::Reuse);
    let a: LocalShared<Obj> = LocalShared::pull(&p);
    let b = a.clone();
    let w = LocalShared::downgrade(&a);
    assert_eq!((LocalShared::strong_count(&a), w.weak_count()), (2, 1));
    drop((a, b));
    assert!(w.upgrade().is_none());
    drop(w);
    drop(p);
    drops.assert_each_once();
}

#[test]
fn thread_safe_pointers_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Shared<Vec<u8>>>();
    send_sync::<WeakShared<Vec<u8>>>();
}

#[test]
fn many_threads_share_and_drop() {
    let drops = Drops::default();
    let p = pool(&drops, 1, Policy::Reuse);
    let n = if cfg!(miri) { 20 } else { 2_000 };
    for _ in 0..if cfg!(miri) { 1 } else { 5 } {
        let a: Shared<Obj> = Shared::pull(&p);
        let w = Shared::downgrade(&a);
        let threads: Vec<_> = (0..3)
            .map(|i| {
                let (a, w) = (a.clone(), w.clone());
                std::thread::spawn(move || {
                    for _ in 0..n {
                        let b = a.clone();
                        if let Some(c) = w.upgrade() {
                            assert!(Shared::ptr_eq(&b, &c));
                        }
                        let _w2 = Shared::downgrade(&b);
                    }
                    if i == 0 {
                        drop(a);
                        drop(w);
                    } else {
                        drop(w);
                        drop(a);
                    }
                })
            })
            .collect();
        drop((a, w));
        for t in threads {
            t.join().unwrap();
        }
    }
    let s = p.stats();
    assert_eq!(s.in_use, 0);
    drop(p);
    drops.assert_each_once();
}

/// One step of a random program over a few shared objects.
#[derive(Clone, Debug)]
enum Op {
    Pull,
    Clone(usize),
    DropStrong(usize),
    Downgrade(usize),
    CloneWeak(usize),
    DropWeak(usize),
    Upgrade(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Pull),
        3 => any::<usize>().prop_map(Op::Clone),
        4 => any::<usize>().prop_map(Op::DropStrong),
        2 => any::<usize>().prop_map(Op::Downgrade),
        1 => any::<usize>().prop_map(Op::CloneWeak),
        2 => any::<usize>().prop_map(Op::DropWeak),
        2 => any::<usize>().prop_map(Op::Upgrade),
    ]
}

/// The model: per object, its strong and weak references, whether it is alive (dropped or
/// handed back), and whether its cell is still held.
#[derive(Default, Debug)]
struct Model {
    strong: HashMap<usize, usize>,
    weak: HashMap<usize, usize>,
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    /// Counts, upgrades and the pool's in-use figure follow a plain model of strong and
    /// weak references; a cell is never handed out while any reference to its last object
    /// remains; every object is dropped exactly once.
    #[test]
    fn counts_follow_the_model(ops in prop::collection::vec(op(), 1..120), purge in any::<bool>()) {
        let drops = Drops::default();
        let p = pool(&drops, 0, if purge { Policy::Purge } else { Policy::Reuse });
        let mut strong: Vec<Shared<Obj>> = Vec::new();
        let mut weak: Vec<WeakShared<Obj>> = Vec::new();
        let mut model = Model::default();
        // Object identity by the pull that made it: `value` carries the pull's number.
        let mut pulls = 0u64;
        let key = |s: &Shared<Obj>| s.value as usize;
        let mut weak_keys: Vec<usize> = Vec::new();
        for op in ops {
            match op {
                Op::Pull => {
                    pulls += 1;
                    let mut s: Shared<Obj> = Shared::pull(&p);
                    // A new object (or a reused cell) is named by no reference in the model.
                    let at: *const Obj = &*s;
                    prop_assert!(strong.iter().all(|o| !std::ptr::eq(&**o, at)), "cell of a live object handed out");
                    for (w, k) in weak.iter().zip(&weak_keys) {
                        prop_assert!(w.upgrade().is_none_or(|u| key(&u) == *k), "a weak reached a new object");
                    }
                    Shared::get_mut(&mut s).expect("a new object is unique").value = pulls;
                    model.strong.insert(pulls as usize, 1);
                    model.weak.insert(pulls as usize, 0);
                    strong.push(s);
                }
                Op::Clone(i) if !strong.is_empty() => {
                    let s = strong[i % strong.len()].clone();
                    *model.strong.get_mut(&key(&s)).unwrap() += 1;
                    strong.push(s);
                }
                Op::DropStrong(i) if !strong.is_empty() => {
                    let s = strong.swap_remove(i % strong.len());
                    *model.strong.get_mut(&key(&s)).unwrap() -= 1;
                }
                Op::Downgrade(i) if !strong.is_empty() => {
                    let s = &strong[i % strong.len()];
                    weak.push(Shared::downgrade(s));
                    weak_keys.push(key(s));
                    *model.weak.get_mut(&key(s)).unwrap() += 1;
                }
                Op::CloneWeak(i) if !weak.is_empty() => {
                    let j = i % weak.len();
                    weak.push(weak[j].clone());
                    weak_keys.push(weak_keys[j]);
                    *model.weak.get_mut(&weak_keys[j]).unwrap() += 1;
                }
                Op::DropWeak(i) if !weak.is_empty() => {
                    let j = i % weak.len();
                    weak.swap_remove(j);
                    let k = weak_keys.swap_remove(j);
                    *model.weak.get_mut(&k).unwrap() -= 1;
                }
                Op::Upgrade(i) if !weak.is_empty() => {
                    let j = i % weak.len();
                    let k = weak_keys[j];
                    let up = weak[j].upgrade();
                    prop_assert_eq!(up.is_some(), model.strong[&k] > 0, "upgrade of {}", k);
                    if let Some(s) = up {
                        prop_assert_eq!(key(&s), k);
                        *model.strong.get_mut(&k).unwrap() += 1;
                        strong.push(s);
                    }
                }
                _ => {}
            }
            for s in &strong {
                let k = key(s);
                prop_assert_eq!(Shared::strong_count(s), model.strong[&k]);
                prop_assert_eq!(Shared::weak_count(s), model.weak[&k]);
                prop_assert_eq!(Shared::is_unique(s), model.strong[&k] == 1);
            }
            for (w, k) in weak.iter().zip(&weak_keys) {
                prop_assert_eq!(w.strong_count(), model.strong[k]);
            }
            let alive = model.strong.values().filter(|&&n| n > 0).count();
            prop_assert_eq!(p.stats().in_use, alive, "in_use is the objects with a strong reference");
        }
        drop(strong);
        drop(weak);
        prop_assert_eq!(p.stats().in_use, 0);
        drop(p);
        drops.assert_each_once();
    }
}
