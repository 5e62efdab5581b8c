//! Owner downloads of a whole folder: a zip of every photo visitors could
//! see, in the folder's order, as originals (`full`) or as the largest
//! screen render (`screen`). Rechecked on every request of the link.

use super::Albums;
use crate::archive::Entry;
use crate::images::downloads::{FULL, SCREEN};
use crate::images::dto::eligibility;
use crate::renders::PROCESSING;
use crate::sharing::policy::Policy;
use crate::sharing::view::best_render;
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
        let mut images = self.repo.album_images(album).await?;
        Policy::parse(&row.policy).sort(&mut images);
        let processing = images.iter().any(|i| i.status == PROCESSING);
        images.retain(|i| eligibility(i) == "visible");
        let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
        let renders = match variant {
            SCREEN => self.repo.renders_of(&ids).await?,
            _ => Vec::new(),
        };
        let mut entries = Vec::with_capacity(images.len());
        for (n, image) in images.iter().enumerate() {
            let (key, ext) = match variant {
                FULL => (image.original_key.clone(), image.format.clone()),
                _ => match best_render(image, &renders)? {
                    Some(found) => found,
                    None => continue,
                },
            };
            entries.push(Entry {
                name: format!("{:03}-{}.{ext}", n + 1, image.id),
                key,
            });
        }
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
