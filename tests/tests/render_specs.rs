//! A render job reads what an image should have, then records it. A crop
//! deleted in between must not get its render back: `set_render_spec`
//! writes only while the crop (or folder rule) it came from still exists.
//! Runs on SQLite, and on PostgreSQL too when `LIGHTBOX_TEST_POSTGRES` is set.

use lightbox_core::db::{AlbumRepo, ImageRepo, ImageRow, SpecSource, SqlRepo, UserRepo, UserRow};
use lightbox_e2e::{PgDatabase, TempDir};
use uuid::Uuid;

const SPEC: &str = r#"{"code":"sq","width":100,"height":100}"#;

/// The repositories under test, with the databases they need kept alive.
struct Engines {
    repos: Vec<SqlRepo>,
    _pg: Option<PgDatabase>,
    _dir: TempDir,
}

async fn engines() -> Engines {
    let dir = TempDir::new();
    let sqlite = format!("sqlite://{}?mode=rwc", dir.0.join("db.sqlite").display());
    let mut repos = vec![SqlRepo::connect(&sqlite).await.unwrap()];
    let pg = PgDatabase::from_env();
    if let Some(pg) = &pg {
        repos.push(SqlRepo::connect(&pg.url()).await.unwrap());
    }
    Engines {
        repos,
        _pg: pg,
        _dir: dir,
    }
}

async fn image(repo: &SqlRepo) -> ImageRow {
    let owner = Uuid::new_v4();
    let user = UserRow {
        id: owner,
        email: format!("{owner}@example.com"),
        password_hash: "x".into(),
        is_admin: false,
        created_at: 1,
    };
    repo.insert_user(&user).await.unwrap();
    let album_id = repo.default_album(owner, 1).await.unwrap();
    let row = ImageRow {
        id: Uuid::new_v4(),
        owner_id: owner,
        album_id,
        title: "t".into(),
        description: String::new(),
        status: "ready".into(),
        format: "jpeg".into(),
        width: 400,
        height: 300,
        size_bytes: 1000,
        original_key: "originals/x".into(),
        exif: "{}".into(),
        exif_visibility: "{}".into(),
        visibility: None,
        taken_at: None,
        sort_at: 1,
        created_at: 1,
        position: None,
        taken_down_at: None,
        takedown_reason: None,
    };
    repo.insert_image(&row, &[]).await.unwrap();
    row
}

async fn codes(repo: &SqlRepo, image: Uuid) -> Vec<String> {
    let renders = repo.renders(image).await.unwrap();
    renders.into_iter().map(|r| r.code).collect()
}

#[tokio::test]
async fn a_deleted_custom_crop_does_not_get_its_render_back() {
    let engines = engines().await;
    for repo in &engines.repos {
        let img = image(repo).await;
        repo.add_custom_crop(img.id, "sq", SPEC, 5, 2)
            .await
            .unwrap();
        repo.set_render_spec(img.id, "sq", SPEC, SpecSource::Custom)
            .await
            .unwrap();
        assert_eq!(codes(repo, img.id).await, ["sq"]);
        repo.delete_custom_crop(img.id, "sq").await.unwrap();
        assert!(codes(repo, img.id).await.is_empty());
        // The job that read the crop before its deletion now records it.
        repo.set_render_spec(img.id, "sq", SPEC, SpecSource::Custom)
            .await
            .unwrap();
        assert!(codes(repo, img.id).await.is_empty());
        // A preset has no row to lose.
        repo.set_render_spec(img.id, "sq", SPEC, SpecSource::Preset)
            .await
            .unwrap();
        assert_eq!(codes(repo, img.id).await, ["sq"]);
    }
}

#[tokio::test]
async fn a_deleted_folder_rule_does_not_get_its_render_back() {
    let engines = engines().await;
    for repo in &engines.repos {
        let img = image(repo).await;
        let rule = SpecSource::FolderRule;
        repo.set_album_crop(img.album_id, "sq", SPEC, 2)
            .await
            .unwrap();
        repo.set_render_spec(img.id, "sq", SPEC, rule)
            .await
            .unwrap();
        assert_eq!(codes(repo, img.id).await, ["sq"]);
        repo.remove_renders_except(img.id, &[]).await.unwrap();
        assert!(repo.delete_album_crop(img.album_id, "sq").await.unwrap());
        // Another folder's rule of that code does not count either.
        let other = image(repo).await;
        repo.set_album_crop(other.album_id, "sq", SPEC, 3)
            .await
            .unwrap();
        repo.set_render_spec(img.id, "sq", SPEC, rule)
            .await
            .unwrap();
        assert!(codes(repo, img.id).await.is_empty());
    }
}
