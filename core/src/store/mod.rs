//! Blobs (originals and renders) over `object_store`: the local filesystem
//! in embedded mode, S3-compatible storage in cluster mode, memory in tests.
//! Originals stream up as multipart uploads (`writer`); renders are one put.
//! A local write is synced to disk before it is reported done (`durable`).

mod durable;
mod open_files;
pub mod unsent;
mod writer;

pub use writer::ObjectWriter;

use crate::error::OrInternal;
use crate::Result;
use anyhow::{bail, Context};
use durable::Durable;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use open_files::OpenFiles;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::task::TaskTracker;
use unsent::Unsent;

#[derive(Debug, Clone)]
enum Kind {
    Local(PathBuf, Arc<LocalFileSystem>, Arc<OpenFiles>),
    Memory,
    S3,
}

#[derive(Debug, Clone)]
pub struct BlobStore {
    inner: Arc<dyn ObjectStore>,
    kind: Kind,
    /// Writes and aborts no request may cancel, which shutdown waits for
    /// (`drain`): an upload settling after its client left, an abandoned
    /// upload's abort.
    tasks: TaskTracker,
    /// What paced reads may hold unsent, shared by every clone.
    unsent: Unsent,
}

/// How a local file is read into a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// `FILE_CHUNK` at a time: one response per connection holds at most
    /// one chunk (HTTP/1, zips).
    Whole,
    /// `unsent::PACED_CHUNK` at a time, within the process's budget of
    /// unsent bytes: HTTP/2, where one connection carries many streams.
    Paced,
}

/// `AmazonS3Builder::from_env` over `vars`, minus empty values: an empty
/// `AWS_ACCESS_KEY_ID` would otherwise be taken as static credentials and
/// hide the web identity (IRSA), Pod Identity and instance chains.
fn s3_builder(vars: impl IntoIterator<Item = (String, String)>) -> AmazonS3Builder {
    let mut builder = AmazonS3Builder::new();
    for (key, value) in vars {
        if !key.starts_with("AWS_") || value.trim().is_empty() {
            continue;
        }
        if let Ok(config_key) = key.to_ascii_lowercase().parse() {
            builder = builder.with_config(config_key, value);
        }
    }
    builder
}

impl BlobStore {
    /// `file:///abs/path`, `s3://bucket[/prefix]` (credentials, region and
    /// `AWS_ENDPOINT_URL` from the usual `AWS_*` variables) or `memory://`.
    pub fn from_url(url: &str) -> anyhow::Result<BlobStore> {
        if let Some(rest) = url.strip_prefix("s3://") {
            return Self::s3(rest);
        }
        if let Some(path) = url.strip_prefix("file://") {
            let root = PathBuf::from(path);
            std::fs::create_dir_all(&root)
                .with_context(|| format!("creating blob folder {}", root.display()))?;
            // object_store canonicalises its root; `durable` stops its walk
            // up the folders at this one, so it must be named the same way.
            let root = std::fs::canonicalize(&root)
                .with_context(|| format!("resolving blob folder {}", root.display()))?;
            let fs =
                Arc::new(LocalFileSystem::new_with_prefix(&root)?.with_automatic_cleanup(true));
            Ok(BlobStore {
                inner: fs.clone(),
                kind: Kind::Local(root, fs, Arc::default()),
                tasks: TaskTracker::new(),
                unsent: Unsent::new(unsent::UNSENT_MAX),
            })
        } else if url == "memory://" {
            Ok(BlobStore {
                inner: Arc::new(InMemory::new()),
                kind: Kind::Memory,
                tasks: TaskTracker::new(),
                unsent: Unsent::new(unsent::UNSENT_MAX),
            })
        } else {
            bail!(
                "LIGHTBOX_STORAGE_URL must start with file:// or s3://, or be memory://, got {url}"
            )
        }
    }

    fn s3(bucket_and_prefix: &str) -> anyhow::Result<BlobStore> {
        let (bucket, prefix) = bucket_and_prefix
            .split_once('/')
            .unwrap_or((bucket_and_prefix, ""));
        anyhow::ensure!(!bucket.is_empty(), "s3:// URL without a bucket name");
        let plain_http = std::env::var("AWS_ENDPOINT_URL").is_ok_and(|e| e.starts_with("http://"));
        let s3 = s3_builder(std::env::vars())
            .with_bucket_name(bucket)
            .with_allow_http(plain_http)
            .build()
            .context("configuring S3 storage")?;
        let inner: Arc<dyn ObjectStore> = match prefix.trim_matches('/') {
            "" => Arc::new(s3),
            p => Arc::new(PrefixStore::new(s3, p)),
        };
        Ok(BlobStore {
            inner,
            kind: Kind::S3,
            tasks: TaskTracker::new(),
            unsent: Unsent::new(unsent::UNSENT_MAX),
        })
    }

    pub fn objects(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }

    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        self.inner
            .put(&Path::from(key), bytes.into())
            .await
            .or_internal()?;
        // A failed sync leaves the file: another run of the same render
        // may have recorded this key, and a retry writes it again.
        if let Some(durable) = self.durable(key)? {
            durable.sync().await?;
        }
        Ok(())
    }

    /// How a local blob is synced once written; `None` elsewhere, where
    /// the store's answer already means the bytes are kept.
    fn durable(&self, key: &str) -> Result<Option<Durable>> {
        let Kind::Local(root, fs, _) = &self.kind else {
            return Ok(None);
        };
        let file = fs.path_to_filesystem(&Path::from(key)).or_internal()?;
        Ok(Some(Durable::new(root.clone(), file)))
    }

    pub async fn get_bytes(&self, key: &str) -> Result<bytes::Bytes> {
        self.inner
            .get(&Path::from(key))
            .await
            .or_internal()?
            .bytes()
            .await
            .or_internal()
    }

    /// A byte range (or all) of an object, as a stream of chunks; a local
    /// file read as `reads` says (S3's chunks come as the network brings
    /// them).
    pub async fn get_stream(
        &self,
        key: &str,
        range: Option<std::ops::Range<u64>>,
        reads: Reads,
    ) -> Result<futures::stream::BoxStream<'static, object_store::Result<bytes::Bytes>>> {
        let options = object_store::GetOptions {
            range: range.map(Into::into),
            ..Default::default()
        };
        let got = self
            .inner
            .get_opts(&Path::from(key), options)
            .await
            .or_internal()?;
        Ok(match got.payload {
            object_store::GetResultPayload::File(file, _) => {
                let paced = (reads == Reads::Paced).then(|| self.unsent.clone());
                file_chunks(file, got.range, paced)
            }
            object_store::GetResultPayload::Stream(stream) => stream,
        })
    }

    /// An object of `size` bytes as an open file, on the local filesystem
    /// only (`None` on S3 and in memory): what `/i/` hands the kernel to
    /// send without a copy. A file of another length than recorded is an
    /// error, as the response states that length (read on every call, one
    /// `fstat`: a file cut short behind the store's back is refused, never
    /// sent as a short body).
    pub async fn open_file(&self, key: &str, size: u64) -> Result<Option<Arc<std::fs::File>>> {
        let Kind::Local(_, fs, open) = &self.kind else {
            return Ok(None);
        };
        let io =
            |e: std::io::Error| crate::Error::Internal(anyhow::Error::new(e).context("blob store"));
        let file = match open.get(key) {
            Some(file) => file,
            None => {
                let path = fs.path_to_filesystem(&Path::from(key)).or_internal()?;
                let file = tokio::fs::File::open(path).await.map_err(io)?;
                let file = Arc::new(file.into_std().await);
                open.put(key, file.clone());
                file
            }
        };
        let len = file.metadata().map_err(io)?.len();
        if len != size {
            open.forget(key);
            return Err(crate::Error::Internal(anyhow::anyhow!(
                "blob {key} is {len} bytes, recorded as {size}"
            )));
        }
        Ok(Some(file))
    }

    /// Deletes an object; one already gone is not an error.
    pub async fn delete(&self, key: &str) -> Result<()> {
        let deleted = self.inner.delete(&Path::from(key)).await;
        // After the unlink, so no request reopens it in between.
        if let Kind::Local(_, _, open) = &self.kind {
            open.forget(key);
        }
        match deleted {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e).or_internal(),
        }
    }

    /// Deletes every object under the folder `prefix`.
    pub async fn delete_under(&self, prefix: &str) -> Result<()> {
        use futures::TryStreamExt;
        let keys: Vec<Path> = self
            .inner
            .list(Some(&Path::from(prefix)))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .or_internal()?;
        for key in keys {
            self.delete(key.as_ref()).await?;
        }
        Ok(())
    }

    /// Starts a streamed multipart write of `key`.
    pub async fn writer(&self, key: &str) -> Result<ObjectWriter> {
        let durable = self.durable(key)?;
        let upload = self
            .inner
            .put_multipart(&Path::from(key))
            .await
            .or_internal()?;
        Ok(ObjectWriter::new(upload, self.tasks.clone(), durable))
    }

    /// Runs `work` on a task of its own, which shutdown waits for.
    pub fn spawn_tracked<F>(&self, work: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(work)
    }

    /// At shutdown: waits, at most `within`, for the tracked tasks.
    pub async fn drain(&self, within: std::time::Duration) {
        self.tasks.close();
        if tokio::time::timeout(within, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                left = self.tasks.len(),
                "stopping with blob writes unfinished"
            );
        }
    }

    /// Whether the store can be reached: the folder exists and is a folder,
    /// or a remote store answers (a missing probe object is an answer).
    pub async fn check(&self) -> Result<()> {
        match &self.kind {
            Kind::Local(root, ..) => {
                let meta = tokio::fs::metadata(root)
                    .await
                    .with_context(|| format!("blob folder {}", root.display()))?;
                if !meta.is_dir() {
                    return Err(anyhow::anyhow!("{} is not a folder", root.display()).into());
                }
                Ok(())
            }
            Kind::Memory | Kind::S3 => match self.inner.head(&Path::from(".ready")).await {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e).or_internal(),
            },
        }
    }
}

/// What one blocking read of a local file takes. object_store reads 8 KiB
/// per blocking call, and under load each call waits its turn: a zip of a
/// 16 MB original came out at 1-2 MB/s, too slowly to ever fill the
/// socket, so a client that stopped reading was never found out.
const FILE_CHUNK: u64 = 256 << 10;

fn file_chunks(
    file: std::fs::File,
    range: std::ops::Range<u64>,
    paced: Option<Unsent>,
) -> futures::stream::BoxStream<'static, object_store::Result<bytes::Bytes>> {
    use futures::StreamExt;
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| object_store::Error::Generic {
        store: "LocalFileSystem",
        source: e,
    };
    let chunk = if paced.is_some() {
        unsent::PACED_CHUNK as u64
    } else {
        FILE_CHUNK
    };
    futures::stream::try_unfold((file, range), move |(file, range)| {
        let paced = paced.clone();
        async move {
            if range.start >= range.end {
                return Ok(None);
            }
            let n = (range.end - range.start).min(chunk);
            let at = range.start;
            // Room first: the chunk is only read once it may be held.
            let room = match &paced {
                Some(unsent) => Some(unsent.room(n as usize).await),
                None => None,
            };
            let (file, buf) = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0; n as usize];
                file.read_exact_at(&mut buf, at)?;
                Ok((file, buf))
            })
            .await
            .map_err(|e| failed(Box::new(e)))?
            .map_err(|e| failed(Box::new(e)))?;
            let bytes = match room {
                Some(room) => unsent::held(buf, room),
                None => bytes::Bytes::from(buf),
            };
            Ok(Some((bytes, (file, at + n..range.end))))
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn provider(pairs: &[(&str, &str)]) -> String {
        let s3 = s3_builder(vars(pairs))
            .with_bucket_name("b")
            .build()
            .unwrap();
        format!("{:?}", s3.credentials())
    }

    #[test]
    fn empty_keys_leave_the_web_identity_chain_in_charge() {
        // object_store reads these two from the process environment itself.
        std::env::set_var("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/token");
        std::env::set_var("AWS_ROLE_ARN", "arn:aws:iam::1:role/lightbox");
        let irsa = [("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", " ")];
        let chosen = provider(&irsa);
        assert!(chosen.contains("WebIdentityProvider"), "{chosen}");
        assert!(!chosen.contains("StaticCredentialProvider"), "{chosen}");
        let keys = [("AWS_ACCESS_KEY_ID", "id"), ("AWS_SECRET_ACCESS_KEY", "s")];
        assert!(provider(&keys).contains("StaticCredentialProvider"));
    }
}
