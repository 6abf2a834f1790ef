//! `Arena::layout`: every cell of every slab judged from its slot, against a count kept by
//! hand while the arena is driven through each state.

use respawn_arena::{Arena, ArenaConfig, CellState, EndedCells, Lifecycle, SlabConfig};

#[derive(Debug)]
struct Shot([u64; 4]);

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT };

fn counts(arena: &Arena) -> [usize; 5] {
    let id = arena.class_of::<Shot>().unwrap();
    let layout = arena.layout(id).unwrap();
    CellState::ALL.map(|s| layout.count(s))
}

#[test]
fn layout_reports_each_state() {
    let mut arena = Arena::with_config(SMALL);
    let handles: Vec<_> = (0..10).map(|i| arena.insert(Shot([i; 4]))).collect();
    let id = arena.class_of::<Shot>().unwrap();
    let layout = arena.layout(id).unwrap();
    assert_eq!(layout.name, std::any::type_name::<Shot>());
    assert_eq!(layout.cell_size, 32);
    assert_eq!(layout.slabs.len(), 1);
    let per_slab = layout.cells_per_slab;
    assert_eq!(layout.cells(), per_slab);
    // The first ten cells in address order hold the ten objects (LIFO reuse of a fresh slab
    // hands out cells from its start).
    assert_eq!(counts(&arena), [10, 0, 0, per_slab - 10, 0]);

    // Garbage: hidden, still in its cell.
    arena.set_lifecycle(handles[0].raw(), Lifecycle::Garbage).unwrap();
    arena.set_lifecycle(handles[1].raw(), Lifecycle::Unreachable).unwrap();
    assert_eq!(counts(&arena), [8, 0, 2, per_slab - 10, 0]);

    // Removed: free again.
    arena.remove(handles[2]).unwrap();
    assert_eq!(counts(&arena), [7, 0, 2, per_slab - 9, 0]);

    // Deactivated for reuse, and a cell taken for a worker: both in the pool.
    let mut store = arena.store_mut::<Shot>().unwrap();
    let _deactivated = store.deactivate(handles[3]).unwrap().unwrap();
    let taken = store.take_cell().unwrap();
    assert_eq!(counts(&arena), [6, 2, 2, per_slab - 10, 0]);

    // Handed back: free.
    arena.recycle(taken).unwrap();
    assert_eq!(counts(&arena), [6, 1, 2, per_slab - 9, 0]);

    // Returned cells: a released cell belongs to the class's owner until recycled.
    arena.set_ended_cells(arena.class_of::<Shot>().unwrap(), EndedCells::Returned).unwrap();
    arena.remove(handles[4]).unwrap();
    assert_eq!(counts(&arena), [5, 2, 2, per_slab - 9, 0]);
    arena.set_ended_cells(arena.class_of::<Shot>().unwrap(), EndedCells::Vacant).unwrap();
    let class = arena.class_of::<Shot>().unwrap();
    let token = arena.drain_returned(class).unwrap().next().unwrap().into_cell().unwrap();
    arena.recycle(token).unwrap();
    assert_eq!(counts(&arena), [5, 1, 2, per_slab - 8, 0]);

    assert_eq!(arena.get(handles[5]).unwrap().0, [5; 4]);
    // Every cell is accounted for once.
    assert_eq!(counts(&arena).iter().sum::<usize>(), per_slab);
}

#[test]
fn layout_marks_retired_cells_and_follows_growth() {
    let mut arena = Arena::with_config(ArenaConfig { max_generation: 2, ..SMALL });
    let h = arena.insert(Shot([0; 4]));
    arena.remove(h).unwrap(); // generation 1 -> 2
    let h = arena.insert(Shot([1; 4]));
    arena.remove(h).unwrap(); // released at the ceiling: retired
    let id = arena.class_of::<Shot>().unwrap();
    let layout = arena.layout(id).unwrap();
    assert_eq!(layout.count(CellState::Retired), 1);

    // Growth: a second slab shows up, in address order.
    let per_slab = layout.cells_per_slab;
    let _keep: Vec<_> = (0..per_slab as u64).map(|i| arena.insert(Shot([i; 4]))).collect();
    let layout = arena.layout(id).unwrap();
    assert_eq!(layout.slabs.len(), 2);
    assert!(layout.slabs[0].address < layout.slabs[1].address);
    assert_eq!(layout.count(CellState::Live), per_slab);
    assert_eq!(arena.layouts().len(), 1);
}
