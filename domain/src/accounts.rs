//! Accounts and their credentials: users, personal access tokens and the
//! refresh tokens of sessions. Secrets are only ever held as hashes.

use serde::Serialize;
use uuid::Uuid;

wire_enum! {
    /// A personal access token's scope.
    pub enum Scope {
        Read = "read",
        Write = "write",
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: Uuid,
    pub email: String,
    pub password_hash: String,
    pub is_admin: bool,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pat {
    pub id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    /// In canonical order (read, write).
    pub scopes: Vec<Scope>,
    pub token_hash: String,
    pub prefix: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl Pat {
    pub fn can_write(&self) -> bool {
        self.scopes.contains(&Scope::Write)
    }

    /// Usable at `now`: not revoked, not expired.
    pub fn is_live(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }
}

/// Scopes in canonical order, default both; `None` when empty or unknown.
pub fn normalize_scopes(scopes: Option<Vec<String>>) -> Option<Vec<Scope>> {
    let Some(names) = scopes else {
        return Some(Scope::ALL.to_vec());
    };
    let parsed: Option<Vec<Scope>> = names.iter().map(|s| Scope::parse(s)).collect();
    let parsed = parsed.filter(|p| !p.is_empty())?;
    Some(
        Scope::ALL
            .iter()
            .copied()
            .filter(|s| parsed.contains(s))
            .collect(),
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshToken {
    pub token_hash: String,
    pub session_id: Uuid,
    pub created_at: i64,
    pub expires_at: i64,
}

/// What clients see of a user.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UserDto {
    pub id: Uuid,
    pub email: String,
    pub is_admin: bool,
}

impl From<&User> for UserDto {
    fn from(u: &User) -> Self {
        UserDto {
            id: u.id,
            email: u.email.clone(),
            is_admin: u.is_admin,
        }
    }
}
