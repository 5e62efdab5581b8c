//! A streamed multipart write that aborts itself on every failure.
//!
//! `object_store::WriteMultipart::finish` returns early when a part fails
//! (its last one included) without aborting the upload, and dropping an S3
//! upload does not abort it either: the parts already sent would stay in
//! the bucket, billed and invisible, until a lifecycle rule removed them.

use crate::Result;
use object_store::{MultipartUpload, PutPayloadMut};
use tokio::task::JoinSet;

/// Part size: S3's minimum for every part but the last.
const PART: usize = 5 * 1024 * 1024;

#[derive(Debug)]
pub struct ObjectWriter {
    upload: Box<dyn MultipartUpload>,
    buffer: PutPayloadMut,
    parts: JoinSet<object_store::Result<()>>,
}

impl ObjectWriter {
    pub(super) fn new(upload: Box<dyn MultipartUpload>) -> ObjectWriter {
        ObjectWriter {
            upload,
            buffer: PutPayloadMut::new(),
            parts: JoinSet::new(),
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
        self.parts.spawn(self.upload.put_part(part));
    }

    /// Waits until at most `max` parts are in flight: the bound on what one
    /// upload holds in memory. A failed part fails the write.
    pub async fn wait_for_capacity(&mut self, max: usize) -> Result<()> {
        while self.parts.len() > max {
            if let Some(done) = self.parts.join_next().await {
                done.map_err(|e| anyhow::anyhow!("a part's upload stopped: {e}"))??;
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
            Ok(()) => self.upload.complete().await.map_err(Into::into),
            Err(e) => Err(e),
        };
        match done {
            Ok(_) => Ok(()),
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }

    /// Stops the parts in flight and removes what was sent. Best effort: a
    /// failure here is logged, as the write has already failed.
    pub async fn abort(mut self) {
        self.parts.shutdown().await;
        if let Err(e) = self.upload.abort().await {
            tracing::warn!(error = %e, "aborting a failed upload");
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
