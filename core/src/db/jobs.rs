//! Re-render jobs and the photos each covers, for `job.get`.

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::jobs::{ItemState, JobCounts};
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
    /// The jobs with the photo still queued. A render job reads them
    /// before the photo's specs: a job's spec changes are committed before
    /// the job, so the run renders what every job it read asked for.
    async fn queued_jobs(&self, image: Uuid) -> Result<Vec<i64>>;
    /// A render job for the photo ended as `state`: the photo's items of
    /// `jobs` (read by `queued_jobs` when it began) are settled. Jobs
    /// recorded after that wait for the run they queue themselves: no
    /// clock is compared, so neither the same millisecond nor skew between
    /// an API and a worker's clock can leave a job queued for ever.
    async fn settle_job_items(&self, image: Uuid, jobs: &[i64], state: ItemState) -> Result<()>;
}
