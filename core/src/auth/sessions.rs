//! Password sessions: login (throttled), refresh-token rotation with replay
//! detection, logout, and the fresh pair handed out after a password change.

use super::hashing::{self, Lane, Whose};
use super::{jwt::Signer, now, secrets, throttle, Caller};
use crate::db::{RefreshUse, Repo};
use crate::time::{rfc3339, DAY_MS};
use crate::{ids, Error, Result};
use lightbox_domain::accounts::{RefreshToken, User, UserDto};
use lightbox_domain::error::AuthFailure;
use serde::Serialize;
use uuid::Uuid;

pub const REFRESH_TTL_MS: i64 = 30 * DAY_MS;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TokenPair {
    pub access_token: String,
    pub access_expires_at: String,
    pub refresh_token: String,
    pub user: UserDto,
}

/// Exchanges credentials for a new session. `client` is the caller's
/// address; `lane` says whether it has signed in to the account before.
pub async fn login(
    repo: &dyn Repo,
    signer: &Signer,
    (email, client): (&str, &str),
    password: String,
    lane: Lane,
) -> Result<TokenPair> {
    let email = email.trim().to_lowercase();
    // A flood past the hashing queue's bound costs no database work.
    hashing::has_room(Whose {
        lane,
        account: &email,
    })?;
    let found = repo.user_by_email(&email).await?;
    let user = throttle::check(repo, (&email, client), found, password, lane).await?;
    start(repo, signer, &user).await
}

async fn start(repo: &dyn Repo, signer: &Signer, user: &User) -> Result<TokenPair> {
    let session_id = ids::new_id();
    let (refresh_token, row) = new_refresh(session_id);
    repo.create_session(user.id, &row).await?;
    pair(signer, user, session_id, refresh_token)
}

fn new_refresh(session_id: Uuid) -> (String, RefreshToken) {
    let token = secrets::random_token(secrets::REFRESH_PREFIX);
    let t = now();
    let row = RefreshToken {
        token_hash: secrets::hash(&token),
        session_id,
        created_at: t,
        expires_at: t + REFRESH_TTL_MS,
    };
    (token, row)
}

fn pair(signer: &Signer, user: &User, session: Uuid, refresh_token: String) -> Result<TokenPair> {
    let (access_token, exp) = signer.issue(user.id, session, now())?;
    Ok(TokenPair {
        access_token,
        access_expires_at: rfc3339(exp),
        refresh_token,
        user: UserDto::from(user),
    })
}

/// Rotates a refresh token. A token presented twice ends its whole session:
/// either the client or a thief holds a copy, and neither may go on.
pub async fn refresh(repo: &dyn Repo, signer: &Signer, token: &str) -> Result<TokenPair> {
    if !secrets::well_formed(token, secrets::REFRESH_PREFIX) {
        return Err(Error::auth(AuthFailure::Malformed));
    }
    match repo.spend_refresh(&secrets::hash(token), now()).await? {
        RefreshUse::Spent { session_id, .. } => {
            let user = repo
                .session_user(session_id)
                .await?
                .ok_or(Error::auth(AuthFailure::Revoked))?;
            let (refresh_token, row) = new_refresh(session_id);
            repo.add_refresh(&row).await?;
            pair(signer, &user, session_id, refresh_token)
        }
        RefreshUse::Replayed { session_id } => {
            tracing::warn!(%session_id, "refresh token replayed; session revoked");
            repo.revoke_session(session_id, now()).await?;
            Err(Error::auth(AuthFailure::Revoked))
        }
        // A token of the right shape that is no longer live (expired, or
        // its session ended, or never issued): the client logs in again.
        RefreshUse::Invalid => Err(Error::auth(AuthFailure::Expired)),
    }
}

/// Ends the session a refresh token belongs to; idempotent for a known token.
pub async fn logout(repo: &dyn Repo, token: &str) -> Result<()> {
    if repo.revoke_session_of(&secrets::hash(token), now()).await? {
        Ok(())
    } else {
        Err(Error::auth(AuthFailure::Malformed))
    }
}

/// After a password change: every other session ends, the caller's goes on
/// with a fresh pair (its old refresh tokens are spent).
pub async fn keep_only(
    repo: &dyn Repo,
    signer: &Signer,
    caller: &Caller,
    user: &User,
) -> Result<TokenPair> {
    let session_id = caller.session_id().ok_or(Error::Forbidden)?;
    repo.revoke_sessions_except(user.id, session_id, now())
        .await?;
    let (refresh_token, row) = new_refresh(session_id);
    repo.add_refresh(&row).await?;
    pair(signer, user, session_id, refresh_token)
}
