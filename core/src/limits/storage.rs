//! Bytes of originals promised to uploads that are still settling, per
//! owner. The storage quota is checked against the stored bytes plus these,
//! and an upload's bytes stay promised until its row is in, so uploads
//! settling at once cannot each see the room the others are about to take
//! (three 0.9 MB uploads all passed a 1 MB quota). Per process: the quota
//! is exact in embedded mode and for the uploads one API replica takes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

#[derive(Default)]
pub struct Reservations {
    held: Arc<Mutex<HashMap<Uuid, u64>>>,
}

/// Bytes promised to one upload; dropping it (once the upload's row is
/// in, or it was refused) gives them back.
pub struct Reserved {
    held: Arc<Mutex<HashMap<Uuid, u64>>>,
    owner: Uuid,
    bytes: u64,
}

impl Reservations {
    /// Promises `bytes` to one upload of `owner`, and says how many its
    /// uploads settling already hold. Taken before the stored bytes are
    /// read: an upload that settles in between is then counted twice (its
    /// row and its promise), never not at all.
    pub fn reserve(&self, owner: Uuid, bytes: u64) -> (Reserved, u64) {
        let mut held = self.held.lock().expect("reservations");
        let of_owner = held.entry(owner).or_default();
        let before = *of_owner;
        *of_owner = before.saturating_add(bytes);
        let reserved = Reserved {
            held: self.held.clone(),
            owner,
            bytes,
        };
        (reserved, before)
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        let mut held = self.held.lock().expect("reservations");
        if let Some(n) = held.get_mut(&self.owner) {
            *n = n.saturating_sub(self.bytes);
            if *n == 0 {
                held.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promises_add_up_per_owner_and_go_with_their_upload() {
        let r = Reservations::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let (first, before) = r.reserve(a, 900);
        assert_eq!(before, 0);
        let (second, before) = r.reserve(a, 900);
        assert_eq!(before, 900);
        assert_eq!(r.reserve(b, 5).1, 0, "another owner's are apart");
        drop(first);
        assert_eq!(r.reserve(a, 0).1, 900);
        drop(second);
        assert_eq!(r.reserve(a, 0).1, 0);
        assert!(r.held.lock().unwrap().is_empty());
    }
}
