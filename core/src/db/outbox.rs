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
    /// Each owner's `per_owner` oldest rows not yet sent, with the owner,
    /// oldest first, at most `limit` in all; owners with `cap` rows sent
    /// already are left out.
    async fn outbox_heads(
        &self,
        per_owner: i64,
        cap: i64,
        limit: i64,
    ) -> Result<Vec<(OutboxRow, Uuid)>>;
    /// How many rows each owner has sent and not yet done.
    async fn outbox_in_flight(&self) -> Result<Vec<(Uuid, i64)>>;
    /// Makes rows sent before `sent_before` waiting again, under a new
    /// ticket (their messages were lost); how many.
    async fn outbox_lost(&self, sent_before: i64) -> Result<u64>;
    /// Removes a row once its job is answered; a row renewed meanwhile
    /// waits again under its next ticket.
    async fn outbox_remove(&self, row: &OutboxRow) -> Result<()>;
    /// Marks a row sent (its job in flight) until its job is answered.
    async fn outbox_sent(&self, row: &OutboxRow, now: i64) -> Result<()>;
    /// Makes every sent row waiting again (a start, whose in-process
    /// queue is empty); how many.
    async fn outbox_resend(&self) -> Result<u64>;
    /// Rows not yet sent.
    async fn outbox_len(&self) -> Result<i64>;
    /// How often the in-process queue has started a row's job, in any
    /// process; `None` when the row is gone or was renewed.
    async fn outbox_starts(&self, row: &OutboxRow) -> Result<Option<u32>>;
    /// Counts a start of a row's job: `outbox_starts` after it.
    async fn outbox_started(&self, row: &OutboxRow) -> Result<Option<u32>>;
    /// Takes back a start that ended in a hand-back, not a death.
    async fn outbox_unstarted(&self, row: &OutboxRow) -> Result<()>;
    /// `outbox_add` at a start: a row already there gets a new ticket
    /// and waits again (a queue that drops a ticket it has seen must not
    /// drop this request), but keeps its count of starts.
    async fn outbox_recorded_again(&self, image_ids: &[Uuid], now: i64) -> Result<()>;
}
