//! Zips streamed to the client: entries are copied from the blob store
//! chunk by chunk into a zip written for a non-seekable stream (sizes in
//! data descriptors, Zip64 when needed), so no archive is ever held whole.

use crate::store::BlobStore;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

/// One file of the archive: its name inside the zip and its blob key.
pub struct Entry {
    pub name: String,
    pub key: String,
}

const CHUNK: usize = 256 << 10;

/// What the zip writer writes into; drained into the channel by the task.
/// Stored entries cost no CPU, so the writing runs on the async runtime:
/// a client that does not read holds a parked task, not a thread.
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<Vec<u8>>>);

impl Write for Pending {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("zip buffer").extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Sink {
    pending: Pending,
    tx: mpsc::Sender<io::Result<Bytes>>,
    timeout: Duration,
}

impl Sink {
    /// Sends what is written once a chunk is full (or everything, at the
    /// end). A client that reads nothing for `timeout`, or went away,
    /// stops the zip.
    async fn send(&self, all: bool) -> io::Result<()> {
        loop {
            let chunk = {
                let mut buf = self.pending.0.lock().expect("zip buffer");
                if buf.is_empty() || (!all && buf.len() < CHUNK) {
                    return Ok(());
                }
                let n = buf.len().min(CHUNK);
                Bytes::from(buf.drain(..n).collect::<Vec<u8>>())
            };
            match tokio::time::timeout(self.timeout, self.tx.send(Ok(chunk))).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(io::Error::new(io::ErrorKind::BrokenPipe, "client gone")),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "client not reading",
                    ))
                }
            }
        }
    }
}

impl Sink {
    /// Waits until the client has taken every chunk (each slot of the
    /// channel free again), one slot at a time within the send timeout, so
    /// the zip's permit is not given back while its tail is still queued.
    async fn drained(&self) -> io::Result<()> {
        let mut free = Vec::with_capacity(self.tx.max_capacity());
        while free.len() < self.tx.max_capacity() {
            match tokio::time::timeout(self.timeout, self.tx.reserve()).await {
                Ok(Ok(slot)) => free.push(slot),
                Ok(Err(_)) => return Err(io::Error::new(io::ErrorKind::BrokenPipe, "client gone")),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "client not reading",
                    ))
                }
            }
        }
        Ok(())
    }
}

async fn write_zip(store: &BlobStore, entries: Vec<Entry>, sink: &Sink) -> io::Result<()> {
    let mut zip = zip::ZipWriter::new_stream(sink.pending.clone());
    // Photos are compressed already: store them, and allow any size.
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(true);
    for e in entries {
        zip.start_file(e.name, options).map_err(io::Error::other)?;
        let mut stream = store
            .get_stream(&e.key, None, crate::store::Reads::Whole)
            .await
            .map_err(io::Error::other)?;
        while let Some(chunk) = stream.next().await {
            zip.write_all(&chunk.map_err(io::Error::other)?)?;
            sink.send(false).await?;
        }
    }
    zip.finish().map_err(io::Error::other)?;
    sink.send(true).await?;
    sink.drained().await
}

/// Starts writing the zip on a task and streams its bytes. `guard` (a zip
/// permit) is held until the zip ends, however it ends: its last chunk
/// taken by the response, the client gone, or the send timeout. A zip stopped
/// before its end (blob error, client not reading) ends the stream with
/// an error, so the response is cut off, never passed off as complete.
pub fn stream<G: Send + 'static>(
    store: BlobStore,
    entries: Vec<Entry>,
    send_timeout: Duration,
    guard: G,
) -> BoxStream<'static, io::Result<Bytes>> {
    let (tx, rx) = mpsc::channel(4);
    let done = Arc::new(AtomicBool::new(false));
    let finished = done.clone();
    tokio::spawn(async move {
        let _guard = guard;
        let sink = Sink {
            pending: Pending::default(),
            tx,
            timeout: send_timeout,
        };
        match write_zip(&store, entries, &sink).await {
            Ok(()) => finished.store(true, Ordering::Release),
            Err(e) => tracing::warn!(error = %e, "zip stream stopped"),
        }
    });
    futures::stream::unfold(Some(rx), move |state| {
        let done = done.clone();
        async move {
            let mut rx = state?;
            match rx.recv().await {
                Some(item) => Some((item, Some(rx))),
                None if done.load(Ordering::Acquire) => None,
                None => Some((Err(io::Error::other("zip stopped early")), None)),
            }
        }
    })
    .boxed()
}
