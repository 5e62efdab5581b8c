//! What `/i/{id}/{file}` serves, cached in memory: the database answer for
//! (image, crop) for at most a second, and the bytes of small renders by
//! blob key. Render keys carry their version, so cached bytes never go
//! stale; the lookups are dropped whenever this process changes anything
//! (through the `Changes` handle each changer holds), and other replicas'
//! changes show within `TTL`.

use crate::db::DynRepo;
use crate::domain::render::ServedRender;
use crate::store::BlobStore;
use crate::Result;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const TTL: Duration = Duration::from_secs(1);
/// Renders up to this size are kept in memory.
pub const SMALL: u64 = 512 << 10;
const BYTES_BUDGET: usize = 128 << 20;
const MAX_LOOKUPS: usize = 100_000;

/// Tells the render cache that something a served render depends on may
/// have changed in this process. Cloned into whoever changes renders (the
/// render job, deletes, the RPC dispatcher) and read by `ServedRenders`.
#[derive(Clone, Default)]
pub struct Changes(Arc<AtomicU64>);

impl Changes {
    pub fn changed(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn epoch(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
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
    changes: Changes,
    lookups: RwLock<HashMap<(Uuid, String), Lookup>>,
    small: Mutex<SmallFiles>,
}

impl ServedRenders {
    pub fn new(repo: DynRepo, store: BlobStore, changes: Changes) -> ServedRenders {
        ServedRenders {
            repo,
            store,
            changes,
            lookups: RwLock::default(),
            small: Mutex::default(),
        }
    }

    /// The produced, visible render of `code`, if any, and only when it is
    /// of the `version` asked for (if one is). A cached answer of another
    /// version is checked against the database before it is refused, so
    /// another replica's new version is found at once.
    pub async fn lookup(
        &self,
        image: Uuid,
        code: &str,
        version: Option<i64>,
    ) -> Result<Option<ServedRender>> {
        let exact = |r: Option<ServedRender>| r.filter(|r| version.is_none_or(|v| v == r.version));
        // Read before the query: a change that lands during it leaves the
        // entry already stale.
        let epoch = self.changes.epoch();
        let key = (image, code.to_owned());
        if let Some(hit) = self.lookups.read().expect("lookups").get(&key) {
            let fresh = hit.epoch == epoch && hit.at.elapsed() < TTL;
            if fresh && version.is_none_or(|v| v == hit.render.version) {
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
        Ok(exact(found))
    }

    /// The whole of a small render of `size` bytes, from memory after the
    /// first read. Cached bytes of another size are never served: they are
    /// read again (keys carry versions that never repeat, so this is only
    /// a guard).
    pub async fn small_file(&self, key: &str, size: u64) -> Result<Bytes> {
        let cached = self
            .small
            .lock()
            .expect("small files")
            .files
            .get(key)
            .cloned();
        if let Some(bytes) = cached.filter(|b| b.len() as u64 == size) {
            return Ok(bytes);
        }
        let bytes = self.store.get_bytes(key).await?;
        let mut small = self.small.lock().expect("small files");
        if let Some(old) = small.files.remove(key) {
            small.total -= old.len();
            small.order.retain(|k| k != key);
        }
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
        Ok(bytes)
    }
}
