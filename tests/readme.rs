//! The README's game loop is `examples/game_loop.rs`, word for word: the README's block runs
//! as a doctest (`src/lib.rs` includes the README) and the file builds and runs as an
//! example, so a reader who pastes either gets code that compiles.

/// The README's first Rust block.
fn first_rust_block(readme: &str) -> &str {
    let start = readme.find("```rust\n").expect("the README has a Rust block") + "```rust\n".len();
    let len = readme[start..].find("\n```").expect("the block ends");
    &readme[start..start + len]
}

#[test]
fn the_readme_game_loop_is_the_game_loop_example() {
    let readme = include_str!("../README.md");
    let example = include_str!("../examples/game_loop.rs");
    let block = first_rust_block(readme);
    assert_eq!(block.trim_end(), example.trim_end(), "README.md's first Rust block and examples/game_loop.rs differ");
    // Pasted into a `main.rs` as it is: no hidden lines, no `?` outside a function that
    // returns a `Result`.
    assert!(!block.lines().any(|l| l.starts_with("# ") || l == "#"), "a hidden doctest line");
    assert!(block.contains("fn main() {"), "a whole program");
    assert!(!block.contains(")?;"), "a `?` in `main`");
}

/// A reader gets through the README in five minutes: at most 250 lines, and the first screen
/// compares respawn with its peers.
#[test]
fn the_readme_is_short_and_opens_with_the_peers() {
    let readme = include_str!("../README.md");
    assert!(readme.lines().count() <= 250, "README.md has {} lines", readme.lines().count());
    let table = readme.find("## respawn or a peer?").expect("the peers table");
    assert!(table < readme.find("```rust").unwrap(), "before the game loop");
    for peer in ["slotmap", "hecs", "bevy_ecs", "rust-gc"] {
        assert!(readme[table..].contains(peer), "{peer} in the table");
    }
}
