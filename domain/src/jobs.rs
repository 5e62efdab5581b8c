//! Re-render jobs that folder changes start (`album.delete`,
//! `album.crop.set`, `album.crop.delete`) and how `job.get` reports them.

use serde::Serialize;

wire_enum! {
    /// `job.get` `state`.
    pub enum JobState {
        /// No photo of the job has finished yet.
        Queued = "queued",
        Running = "running",
        /// Every photo finished and none failed.
        Done = "done",
        /// Every photo finished and at least one failed.
        Failed = "failed",
    }
}

wire_enum! {
    /// How one photo of a job ended (stored per photo).
    pub enum ItemState {
        Queued = "queued",
        Done = "done",
        Failed = "failed",
    }
}

/// What the database counts for a job: its photos at the start, and how
/// many are still waiting or failed. A photo deleted mid-job has nothing
/// left to render, so it counts as done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCounts {
    pub id: i64,
    pub kind: String,
    pub total: i64,
    pub queued: i64,
    pub failed: i64,
}

/// `job.get`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Job {
    pub job_id: i64,
    pub kind: String,
    pub state: JobState,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
}

impl From<JobCounts> for Job {
    fn from(c: JobCounts) -> Job {
        let queued = c.queued.clamp(0, c.total);
        let failed = c.failed.clamp(0, c.total - queued);
        let done = c.total - queued - failed;
        let state = match (queued, failed) {
            (q, _) if q == c.total && c.total > 0 => JobState::Queued,
            (q, _) if q > 0 => JobState::Running,
            (_, 0) => JobState::Done,
            _ => JobState::Failed,
        };
        Job {
            job_id: c.id,
            kind: c.kind,
            state,
            total: c.total,
            done,
            failed,
        }
    }
}
