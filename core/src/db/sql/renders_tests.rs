use super::super::folders::tests::{drop_database, owner_with_folder, photo, repo};
use crate::db::{ImageRepo, RenderRepo, Repo};
use crate::domain::crop::{CropSpec, Mode, SpecSource};
use crate::domain::render::{Produced, Render};

fn produced(version: i64, key: &str) -> Produced {
    Produced {
        version,
        width: 10,
        height: 10,
        size_bytes: 100,
        blob_key: key.to_owned(),
    }
}

/// A job that ends after its spec moved on twice records nothing and
/// replaces nothing: the row still names the blob an earlier version
/// produced, which must stay. Through the relaxed handle, as jobs write.
#[tokio::test]
async fn a_late_render_leaves_the_recorded_blob_alone() {
    let repo = repo().await;
    let jobs = repo.relaxed();
    let (owner, album) = owner_with_folder(&repo).await;
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
    assert_eq!(record(2, "b").await, (false, None));
    assert_eq!(record(3, "c").await, (true, Some("a".to_owned())));
    let rows = repo.renders(img.id).await.unwrap();
    let named = rows[0].produced.as_ref().map(|p| p.blob_key.as_str());
    assert_eq!(named, Some("c"), "read back through the main pool");
    drop(jobs);
    drop_database(repo).await;
}
