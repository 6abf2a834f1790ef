//! The documentation speaks in plain words, not in the code's private vocabulary: no doc
//! comment of the libraries (and no line of the crate guide) uses a word private to the code
//! of the pools and the arena for their steps. Words worth learning have a glossary
//! entry instead (`src/guide.md`: magazine, depot, tick, stale…).

use std::fs;
use std::path::{Path, PathBuf};

/// Internal words, each with what to say instead.
const WORDS: &[(&str, &str)] = &[
    ("stow", "keep, or put back among the ready objects"),
    ("stowed", "kept"),
    ("stows", "keeps"),
    ("shelve", "put among the ready objects"),
    ("shelved", "ready again"),
    ("shelves", "puts among the ready objects"),
    ("adopt", "take over"),
    ("adopted", "taken over"),
    ("adopts", "takes over"),
    ("hungry", "out of ready objects"),
    ("routed", "handed back"),
];

/// Internal phrases (matched as written, in lower case).
const PHRASES: &[(&str, &str)] = &[("free route", "the way a cell comes back"), ("the hand ", "the thread's objects")];

/// The libraries' sources and the crate guide.
const ROOTS: &[&str] = &["allocator/src", "arena/src", "gc/src", "gc/derive/src", "pool/src", "src"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

/// The documentation on `line`: a doc comment's text, or a whole line of a Markdown file.
fn doc_text(line: &str, markdown: bool) -> Option<&str> {
    if markdown {
        return Some(line);
    }
    let trimmed = line.trim_start();
    trimmed.strip_prefix("///").or_else(|| trimmed.strip_prefix("//!"))
}

/// What `text` says that it should not, if anything.
fn misuse(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()) {
        if let Some((w, instead)) = WORDS.iter().find(|(w, _)| *w == word) {
            return Some(format!("\"{w}\" (say: {instead})"));
        }
    }
    let padded = format!("{lower} ");
    PHRASES.iter().find(|(p, _)| padded.contains(p)).map(|(p, instead)| format!("\"{}\" (say: {instead})", p.trim()))
}

#[test]
fn public_docs_use_no_internal_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for dir in ROOTS {
        files(&root.join(dir), &mut sources);
    }
    assert!(sources.len() > 50, "found the sources: {}", sources.len());
    let mut found = Vec::new();
    for path in &sources {
        let markdown = path.extension().is_some_and(|e| e == "md");
        let text = fs::read_to_string(path).expect("a readable source");
        for (n, line) in text.lines().enumerate() {
            if let Some(word) = doc_text(line, markdown).and_then(misuse) {
                found.push(format!("{}:{}: {word}", path.strip_prefix(root).unwrap_or(path).display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "internal words in the docs:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_each_word() {
    for (word, _) in WORDS {
        assert!(
            misuse(&format!("/// the pool {word}s it")).is_some()
                || misuse(&format!("a cell is {word} here")).is_some()
        );
    }
    assert!(misuse("the cell takes the free route back").is_some());
    assert!(misuse("what the hand holds").is_some());
    assert!(misuse("the hand-off of a batch").is_none());
    assert!(misuse("a magazine from the depot").is_none());
    assert_eq!(doc_text("    /// text", false), Some(" text"));
    assert_eq!(doc_text("    // a comment", false), None);
}
