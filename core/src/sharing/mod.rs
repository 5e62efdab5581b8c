//! Publication of folders: modes and links (`modes`), aliases (`aliases`),
//! policy and cover (`covers`), what visitors see (`visitors`, `view`,
//! `html`, `placeholders`) and the counts owners get (`stats`).

pub mod aliases;
pub mod covers;
pub mod feed;
pub mod html;
pub mod modes;
pub mod placeholders;
pub mod stats;
pub mod view;
pub mod viewer;
pub mod visitors;

use crate::auth::jwt::Signer;
use crate::db::{DynRepo, Walk};
use crate::images::dto::Moderation;
use crate::resources::Resources;
use crate::{time, Error, Result};
use lightbox_domain::album::Album;
use lightbox_domain::album::{Policy, PublishMode};
use lightbox_domain::alias::AliasState;
use lightbox_domain::image::Image;
use lightbox_domain::render::Render;
use lightbox_domain::sharing::{
    republish_choices, sharing_state, ShareLink, SharingState, TokenChoice,
};
use lightbox_domain::urls;
use serde::Serialize;
use stats::Stats;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Clone)]
pub struct Sharing {
    pub repo: DynRepo,
    pub signer: Arc<Signer>,
    /// Where the alias limit is read, afresh for every claim.
    pub resources: Resources,
    /// `LIGHTBOX_SERVER_PUBLISHING`: false keeps every folder unpublished.
    pub server_publishing: bool,
    pub base_url: Arc<str>,
    pub image_host: Arc<str>,
    pub alias_checks: Arc<aliases::CheckLimiter>,
    /// The `data:` URLs of photos' placeholders made so far.
    pub placeholders: Arc<placeholders::Placeholders>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AliasDto {
    pub alias: String,
    pub state: AliasState,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AliasQuota {
    pub used: i64,
    pub limit: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Cover {
    pub is_default: bool,
    /// The chosen cover stopped being visible, so the automatic choice is back.
    pub was_reset: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_id: Option<Uuid>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Republish {
    pub mode: PublishMode,
    pub token_choices: Vec<TokenChoice>,
}

/// sharingDTO `links`: `{}` while private.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Links {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SharingDto {
    pub album_id: Uuid,
    pub mode: PublishMode,
    pub state: SharingState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_published_mode: Option<PublishMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    pub links: Links,
    pub aliases: Vec<AliasDto>,
    pub alias_quota: AliasQuota,
    pub policy: Policy,
    pub cover: Cover,
    pub stats: Stats,
    pub moderation: Moderation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub republish: Option<Republish>,
    pub server_publishing: bool,
}

/// A folder, and its photos as its visitors see them: a page at a time,
/// in its policy's order, from the database (never the whole folder but
/// for a zip).
pub struct SharedAlbum {
    pub album: Album,
    repo: DynRepo,
}

impl SharedAlbum {
    pub fn new(repo: &DynRepo, album: Album) -> SharedAlbum {
        SharedAlbum {
            album,
            repo: repo.clone(),
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.album.policy
    }

    /// Up to `limit` visible photos after `from` (from the first when
    /// `None`); `None` when `from` is not a visible photo of the folder.
    pub async fn page(&self, from: Option<Uuid>, limit: u32) -> Result<Option<Vec<Image>>> {
        let walk = Walk::forward(self.policy().order, from, limit);
        self.repo.album_walk(self.album.id, walk).await
    }

    /// The visible photo `skip` places before `from`, if there is one.
    pub async fn before(&self, from: Uuid, skip: u32) -> Result<Option<Image>> {
        let walk = Walk {
            backward: true,
            skip,
            ..Walk::forward(self.policy().order, Some(from), 1)
        };
        let found = self.repo.album_walk(self.album.id, walk).await?;
        Ok(found.and_then(|mut v| v.pop()))
    }

    /// Every visible photo, in order: only a zip needs them all.
    pub async fn all_visible(&self) -> Result<Vec<Image>> {
        Ok(self.page(None, u32::MAX).await?.unwrap_or_default())
    }

    /// The photo, when the folder's visitors see it.
    pub async fn photo(&self, id: Uuid) -> Result<Option<Image>> {
        self.repo.album_photo(self.album.id, id).await
    }

    /// How many visible photos come before `photo` (all of them when
    /// `None`); `None` when it is not visible.
    pub async fn rank(&self, photo: Option<Uuid>) -> Result<Option<i64>> {
        let order = self.policy().order;
        self.repo.album_rank(self.album.id, order, photo).await
    }

    /// The cover photo and whether a chosen cover had to be dropped.
    pub async fn cover(&self) -> Result<(Option<Image>, bool)> {
        let chosen = match self.album.cover_image_id {
            Some(id) => self.photo(id).await?,
            None => None,
        };
        match (self.album.cover_image_id, chosen) {
            (_, Some(c)) => Ok((Some(c), false)),
            (chosen, None) => {
                let first = self.page(None, 1).await?.unwrap_or_default();
                Ok((first.into_iter().next(), chosen.is_some()))
            }
        }
    }

    pub async fn stats(&self) -> Result<Stats> {
        let counts = self.repo.album_counts(self.album.id).await?;
        Ok(stats::from_counts(&counts, self.policy()))
    }
}

impl Sharing {
    pub fn shared(&self, album: Album) -> SharedAlbum {
        SharedAlbum::new(&self.repo, album)
    }

    pub async fn owned(&self, owner: Uuid, album: Uuid) -> Result<Album> {
        self.repo
            .album(Some(owner), album)
            .await?
            .ok_or(Error::NotFound)
    }

    pub fn state(&self, album: &Album) -> SharingState {
        sharing_state(album, self.server_publishing)
    }

    /// Whether visitors reach the folder at all.
    pub fn is_live(&self, album: &Album) -> bool {
        self.state(album) == SharingState::Live
    }

    pub async fn limit_of(&self, owner: Uuid) -> Result<i64> {
        let user = self.repo.user_by_id(owner).await?.ok_or(Error::NotFound)?;
        let limit = self.resources.alias_limit().await?;
        Ok(limit.for_email(&user.email) as i64)
    }

    pub fn share_url(&self, link: &ShareLink) -> String {
        urls::shared(&self.signer.share_token(&link.nonce))
    }

    /// The renders of many photos, in one query.
    pub async fn renders_of(&self, images: &[Image]) -> Result<Vec<Render>> {
        let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
        self.repo.renders_of(&ids).await
    }

    pub async fn get(&self, owner: Uuid, album: Uuid) -> Result<SharingDto> {
        let album = self.owned(owner, album).await?;
        self.dto(album).await
    }

    fn links(&self, album: &Album, link: Option<&ShareLink>, primary: Option<&str>) -> Links {
        match album.mode {
            PublishMode::Unlisted => Links {
                share_url: link.map(|l| self.share_url(l)),
                ..Links::default()
            },
            PublishMode::Public => Links {
                public_url: Some(urls::public_album(primary, album.id)),
                ..Links::default()
            },
            PublishMode::Private => Links::default(),
        }
    }

    pub async fn dto(&self, album: Album) -> Result<SharingDto> {
        let owner = album.owner_id;
        let now = time::now_ms();
        let link = self.repo.link_of(album.id).await?;
        let rows = self.repo.aliases_of(album.id).await?;
        let current = rows.iter().find(|a| a.state == AliasState::Current);
        let links = self.links(&album, link.as_ref(), current.map(|a| a.alias.as_str()));
        let aliases = rows
            .iter()
            .filter(|a| a.is_held(now))
            .map(|a| AliasDto {
                alias: a.alias.clone(),
                state: a.state,
                created_at: time::rfc3339(a.created_at),
                expires_at: a.expires_at.map(time::rfc3339),
            })
            .collect();
        let republish =
            republish_choices(&album, link.is_some()).map(|(mode, token_choices)| Republish {
                mode,
                token_choices,
            });
        let used = self.repo.aliases_used(owner).await?;
        let limit = self.limit_of(owner).await?;
        let state = self.state(&album);
        let shared = self.shared(album);
        let (cover, was_reset) = shared.cover().await?;
        let a = &shared.album;
        Ok(SharingDto {
            album_id: a.id,
            mode: a.mode,
            state,
            last_published_mode: a.last_published_mode,
            published_at: a.published_at.map(time::rfc3339),
            links,
            aliases,
            alias_quota: AliasQuota { used, limit },
            cover: Cover {
                is_default: a.cover_image_id.is_none() || was_reset,
                was_reset,
                image_id: cover.map(|c| c.id),
            },
            stats: shared.stats().await?,
            moderation: Moderation::from(&a.takedown),
            republish,
            server_publishing: self.server_publishing,
            policy: shared.album.policy.clone(),
        })
    }
}
