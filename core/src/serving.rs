//! What `/i/{id}/{file}` serves, cached in memory: the database answer for
//! (image, crop) for at most a second, and the bytes of small renders by
//! blob key. Render keys carry their version, so cached bytes never go
//! stale; the lookups are dropped whenever this process changes anything
//! (through the `Changes` handle each changer holds), and other replicas'
//! changes show within `TTL`.

use crate::db::DynRepo;
use crate::store::BlobStore;
use crate::Result;
use bytes::Bytes;
use lightbox_domain::render::ServedRender;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const TTL: Duration = Duration::from_secs(1);
/// Renders up to this size are kept in memory.
pub const SMALL: u64 = 512 << 10;
const BYTES_BUDGET: usize = 128 << 20;
/// Images with cached lookups; each has a bounded number of codes
/// (presets, custom crops, folder rules).
const MAX_LOOKUP_IMAGES: usize = 20_000;

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

/// Whether `render` is of the `version` asked for (any, without one).
fn is_version(render: &ServedRender, version: Option<i64>) -> bool {
    version.is_none_or(|v| v == render.version)
}

struct Lookup {
    /// Shared with the requests it answers, not copied for each.
    render: Arc<ServedRender>,
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
    /// By image, then code: a request's borrowed code finds its entry.
    lookups: RwLock<HashMap<Uuid, HashMap<String, Lookup>>>,
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

    /// A fresh cached answer of the `version` asked for (if one is).
    fn cached(
        &self,
        image: Uuid,
        code: &str,
        epoch: u64,
        version: Option<i64>,
    ) -> Option<Arc<ServedRender>> {
        let lookups = self.lookups.read().expect("lookups");
        let hit = lookups.get(&image)?.get(code)?;
        let fresh = hit.epoch == epoch && hit.at.elapsed() < TTL;
        (fresh && is_version(&hit.render, version)).then(|| hit.render.clone())
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
    ) -> Result<Option<Arc<ServedRender>>> {
        // Read before the query: a change that lands during it leaves the
        // entry already stale.
        let epoch = self.changes.epoch();
        if let Some(hit) = self.cached(image, code, epoch, version) {
            return Ok(Some(hit));
        }
        let found = self.repo.served_render(image, code).await?.map(Arc::new);
        let mut lookups = self.lookups.write().expect("lookups");
        if lookups.len() >= MAX_LOOKUP_IMAGES {
            lookups.clear();
        }
        match &found {
            Some(render) => {
                let entry = Lookup {
                    render: render.clone(),
                    epoch,
                    at: Instant::now(),
                };
                let codes = lookups.entry(image).or_default();
                codes.insert(code.to_owned(), entry);
            }
            None => {
                if let Some(codes) = lookups.get_mut(&image) {
                    codes.remove(code);
                    if codes.is_empty() {
                        lookups.remove(&image);
                    }
                }
            }
        }
        Ok(found.filter(|r| is_version(r, version)))
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
