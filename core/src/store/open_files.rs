//! Files of the local blob store kept open by key for `/i/`, which sends
//! them with `sendfile` (like nginx's `open_file_cache`). A blob deleted
//! through the store is closed at once, so its disk space is not held;
//! any other is reopened after `VALID`, so a file replaced or repaired
//! behind the store's back is picked up.

use quick_cache::sync::Cache;
use quick_cache::UnitWeighter;
use std::fs::File;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Descriptors kept at most: the bound here is in descriptors, not bytes
/// (each entry weighs one), as descriptors are what runs out.
const MAX: u64 = 256;
/// How long a kept descriptor is used before the file is opened again.
const VALID: Duration = Duration::from_secs(5);

/// A kept descriptor: the file and when it was opened.
type Kept = (Arc<File>, Instant);

pub struct OpenFiles(Cache<Box<str>, Kept, UnitWeighter>);

impl Default for OpenFiles {
    fn default() -> Self {
        OpenFiles(Cache::with_weighter(MAX as usize, MAX, UnitWeighter))
    }
}

impl std::fmt::Debug for OpenFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenFiles")
    }
}

impl OpenFiles {
    /// The kept file of `key`, while it is valid.
    pub fn get(&self, key: &str) -> Option<Arc<File>> {
        let (file, opened) = self.0.get(key)?;
        if opened.elapsed() < VALID {
            return Some(file);
        }
        // Closed now rather than when it is pushed out.
        self.0.remove(key);
        None
    }

    pub fn put(&self, key: &str, file: Arc<File>) {
        // A file deleted while it was being opened is never asked for
        // again: expired descriptors close here, not only when pushed out.
        self.0.retain(|_, (_, opened)| opened.elapsed() < VALID);
        self.0.insert(key.into(), (file, Instant::now()));
    }

    pub fn forget(&self, key: &str) {
        self.0.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<File> {
        Arc::new(File::open("/dev/null").unwrap())
    }

    #[test]
    fn kept_up_to_max_and_forgotten_on_delete() {
        let open = OpenFiles::default();
        for i in 0..MAX + 10 {
            open.put(&format!("k{i}"), file());
        }
        assert!(open.0.len() as u64 <= MAX, "{}", open.0.len());
        let last = format!("k{}", MAX + 9);
        assert!(open.get(&last).is_some(), "the newest is kept");
        open.forget(&last);
        assert!(open.get(&last).is_none());
    }
}
