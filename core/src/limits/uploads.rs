//! Uploads running at once per owner. An upload holds a connection, a
//! temporary file and a hashing task until its last byte; one account
//! must not be able to hold the server's share of them all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

#[derive(Clone)]
pub struct UploadGate {
    max: usize,
    running: Arc<Mutex<HashMap<Uuid, usize>>>,
}

/// Held while one upload runs.
pub struct UploadPermit {
    owner: Uuid,
    running: Arc<Mutex<HashMap<Uuid, usize>>>,
}

impl Drop for UploadPermit {
    fn drop(&mut self) {
        let mut running = self.running.lock().expect("upload gate");
        if let Some(n) = running.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.owner);
            }
        }
    }
}

impl UploadGate {
    pub fn new(max: usize) -> UploadGate {
        UploadGate {
            max: max.max(1),
            running: Arc::default(),
        }
    }

    /// `None` when the owner already has `max` uploads running.
    pub fn try_start(&self, owner: Uuid) -> Option<UploadPermit> {
        let mut running = self.running.lock().expect("upload gate");
        let n = running.entry(owner).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(UploadPermit {
            owner,
            running: self.running.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_owner_cap() {
        let g = super::UploadGate::new(1);
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        let p = g.try_start(a).unwrap();
        assert!(g.try_start(a).is_none());
        assert!(g.try_start(b).is_some());
        drop(p);
        assert!(g.try_start(a).is_some());
    }
}
