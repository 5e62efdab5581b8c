//! A count of things held at once, overall and per key, taken without
//! waiting: zips (per folder), held `image.get` calls and uploads (per
//! owner) each hold a connection for as long as they run, so a crowd of
//! them must not pile up. Uploads are counted per owner only (`per_key`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a permit was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    /// This key holds its share.
    Key,
    /// The process holds all it allows.
    All,
}

pub struct KeyedGate {
    /// `None`: no overall cap.
    all: Option<Arc<Semaphore>>,
    per_key_max: usize,
    per_key: Arc<Mutex<HashMap<String, usize>>>,
}

/// Held while one of them runs.
pub struct Permit {
    _all: Option<OwnedSemaphorePermit>,
    key: String,
    per_key: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut counts = self.per_key.lock().expect("keyed gate");
        if let Some(n) = counts.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

impl KeyedGate {
    pub fn new(max: usize, per_key_max: usize) -> KeyedGate {
        KeyedGate {
            all: Some(Arc::new(Semaphore::new(max.max(1)))),
            per_key_max: per_key_max.max(1),
            per_key: Arc::default(),
        }
    }

    /// A cap per key and none overall.
    pub fn per_key(per_key_max: usize) -> KeyedGate {
        KeyedGate {
            all: None,
            per_key_max: per_key_max.max(1),
            per_key: Arc::default(),
        }
    }

    /// A permit for one more under `key` (any stable name).
    pub fn try_start(&self, key: &str) -> Result<Permit, Busy> {
        let mut counts = self.per_key.lock().expect("keyed gate");
        let n = counts.get(key).copied().unwrap_or(0);
        if n >= self.per_key_max {
            return Err(Busy::Key);
        }
        let all = match &self.all {
            Some(all) => Some(all.clone().try_acquire_owned().map_err(|_| Busy::All)?),
            None => None,
        };
        counts.insert(key.to_owned(), n + 1);
        Ok(Permit {
            _all: all,
            key: key.to_owned(),
            per_key: self.per_key.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_key_then_overall_and_frees_on_drop() {
        let g = KeyedGate::new(3, 2);
        let a1 = g.try_start("a").unwrap();
        let _a2 = g.try_start("a").unwrap();
        assert_eq!(g.try_start("a").err(), Some(Busy::Key));
        let _b1 = g.try_start("b").unwrap();
        assert_eq!(g.try_start("c").err(), Some(Busy::All));
        drop(a1);
        assert!(g.try_start("a").is_ok());
    }

    #[test]
    fn per_key_only() {
        let g = KeyedGate::per_key(1);
        let p = g.try_start("a").unwrap();
        assert_eq!(g.try_start("a").err(), Some(Busy::Key));
        let _others: Vec<_> = (0..1000)
            .map(|i| g.try_start(&i.to_string()).unwrap())
            .collect();
        drop(p);
        assert!(g.try_start("a").is_ok());
    }
}
