//! How many zips are written at once, overall and per folder. A zip holds
//! a blob stream and a connection for as long as its client reads, so a
//! crowd of clients that never read must not pile them up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a zip was refused; the HTTP layer answers 429 or 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipBusy {
    /// This folder has its share of zips running (429).
    Folder,
    /// The process has all the zips it allows (503).
    Server,
}

/// Seconds a refused visitor is told to wait.
pub const RETRY_AFTER_S: u64 = 10;

pub struct ZipGate {
    all: Arc<Semaphore>,
    per_folder_max: usize,
    per_folder: Arc<Mutex<HashMap<String, usize>>>,
}

/// Held while one zip is written.
pub struct ZipPermit {
    _all: OwnedSemaphorePermit,
    folder: String,
    per_folder: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for ZipPermit {
    fn drop(&mut self) {
        let mut counts = self.per_folder.lock().expect("zip gate");
        if let Some(n) = counts.get_mut(&self.folder) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.folder);
            }
        }
    }
}

impl ZipGate {
    pub fn new(max: usize, per_folder_max: usize) -> ZipGate {
        ZipGate {
            all: Arc::new(Semaphore::new(max.max(1))),
            per_folder_max: per_folder_max.max(1),
            per_folder: Arc::default(),
        }
    }

    /// A permit for one zip of `folder` (any stable key: a folder or an image id).
    pub fn try_start(&self, folder: &str) -> Result<ZipPermit, ZipBusy> {
        let mut counts = self.per_folder.lock().expect("zip gate");
        let n = counts.get(folder).copied().unwrap_or(0);
        if n >= self.per_folder_max {
            return Err(ZipBusy::Folder);
        }
        let all = self
            .all
            .clone()
            .try_acquire_owned()
            .map_err(|_| ZipBusy::Server)?;
        counts.insert(folder.to_owned(), n + 1);
        Ok(ZipPermit {
            _all: all,
            folder: folder.to_owned(),
            per_folder: self.per_folder.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_folder_then_overall_and_frees_on_drop() {
        let g = ZipGate::new(3, 2);
        let a1 = g.try_start("a").unwrap();
        let _a2 = g.try_start("a").unwrap();
        assert_eq!(g.try_start("a").err(), Some(ZipBusy::Folder));
        let _b1 = g.try_start("b").unwrap();
        assert_eq!(g.try_start("c").err(), Some(ZipBusy::Server));
        drop(a1);
        assert!(g.try_start("a").is_ok());
    }
}
