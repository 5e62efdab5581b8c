//! The publication state machine (interface.md 3): `setMode`, `republish`
//! and `resetToken`. Each change is one `Publication`, committed by the
//! database in a single transaction with its history row.

use super::{aliases, Sharing, SharingDto, PRIVATE, PUBLIC, UNLISTED};
use crate::auth::secrets;
use crate::db::{AlbumRow, AliasChange, LinkChange, LinkRow, Publication, Published};
use crate::{time, Error, Result};
use uuid::Uuid;

const MODES: &[&str] = &[PRIVATE, UNLISTED, PUBLIC];

/// `token` of setMode and republish: `new` makes a fresh link, `keep`
/// keeps the folder's link when it has one.
fn token_choice(token: Option<&str>) -> Result<Option<bool>> {
    match token {
        None => Ok(None),
        Some("new") => Ok(Some(false)),
        Some("keep") => Ok(Some(true)),
        Some(_) => Err(Error::invalid("token", "must be new or keep")),
    }
}

impl Sharing {
    fn new_link(&self, album: Uuid, now: i64) -> LinkRow {
        let nonce = secrets::random_token("");
        let token = self.signer.share_token(&nonce);
        LinkRow {
            token_hash: secrets::hash(&token),
            album_id: album,
            nonce,
            created_at: now,
            retired_at: None,
        }
    }

    /// What may not happen to a folder under a takedown or with publishing off.
    fn may_publish(&self, album: &AlbumRow, mode: &str) -> Result<()> {
        if album.taken_down_at.is_some() {
            return Err(Error::TakenDown);
        }
        if mode != PRIVATE && !self.server_publishing {
            return Err(Error::Forbidden);
        }
        Ok(())
    }

    async fn apply(&self, p: Publication) -> Result<SharingDto> {
        match self.repo.publish(&p).await? {
            Published::Done => {}
            Published::AliasTaken => return Err(Error::invalid("alias", "is taken")),
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

    async fn publication(&self, album: &AlbumRow, mode: &str, now: i64) -> Result<Publication> {
        let published = mode != PRIVATE;
        Ok(Publication {
            album_id: album.id,
            owner_id: album.owner_id,
            mode: mode.to_owned(),
            last_published_mode: if published {
                Some(mode.to_owned())
            } else {
                album.last_published_mode.clone()
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
        if !MODES.contains(&mode) {
            return Err(Error::invalid(
                "mode",
                "must be private, unlisted or public",
            ));
        }
        let keep = token_choice(token)?;
        let alias = match alias {
            Some(_) if mode != PUBLIC => {
                return Err(Error::invalid("alias", "can only be set with mode public"))
            }
            Some(a) => Some(aliases::normalize(a)?),
            None => None,
        };
        let album = self.owned(owner, album).await?;
        self.may_publish(&album, mode)?;
        let now = time::now_ms();
        let mut p = self.publication(&album, mode, now).await?;
        let was = album.mode.as_str();
        p.link = match mode {
            PUBLIC => LinkChange::Retire,
            UNLISTED if was == PUBLIC => LinkChange::Replace(self.new_link(album.id, now)),
            UNLISTED => {
                // Re-setting unlisted keeps the link unless asked otherwise.
                let keep = keep.unwrap_or(was == UNLISTED);
                match self.repo.link_of(album.id).await? {
                    Some(_) if keep => LinkChange::Keep,
                    _ => LinkChange::Replace(self.new_link(album.id, now)),
                }
            }
            _ => LinkChange::Keep,
        };
        p.aliases = match (alias, was == PUBLIC && mode != PUBLIC) {
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
        let keep = token_choice(token)?.unwrap_or(false);
        let album = self.owned(owner, album).await?;
        let remembered = match (&album.mode[..], &album.last_published_mode) {
            (PRIVATE, Some(m)) => m.clone(),
            _ => {
                return Err(Error::invalid(
                    "album_id",
                    "the folder is not private with a remembered published mode",
                ))
            }
        };
        self.may_publish(&album, &remembered)?;
        let now = time::now_ms();
        let mut p = self.publication(&album, &remembered, now).await?;
        if remembered == UNLISTED {
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
        let mut p = self.publication(&album, &album.mode, now).await?;
        p.link = LinkChange::Replace(self.new_link(album.id, now));
        p.record_history = false;
        self.apply(p).await
    }
}
