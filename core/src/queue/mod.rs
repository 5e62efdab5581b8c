//! Render work between the API and the workers. The database is the source
//! of truth (an image stays `processing` until its renders exist), so the
//! queue only carries work: a lost message is found again at start-up.

mod memory;

use crate::Result;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use memory::MemoryQueue;

/// "Bring this image's renders up to date." Idempotent: running it twice
/// produces nothing twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderJob {
    pub image_id: Uuid,
}

#[async_trait]
pub trait JobQueue: Send + Sync {
    async fn publish(&self, job: RenderJob) -> Result<()>;
    /// The next job, or `None` once the queue is closed.
    async fn next(&self) -> Option<RenderJob>;
}
