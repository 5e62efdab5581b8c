//! Identifiers are UUIDs, stored as their hyphenated lower-case text.
//!
//! Every id is a random (version 4) UUID: an image id is the capability
//! behind its `/i/` URLs, so it must carry 122 random bits and reveal
//! nothing (a UUIDv7 shows its creation time and shares most of its bits
//! with ids minted in the same millisecond). Ordering never relies on ids
//! beyond breaking ties.

use crate::{Error, Result};
use uuid::Uuid;

pub fn new_id() -> Uuid {
    Uuid::new_v4()
}

/// Parses a client-supplied id; anything but a UUID is a validation error on `field`.
pub fn parse(field: &str, raw: &str) -> Result<Uuid> {
    Uuid::parse_str(raw).map_err(|_| Error::invalid(field, lightbox_domain::id::NOT_A_UUID))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_random_v4() {
        let (a, b) = (super::new_id(), super::new_id());
        assert_eq!(a.get_version_num(), 4);
        // Two ids minted back to back share no time prefix.
        assert_ne!(a.as_bytes()[..6], b.as_bytes()[..6]);
    }
}
