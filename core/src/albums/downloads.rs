//! Owner downloads of a whole folder: a zip of every photo visitors could
//! see, in the folder's order, as originals (`full`) or as the largest
//! screen render (`screen`). Rechecked on every request of the link.

use super::Albums;
use crate::archive::Entry;
use crate::db::ImageRow;
use crate::images::downloads::{FULL, SCREEN};
use crate::renders::PROCESSING;
use crate::sharing::view::zip_entries;
use crate::sharing::Folder;
use crate::{Error, Result};
use uuid::Uuid;

impl Albums {
    /// The zip's entries now, or 2006 with why there is nothing to send.
    pub async fn archive_entries(
        &self,
        owner: Uuid,
        album: Uuid,
        variant: &str,
    ) -> Result<Vec<Entry>> {
        if variant != SCREEN && variant != FULL {
            return Err(Error::invalid("variant", "must be screen or full"));
        }
        let row = self.owned(owner, album).await?;
        if row.taken_down_at.is_some() {
            return Err(Error::DownloadNotReady {
                state: "unavailable",
            });
        }
        let folder = Folder::load(&self.repo, row).await?;
        let processing = folder.images.iter().any(|i| i.status == PROCESSING);
        let visible: Vec<&ImageRow> = folder.visible().collect();
        let renders = match variant {
            SCREEN => {
                let ids: Vec<Uuid> = visible.iter().map(|i| i.id).collect();
                self.repo.renders_of(&ids).await?
            }
            _ => Vec::new(),
        };
        let entries = zip_entries(&visible, &renders, variant == FULL);
        if entries.is_empty() {
            let state = if processing {
                "preparing"
            } else {
                "unavailable"
            };
            return Err(Error::DownloadNotReady { state });
        }
        Ok(entries)
    }
}
