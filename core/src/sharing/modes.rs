//! The publication state machine (../shared/spec/interface.md 3): `setMode`, `republish`
//! and `resetToken`. Each change is one `Publication`, committed by the
//! database in a single transaction with its history row.

use super::{Sharing, SharingDto};
use crate::auth::secrets;
use crate::db::{AliasChange, LinkChange, Publication, Published};
use crate::{time, Error, Result};
use lightbox_domain::album::Album;
use lightbox_domain::album::PublishMode;
use lightbox_domain::alias::{self, reservation_cap};
use lightbox_domain::sharing::{may_publish, not_taken_down, ShareLink, TokenChoice};
use uuid::Uuid;

/// `token` of setMode and republish: whether to keep the folder's link.
/// Read as text and checked here, after the takedown check (2004 first).
fn keep_link(token: Option<&str>) -> Result<Option<bool>> {
    token
        .map(|t| TokenChoice::from_param("token", t).map(|c| c == TokenChoice::Keep))
        .transpose()
}

impl Sharing {
    fn new_link(&self, album: Uuid, now: i64) -> ShareLink {
        let nonce = secrets::random_token("");
        let token = self.signer.share_token(&nonce);
        ShareLink {
            token_hash: secrets::hash(&token),
            album_id: album,
            nonce,
            created_at: now,
            retired_at: None,
        }
    }

    async fn apply(&self, p: Publication) -> Result<SharingDto> {
        match self.repo.publish(&p).await? {
            Published::Done => {}
            Published::AliasTaken => return Err(Error::invalid("alias", "is taken")),
            Published::OverReservations => {
                return Err(Error::invalid(
                    "alias",
                    format!(
                        "the account keeps {} alias names reserved at most (current, previous, \
                         expired, and released ones for 90 days); wait for a released one to free",
                        reservation_cap(p.alias_limit)
                    ),
                ))
            }
            Published::OverQuota => {
                return Err(Error::invalid(
                    "alias",
                    format!("the account's alias limit ({}) is reached", p.alias_limit),
                ))
            }
        }
        let album = self.owned(p.owner_id, p.album_id).await?;
        self.dto(album).await
    }

    async fn publication(&self, album: &Album, mode: PublishMode, now: i64) -> Result<Publication> {
        let published = mode.is_published();
        Ok(Publication {
            album_id: album.id,
            owner_id: album.owner_id,
            mode,
            last_published_mode: if published {
                Some(mode)
            } else {
                album.last_published_mode
            },
            published_at: match (published, album.mode == mode) {
                (true, false) => Some(now),
                _ => album.published_at.or(published.then_some(now)),
            },
            link: LinkChange::Keep,
            aliases: AliasChange::Keep,
            alias_limit: self.limit_of(album.owner_id).await?,
            now,
            record_history: true,
        })
    }

    pub async fn set_mode(
        &self,
        owner: Uuid,
        album: Uuid,
        mode: &str,
        token: Option<&str>,
        alias: Option<&str>,
    ) -> Result<SharingDto> {
        // A takedown answers before any other check (2004 first).
        let album = self.owned(owner, album).await?;
        not_taken_down(&album)?;
        let mode = PublishMode::from_param("mode", mode)?;
        let keep = keep_link(token)?;
        let alias = match alias {
            Some(_) if mode != PublishMode::Public => {
                return Err(Error::invalid("alias", "can only be set with mode public"))
            }
            Some(a) => Some(alias::normalize(a)?),
            None => None,
        };
        may_publish(&album, mode, self.server_publishing)?;
        let now = time::now_ms();
        let mut p = self.publication(&album, mode, now).await?;
        let was = album.mode;
        p.link = match mode {
            PublishMode::Public => LinkChange::Retire,
            PublishMode::Unlisted if was == PublishMode::Public => {
                LinkChange::Replace(self.new_link(album.id, now))
            }
            PublishMode::Unlisted => {
                // Re-setting unlisted keeps the link unless asked otherwise.
                let keep = keep.unwrap_or(was == PublishMode::Unlisted);
                match self.repo.link_of(album.id).await? {
                    Some(_) if keep => LinkChange::Keep,
                    _ => LinkChange::Replace(self.new_link(album.id, now)),
                }
            }
            PublishMode::Private => LinkChange::Keep,
        };
        let left_public = was == PublishMode::Public && mode != PublishMode::Public;
        p.aliases = match (alias, left_public) {
            (Some(a), _) => AliasChange::Claim(a),
            (None, true) => AliasChange::Expire,
            (None, false) => AliasChange::Keep,
        };
        self.apply(p).await
    }

    /// Restores the remembered published mode of a private folder.
    pub async fn republish(
        &self,
        owner: Uuid,
        album: Uuid,
        token: Option<&str>,
    ) -> Result<SharingDto> {
        let album = self.owned(owner, album).await?;
        not_taken_down(&album)?;
        let keep = keep_link(token)?.unwrap_or(false);
        let remembered = match (album.mode, album.last_published_mode) {
            (PublishMode::Private, Some(m)) => m,
            _ => {
                return Err(Error::invalid(
                    "album_id",
                    "the folder is not private with a remembered published mode",
                ))
            }
        };
        may_publish(&album, remembered, self.server_publishing)?;
        let now = time::now_ms();
        let mut p = self.publication(&album, remembered, now).await?;
        if remembered == PublishMode::Unlisted {
            p.link = match self.repo.link_of(album.id).await? {
                Some(_) if keep => LinkChange::Keep,
                _ => LinkChange::Replace(self.new_link(album.id, now)),
            };
        } else {
            p.link = LinkChange::Retire;
            p.aliases = AliasChange::Reactivate;
        }
        self.apply(p).await
    }

    /// Retires the folder's link and makes a new one; mode and history stay.
    pub async fn reset_token(&self, owner: Uuid, album: Uuid) -> Result<SharingDto> {
        let album = self.owned(owner, album).await?;
        if self.repo.link_of(album.id).await?.is_none() {
            return Err(Error::invalid("album_id", "the folder has no bearer link"));
        }
        let now = time::now_ms();
        let mut p = self.publication(&album, album.mode, now).await?;
        p.link = LinkChange::Replace(self.new_link(album.id, now));
        p.record_history = false;
        self.apply(p).await
    }
}
