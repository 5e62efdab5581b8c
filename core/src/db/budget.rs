//! What the abuse budgets read and write: an owner's stored bytes and
//! waiting work, and why a photo failed to render.

use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

#[async_trait]
pub trait BudgetRepo {
    /// Records (or replaces) why an image's renders failed.
    async fn set_failure_reason(&self, image_id: Uuid, reason: &str, now: i64) -> Result<()>;
    /// The failure reasons of those of `image_ids` that have one.
    async fn failure_reasons(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, String)>>;
    /// Bytes of originals the owner stores.
    async fn stored_bytes(&self, owner: Uuid) -> Result<i64>;
    /// The owner's images waiting for renders.
    async fn pending_of(&self, owner: Uuid) -> Result<i64>;
}
