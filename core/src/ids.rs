//! Identifiers are UUIDs, stored as their hyphenated lower-case text.

use crate::{Error, Result};
use uuid::Uuid;

pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// Parses a client-supplied id; anything but a UUID is a validation error on `field`.
pub fn parse(field: &str, raw: &str) -> Result<Uuid> {
    Uuid::parse_str(raw).map_err(|_| Error::invalid(field, "must be a UUID"))
}
