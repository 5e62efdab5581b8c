//! Blobs (originals and renders) over `object_store`: the local filesystem
//! in embedded mode, S3-compatible storage in cluster mode, memory in tests.

use crate::Result;
use anyhow::{bail, Context};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::ObjectStore;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Kind {
    Local(PathBuf),
    Memory,
}

#[derive(Debug, Clone)]
pub struct BlobStore {
    inner: Arc<dyn ObjectStore>,
    kind: Kind,
}

impl BlobStore {
    /// `file:///abs/path` or `memory://`.
    pub fn from_url(url: &str) -> anyhow::Result<BlobStore> {
        if let Some(path) = url.strip_prefix("file://") {
            let root = PathBuf::from(path);
            std::fs::create_dir_all(&root)
                .with_context(|| format!("creating blob folder {}", root.display()))?;
            let fs = LocalFileSystem::new_with_prefix(&root)?.with_automatic_cleanup(true);
            Ok(BlobStore {
                inner: Arc::new(fs),
                kind: Kind::Local(root),
            })
        } else if url == "memory://" {
            Ok(BlobStore {
                inner: Arc::new(InMemory::new()),
                kind: Kind::Memory,
            })
        } else {
            bail!("LIGHTBOX_STORAGE_URL must start with file:// or be memory://, got {url}")
        }
    }

    pub fn objects(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }

    /// Whether the store can be reached: the folder exists and is a folder,
    /// or a remote store answers (a missing probe object is an answer).
    pub async fn check(&self) -> Result<()> {
        match &self.kind {
            Kind::Local(root) => {
                let meta = tokio::fs::metadata(root)
                    .await
                    .with_context(|| format!("blob folder {}", root.display()))?;
                if !meta.is_dir() {
                    return Err(anyhow::anyhow!("{} is not a folder", root.display()).into());
                }
                Ok(())
            }
            Kind::Memory => match self.inner.head(&Path::from(".ready")).await {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e.into()),
            },
        }
    }
}
