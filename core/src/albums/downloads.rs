//! Owner downloads of a whole folder: a zip of every photo visitors could
//! see, in the folder's order, as originals (`full`) or as the largest
//! screen render (`screen`). Rechecked on every request of the link.

use super::Albums;
use crate::archive::Entry;
use crate::sharing::view::zip_entries;
use crate::sharing::SharedAlbum;
use crate::{Error, Result};
use lightbox_domain::downloads::{DownloadState, Variant};
use uuid::Uuid;

impl Albums {
    /// The zip's entries now, or 2006 with why there is nothing to send.
    pub async fn archive_entries(
        &self,
        owner: Uuid,
        album: Uuid,
        variant: Variant,
    ) -> Result<Vec<Entry>> {
        let row = self.owned(owner, album).await?;
        if row.takedown.is_active() {
            return Err(Error::DownloadNotReady {
                state: DownloadState::Unavailable,
            });
        }
        let shared = SharedAlbum::new(&self.repo, row);
        let processing = shared.stats().await?.breakdown.processing > 0;
        let visible = shared.all_visible().await?;
        let renders = match variant {
            Variant::Screen => {
                let ids: Vec<Uuid> = visible.iter().map(|i| i.id).collect();
                self.repo.renders_of(&ids).await?
            }
            Variant::Full => Vec::new(),
            // A clip is one photo's, and its owner's only.
            Variant::Motion => return Err(Error::invalid("variant", "must be screen or full")),
        };
        let entries = zip_entries(&visible, &renders, variant == Variant::Full);
        if entries.is_empty() {
            let state = if processing {
                DownloadState::Preparing
            } else {
                DownloadState::Unavailable
            };
            return Err(Error::DownloadNotReady { state });
        }
        Ok(entries)
    }
}
