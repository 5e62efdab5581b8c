//! Bytes read from local files into HTTP/2 response bodies and not yet
//! sent. An HTTP/2 connection carries up to 16 streams, and hyper asks a
//! stream's body for its next chunk as soon as the stream has any send
//! window, whether or not the client reads its socket: a client that never
//! reads pinned a 256 KiB chunk on each of its streams (100 connections
//! from one address took 350 MB). Paced reads take a smaller chunk, and
//! only once this process-wide budget has room for it; the room comes back
//! when the chunk is dropped (sent to the kernel, or its stream reset).
//! Streams waiting for room wait like any stalled response, and the idle
//! watchdog closes connections that stay stuck.

use bytes::Bytes;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes paced response bodies may hold, read and unsent, per process.
pub const UNSENT_MAX: usize = 32 << 20;
/// What one paced read takes.
pub const PACED_CHUNK: usize = 64 << 10;
/// The budget counts in KiB, so a `u32` of permits covers any chunk.
const UNIT: usize = 1 << 10;

/// The budget; clones share it.
#[derive(Debug, Clone)]
pub struct Unsent(Arc<Semaphore>);

impl Unsent {
    pub fn new(max_bytes: usize) -> Unsent {
        Unsent(Arc::new(Semaphore::new(max_bytes / UNIT)))
    }

    /// Waits for room for `len` bytes (at most `PACED_CHUNK`).
    pub async fn room(&self, len: usize) -> Room {
        let units = len.min(PACED_CHUNK).div_ceil(UNIT) as u32;
        let permit = self.0.clone().acquire_many_owned(units).await;
        Room {
            _permit: permit.expect("the budget's semaphore is never closed"),
        }
    }

    /// Bytes of room left.
    pub fn left(&self) -> usize {
        self.0.available_permits() * UNIT
    }
}

/// Room taken in the budget, given back on drop.
#[derive(Debug)]
pub struct Room {
    _permit: OwnedSemaphorePermit,
}

/// `buf` as `Bytes` that keep `room` taken until their last clone drops.
pub fn held(buf: Vec<u8>, room: Room) -> Bytes {
    Bytes::from_owner(Held { buf, _room: room })
}

struct Held {
    buf: Vec<u8>,
    _room: Room,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_read_waits_until_an_earlier_chunk_is_dropped() {
        let unsent = Unsent::new(PACED_CHUNK);
        let first = held(vec![1; PACED_CHUNK], unsent.room(PACED_CHUNK).await);
        assert_eq!(unsent.left(), 0);
        let waiting = tokio::time::timeout(Duration::from_millis(50), unsent.room(1)).await;
        assert!(waiting.is_err(), "room while the first chunk is held");
        let part = first.slice(10..20);
        drop(first);
        assert_eq!(unsent.left(), 0, "a slice still holds the chunk");
        drop(part);
        assert_eq!(unsent.left(), PACED_CHUNK);
        let _second = unsent.room(1).await;
    }
}
