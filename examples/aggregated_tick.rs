//! The aggregated tick against scattered boxes: 200 000 projectiles of 64 bytes (one cache
//! line each), once in a `World`, where the class's objects sit contiguously in its slabs and
//! `tick`/`par_tick` visit them in memory order, and once as a `Vec<Box<Projectile>>` whose
//! boxes are scattered the way a long-running game's heap scatters them: allocated among
//! other allocations of varying size, churned, and visited in shuffled order.
//!
//! ```sh
//! cargo run --release --example aggregated_tick
//! ```
//!
//! Both run the same update (`pos += vel * dt; life -= dt`) the same number of times and end
//! in the same state, which the example checks object by object. It prints the mean time per
//! object and pass of each, for example (2 cores):
//!
//! ```text
//! 200000 projectiles of 64 bytes; 10 passes of tick, 10 of par_tick, 20 of the boxes
//! World::tick        3.2 ns per object
//! World::par_tick    1.4 ns per object (2 rayon threads)
//! Vec<Box<_>>       13.2 ns per object (boxes among 199935 other live allocations, shuffled)
//! same final state: every position equal, sum of x 9.8665e4
//! ```
//!
//! This is a demonstration, not a benchmark: one run, no statistics, timings that move with
//! the machine's load, and nothing asserted about them. The figures are measured by the
//! criterion benches in `benches/` (`cargo bench --bench arena -- tick`; see
//! `benches/LOG.md`).

use std::time::{Duration, Instant};

use respawn::{Object, Trace, World};

/// One cache line: the size the benches use.
#[repr(C)]
#[derive(Clone, Copy, Debug, Trace, Object)]
struct Projectile {
    pos: [f32; 3],
    vel: [f32; 3],
    life: f32,
    id: u32,
    _pad: [u8; 32],
}

const _: () = assert!(std::mem::size_of::<Projectile>() == 64);

impl Projectile {
    fn new(id: u32) -> Self {
        let v = (id % 97) as f32 * 0.01;
        Self { pos: [0.0; 3], vel: [1.0 + v, 0.5 - v, v], life: 10.0, id, _pad: [0; 32] }
    }
}

/// The per-frame update both sides run.
#[inline]
fn advance(p: &mut Projectile) {
    const DT: f32 = 1.0 / 60.0;
    for axis in 0..3 {
        p.pos[axis] += p.vel[axis] * DT;
    }
    p.life -= DT;
}

const N: u32 = 200_000;
/// Passes of `tick`, then as many of `par_tick`; the boxes get both.
const PASSES: u32 = 10;

/// A tiny xorshift64: a reproducible scatter without the rand crate.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The projectiles as a long-running game's heap holds them: each box allocated among
/// other allocations of 8 to 1 000 bytes, then half of everything churned (freed and
/// allocated again into whatever holes the allocator picks), then the list shuffled.
/// Returns the boxes and the other allocations, which must stay alive while the boxes are
/// ticked.
#[expect(clippy::vec_box, reason = "the scattered boxes are the point of the comparison")]
fn scattered_boxes(rng: &mut XorShift) -> (Vec<Box<Projectile>>, Vec<Vec<u8>>) {
    let mut boxes = Vec::with_capacity(N as usize);
    let mut others: Vec<Vec<u8>> = Vec::new();
    for id in 0..N {
        for _ in 0..rng.below(3) {
            others.push(vec![0; 8 + rng.below(993)]);
        }
        boxes.push(Box::new(Projectile::new(id)));
    }
    for _ in 0..N / 2 {
        let i = rng.below(boxes.len());
        let id = boxes[i].id;
        // A new allocation, then the old one freed: the box moves to wherever the allocator
        // finds room.
        drop(std::mem::replace(&mut boxes[i], Box::new(Projectile::new(id))));
        let j = rng.below(others.len());
        others[j] = vec![0; 8 + rng.below(993)];
    }
    for i in (1..boxes.len()).rev() {
        boxes.swap(i, rng.below(i + 1));
    }
    (boxes, others)
}

fn per_object(elapsed: Duration, passes: u32) -> f64 {
    elapsed.as_nanos() as f64 / f64::from(N) / f64::from(passes)
}

fn main() {
    let mut world = World::new();
    for id in 0..N {
        world.insert(Projectile::new(id));
    }

    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let (mut boxes, others) = scattered_boxes(&mut rng);

    let start = Instant::now();
    for _ in 0..PASSES {
        world.tick::<Projectile>(advance);
    }
    let tick = start.elapsed();

    let start = Instant::now();
    for _ in 0..PASSES {
        world.par_tick::<Projectile>(advance);
    }
    let par_tick = start.elapsed();

    let start = Instant::now();
    for _ in 0..2 * PASSES {
        boxes.iter_mut().for_each(|p| advance(p));
    }
    let boxed = start.elapsed();

    println!("{N} projectiles of 64 bytes; {PASSES} passes of tick, {PASSES} of par_tick, {} of the boxes", 2 * PASSES);
    println!("World::tick      {:5.1} ns per object", per_object(tick, PASSES));
    println!(
        "World::par_tick  {:5.1} ns per object ({} rayon threads)",
        per_object(par_tick, PASSES),
        rayon::current_num_threads()
    );
    println!(
        "Vec<Box<_>>      {:5.1} ns per object (boxes among {} other live allocations, shuffled)",
        per_object(boxed, 2 * PASSES),
        others.len()
    );

    // The same state object by object, put in id order so the sums add in the same order.
    let mut in_world = vec![None; N as usize];
    for (_, p) in world.iter::<Projectile>() {
        in_world[p.id as usize] = Some(p.pos);
    }
    let mut in_boxes = vec![None; N as usize];
    for p in &boxes {
        in_boxes[p.id as usize] = Some(p.pos);
    }
    assert!(in_world.iter().all(Option::is_some), "every projectile is in the world once");
    assert_eq!(in_world, in_boxes, "both ran the same updates on the same objects");
    let sum = |positions: &[Option<[f32; 3]>]| positions.iter().flatten().map(|pos| f64::from(pos[0])).sum::<f64>();
    let (sum_world, sum_boxes) = (sum(&in_world), sum(&in_boxes));
    assert_eq!(sum_world, sum_boxes);
    println!("same final state: every position equal, sum of x {sum_world:.4e}");
}
