//! A streamed multipart write that aborts itself on every failure.
//!
//! `object_store::WriteMultipart::finish` returns early when a part fails
//! (its last one included) without aborting the upload, and dropping an S3
//! upload does not abort it either: the parts already sent would stay in
//! the bucket, billed and invisible, until a lifecycle rule removed them.
//! So this writer aborts on a failed part or completion, and when it is
//! dropped unfinished (a request cancelled mid-write). A local write is
//! synced before `finish` returns.

use super::durable::Durable;
use crate::error::OrInternal;
use crate::Result;
use object_store::{MultipartUpload, PutPayloadMut};
use tokio::task::JoinSet;
use tokio_util::task::TaskTracker;

/// Part size: S3's minimum for every part but the last.
const PART: usize = 5 * 1024 * 1024;

#[derive(Debug)]
pub struct ObjectWriter {
    /// `None` once completed or aborted.
    upload: Option<Box<dyn MultipartUpload>>,
    buffer: PutPayloadMut,
    parts: JoinSet<object_store::Result<()>>,
    /// The store's: an abort spawned on drop is waited for at shutdown.
    tasks: TaskTracker,
    /// Set for a local file, synced once complete.
    durable: Option<Durable>,
}

impl ObjectWriter {
    pub(super) fn new(
        upload: Box<dyn MultipartUpload>,
        tasks: TaskTracker,
        durable: Option<Durable>,
    ) -> ObjectWriter {
        ObjectWriter {
            upload: Some(upload),
            buffer: PutPayloadMut::new(),
            parts: JoinSet::new(),
            tasks,
            durable,
        }
    }

    /// Buffers `buf`, sending each full part as it fills.
    pub fn write(&mut self, mut buf: &[u8]) {
        while !buf.is_empty() {
            let room = PART - self.buffer.content_length();
            let (now, rest) = buf.split_at(buf.len().min(room));
            self.buffer.extend_from_slice(now);
            if now.len() == room {
                self.send_buffer();
            }
            buf = rest;
        }
    }

    fn send_buffer(&mut self) {
        let part = std::mem::take(&mut self.buffer).freeze();
        if let Some(upload) = self.upload.as_mut() {
            self.parts.spawn(upload.put_part(part));
        }
    }

    /// Waits until fewer than `max` parts are in flight (none for 0), as
    /// `WriteMultipart` does: with a write between two waits, at most `max`
    /// parts of one upload are held in memory. A failed part fails the
    /// write.
    pub async fn wait_for_capacity(&mut self, max: usize) -> Result<()> {
        while !self.parts.is_empty() && self.parts.len() >= max {
            if let Some(done) = self.parts.join_next().await {
                done.map_err(|e| anyhow::anyhow!("a part's upload stopped: {e}"))?
                    .or_internal()?;
            }
        }
        Ok(())
    }

    /// Sends the last part and completes the object; on any failure the
    /// upload is aborted before the error is returned.
    pub async fn finish(mut self) -> Result<()> {
        if self.buffer.content_length() > 0 {
            self.send_buffer();
        }
        let done = match self.wait_for_capacity(0).await {
            Ok(()) => self.complete().await,
            Err(e) => Err(e),
        };
        if done.is_err() {
            self.abort().await;
        }
        done
    }

    async fn complete(&mut self) -> Result<()> {
        let Some(upload) = self.upload.as_mut() else {
            return Err(anyhow::anyhow!("the upload was already aborted").into());
        };
        upload.complete().await.or_internal()?;
        self.upload = None;
        if let Some(durable) = &self.durable {
            // An upload's key is new: nothing else can name this file yet.
            if let Err(e) = durable.sync().await {
                durable.remove().await;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Stops the parts in flight and removes what was sent. Best effort: a
    /// failure here is logged, as the write has already failed.
    pub async fn abort(mut self) {
        self.parts.shutdown().await;
        if let Some(mut upload) = self.upload.take() {
            if let Err(e) = upload.abort().await {
                tracing::warn!(error = %e, "aborting a failed upload");
            }
        }
    }
}

impl Drop for ObjectWriter {
    /// Dropped unfinished (its request cancelled, even inside `finish`):
    /// the parts in flight stop with the `JoinSet`, and the abort runs on
    /// its own task.
    fn drop(&mut self) {
        let Some(mut upload) = self.upload.take() else {
            return;
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let abort = async move {
                if let Err(e) = upload.abort().await {
                    tracing::warn!(error = %e, "aborting an abandoned upload");
                }
            };
            self.tasks.spawn_on(abort, &rt);
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
