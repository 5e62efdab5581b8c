//! Repository roles for folders: the folders themselves, their
//! crop rules and order, and their publication (links, aliases, takedowns).

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::album::Album;
use lightbox_domain::album::{Policy, PublishMode};
use lightbox_domain::alias::Alias;
use lightbox_domain::crop::CropSpec;
use lightbox_domain::image::Image;
use lightbox_domain::sharing::ShareLink;
use uuid::Uuid;

/// What happens to a folder's bearer link in a publication change.
#[derive(Debug, Clone)]
pub enum LinkChange {
    Keep,
    /// Retire every link of the folder and make this one live.
    Replace(ShareLink),
    /// Retire every link of the folder.
    Retire,
}

/// What happens to a folder's aliases in a publication change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AliasChange {
    Keep,
    /// `current` and `previous` become `expired` (the folder left public).
    Expire,
    /// `expired` come back: the newest `current`, the others `previous`.
    Reactivate,
    /// This alias becomes the folder's `current`; the old one `previous`.
    Claim(String),
}

/// One publication change, committed in one transaction with its history row.
#[derive(Debug, Clone)]
pub struct Publication {
    pub album_id: Uuid,
    pub owner_id: Uuid,
    pub mode: PublishMode,
    pub last_published_mode: Option<PublishMode>,
    pub published_at: Option<i64>,
    pub link: LinkChange,
    pub aliases: AliasChange,
    /// The owner's quota of `current` + `previous` aliases.
    pub alias_limit: i64,
    pub now: i64,
    /// False for a link reset: mode and history stay as they are.
    pub record_history: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    Done,
    /// Another owner holds the alias (the database decided).
    AliasTaken,
    /// The owner's aliases would pass the limit.
    OverQuota,
    /// The owner's reserved names (`domain::alias::reservation_cap`) are full.
    OverReservations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moderated {
    Album(Uuid),
    Image(Uuid),
}

#[async_trait]
pub trait AlbumRepo {
    async fn insert_album(&self, album: &Album) -> Result<()>;
    /// A live (not deleted) folder, scoped to `owner` when given.
    async fn album(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<Album>>;
    /// The owner's live folders, default first, then oldest first.
    async fn albums_of(&self, owner: Uuid) -> Result<Vec<Album>>;
    /// False when the owner has no such live, non-default folder.
    async fn update_album(
        &self,
        owner: Uuid,
        id: Uuid,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<bool>;
    /// Moves the photos to `to`, releases the aliases (held until
    /// `hold_until`), retires the links and soft-deletes the folder, in one
    /// transaction; returns the moved photos, `None` if there was no such
    /// live folder.
    async fn delete_album(
        &self,
        owner: Uuid,
        id: Uuid,
        to: Uuid,
        now: i64,
        hold_until: i64,
    ) -> Result<Option<Vec<Uuid>>>;
    /// Every photo of the folder.
    async fn album_images(&self, album: Uuid) -> Result<Vec<Image>>;
    /// Sets the manual order: `ids` get positions 0, 1, … in one transaction.
    async fn set_positions(&self, album: Uuid, ids: &[Uuid]) -> Result<()>;
    /// The folder's crop rules.
    async fn album_crops(&self, album: Uuid) -> Result<Vec<CropSpec>>;
    /// Upserts a rule; false (and nothing written) when it is a new code
    /// and the folder already has `limits::MAX_ALBUM_RULES` rules. Racing
    /// calls never pass the limit together.
    async fn set_album_crop(&self, album: Uuid, spec: &CropSpec, now: i64) -> Result<bool>;
    async fn delete_album_crop(&self, album: Uuid, code: &str) -> Result<bool>;
    async fn set_policy(&self, album: Uuid, policy: &Policy) -> Result<()>;
    async fn set_cover(&self, album: Uuid, image: Option<Uuid>) -> Result<()>;
}

#[async_trait]
pub trait SharingRepo {
    async fn publish(&self, change: &Publication) -> Result<Published>;
    /// The folder's link that has not been retired (live or dormant).
    async fn link_of(&self, album: Uuid) -> Result<Option<ShareLink>>;
    async fn link_by_hash(&self, token_hash: &str) -> Result<Option<ShareLink>>;
    async fn aliases_of(&self, album: Uuid) -> Result<Vec<Alias>>;
    async fn alias(&self, alias: &str) -> Result<Option<Alias>>;
    /// How many `current` and `previous` aliases the owner holds.
    async fn aliases_used(&self, owner: Uuid) -> Result<i64>;
    /// Releases one of the folder's aliases (held until `hold_until`); a
    /// released `current` hands its place to the newest `previous`.
    async fn release_alias(&self, album: Uuid, alias: &str, hold_until: i64) -> Result<bool>;
    /// Starts (`Some(reason)`) or ends (`None`) a takedown; false when there
    /// is no such folder or image.
    async fn set_takedown(&self, target: Moderated, reason: Option<&str>, now: i64)
        -> Result<bool>;
}
