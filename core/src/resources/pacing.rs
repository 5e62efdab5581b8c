//! How fast a preset's re-render backlog is fed to the queue: at most
//! `maxRendersPerMinutePerOwner` images per owner per round (a round is a
//! minute), and never beyond `maxPendingPerOwner` (1000 when unset)
//! waiting at once, so one large account cannot starve the others. Pure:
//! the controller calls it.

use crate::config::RenderQuota;
use std::collections::HashMap;
use uuid::Uuid;

/// The images to enqueue this round, from the backlog `(image, owner)` and
/// the number already waiting per owner.
pub fn next_batch(
    backlog: &[(Uuid, Uuid)],
    pending: &HashMap<Uuid, i64>,
    quota: Option<&RenderQuota>,
) -> Vec<Uuid> {
    let per_minute = quota.and_then(|q| q.max_renders_per_minute_per_owner);
    let max_pending = crate::config::max_pending_per_owner(quota);
    let mut taken: HashMap<Uuid, u64> = HashMap::new();
    let mut batch = Vec::new();
    for (image, owner) in backlog {
        let waiting = pending.get(owner).copied().unwrap_or(0).max(0) as u64;
        let allowance = per_minute
            .unwrap_or(u64::MAX)
            .min(max_pending.saturating_sub(waiting));
        let n = taken.entry(*owner).or_default();
        if *n < allowance {
            *n += 1;
            batch.push(*image);
        }
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(per_minute: Option<u64>, pending: Option<u64>) -> RenderQuota {
        RenderQuota {
            max_pixels: 1,
            max_pending_per_owner: pending,
            max_renders_per_minute_per_owner: per_minute,
        }
    }

    fn backlog(owner: Uuid, n: usize) -> Vec<(Uuid, Uuid)> {
        (0..n).map(|_| (Uuid::new_v4(), owner)).collect()
    }

    #[test]
    fn without_a_quota_everything_goes_at_once() {
        let b = backlog(Uuid::new_v4(), 7);
        assert_eq!(next_batch(&b, &HashMap::new(), None).len(), 7);
    }

    #[test]
    fn each_owner_gets_at_most_the_per_minute_rate() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let mut all = backlog(a, 10);
        all.extend(backlog(b, 2));
        let batch = next_batch(&all, &HashMap::new(), Some(&quota(Some(3), None)));
        assert_eq!(batch.len(), 5, "3 of a's, both of b's");
        assert_eq!(
            batch
                .iter()
                .filter(|i| all[..10].iter().any(|(x, _)| x == *i))
                .count(),
            3
        );
    }

    #[test]
    fn work_already_waiting_counts_against_the_pending_cap() {
        let a = Uuid::new_v4();
        let pending = HashMap::from([(a, 4)]);
        let q = quota(Some(100), Some(5));
        assert_eq!(next_batch(&backlog(a, 10), &pending, Some(&q)).len(), 1);
        let full = HashMap::from([(a, 9)]);
        assert!(next_batch(&backlog(a, 10), &full, Some(&q)).is_empty());
    }
}
