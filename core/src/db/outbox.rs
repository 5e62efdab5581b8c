//! The outbox: render work the database holds until the queue has it.

use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub image_id: Uuid,
    /// Names this request; it becomes the queue message's dedup id.
    pub ticket: String,
}

#[async_trait]
pub trait OutboxRepo {
    /// Records that these images need their renders brought up to date.
    async fn outbox_add(&self, image_ids: &[Uuid], now: i64) -> Result<()>;
    /// The oldest waiting rows.
    async fn outbox_batch(&self, limit: i64) -> Result<Vec<OutboxRow>>;
    /// Removes a row once sent, unless a newer request renewed it.
    async fn outbox_remove(&self, row: &OutboxRow) -> Result<()>;
    async fn outbox_len(&self) -> Result<i64>;
}
