//! The kept stats under two writers of one folder at once (PostgreSQL;
//! SQLite runs one writing transaction at a time), a deadlock's victim
//! run again, the photo counts' recount, and writes racing a deletion.

use super::super::album_views::tests::{drop_database, owner_with_album, photo, repo};
use super::super::{retry_deadlocks, Engine};
use crate::db::{AlbumRepo, AlbumViewRepo, ImageChange, ImageRepo, Moderated, SharingRepo};
use crate::error::OrInternal;
use lightbox_domain::album::Album;
use lightbox_domain::counts::count;
use lightbox_domain::image::ImageStatus;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Photos moved into a folder in one transaction while a photo there
/// finishes: each takes the folder's stats rows of two classes, and
/// without a common first lock they took them in opposite orders
/// ("deadlock detected" on the second move).
#[tokio::test]
async fn a_move_in_and_a_photo_finishing_there_do_not_deadlock() {
    let repo = repo().await;
    if repo.engine() != Engine::Postgres {
        return;
    }
    let (owner, x) = owner_with_album(&repo).await;
    let y = Album::new(crate::ids::new_id(), owner, "Y", "", 0);
    repo.insert_album(&y).await.unwrap();
    // Visible and processing in X, processing in Y.
    let (x1, x2, y1) = (
        photo(2, owner, x.id),
        photo(9, owner, x.id),
        photo(18, owner, y.id),
    );
    assert_eq!(
        (x1.status, x2.status),
        (ImageStatus::Ready, ImageStatus::Processing)
    );
    for p in [&x1, &x2, &y1] {
        repo.insert_image(p, &[]).await.unwrap();
    }
    let mut tx = repo.pool.begin().await.unwrap();
    let move_in = |id: uuid::Uuid| {
        sqlx::query("UPDATE images SET album_id = $1 WHERE id = $2")
            .bind(y.id.to_string())
            .bind(id.to_string())
    };
    move_in(x1.id).execute(&mut *tx).await.unwrap();
    let other = repo.clone();
    let finish = tokio::spawn(async move { other.set_status(y1.id, ImageStatus::Ready).await });
    wait_for_a_lock_wait(&repo).await;
    move_in(x2.id).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    finish.await.unwrap().unwrap();
    for folder in [x.id, y.id] {
        let all = repo.album_images(folder).await.unwrap();
        assert_eq!(repo.album_counts(folder).await.unwrap(), count(&all));
    }
    drop_database(repo).await;
}

async fn wait_for_a_lock_wait(repo: &super::SqlRepo) {
    let q = "SELECT CAST(COUNT(*) AS BIGINT) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = sqlx::query_scalar(q).fetch_one(&repo.pool).await.unwrap();
        if waiting > 0 {
            return;
        }
        assert!(Instant::now() < deadline, "the second writer never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A folder taken down while one of its photos is being written: the
/// takedown's covers update every photo's carried count, and the photo's
/// writer then wants the folder's row. The takedown locks its photos
/// before the folder, so the writer finishes first instead of the two
/// deadlocking.
#[tokio::test]
async fn a_folder_takedown_and_a_photo_written_there_do_not_deadlock() {
    let repo = repo().await;
    if repo.engine() != Engine::Postgres {
        return;
    }
    let (owner, x) = owner_with_album(&repo).await;
    let (x1, x2) = (photo(2, owner, x.id), photo(9, owner, x.id));
    for p in [&x1, &x2] {
        repo.insert_image(p, &[]).await.unwrap();
    }
    let mut writer = repo.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM images WHERE id = $1 FOR UPDATE")
        .bind(x2.id.to_string())
        .execute(&mut *writer)
        .await
        .unwrap();
    let other = repo.clone();
    let takedown = tokio::spawn(async move {
        let target = Moderated::Album(x.id);
        other.set_takedown(target, Some("Reported"), 9).await
    });
    wait_for_a_lock_wait(&repo).await;
    sqlx::query("UPDATE images SET status = 'ready' WHERE id = $1")
        .bind(x2.id.to_string())
        .execute(&mut *writer)
        .await
        .unwrap();
    writer.commit().await.unwrap();
    assert!(takedown.await.unwrap().unwrap());
    let all = repo.album_images(x.id).await.unwrap();
    assert_eq!(repo.album_counts(x.id).await.unwrap(), count(&all));
    drop_database(repo).await;
}

/// Migration 0015 recounts each folder's photos: a count that drifted
/// (as 0013's backfill could leave one during a rolling deploy) is put
/// right, on either engine, and a right one is left as it is.
#[tokio::test]
async fn the_recount_puts_a_drifted_photo_count_right() {
    let repo = repo().await;
    let (owner, x) = owner_with_album(&repo).await;
    let y = Album::new(crate::ids::new_id(), owner, "Y", "", 0);
    repo.insert_album(&y).await.unwrap();
    for n in 2..5 {
        repo.insert_image(&photo(n, owner, x.id), &[])
            .await
            .unwrap();
    }
    sqlx::query("UPDATE albums SET image_count = 7 WHERE id = $1")
        .bind(x.id.to_string())
        .execute(&repo.pool)
        .await
        .unwrap();
    let recount = match repo.engine() {
        Engine::Postgres => {
            include_str!("../../../migrations/postgres/0015_image_count_recount.sql")
        }
        Engine::Sqlite => include_str!("../../../migrations/sqlite/0015_image_count_recount.sql"),
    };
    let mut tx = repo.pool.begin().await.unwrap();
    sqlx::raw_sql(recount).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    for (album, want) in [(x.id, 3), (y.id, 0)] {
        let stored = repo.album(None, album).await.unwrap().unwrap();
        assert_eq!(stored.image_count, want);
    }
    drop_database(repo).await;
}

/// A transaction PostgreSQL aborts to break a deadlock runs again
/// (`retry_deadlocks`), and any other error stands at once. The first
/// attempt holds photo A and waits for B, held by a second transaction
/// that then asks for A: the first waited longest, so it is the victim.
#[tokio::test]
async fn a_deadlock_victim_runs_again_and_other_errors_stand() {
    let repo = repo().await;
    if repo.engine() != Engine::Postgres {
        return;
    }
    let (owner, x) = owner_with_album(&repo).await;
    let (a, b) = (photo(2, owner, x.id), photo(3, owner, x.id));
    for p in [&a, &b] {
        repo.insert_image(p, &[]).await.unwrap();
    }
    let lock = "SELECT id FROM images WHERE id = $1 FOR UPDATE";
    let attempts = AtomicU32::new(0);
    let counted = || crate::metrics::METRICS.deadlock_retries.get();
    let before = counted();
    let done = retry_deadlocks(|| async {
        let n = attempts.fetch_add(1, Ordering::SeqCst);
        let mut mine = repo.pool.begin().await.or_internal()?;
        sqlx::query(lock)
            .bind(a.id.to_string())
            .execute(&mut *mine)
            .await
            .or_internal()?;
        if n == 0 {
            let mut theirs = repo.pool.begin().await.or_internal()?;
            sqlx::query(lock)
                .bind(b.id.to_string())
                .execute(&mut *theirs)
                .await
                .or_internal()?;
            let (watch, a_id) = (repo.clone(), a.id);
            let closes_the_cycle = tokio::spawn(async move {
                wait_for_a_lock_wait(&watch).await;
                let asked = sqlx::query(lock).bind(a_id.to_string());
                asked.execute(&mut *theirs).await.unwrap();
                theirs.commit().await.unwrap();
            });
            let waited = sqlx::query(lock)
                .bind(b.id.to_string())
                .execute(&mut *mine)
                .await;
            drop(mine);
            closes_the_cycle.await.unwrap();
            waited.or_internal()?;
            return Ok(n);
        }
        mine.commit().await.or_internal()?;
        Ok(n)
    })
    .await;
    assert_eq!(done.unwrap(), 1, "the second attempt's result");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert!(counted() > before, "the retry is counted");

    let tries = AtomicU32::new(0);
    let failed: crate::Result<()> = retry_deadlocks(|| async {
        tries.fetch_add(1, Ordering::SeqCst);
        sqlx::query("SELECT no_such_column FROM images")
            .execute(&repo.pool)
            .await
            .or_internal()?;
        Ok(())
    })
    .await;
    assert!(failed.is_err());
    assert_eq!(
        tries.load(Ordering::SeqCst),
        1,
        "not a deadlock: no second try"
    );
    drop_database(repo).await;
}

/// A photo moved, or uploaded, into a folder being deleted waits for the
/// deletion and is then refused, instead of landing in the deleted folder
/// after the deletion moved the folder's photos out (a review helper saw
/// nine photos end up so in 60 racing rounds).
#[tokio::test]
async fn nothing_lands_in_a_folder_deleted_meanwhile() {
    let repo = repo().await;
    let (owner, x) = owner_with_album(&repo).await;
    let y = Album::new(crate::ids::new_id(), owner, "Y", "", 0);
    repo.insert_album(&y).await.unwrap();
    let p = photo(2, owner, x.id);
    repo.insert_image(&p, &[]).await.unwrap();
    let into_y = ImageChange {
        album_id: Some(y.id),
        ..Default::default()
    };
    let deleting = "UPDATE albums SET deleted_at = 1 WHERE id = $1";
    if repo.engine() == Engine::Postgres {
        let mut deletion = repo.pool.begin().await.unwrap();
        let q = sqlx::query(deleting).bind(y.id.to_string());
        q.execute(&mut *deletion).await.unwrap();
        let (other, change) = (repo.clone(), into_y.clone());
        let mover = tokio::spawn(async move { other.update_image(owner, p.id, &change).await });
        wait_for_a_lock_wait(&repo).await;
        deletion.commit().await.unwrap();
        assert!(
            !mover.await.unwrap().unwrap(),
            "moved into a deleted folder"
        );
    } else {
        let q = sqlx::query(deleting).bind(y.id.to_string());
        q.execute(&repo.pool).await.unwrap();
        assert!(!repo.update_image(owner, p.id, &into_y).await.unwrap());
    }
    let stayed = repo.image(None, p.id).await.unwrap().unwrap();
    assert_eq!(stayed.album_id, x.id);
    let late = photo(3, owner, y.id);
    assert!(repo.insert_image(&late, &[]).await.is_err());
    assert!(repo.image(None, late.id).await.unwrap().is_none());
    drop_database(repo).await;
}

/// A photo deleted while one of its renders is being replaced gives back
/// the replacement's file to remove (the keys are read as the rows go),
/// and of two deletions of one photo only one finds it.
#[tokio::test]
async fn a_deletion_returns_the_files_its_rows_named_when_they_went() {
    let repo = repo().await;
    let (owner, x) = owner_with_album(&repo).await;
    let p = photo(2, owner, x.id);
    let thumb = lightbox_domain::crop::default_presets()
        .into_iter()
        .map(|spec| lightbox_domain::render::Render::pending(p.id, spec))
        .find(|r| r.code == "thumb")
        .unwrap();
    repo.insert_image(&p, std::slice::from_ref(&thumb))
        .await
        .unwrap();
    let replace = "UPDATE renders SET produced_version = 2, blob_key = 'renders/new' \
                   WHERE image_id = $1";
    let keys = if repo.engine() == Engine::Postgres {
        let mut worker = repo.pool.begin().await.unwrap();
        let q = sqlx::query(replace).bind(p.id.to_string());
        q.execute(&mut *worker).await.unwrap();
        let other = repo.clone();
        let deletion = tokio::spawn(async move { other.delete_image(owner, p.id).await });
        wait_for_a_lock_wait(&repo).await;
        worker.commit().await.unwrap();
        deletion.await.unwrap().unwrap().unwrap()
    } else {
        let q = sqlx::query(replace).bind(p.id.to_string());
        q.execute(&repo.pool).await.unwrap();
        repo.delete_image(owner, p.id).await.unwrap().unwrap()
    };
    assert_eq!(keys, vec!["renders/new".to_owned(), p.original_key.clone()]);
    assert_eq!(repo.delete_image(owner, p.id).await.unwrap(), None);
    drop_database(repo).await;
}

/// A focal point, a custom crop or render work for a photo being deleted
/// waits for the deletion, then finds the photo gone: not found (or, for
/// the outbox, nothing queued), where the foreign keys' checks failed the
/// request with an internal error.
#[tokio::test]
async fn writes_to_a_photo_deleted_meanwhile_find_it_gone() {
    use crate::db::jobs::{JobRepo, NewJob};
    use crate::db::{DetailsRepo, OutboxRepo, RenderRepo};
    use lightbox_domain::crop::CropSpec;
    let repo = repo().await;
    let (owner, x) = owner_with_album(&repo).await;
    let mut spec = lightbox_domain::crop::default_presets().remove(0);
    spec.code = "mine".to_owned();
    let kept = photo(3, owner, x.id);
    repo.insert_image(&kept, &[]).await.unwrap();
    let writes = move |repo: super::SqlRepo, id: uuid::Uuid, spec: CropSpec| async move {
        let focus = repo.set_focus(id, None, &["thumb".to_owned()]).await;
        let crop = repo.add_custom_crop(id, &spec, 5, 1).await;
        let both = [id, kept.id];
        let job = NewJob {
            owner,
            album: x.id,
            kind: "crop_rule",
            images: &both,
            now: 1,
        };
        let job = repo.insert_job(&job).await;
        let queued = repo.outbox_add(&both, 1).await;
        (focus, crop.map(|_| ()), job, queued)
    };
    let p = photo(2, owner, x.id);
    repo.insert_image(&p, &[]).await.unwrap();
    let emptied = sqlx::query("DELETE FROM render_outbox");
    emptied.execute(&repo.pool).await.unwrap();
    let deleting = sqlx::query("DELETE FROM images WHERE id = $1").bind(p.id.to_string());
    let (focus, crop, job, queued) = if repo.engine() == Engine::Postgres {
        let mut deletion = repo.pool.begin().await.unwrap();
        deleting.execute(&mut *deletion).await.unwrap();
        let racing = tokio::spawn(writes(repo.clone(), p.id, spec.clone()));
        wait_for_a_lock_wait(&repo).await;
        deletion.commit().await.unwrap();
        racing.await.unwrap()
    } else {
        deleting.execute(&repo.pool).await.unwrap();
        writes(repo.clone(), p.id, spec).await
    };
    assert!(matches!(focus, Err(crate::Error::NotFound)), "{focus:?}");
    assert!(matches!(crop, Err(crate::Error::NotFound)), "{crop:?}");
    let job = repo.job_counts(owner, job.unwrap()).await.unwrap().unwrap();
    assert_eq!(
        (job.total, job.queued),
        (1, 1),
        "the deleted photo is left out"
    );
    queued.unwrap();
    let waiting = repo.outbox_heads(10, i64::MAX, 10).await.unwrap();
    let waiting: Vec<_> = waiting.iter().map(|(row, _)| row.image_id).collect();
    assert_eq!(
        waiting,
        vec![kept.id],
        "only the photo still there is queued"
    );
    drop_database(repo).await;
}
