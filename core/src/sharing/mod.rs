//! Publication of folders: modes and links (`modes`), aliases (`aliases`),
//! policy and cover (`covers`), what visitors see (`visitors`, `view`,
//! `html`) and the counts owners get (`stats`).

pub mod aliases;
pub mod covers;
pub mod html;
pub mod modes;
pub mod policy;
pub mod stats;
pub mod view;
pub mod visitors;

use crate::auth::jwt::Signer;
use crate::db::{AlbumRow, DynRepo, ImageRow, LinkRow, RenderRow};
use crate::images::dto::{eligibility, Moderation};
use crate::resources::Resources;
use crate::{time, Error, Result};
use policy::Policy;
use serde::Serialize;
use serde_json::{json, Map, Value};
use stats::Stats;
use std::sync::Arc;
use uuid::Uuid;

pub const PRIVATE: &str = "private";
pub const UNLISTED: &str = "unlisted";
pub const PUBLIC: &str = "public";

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
}

#[derive(Debug, Serialize)]
pub struct AliasDto {
    pub alias: String,
    pub state: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct AliasQuota {
    pub used: i64,
    pub limit: i64,
}

#[derive(Debug, Serialize)]
pub struct Cover {
    pub is_default: bool,
    /// The chosen cover stopped being visible, so the automatic choice is back.
    pub was_reset: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_id: Option<Uuid>,
}

#[derive(Debug, Serialize)]
pub struct Republish {
    pub mode: String,
    pub token_choices: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct SharingDto {
    pub album_id: Uuid,
    pub mode: String,
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_published_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    pub links: Value,
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

/// A folder with everything the sharing rules look at.
pub struct Folder {
    pub album: AlbumRow,
    pub policy: Policy,
    /// Every photo, in the policy's order.
    pub images: Vec<ImageRow>,
}

impl Folder {
    /// The photos visitors may see, in order.
    pub fn visible(&self) -> impl Iterator<Item = &ImageRow> {
        self.images.iter().filter(|i| eligibility(i) == "visible")
    }

    /// The cover photo and whether a chosen cover had to be dropped.
    pub fn cover(&self) -> (Option<&ImageRow>, bool) {
        let chosen = self
            .album
            .cover_image_id
            .and_then(|id| self.visible().find(|i| i.id == id));
        match (self.album.cover_image_id, chosen) {
            (_, Some(c)) => (Some(c), false),
            (Some(_), None) => (self.visible().next(), true),
            (None, None) => (self.visible().next(), false),
        }
    }
}

impl Folder {
    /// The folder's photos, in its policy's order.
    pub async fn load(repo: &DynRepo, album: AlbumRow) -> Result<Folder> {
        let policy = Policy::parse(&album.policy);
        let mut images = repo.album_images(album.id).await?;
        policy.sort(&mut images);
        Ok(Folder {
            album,
            policy,
            images,
        })
    }
}

/// sharingDTO `state`; visitors reach a folder only while it is `live`.
pub fn state_of(album: &AlbumRow, server_publishing: bool) -> &'static str {
    if !server_publishing {
        "publishing_disabled"
    } else if album.taken_down_at.is_some() {
        "taken_down"
    } else if album.mode == PRIVATE {
        "private"
    } else {
        "live"
    }
}

impl Sharing {
    pub async fn folder(&self, album: AlbumRow) -> Result<Folder> {
        Folder::load(&self.repo, album).await
    }

    pub async fn owned(&self, owner: Uuid, album: Uuid) -> Result<AlbumRow> {
        self.repo
            .album(Some(owner), album)
            .await?
            .ok_or(Error::NotFound)
    }

    pub fn state(&self, album: &AlbumRow) -> &'static str {
        state_of(album, self.server_publishing)
    }

    /// Whether visitors reach the folder at all.
    pub fn is_live(&self, album: &AlbumRow) -> bool {
        self.state(album) == "live"
    }

    pub async fn limit_of(&self, owner: Uuid) -> Result<i64> {
        let user = self.repo.user_by_id(owner).await?.ok_or(Error::NotFound)?;
        let limit = self.resources.alias_limit().await?;
        Ok(limit.for_email(&user.email) as i64)
    }

    pub fn share_url(&self, link: &LinkRow) -> String {
        format!("/s/{}", self.signer.share_token(&link.nonce))
    }

    /// The renders of many photos, in one query.
    pub async fn renders_of(&self, images: &[&ImageRow]) -> Result<Vec<RenderRow>> {
        let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
        self.repo.renders_of(&ids).await
    }

    pub async fn get(&self, owner: Uuid, album: Uuid) -> Result<SharingDto> {
        let album = self.owned(owner, album).await?;
        self.dto(album).await
    }

    pub async fn dto(&self, album: AlbumRow) -> Result<SharingDto> {
        let owner = album.owner_id;
        let now = time::now_ms();
        let link = self.repo.link_of(album.id).await?;
        let rows = self.repo.aliases_of(album.id).await?;
        let current = rows.iter().find(|a| a.state == "current");
        let mut links = Map::new();
        match album.mode.as_str() {
            UNLISTED => {
                if let Some(l) = &link {
                    links.insert("share_url".into(), json!(self.share_url(l)));
                }
            }
            PUBLIC => {
                let url = match current {
                    Some(a) => format!("/a/{}", a.alias),
                    None => format!("/albums/{}", album.id),
                };
                links.insert("public_url".into(), json!(url));
            }
            _ => {}
        }
        let aliases = rows
            .iter()
            .filter(|a| a.state != "released" || a.expires_at.is_some_and(|e| e > now))
            .map(|a| AliasDto {
                alias: a.alias.clone(),
                state: a.state.clone(),
                created_at: time::rfc3339(a.created_at),
                expires_at: a.expires_at.map(time::rfc3339),
            })
            .collect();
        let republish = match (&album.mode[..], &album.last_published_mode) {
            (PRIVATE, Some(m)) => Some(Republish {
                mode: m.clone(),
                token_choices: match (m.as_str(), &link) {
                    (UNLISTED, Some(_)) => vec!["new", "keep"],
                    (UNLISTED, None) => vec!["new"],
                    _ => vec![],
                },
            }),
            _ => None,
        };
        let used = self.repo.aliases_used(owner).await?;
        let limit = self.limit_of(owner).await?;
        let state = self.state(&album);
        let folder = self.folder(album).await?;
        let (cover, was_reset) = folder.cover();
        let a = &folder.album;
        Ok(SharingDto {
            album_id: a.id,
            mode: a.mode.clone(),
            state,
            last_published_mode: a.last_published_mode.clone(),
            published_at: a.published_at.map(time::rfc3339),
            links: Value::Object(links),
            aliases,
            alias_quota: AliasQuota { used, limit },
            cover: Cover {
                is_default: a.cover_image_id.is_none() || was_reset,
                was_reset,
                image_id: cover.map(|c| c.id),
            },
            stats: stats::stats(&folder.images, &folder.policy),
            moderation: Moderation::of(a.taken_down_at, a.takedown_reason.as_deref()),
            republish,
            server_publishing: self.server_publishing,
            policy: folder.policy,
        })
    }
}
