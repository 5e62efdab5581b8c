//! The controller's decisions as pure functions of what it observed, so
//! they are tested without a cluster or a database.

use crate::resources::RerenderStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use lightbox_core::config::RenderQuota;
use lightbox_core::resources::pacing;
use std::collections::HashMap;
use std::time::Duration;
use uuid::Uuid;

pub const READY: &str = "Ready";
/// A backlog is fed to the queue once a minute (RenderQuota's unit).
pub const ROUND: Duration = Duration::from_secs(60);
/// Settled resources are looked at again this often, to heal drift.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The database name of a Kubernetes resource.
pub fn resource_name(namespace: &str, name: &str) -> String {
    format!("k8s/{namespace}/{name}")
}

/// The Ready condition; `lastTransitionTime` moves only when the status
/// does, so it says since when the resource has been (un)ready.
pub fn ready_condition(
    ok: bool,
    reason: &str,
    message: &str,
    generation: Option<i64>,
    previous: &[Condition],
) -> Condition {
    let status = if ok { "True" } else { "False" };
    let since = previous
        .iter()
        .find(|c| c.type_ == READY && c.status == status)
        .map_or_else(
            || Time(k8s_openapi::jiff::Timestamp::now()),
            |c| c.last_transition_time.clone(),
        );
    Condition {
        type_: READY.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: generation,
        last_transition_time: since,
    }
}

/// One round of a preset's re-render.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetRound {
    pub batch: Vec<Uuid>,
    pub rerender: RerenderStatus,
    pub requeue: Duration,
    pub message: String,
}

/// What to enqueue now for a preset at `generation`, given the images off
/// its spec, the work already waiting per owner and the quota.
pub fn preset_round(
    generation: i64,
    previous: Option<&RerenderStatus>,
    backlog: &[(Uuid, Uuid)],
    pending: &HashMap<Uuid, i64>,
    quota: Option<&RenderQuota>,
) -> PresetRound {
    let batch = pacing::next_batch(backlog, pending, quota);
    let queued_before = previous
        .filter(|p| p.generation == generation)
        .map_or(0, |p| p.queued);
    let remaining = backlog.len() as u64;
    let left_after = remaining - batch.len() as u64;
    let message = if remaining == 0 {
        "every image has this render".to_owned()
    } else {
        format!(
            "{} images queued for re-render this round, {left_after} waiting for the render quota",
            batch.len()
        )
    };
    PresetRound {
        rerender: RerenderStatus {
            generation,
            remaining,
            queued: queued_before + batch.len() as u64,
        },
        requeue: if left_after > 0 { ROUND } else { RESYNC },
        batch,
        message,
    }
}

/// The wait before retrying a resource after `failures` failed attempts in a row.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.min(8)).min(Duration::from_secs(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(per_minute: u64) -> RenderQuota {
        RenderQuota {
            max_pixels: 1,
            max_pending_per_owner: Some(1000),
            max_renders_per_minute_per_owner: Some(per_minute),
        }
    }

    #[test]
    fn a_backlog_over_the_quota_is_fed_in_rounds_and_counted() {
        let owner = Uuid::new_v4();
        let backlog: Vec<_> = (0..25).map(|_| (Uuid::new_v4(), owner)).collect();
        let first = preset_round(3, None, &backlog, &HashMap::new(), Some(&quota(10)));
        assert_eq!(first.batch.len(), 10);
        assert_eq!(first.requeue, ROUND);
        assert_eq!((first.rerender.remaining, first.rerender.queued), (25, 10));
        let second = preset_round(
            3,
            Some(&first.rerender),
            &backlog[10..],
            &HashMap::new(),
            Some(&quota(10)),
        );
        assert_eq!(second.rerender.queued, 20);
        let last = preset_round(
            3,
            Some(&second.rerender),
            &backlog[20..],
            &HashMap::new(),
            Some(&quota(10)),
        );
        assert_eq!(
            (last.batch.len(), last.requeue, last.rerender.queued),
            (5, RESYNC, 25)
        );
    }

    #[test]
    fn a_new_generation_starts_counting_again() {
        let previous = RerenderStatus {
            generation: 1,
            remaining: 0,
            queued: 40,
        };
        let backlog = vec![(Uuid::new_v4(), Uuid::new_v4())];
        let round = preset_round(2, Some(&previous), &backlog, &HashMap::new(), None);
        assert_eq!(
            round.rerender,
            RerenderStatus {
                generation: 2,
                remaining: 1,
                queued: 1
            }
        );
    }

    #[test]
    fn nothing_to_do_says_so_and_resyncs_slowly() {
        let round = preset_round(1, None, &[], &HashMap::new(), None);
        assert!(round.batch.is_empty());
        assert_eq!(round.requeue, RESYNC);
        assert_eq!(round.message, "every image has this render");
    }

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let then = Time("2026-01-02T03:04:05Z".parse().unwrap());
        let was_ready = [Condition {
            last_transition_time: then.clone(),
            ..ready_condition(true, "Applied", "old", Some(1), &[])
        }];
        let still = ready_condition(true, "Applied", "new", Some(2), &was_ready);
        assert_eq!(still.last_transition_time, then);
        assert_eq!(
            (still.message.as_str(), still.observed_generation),
            ("new", Some(2))
        );
        let broken = ready_condition(false, "Invalid", "bad", Some(3), &was_ready);
        assert_ne!(broken.last_transition_time, then);
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        assert_eq!(backoff(0), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(8));
        assert_eq!(backoff(30), Duration::from_secs(256));
        assert!(backoff(30) <= Duration::from_secs(300));
    }
}
