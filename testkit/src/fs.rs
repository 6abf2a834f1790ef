//! A temporary directory for the configuration-file tests.

use std::fs;
use std::path::{Path, PathBuf};

/// A directory under the system temp dir, unique to this process and `name`, emptied when
/// made and removed on drop (also when the test panics).
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Makes `respawn-{name}-{process id}` under the temp dir.
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("respawn-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to the file `name` in the directory; returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        fs::write(&path, text).expect("write temp file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
