//! What `/i/{id}/{file}` serves, cached in memory: the database answer for
//! (image, crop) for at most a second, and the bytes of small renders by
//! blob key, each cache bounded in bytes. Render keys carry their version,
//! so cached bytes never go stale; the lookups are dropped whenever this
//! process changes anything (through the `Changes` handle each changer
//! holds), and other replicas' changes show within `TTL`.

use crate::db::DynRepo;
use crate::store::BlobStore;
use crate::Result;
use bytes::Bytes;
use lightbox_domain::render::ServedRender;
use quick_cache::sync::Cache;
use quick_cache::{Equivalent, Weighter};
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const TTL: Duration = Duration::from_secs(1);
/// Renders up to this size are kept in memory.
pub const SMALL: u64 = 512 << 10;
/// Bytes of small renders kept, keys included.
const FILE_BYTES: u64 = 128 << 20;
/// Bytes of lookups kept, keys and answers included: some 80,000 (image,
/// crop) pairs, fewer than the 20,000 images of up to a dozen codes each
/// that the hand-written map held before it was cleared.
const LOOKUP_BYTES: u64 = 16 << 20;

/// Tells the render cache that something a served render depends on may
/// have changed in this process. Cloned into whoever changes renders (the
/// render job, deletes, the RPC dispatcher) and read by `StoredRenders`.
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

/// The key of a kept lookup.
#[derive(Hash, PartialEq, Eq)]
struct Code {
    image: Uuid,
    code: Box<str>,
}

/// A request's (image, code), borrowed: found without a copy. Hashes as
/// `Code` does (field by field, `&str` as `str`).
#[derive(Hash)]
struct Asked<'a> {
    image: Uuid,
    code: &'a str,
}

impl Equivalent<Code> for Asked<'_> {
    fn equivalent(&self, key: &Code) -> bool {
        self.image == key.image && self.code == &*key.code
    }
}

#[derive(Clone)]
struct Lookup {
    /// Shared with the requests it answers, not copied for each.
    render: Arc<ServedRender>,
    epoch: u64,
    at: Instant,
}

/// What an entry holds in memory: its parts and the strings they own.
#[derive(Clone)]
struct Bytesize;

impl Weighter<Code, Lookup> for Bytesize {
    fn weight(&self, key: &Code, v: &Lookup) -> u64 {
        let fixed = size_of::<Code>() + size_of::<Lookup>() + size_of::<ServedRender>() + 16;
        (fixed + key.code.len() + v.render.blob_key.len()) as u64
    }
}

impl Weighter<Box<str>, Bytes> for Bytesize {
    fn weight(&self, key: &Box<str>, bytes: &Bytes) -> u64 {
        (size_of::<(Box<str>, Bytes)>() + key.len() + bytes.len()) as u64
    }
}

pub struct StoredRenders {
    repo: DynRepo,
    store: BlobStore,
    changes: Changes,
    lookups: Cache<Code, Lookup, Bytesize>,
    files: Cache<Box<str>, Bytes, Bytesize>,
}

impl StoredRenders {
    pub fn new(repo: DynRepo, store: BlobStore, changes: Changes) -> StoredRenders {
        StoredRenders {
            repo,
            store,
            changes,
            lookups: Cache::with_weighter(10_000, LOOKUP_BYTES, Bytesize),
            files: Cache::with_weighter(4_000, FILE_BYTES, Bytesize),
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
        let hit = self.lookups.get(&Asked { image, code })?;
        let fresh = hit.epoch == epoch && hit.at.elapsed() < TTL;
        (fresh && is_version(&hit.render, version)).then_some(hit.render)
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
        match &found {
            Some(render) => {
                let key = Code {
                    image,
                    code: code.into(),
                };
                let entry = Lookup {
                    render: render.clone(),
                    epoch,
                    at: Instant::now(),
                };
                self.lookups.insert(key, entry);
            }
            None => {
                self.lookups.remove(&Asked { image, code });
            }
        }
        Ok(found.filter(|r| is_version(r, version)))
    }

    /// The whole of a small render of `size` bytes, from memory after the
    /// first read. Cached bytes of another size are never served: they are
    /// read again (keys carry versions that never repeat, so this is only
    /// a guard).
    pub async fn small_file(&self, key: &str, size: u64) -> Result<Bytes> {
        if let Some(bytes) = self.files.get(key).filter(|b| b.len() as u64 == size) {
            return Ok(bytes);
        }
        let bytes = self.store.get_bytes(key).await?;
        self.files.insert(key.into(), bytes.clone());
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, RandomState};

    #[test]
    fn a_borrowed_code_finds_its_entry() {
        let s = RandomState::new();
        let image = Uuid::new_v4();
        let owned = Code {
            image,
            code: "large".into(),
        };
        let asked = Asked {
            image,
            code: "large",
        };
        assert_eq!(s.hash_one(&owned), s.hash_one(&asked));
        assert!(asked.equivalent(&owned));
        let other = Asked {
            image: Uuid::new_v4(),
            code: "large",
        };
        assert!(!other.equivalent(&owned));
    }

    #[test]
    fn the_bounds_hold_in_bytes() {
        let files: Cache<Box<str>, Bytes, Bytesize> = Cache::with_weighter(16, 1 << 20, Bytesize);
        for i in 0..64 {
            files.insert(format!("k{i}").into(), Bytes::from(vec![0; 100 << 10]));
        }
        assert!(files.weight() <= 1 << 20, "{}", files.weight());
        assert!(files.len() <= 10);
    }
}
