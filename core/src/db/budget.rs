//! What the abuse budgets read and write: an owner's stored bytes and
//! waiting work, and why a photo failed to render.

use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

#[async_trait]
pub trait BudgetRepo {
    /// Records (or replaces) why an image's renders failed.
    async fn set_failure_reason(&self, image_id: Uuid, reason: &str, now: i64) -> Result<()>;
    /// Bytes of originals the owner stores.
    async fn stored_bytes(&self, owner: Uuid) -> Result<i64>;
    /// The owner's images waiting for renders.
    async fn pending_of(&self, owner: Uuid) -> Result<i64>;
}
