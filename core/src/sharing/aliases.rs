//! Aliases: readable public addresses of folders. Names are global and
//! case-insensitive; a check never tells who holds a name or in what
//! state. Taking one is decided by the database (see `db::sql::sharing`).

use super::{Sharing, SharingDto};
use crate::{time, Error, Result};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use lightbox_domain::alias::{normalize, precheck, CheckStatus, HOLD_MS};
use lightbox_domain::id::Id;
use lightbox_domain::sharing::{not_taken_down, SharingState};
use lightbox_domain::urls;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU32;
use uuid::Uuid;

pub const CHECKS_PER_MINUTE: u32 = 30;

/// Alias checks per user: a burst of 30, then one more every two seconds
/// (GCRA, so never more than 30 per minute sustained). Kept per API process.
pub struct CheckLimiter(DefaultKeyedRateLimiter<Uuid>);

impl Default for CheckLimiter {
    fn default() -> Self {
        let n = NonZeroU32::new(CHECKS_PER_MINUTE).unwrap_or(NonZeroU32::MIN);
        CheckLimiter(RateLimiter::keyed(Quota::per_minute(n)))
    }
}

impl CheckLimiter {
    fn check(&self, user: Uuid) -> Result<()> {
        self.0.check_key(&user).map_err(|not_until| {
            let clock = governor::clock::DefaultClock::default();
            let wait = not_until.wait_time_from(governor::clock::Clock::now(&clock));
            Error::RateLimited {
                retry_after_s: wait.as_secs().max(1),
            }
        })
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CheckResult {
    pub normalized: String,
    pub status: CheckStatus,
    pub preview_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// `album.ownerStatus`: exactly one of the three.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnerLookup {
    pub id: Option<Id>,
    pub alias: Option<String>,
    pub token: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct OwnerStatus {
    pub album_id: Uuid,
    pub name: String,
    pub state: SharingState,
    pub manage_url: String,
}

impl Sharing {
    pub async fn check_alias(&self, user: Uuid, raw: &str) -> Result<CheckResult> {
        if raw.len() > 255 {
            return Err(Error::invalid("alias", "must be at most 255 characters"));
        }
        self.alias_checks.check(user)?;
        let normalized = raw.trim().to_lowercase();
        let (status, reason) = match precheck(raw) {
            Some(refused) => (refused.0, Some(refused.1)),
            None => match self.repo.alias(&normalized).await? {
                None => (CheckStatus::Available, None),
                Some(held) => match held.check_status(user, time::now_ms()) {
                    CheckStatus::Available => (CheckStatus::Available, None),
                    status => (status, Some("in use")),
                },
            },
        };
        Ok(CheckResult {
            preview_url: urls::alias(&normalized),
            normalized,
            status,
            reason,
        })
    }

    /// Ends an alias of the folder: its redirect stops, the quota frees,
    /// and the name stays reserved against other owners for 90 days.
    pub async fn release_alias(&self, owner: Uuid, album: Uuid, raw: &str) -> Result<SharingDto> {
        let album = self.owned(owner, album).await?;
        not_taken_down(&album)?;
        let alias = normalize(raw)?;
        let hold = time::now_ms() + HOLD_MS;
        if !self.repo.release_alias(album.id, &alias, hold).await? {
            return Err(Error::NotFound);
        }
        self.dto(album).await
    }

    pub async fn owner_status(&self, owner: Uuid, q: OwnerLookup) -> Result<OwnerStatus> {
        let album_id = match (q.id, q.alias, q.token) {
            (Some(id), None, None) => id.0,
            (None, Some(alias), None) => {
                let row = self.repo.alias(&alias.trim().to_lowercase()).await?;
                let now = time::now_ms();
                let held = row.filter(|a| a.owner_id == owner && a.is_held(now));
                held.ok_or(Error::NotFound)?.album_id
            }
            (None, None, Some(token)) => {
                let hash = crate::auth::secrets::hash(&token);
                let link = self.repo.link_by_hash(&hash).await?;
                let live = link.filter(|l| l.is_live());
                live.ok_or(Error::NotFound)?.album_id
            }
            _ => {
                return Err(Error::invalid(
                    "id",
                    "give exactly one of id, alias and token",
                ))
            }
        };
        let album = self.owned(owner, album_id).await?;
        Ok(OwnerStatus {
            album_id: album.id,
            state: self.state(&album),
            manage_url: urls::manage_album(album.id),
            name: album.name,
        })
    }
}
