//! Short-lived signed links, one module for every kind (`domain::links`):
//! image archives, image downloads and folder downloads. 5 minutes, scoped
//! to one owner and one subject. Stateless, so any replica can check them;
//! the handlers recheck ownership and availability on every request.

use super::jwt::Signer;
use crate::time::{now_ms, rfc3339, MINUTE_MS};
use crate::{Error, Result};
use lightbox_domain::error::AuthFailure;
use lightbox_domain::links::{Link, LinkKind};
use lightbox_domain::urls;
use serde::Serialize;
use uuid::Uuid;

pub const LINK_TTL_MS: i64 = 5 * MINUTE_MS;

/// downloadTokenResult: where to fetch, and until when.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SignedLink {
    pub url: String,
    pub expires_at: String,
}

/// The path a link of `kind` for `subject` is served at.
fn url_of(kind: LinkKind, subject: Uuid, token: &str) -> String {
    match kind {
        LinkKind::Archive => urls::image_archive(subject, token),
        LinkKind::Download => urls::image_download(subject, token),
        LinkKind::AlbumDownload => urls::album_download(subject, token),
    }
}

impl Signer {
    /// A token and its expiry (Unix ms).
    pub fn issue_link(&self, link: &Link, now_ms: i64) -> Result<(String, i64)> {
        let exp = now_ms + LINK_TTL_MS;
        Ok((self.sign_claims(link, "lbx_link", exp / 1000)?, exp))
    }

    /// Signs `link` now and names the URL that opens it.
    pub fn sign_link(&self, link: &Link) -> Result<SignedLink> {
        let (token, exp) = self.issue_link(link, now_ms())?;
        Ok(SignedLink {
            url: url_of(link.kind, link.subject, &token),
            expires_at: rfc3339(exp),
        })
    }

    /// Any failure (signature, expiry, type) is `None`.
    pub fn verify_link(&self, token: &str) -> Option<Link> {
        self.verify_claims(token, "lbx_link").ok()
    }

    fn check_link(&self, token: Option<&str>) -> Result<Link> {
        let token = token.ok_or(Error::auth(AuthFailure::Missing))?;
        self.verify_claims(token, "lbx_link")
    }

    /// The link a request presents for `kind` at the path's `subject`: 1001
    /// for no, a bad, an expired or another subject's link; 2001 for a path
    /// that is no id.
    pub fn open_link(&self, kind: LinkKind, subject: &str, token: Option<&str>) -> Result<Link> {
        let link = self.check_link(token)?;
        if link.kind != kind {
            return Err(Error::auth(AuthFailure::Malformed));
        }
        let subject = Uuid::parse_str(subject).map_err(|_| Error::NotFound)?;
        if !link.opens(kind, subject) {
            return Err(Error::auth(AuthFailure::Malformed));
        }
        Ok(link)
    }
}
