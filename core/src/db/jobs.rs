//! Re-render jobs and the photos each covers, for `job.get`.

use crate::domain::jobs::{ItemState, JobCounts};
use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

/// A new job: who started it, for which folder, why (the method name,
/// `job.get`'s `kind`), and its photos.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub owner: Uuid,
    pub album: Uuid,
    pub kind: &'a str,
    pub images: &'a [Uuid],
    pub now: i64,
}

#[async_trait]
pub trait JobRepo {
    /// Records a job and its photos in one transaction; returns its id.
    async fn insert_job(&self, job: &NewJob<'_>) -> Result<i64>;
    /// The owner's job, counted; `None` for another owner's or no job.
    async fn job_counts(&self, owner: Uuid, id: i64) -> Result<Option<JobCounts>>;
    /// A render job for the photo ended as `state`: every job recorded
    /// before `since` (when that render job began reading the photo's
    /// specs) is settled for it. Later jobs wait for their own run.
    async fn settle_job_items(&self, image: Uuid, since: i64, state: ItemState) -> Result<()>;
}
