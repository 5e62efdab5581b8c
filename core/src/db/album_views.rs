//! The repository role for a folder's visitor view: its visible photos in
//! the policy's order, a page at a time from a photo (a keyset walk over
//! an index in that order, never the whole folder), their counts, and the
//! folder's stats as one aggregate.

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::album::Order;
pub use lightbox_domain::counts::AlbumCounts;
use lightbox_domain::image::Image;
use uuid::Uuid;

/// A stretch of a folder's visible photos.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub order: Order,
    /// Start after this photo (before it when `backward`); the first
    /// photo of the order when `None`.
    pub from: Option<Uuid>,
    /// Towards the start of the order.
    pub backward: bool,
    /// Photos passed over first.
    pub skip: u32,
    pub limit: u32,
}

impl Walk {
    pub fn forward(order: Order, from: Option<Uuid>, limit: u32) -> Walk {
        Walk {
            order,
            from,
            backward: false,
            skip: 0,
            limit,
        }
    }
}

#[async_trait]
pub trait AlbumViewRepo {
    /// The photos of the walk; `None` when `from` is not a photo visitors
    /// of the folder see.
    async fn album_walk(&self, album: Uuid, walk: Walk) -> Result<Option<Vec<Image>>>;
    /// How many visible photos come before `photo` in the order (all of
    /// them when `None`); `None` when `photo` is not visible there.
    async fn album_rank(
        &self,
        album: Uuid,
        order: Order,
        photo: Option<Uuid>,
    ) -> Result<Option<i64>>;
    /// The photo, when visitors of the folder see it.
    async fn album_photo(&self, album: Uuid, photo: Uuid) -> Result<Option<Image>>;
    async fn album_counts(&self, album: Uuid) -> Result<AlbumCounts>;
}
