//! A render job whose photo is deleted while it runs.

use super::Renderer;
use crate::db::testing::{drop_database, owner_with_album, photo, repo};
use crate::limits::memory::RenderBudget;
use crate::resources::Resources;
use crate::store::BlobStore;
use futures::TryStreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A grey `w` x `h` JPEG.
fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(w, h, image::Rgb([120, 120, 120]))
        .write_to(&mut out, image::ImageFormat::Jpeg)
        .unwrap();
    out.into_inner()
}

/// A renderer over `sql` and an in-memory store, with 256 MiB to render in.
fn renderer(sql: &crate::db::SqlRepo) -> (crate::db::DynRepo, BlobStore, Renderer) {
    let repo: crate::db::DynRepo = Arc::new(sql.clone());
    let store = BlobStore::from_url("memory://").unwrap();
    let renderer = Renderer {
        repo: repo.relaxed(),
        store: store.clone(),
        resources: Resources { repo: repo.clone() },
        changes: Default::default(),
        budget: RenderBudget::new(256),
        news: Arc::new(crate::queue::news::LocalNews::default()),
        cpu_budget: std::time::Duration::from_secs(60),
    };
    (repo, store, renderer)
}

/// The job holds the original when the photo goes, renders it, and finds
/// its writes refused: it ends without error (no retry of a job that can
/// only find the photo gone) and leaves none of its files behind.
#[tokio::test]
async fn a_photo_deleted_while_it_renders_ends_the_job_quietly() {
    let sql = repo().await;
    let (owner, folder) = owner_with_album(&sql).await;
    let (repo, store, renderer) = renderer(&sql);
    let image = photo(2, owner, folder.id);
    store
        .put(&image.original_key, jpeg(1200, 800))
        .await
        .unwrap();
    let pending = renderer.resources.initial_renders(image.id).await.unwrap();
    repo.insert_image(&image, &pending).await.unwrap();

    // All the memory is taken, so the job waits to be admitted with the
    // original read and its render rows written.
    let held = renderer.budget.admit(256 << 20).await.unwrap();
    let job = tokio::spawn({
        let renderer = renderer.clone();
        async move { renderer.process(image.id).await }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while renderer.budget.admitted() < 2 {
        assert!(Instant::now() < deadline, "the job never asked for memory");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(repo.delete_image(owner, image.id).await.unwrap().is_some());
    drop(held);

    job.await.unwrap().unwrap();
    assert!(repo.renders(image.id).await.unwrap().is_empty());
    let files: Vec<_> = store
        .objects()
        .list(Some(&"renders".into()))
        .try_collect()
        .await
        .unwrap();
    assert!(files.is_empty(), "{files:?}");
    drop_database(sql).await;
}

/// An attempt stored a render, then failed before recording it (the
/// database went away), and the photo was deleted before the retry: the
/// retry finds the photo gone and removes that file, and only that photo's.
#[tokio::test]
async fn the_retry_of_a_deleted_photo_removes_what_an_attempt_stored() {
    let sql = repo().await;
    let (owner, folder) = owner_with_album(&sql).await;
    let (repo, store, renderer) = renderer(&sql);
    let (gone, kept) = (photo(2, owner, folder.id), photo(3, owner, folder.id));
    for image in [&gone, &kept] {
        let pending = renderer.resources.initial_renders(image.id).await.unwrap();
        repo.insert_image(image, &pending).await.unwrap();
    }
    let stray = super::render_key(gone.id, "thumb", 1, "webp");
    let other = super::render_key(kept.id, "thumb", 1, "webp");
    for key in [&stray, &other] {
        store.put(key, b"RIFF".to_vec()).await.unwrap();
    }
    assert!(repo.delete_image(owner, gone.id).await.unwrap().is_some());

    renderer.process(gone.id).await.unwrap();
    let files: Vec<String> = store
        .objects()
        .list(Some(&"renders".into()))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(files, vec![other]);
    drop_database(sql).await;
}
