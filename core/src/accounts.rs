//! User accounts: creation (by an admin or the bootstrap), the caller's own
//! profile, and changing email or password.

use crate::auth::hashing::{self, Lane, Whose};
use crate::auth::sessions::{self, TokenPair};
use crate::auth::{jwt::Signer, password, throttle, Caller};
use crate::db::{Repo, Write};
use crate::{ids, time, Error, Result};
use lightbox_domain::accounts::{User, UserDto};
use lightbox_domain::checks::normalize_email;
use lightbox_domain::error::AuthFailure;

fn check_new_password(field: &str, p: &str) -> Result<()> {
    if password::valid_length(p) {
        Ok(())
    } else {
        Err(Error::invalid(field, "must be 8-256 characters"))
    }
}

/// A new password's hash: set by an admin, or by a caller who has just
/// proved the current one.
fn known(email: &str) -> Whose<'_> {
    Whose {
        lane: Lane::Known,
        account: email,
    }
}

fn taken() -> Error {
    Error::invalid("email", "is already registered")
}

pub async fn create_user(
    repo: &dyn Repo,
    email: &str,
    pass: String,
    is_admin: bool,
) -> Result<UserDto> {
    let email = normalize_email(email)?;
    check_new_password("password", &pass)?;
    let password_hash = password::hash(known(&email), pass).await?;
    let row = User {
        id: ids::new_id(),
        email,
        password_hash,
        is_admin,
        created_at: time::now_ms(),
    };
    match repo.insert_user(&row).await? {
        Write::Done => {
            // Every account has its default folder from the start.
            repo.default_album(row.id, row.created_at).await?;
            Ok(UserDto::from(&row))
        }
        Write::Conflict => Err(taken()),
    }
}

/// Creates the configured admin unless an account with that email exists.
pub async fn bootstrap_admin(repo: &dyn Repo, email: &str, pass: String) -> Result<bool> {
    let normalized = normalize_email(email)?;
    if repo.user_by_email(&normalized).await?.is_some() {
        return Ok(false);
    }
    match create_user(repo, email, pass, true).await {
        Ok(_) => Ok(true),
        // Another replica created it first.
        Err(Error::Validation(_)) if repo.user_by_email(&normalized).await?.is_some() => Ok(false),
        Err(e) => Err(e),
    }
}

pub async fn list_users(repo: &dyn Repo) -> Result<Vec<UserDto>> {
    Ok(repo.list_users().await?.iter().map(UserDto::from).collect())
}

async fn current(repo: &dyn Repo, caller: &Caller) -> Result<User> {
    repo.user_by_id(caller.user_id)
        .await?
        .ok_or(Error::auth(AuthFailure::Revoked))
}

pub async fn me(repo: &dyn Repo, caller: &Caller) -> Result<UserDto> {
    Ok(UserDto::from(&current(repo, caller).await?))
}

/// Who re-authenticates: the caller, from its address (`limits::client`),
/// and whether that address has signed in to the account before.
pub struct Reauth<'a> {
    pub caller: &'a Caller,
    pub client: &'a str,
    pub lane: Lane,
}

/// A wrong current password is an invalid credential: 1001. It is throttled
/// like a login, with the same counts: a stolen session must not guess
/// faster than a login could.
async fn reauthenticate(
    repo: &dyn Repo,
    who: &Reauth<'_>,
    current_password: String,
) -> Result<User> {
    hashing::has_room(Whose {
        lane: who.lane,
        account: &who.caller.email,
    })?;
    let user = current(repo, who.caller).await?;
    let email = user.email.clone();
    throttle::check(
        repo,
        (&email, who.client),
        Some(user),
        current_password,
        who.lane,
    )
    .await
}

pub async fn set_email(
    repo: &dyn Repo,
    who: &Reauth<'_>,
    current_password: String,
    email: &str,
) -> Result<UserDto> {
    let email = normalize_email(email)?;
    let mut user = reauthenticate(repo, who, current_password).await?;
    if repo.set_email(user.id, &email).await? == Write::Conflict {
        return Err(taken());
    }
    user.email = email;
    Ok(UserDto::from(&user))
}

pub async fn set_password(
    repo: &dyn Repo,
    signer: &Signer,
    who: &Reauth<'_>,
    current_password: String,
    new_password: String,
) -> Result<TokenPair> {
    check_new_password("new_password", &new_password)?;
    let user = reauthenticate(repo, who, current_password).await?;
    let hash = password::hash(known(&user.email), new_password).await?;
    repo.set_password_hash(user.id, &hash).await?;
    sessions::keep_only(repo, signer, who.caller, &user).await
}
