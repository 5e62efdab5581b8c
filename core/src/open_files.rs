//! Files of the local blob store kept open by key for `/i/`, which sends
//! them with `sendfile` (like nginx's `open_file_cache`). A blob deleted
//! through the store is closed at once, so its disk space is not held;
//! any other is reopened after `VALID`, so a file replaced or repaired
//! behind the store's back is picked up.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Descriptors kept at most.
const MAX: usize = 256;
/// How long a kept descriptor is used before the file is opened again.
const VALID: Duration = Duration::from_secs(5);

#[derive(Default)]
struct Kept {
    files: HashMap<String, (Arc<File>, Instant)>,
    order: VecDeque<String>,
}

#[derive(Default)]
pub struct OpenFiles(Mutex<Kept>);

impl std::fmt::Debug for OpenFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenFiles")
    }
}

impl OpenFiles {
    pub fn get(&self, key: &str) -> Option<Arc<File>> {
        let kept = self.0.lock().expect("open files");
        let (file, opened) = kept.files.get(key)?;
        (opened.elapsed() < VALID).then(|| file.clone())
    }

    pub fn put(&self, key: &str, file: Arc<File>) {
        let mut kept = self.0.lock().expect("open files");
        let Kept { files, order } = &mut *kept;
        files.retain(|_, (_, opened)| opened.elapsed() < VALID);
        if files
            .insert(key.to_owned(), (file, Instant::now()))
            .is_none()
        {
            order.push_back(key.to_owned());
        }
        order.retain(|k| files.contains_key(k));
        while order.len() > MAX {
            if let Some(old) = order.pop_front() {
                files.remove(&old);
            }
        }
    }

    pub fn forget(&self, key: &str) {
        let mut kept = self.0.lock().expect("open files");
        if kept.files.remove(key).is_some() {
            kept.order.retain(|k| k != key);
        }
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
        let kept = open.0.lock().unwrap().files.len();
        assert_eq!(kept, MAX);
        assert!(open.get("k0").is_none(), "the oldest went first");
        assert!(open.get(&format!("k{}", MAX + 9)).is_some());
        open.forget(&format!("k{}", MAX + 9));
        assert!(open.get(&format!("k{}", MAX + 9)).is_none());
        assert_eq!(open.0.lock().unwrap().order.len(), MAX - 1);
    }
}
