//! An owner's share of the service at upload time: bytes stored (the
//! `LIGHTBOX_STORAGE_PER_OWNER_BYTES` quota, unlimited by default) and
//! photos waiting for renders (RenderQuota's `maxPendingPerOwner`, 1000
//! when unset, which holds for ordinary uploads as it does for re-renders:
//! past it, the owner's next upload waits, told when to retry).

use crate::db::Repo;
use crate::limits::storage::{Reservations, Reserved};
use crate::resources::Resources;
use crate::{Error, Result};
use uuid::Uuid;

/// Seconds an owner over the pending cap is told to wait.
pub const PENDING_RETRY_S: u64 = 5;

/// Refuses an upload of `incoming` more bytes (0 before the size is
/// known) that the owner's budget does not allow. With a storage quota, an
/// upload let through holds its bytes in `reservations` until the returned
/// promise is dropped: keep it until the upload's row is in.
pub async fn check_upload(
    repo: &dyn Repo,
    resources: &Resources,
    (storage_quota, reservations): (Option<u64>, &Reservations),
    owner: Uuid,
    incoming: u64,
) -> Result<Option<Reserved>> {
    let mut promised = None;
    if let Some(quota) = storage_quota {
        let (reserved, settling) = reservations.reserve(owner, incoming);
        let stored = repo.stored_bytes(owner).await?.max(0) as u64;
        let taken = stored.saturating_add(settling);
        if taken.saturating_add(incoming) > quota || taken >= quota {
            return Err(Error::invalid(
                "file",
                format!("over the storage quota of {quota} bytes"),
            ));
        }
        promised = Some(reserved);
    }
    let max = crate::config::max_pending_per_owner(resources.render_quota().await?.as_ref());
    if repo.pending_of(owner).await?.max(0) as u64 >= max {
        return Err(Error::RateLimited {
            retry_after_s: PENDING_RETRY_S,
        });
    }
    Ok(promised)
}
