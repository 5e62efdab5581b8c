//! Short-lived signed links (archive and download tokens): 5 minutes,
//! scoped to one owner and one image. Stateless, so any replica can check
//! them; the handlers recheck ownership and availability on every request.

use super::jwt::Signer;
use crate::time::MINUTE_MS;
use crate::Result;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub const LINK_TTL_MS: i64 = 5 * MINUTE_MS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// `archive` or `download`.
    pub kind: String,
    pub owner: Uuid,
    /// The image, or the folder of an `album_download` link.
    pub subject: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<i64>,
}

impl Signer {
    /// A token and its expiry (Unix ms).
    pub fn issue_link(&self, link: &Link, now_ms: i64) -> Result<(String, i64)> {
        let exp = now_ms + LINK_TTL_MS;
        Ok((self.sign_claims(link, "lbx_link", exp / 1000)?, exp))
    }

    /// Any failure (signature, expiry, type) is `None`.
    pub fn verify_link(&self, token: &str) -> Option<Link> {
        self.verify_claims(token, "lbx_link").ok()
    }
}
