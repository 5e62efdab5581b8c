//! `image.get` held until the photo settles (`Prefer: wait`): a client that
//! waits for its renders is answered as soon as they are recorded, instead
//! of at its next poll, and costs one call instead of dozens. Woken by
//! `queue::news` alone: news lost with a dropped NATS connection leaves the
//! call held to its deadline (at most a few seconds), and the database's
//! answer then is still the truth.

use super::dto::ImageDto;
use super::Images;
use crate::metrics::METRICS;
use crate::queue::news::heard;
use crate::Result;
use lightbox_domain::image::ImageStatus;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;
use uuid::Uuid;

/// One call that asked to wait: counted in `image_waits_held` while held,
/// and in `image_waits_total` by how it ended, whichever way it ends (a
/// client that goes away drops the call: `cancelled`).
struct Tally {
    held: bool,
    ended: &'static str,
}

impl Tally {
    fn hold(&mut self) {
        if !self.held {
            self.held = true;
            METRICS.image_waits_held.inc();
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if self.held {
            METRICS.image_waits_held.dec();
        }
        METRICS.image_wait(self.ended);
    }
}

impl Images {
    /// The owner's photo once it is no longer `processing`, or as it is
    /// when `within` has passed or `stop` (the process's shutdown) resolves.
    pub async fn get_settled(
        &self,
        owner: Uuid,
        id: Uuid,
        within: Duration,
        stop: impl Future<Output = ()>,
    ) -> Result<ImageDto> {
        let mut tally = Tally {
            held: false,
            ended: "cancelled",
        };
        let answer = self.hold(owner, id, within, stop, &mut tally).await;
        if answer.is_err() {
            tally.ended = "error";
        }
        answer
    }

    async fn hold(
        &self,
        owner: Uuid,
        id: Uuid,
        within: Duration,
        stop: impl Future<Output = ()>,
        tally: &mut Tally,
    ) -> Result<ImageDto> {
        let deadline = Instant::now() + within;
        // Listening before reading, so a settle between the two is heard.
        let mut news = self.news.listen();
        tokio::pin!(stop);
        loop {
            let image = self.get(owner, id).await?;
            if image.status != ImageStatus::Processing {
                tally.ended = if tally.held { "settled" } else { "at_once" };
                return Ok(image);
            }
            tally.hold();
            // The photo's news, or news this listener fell behind on (or
            // its deletion): read again.
            tokio::select! {
                _ = heard(&mut news, id) => {}
                _ = tokio::time::sleep_until(deadline) => {
                    tally.ended = "deadline";
                    return self.get(owner, id).await;
                }
                _ = &mut stop => {
                    tally.ended = "stopping";
                    return Ok(image);
                }
            }
        }
    }
}
