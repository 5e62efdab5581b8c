//! Personal access tokens: `lbx_pat_…`, scoped `read` and/or `write`,
//! optionally expiring, shown once and stored only as a hash.

use super::{now, secrets, Caller, Via};
use crate::db::Repo;
use crate::time::{rfc3339, DAY_MS};
use crate::{ids, Error, Result};
use lightbox_domain::accounts::{normalize_scopes, Pat, Scope};
use lightbox_domain::checks::{char_len_between, Checks};
use lightbox_domain::error::AuthFailure;
use serde::Serialize;
use uuid::Uuid;

const PREFIX_SHOWN: usize = secrets::PAT_PREFIX.len() + 4;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CreatedPat {
    pub id: Uuid,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub token: String,
    pub created_at: String,
    pub expires_at: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PatDto {
    pub id: Uuid,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub prefix: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub expires_at: Option<String>,
}

impl From<&Pat> for PatDto {
    fn from(p: &Pat) -> Self {
        PatDto {
            id: p.id,
            name: p.name.clone(),
            scopes: p.scopes.clone(),
            prefix: p.prefix.clone(),
            created_at: rfc3339(p.created_at),
            last_used_at: p.last_used_at.map(rfc3339),
            expires_at: p.expires_at.map(rfc3339),
        }
    }
}

pub async fn create(
    repo: &dyn Repo,
    user_id: Uuid,
    name: String,
    scopes: Option<Vec<String>>,
    expires_in_days: Option<i64>,
) -> Result<CreatedPat> {
    let scopes = normalize_scopes(scopes);
    Checks::new()
        .check(
            char_len_between(name.trim(), 1, 100),
            "name",
            "must be 1-100 characters",
        )
        .check(
            scopes.is_some(),
            "scopes",
            "must be a non-empty list of read and write",
        )
        .check(
            expires_in_days.is_none_or(|d| (1..=3650).contains(&d)),
            "expires_in_days",
            "must be between 1 and 3650",
        )
        .finish()?;
    let scopes = scopes.unwrap_or_default();
    let token = secrets::random_token(secrets::PAT_PREFIX);
    let t = now();
    let row = Pat {
        id: ids::new_id(),
        user_id,
        name: name.trim().to_owned(),
        scopes: scopes.clone(),
        token_hash: secrets::hash(&token),
        prefix: token[..PREFIX_SHOWN].to_owned(),
        created_at: t,
        last_used_at: None,
        expires_at: expires_in_days.map(|d| t + d * DAY_MS),
        revoked_at: None,
    };
    repo.insert_pat(&row).await?;
    Ok(CreatedPat {
        id: row.id,
        name: row.name,
        scopes,
        token,
        created_at: rfc3339(t),
        expires_at: row.expires_at.map(rfc3339),
    })
}

pub async fn list(repo: &dyn Repo, user_id: Uuid) -> Result<Vec<PatDto>> {
    Ok(repo
        .pats_of(user_id)
        .await?
        .iter()
        .map(PatDto::from)
        .collect())
}

pub async fn revoke(repo: &dyn Repo, user_id: Uuid, id: Uuid) -> Result<()> {
    if repo.revoke_pat(user_id, id, now()).await? {
        Ok(())
    } else {
        Err(Error::NotFound)
    }
}

pub(super) async fn authenticate(repo: &dyn Repo, token: &str) -> Result<Caller> {
    let presented = secrets::hash(token);
    let t = now();
    let pat = repo
        .pat_by_hash(&presented)
        .await?
        .filter(|p| secrets::ct_eq(&p.token_hash, &presented))
        .ok_or(Error::auth(AuthFailure::Malformed))?;
    if !pat.is_live(t) {
        let reason = match pat.revoked_at {
            Some(_) => AuthFailure::Revoked,
            None => AuthFailure::Expired,
        };
        return Err(Error::auth(reason));
    }
    let user = repo
        .user_by_id(pat.user_id)
        .await?
        .ok_or(Error::auth(AuthFailure::Revoked))?;
    repo.touch_pat(pat.id, t).await?;
    Ok(Caller {
        user_id: user.id,
        email: user.email,
        is_admin: user.is_admin,
        via: Via::Pat {
            token_id: pat.id,
            can_write: pat.can_write(),
        },
    })
}
