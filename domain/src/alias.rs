//! Aliases: readable public addresses of folders. Names are global and
//! case-insensitive; their states decide what resolves, what counts
//! against the owner's quota and who may take a name.

use super::error::{Error, Result};
use uuid::Uuid;

/// Released aliases stay reserved against other owners this long.
pub const HOLD_MS: i64 = 90 * 24 * 60 * 60 * 1000;

wire_enum! {
    /// aliasDTO `state`.
    pub enum AliasState {
        /// The newest: primary, serves the page.
        Current = "current",
        /// An older alias of a still-public folder: 301 to the primary.
        Previous = "previous",
        /// The folder left public: resolves to nothing, reactivated by republish.
        Expired = "expired",
        /// Ended by its owner: reserved against other owners until it expires.
        Released = "released",
    }
}

wire_enum! {
    /// `album.alias.check` `status`.
    pub enum CheckStatus {
        Available = "available",
        Taken = "taken",
        Invalid = "invalid",
        Reserved = "reserved",
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    pub alias: String,
    pub owner_id: Uuid,
    pub album_id: Uuid,
    pub state: AliasState,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

impl Alias {
    /// Whether it still holds its name at `now` (a released alias only
    /// until its hold ends).
    pub fn is_held(&self, now: i64) -> bool {
        self.state != AliasState::Released || self.expires_at.is_some_and(|e| e > now)
    }

    /// What `album.alias.check` says of a name this alias holds, to `user`.
    pub fn check_status(&self, user: Uuid, now: i64) -> CheckStatus {
        let own_spare = self.owner_id == user && self.state != AliasState::Current;
        let hold_over =
            self.state == AliasState::Released && self.expires_at.is_some_and(|e| e <= now);
        if own_spare || hold_over {
            CheckStatus::Available
        } else {
            CheckStatus::Taken
        }
    }
}

/// Whether aliases in this state count against the owner's quota.
pub fn counts_against_quota(state: AliasState) -> bool {
    matches!(state, AliasState::Current | AliasState::Previous)
}

/// Words no folder may take: the service's own paths and look-alikes.
pub const RESERVED: &[&str] = &[
    "admin",
    "api",
    "www",
    "static",
    "i",
    "p",
    "s",
    "a",
    "albums",
    "manage",
    "rpc",
    "healthz",
    "readyz",
    "metrics",
    "feed",
    "login",
    "logout",
    "account",
    "settings",
    "help",
    "support",
    "about",
    "lightbox",
    "root",
    "system",
    "null",
    "undefined",
    "assets",
    "download",
    "share",
];

pub fn syntax_ok(a: &str) -> bool {
    let b = a.as_bytes();
    (3..=63).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The lower-cased alias, or 2002 naming why it cannot be one.
pub fn normalize(raw: &str) -> Result<String> {
    let a = raw.trim().to_lowercase();
    if !syntax_ok(&a) {
        return Err(Error::invalid(
            "alias",
            "must be 3-63 characters of a-z, 0-9 and -, starting with a letter or digit",
        ));
    }
    if RESERVED.contains(&a.as_str()) {
        return Err(Error::invalid("alias", "is a reserved word"));
    }
    Ok(a)
}

/// The status of a name before the database is asked: `None` when it is
/// a valid name to look up.
pub fn precheck(raw: &str) -> Option<(CheckStatus, &'static str)> {
    match normalize(raw) {
        Ok(_) => None,
        Err(_) if syntax_ok(&raw.trim().to_lowercase()) => {
            Some((CheckStatus::Reserved, "reserved word"))
        }
        Err(_) => Some((CheckStatus::Invalid, "3-63 characters of a-z, 0-9 and -")),
    }
}

/// How many names one owner may keep from others at once (current,
/// previous, expired, and released ones still on hold): twice the alias
/// limit. Without it, cycling a folder public and private with a new alias
/// each time would reserve any number of global names.
pub fn reservation_cap(alias_limit: i64) -> i64 {
    alias_limit.saturating_mul(2)
}
