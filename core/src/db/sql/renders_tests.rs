use super::super::album_views::tests::{drop_database, owner_with_album, photo, repo};
use crate::db::{ImageRepo, JobRepo, NewJob, RenderRepo, Repo};
use lightbox_domain::crop::{CropSpec, Mode, SpecSource};
use lightbox_domain::render::{Produced, Render};

fn produced(version: i64, key: &str) -> Produced {
    Produced {
        version,
        width: 10,
        height: 10,
        size_bytes: 100,
        blob_key: key.to_owned(),
    }
}

/// A job that ends after its spec moved on records nothing and hands back
/// only its own bytes: the row still names the blob an earlier version
/// produced, which must stay. Through the relaxed handle, as jobs write.
#[tokio::test]
async fn a_late_render_leaves_the_recorded_blob_alone() {
    let repo = repo().await;
    let jobs = repo.relaxed();
    let (owner, album) = owner_with_album(&repo).await;
    let img = photo(2, owner, album.id);
    let spec = CropSpec::new("thumb", 400, 400, Mode::Fill);
    repo.insert_image(&img, &[Render::pending(img.id, spec)])
        .await
        .unwrap();
    let record = |version, key| {
        let jobs = jobs.clone();
        async move {
            jobs.render_produced(img.id, "thumb", &produced(version, key))
                .await
                .unwrap()
        }
    };
    assert_eq!(record(1, "a").await, (true, None));
    for width in [300, 200] {
        let moved = CropSpec::new("thumb", width, 400, Mode::Fill);
        jobs.set_render_spec(img.id, &moved, SpecSource::Preset)
            .await
            .unwrap();
    }
    // Version 2's bytes, never recorded, are the job's to delete; a second
    // run of version 1 must not delete what the row still names.
    assert_eq!(record(2, "b").await, (false, Some("b".to_owned())));
    assert_eq!(record(1, "a").await, (false, None));
    assert_eq!(record(3, "c").await, (true, Some("a".to_owned())));
    let rows = repo.renders(img.id).await.unwrap();
    let named = rows[0].produced.as_ref().map(|p| p.blob_key.as_str());
    assert_eq!(named, Some("c"), "read back through the main pool");
    drop(jobs);
    drop_database(repo).await;
}

/// What `recover` finds owed besides `processing` photos: a ready photo's
/// render whose spec moved on (each such render names it), and a folder
/// job's queued item; not a failed photo's unmade render, nor anything
/// once made and its items settled.
#[tokio::test]
async fn owed_work_is_the_ready_photos_moved_renders_and_queued_items() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    // n = 1 failed, n = 2 and 3 ready (`photo`'s rules).
    let (failed, moved, queued) = (
        photo(1, owner, album.id),
        photo(2, owner, album.id),
        photo(3, owner, album.id),
    );
    let specs = [
        CropSpec::new("thumb", 400, 400, Mode::Fill),
        CropSpec::new("small", 640, 0, Mode::Fit),
    ];
    for img in [&failed, &moved, &queued] {
        let rows: Vec<Render> = specs
            .iter()
            .map(|s| Render::pending(img.id, s.clone()))
            .collect();
        repo.insert_image(img, &rows).await.unwrap();
    }
    for img in [&moved, &queued] {
        for s in &specs {
            let key = format!("{}/{}", img.id, s.code);
            repo.render_produced(img.id, &s.code, &produced(1, &key))
                .await
                .unwrap();
        }
    }
    assert!(repo.images_owed_work().await.unwrap().is_empty());
    for s in &specs {
        let mut other = s.clone();
        other.width += 1;
        repo.set_render_spec(moved.id, &other, SpecSource::Preset)
            .await
            .unwrap();
    }
    let job = NewJob {
        owner,
        album: album.id,
        kind: "album.crop.set",
        images: std::slice::from_ref(&queued.id),
        now: 1_000,
    };
    repo.insert_job(&job).await.unwrap();
    let mut owed = repo.images_owed_work().await.unwrap();
    owed.sort();
    let mut expected = vec![moved.id, moved.id, queued.id];
    expected.sort();
    assert_eq!(owed, expected);
    drop_database(repo).await;
}
