//! Who is calling: JWT sessions and personal access tokens, and what each
//! may do. Sessions, refresh rotation and PAT management live beside it.

pub mod hashing;
pub mod jwt;
pub mod links;
pub mod password;
pub mod pats;
pub mod secrets;
pub mod sessions;
pub mod throttle;

use crate::db::Repo;
use crate::{time, Error, Result};
use jwt::Signer;
use lightbox_domain::error::AuthFailure;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// A JWT access token of a password session.
    Session { session_id: Uuid },
    /// A personal access token.
    Pat { token_id: Uuid, can_write: bool },
}

#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: Uuid,
    pub email: String,
    pub is_admin: bool,
    pub via: Via,
}

impl Caller {
    pub fn session_id(&self) -> Option<Uuid> {
        match self.via {
            Via::Session { session_id } => Some(session_id),
            Via::Pat { .. } => None,
        }
    }
}

/// Resolves a bearer token. Every failure is 1001 with `data.reason`:
/// malformed (not a token Lightbox issued, or unknown), expired or revoked;
/// the reason reveals nothing to a caller who does not hold the token.
pub async fn authenticate(repo: &dyn Repo, signer: &Signer, bearer: &str) -> Result<Caller> {
    if bearer.starts_with(secrets::PAT_PREFIX) {
        return pats::authenticate(repo, bearer).await;
    }
    let claims = signer.verify(bearer)?;
    let user = repo
        .session_user(claims.sid)
        .await?
        .filter(|u| u.id == claims.sub)
        .ok_or(Error::auth(AuthFailure::Revoked))?;
    Ok(Caller {
        user_id: user.id,
        email: user.email,
        is_admin: user.is_admin,
        via: Via::Session {
            session_id: claims.sid,
        },
    })
}

pub(crate) fn now() -> i64 {
    time::now_ms()
}
