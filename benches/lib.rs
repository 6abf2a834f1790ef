//! respawn's criterion benches, beside the peer crates a game would otherwise reach for
//! (slab, slotmap, hecs, rust-gc, object pools). The benches are this package's bench
//! targets (`cargo bench --bench arena|gc|pool|standalone|resolve`); `README.md` beside
//! this file says what each measures and holds the figures. The package is its own
//! workspace member so that the peers are built only when the benches are.
