//! `image.get` held until the photo settles (`Prefer: wait`): a client that
//! waits for its renders is answered as soon as they are recorded, instead
//! of at its next poll, and costs one call instead of dozens. Woken by
//! `queue::news` alone: news lost with a dropped NATS connection leaves the
//! call held to its deadline (at most a few seconds), and the database's
//! answer then is still the truth.

use super::dto::ImageDto;
use super::Images;
use crate::domain::image::ImageStatus;
use crate::metrics::METRICS;
use crate::queue::news::heard;
use crate::Result;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// Counts a held call in `image_waits_held` for as long as it lives.
struct Held;

impl Held {
    fn new() -> Held {
        METRICS.image_waits_held.inc();
        Held
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        METRICS.image_waits_held.dec();
    }
}

impl Images {
    /// The owner's photo once it is no longer `processing`, or as it is
    /// when `within` has passed.
    pub async fn get_settled(&self, owner: Uuid, id: Uuid, within: Duration) -> Result<ImageDto> {
        let deadline = Instant::now() + within;
        // Listening before reading, so a settle between the two is heard.
        let mut news = self.renderer.news.listen();
        let mut held = None;
        loop {
            let image = self.get(owner, id).await?;
            if image.status != ImageStatus::Processing {
                METRICS.image_wait(if held.is_some() { "settled" } else { "at_once" });
                return Ok(image);
            }
            held.get_or_insert_with(Held::new);
            // A photo's news, or news this listener fell behind on: read again.
            if tokio::time::timeout_at(deadline, heard(&mut news, id))
                .await
                .is_err()
            {
                METRICS.image_wait("deadline");
                return self.get(owner, id).await;
            }
        }
    }
}
