//! Zips streamed to the client: entries are copied from the blob store
//! chunk by chunk into a zip written for a non-seekable stream (sizes in
//! data descriptors, Zip64 when needed), so no archive is ever held whole.

use crate::store::BlobStore;
use bytes::Bytes;
use futures::StreamExt;
use std::io::{self, Write};
use tokio::sync::mpsc;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

/// One file of the archive: its name inside the zip and its blob key.
pub struct Entry {
    pub name: String,
    pub key: String,
}

const CHUNK: usize = 256 << 10;

/// Sends what it is written in chunks; a closed receiver (the client went
/// away) turns into a write error, which stops the zip.
struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "client gone"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

fn write_zip(store: &BlobStore, entries: Vec<Entry>, out: ChannelWriter) -> io::Result<()> {
    let rt = tokio::runtime::Handle::current();
    let mut zip = zip::ZipWriter::new_stream(out);
    // Photos are compressed already: store them, and allow any size.
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(true);
    for e in entries {
        zip.start_file(e.name, options).map_err(io::Error::other)?;
        let mut stream = rt
            .block_on(store.get_stream(&e.key, None))
            .map_err(io::Error::other)?;
        while let Some(chunk) = rt.block_on(stream.next()) {
            zip.write_all(&chunk.map_err(io::Error::other)?)?;
        }
    }
    zip.finish().map_err(io::Error::other)?.into_inner().flush()
}

/// Starts writing the zip on a blocking thread; the receiver yields its bytes.
pub fn stream(store: BlobStore, entries: Vec<Entry>) -> mpsc::Receiver<io::Result<Bytes>> {
    let (tx, rx) = mpsc::channel(4);
    let errors = tx.clone();
    tokio::task::spawn_blocking(move || {
        let out = ChannelWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        };
        if let Err(e) = write_zip(&store, entries, out) {
            tracing::warn!(error = %e, "zip stream stopped");
            let _ = errors.blocking_send(Err(e));
        }
    });
    rx
}
