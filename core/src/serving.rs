//! What `/i/{id}/{file}` serves, cached in memory: the database answer for
//! (image, crop) for at most a second, and the bytes of small renders by
//! blob key. Render keys carry their version, so cached bytes never go
//! stale; the lookups are dropped whenever this process changes anything
//! (`renders_changed`), and other replicas' changes show within `TTL`.

use crate::db::{DynRepo, ServedRender};
use crate::store::BlobStore;
use crate::Result;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const TTL: Duration = Duration::from_secs(1);
/// Renders up to this size are kept in memory.
pub const SMALL: u64 = 512 << 10;
const BYTES_BUDGET: usize = 128 << 20;
const MAX_LOOKUPS: usize = 100_000;

static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Something a served render depends on may have changed in this process.
pub fn renders_changed() {
    EPOCH.fetch_add(1, Ordering::SeqCst);
}

struct Lookup {
    render: ServedRender,
    epoch: u64,
    at: Instant,
}

#[derive(Default)]
struct SmallFiles {
    files: HashMap<String, Bytes>,
    order: VecDeque<String>,
    total: usize,
}

pub struct ServedRenders {
    repo: DynRepo,
    store: BlobStore,
    lookups: RwLock<HashMap<(Uuid, String), Lookup>>,
    small: Mutex<SmallFiles>,
}

impl ServedRenders {
    pub fn new(repo: DynRepo, store: BlobStore) -> ServedRenders {
        ServedRenders {
            repo,
            store,
            lookups: RwLock::default(),
            small: Mutex::default(),
        }
    }

    /// The produced, visible render of `code`, if any.
    pub async fn lookup(&self, image: Uuid, code: &str) -> Result<Option<ServedRender>> {
        // Read before the query: a change that lands during it leaves the
        // entry already stale.
        let epoch = EPOCH.load(Ordering::SeqCst);
        let key = (image, code.to_owned());
        if let Some(hit) = self.lookups.read().expect("lookups").get(&key) {
            if hit.epoch == epoch && hit.at.elapsed() < TTL {
                return Ok(Some(hit.render.clone()));
            }
        }
        let found = self.repo.served_render(image, code).await?;
        let mut lookups = self.lookups.write().expect("lookups");
        if lookups.len() >= MAX_LOOKUPS {
            lookups.clear();
        }
        match &found {
            Some(render) => {
                let at = Instant::now();
                lookups.insert(
                    key,
                    Lookup {
                        render: render.clone(),
                        epoch,
                        at,
                    },
                );
            }
            None => {
                lookups.remove(&key);
            }
        }
        Ok(found)
    }

    /// The whole of a small render, from memory after the first read.
    pub async fn small_file(&self, key: &str) -> Result<Bytes> {
        if let Some(bytes) = self.small.lock().expect("small files").files.get(key) {
            return Ok(bytes.clone());
        }
        let bytes = self.store.get_bytes(key).await?;
        let mut small = self.small.lock().expect("small files");
        if !small.files.contains_key(key) {
            small.total += bytes.len();
            small.files.insert(key.to_owned(), bytes.clone());
            small.order.push_back(key.to_owned());
            while small.total > BYTES_BUDGET {
                let Some(old) = small.order.pop_front() else {
                    break;
                };
                if let Some(b) = small.files.remove(&old) {
                    small.total -= b.len();
                }
            }
        }
        Ok(bytes)
    }
}
