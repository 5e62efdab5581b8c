//! Local blobs reach the disk before any row names them.
//!
//! object_store's local store writes a temporary file and renames it into
//! place, but never syncs either. After a power loss (not a crash: the
//! page cache survives those) a row the database had made durable could
//! name an original the filesystem had not written yet, as ext4 allocates
//! a new file's blocks only at writeback, seconds later. So a local write
//! is reported done only once the file and every folder from its own up to
//! the store's root (the rename, and any folder made for it) are synced.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// Where one local blob lives, to sync it after writing.
#[derive(Debug, Clone)]
pub(super) struct Durable {
    root: PathBuf,
    file: PathBuf,
}

impl Durable {
    pub(super) fn new(root: PathBuf, file: PathBuf) -> Durable {
        Durable { root, file }
    }

    /// Syncs the file, then its folders up to the root.
    pub(super) async fn sync(&self) -> crate::Result<()> {
        let (root, file) = (self.root.clone(), self.file.clone());
        tokio::task::spawn_blocking(move || sync_path(&root, &file))
            .await
            .context("syncing a blob")?
            .with_context(|| format!("syncing {}", self.file.display()))?;
        Ok(())
    }

    /// After a failed sync: the blob may be half on disk, so it goes.
    pub(super) async fn remove(&self) {
        if let Err(e) = tokio::fs::remove_file(&self.file).await {
            tracing::warn!(error = %e, file = %self.file.display(), "removing an unsynced blob");
        }
    }
}

fn sync_path(root: &Path, file: &Path) -> std::io::Result<()> {
    std::fs::File::open(file)?.sync_all()?;
    for dir in file
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
    {
        sync_folder(dir)?;
    }
    Ok(())
}

/// Some filesystems (FUSE, CIFS, some NFS) cannot sync a folder and say
/// so with EINVAL; their renames are as durable as they get, so that is
/// not a failed write (PostgreSQL's `fsync_fname` does the same).
fn sync_folder(dir: &Path) -> std::io::Result<()> {
    match std::fs::File::open(dir)?.sync_all() {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        done => done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syncs_a_file_in_new_folders_and_refuses_a_missing_one() {
        let root = std::env::temp_dir().join(format!("lightbox-durable-{}", uuid::Uuid::new_v4()));
        let file = root.join("renders/a/b.webp");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"bytes").unwrap();
        sync_path(&root, &file).unwrap();
        let gone = root.join("renders/a/missing.webp");
        assert_eq!(
            sync_path(&root, &gone).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
