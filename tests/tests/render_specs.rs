//! A render job reads what an image should have, then records it. A crop
//! deleted in between must not get its render back: `set_render_spec`
//! writes only while the crop (or folder rule) it came from still exists.
//! Runs on SQLite, and on PostgreSQL too when `LIGHTBOX_TEST_POSTGRES` is set.

use lightbox_core::db::{AlbumRepo, ImageRepo, RenderRepo, SqlRepo, UserRepo};
use lightbox_core::domain::accounts::User;
use lightbox_core::domain::crop::{CropSpec, Format, Mode, SpecSource};
use lightbox_core::domain::exif::{ExifInfo, ExifVisibility};
use lightbox_core::domain::image::{Image, ImageStatus};
use lightbox_core::domain::moderation::Takedown;
use lightbox_e2e::{PgDatabase, TempDir};
use uuid::Uuid;

fn spec() -> CropSpec {
    CropSpec::new("sq", 100, 100, Mode::Fill)
}

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

async fn image(repo: &SqlRepo) -> Image {
    let owner = Uuid::new_v4();
    let user = User {
        id: owner,
        email: format!("{owner}@example.com"),
        password_hash: "x".into(),
        is_admin: false,
        created_at: 1,
    };
    repo.insert_user(&user).await.unwrap();
    let album_id = repo.default_album(owner, 1).await.unwrap();
    let row = Image {
        id: Uuid::new_v4(),
        owner_id: owner,
        album_id,
        title: "t".into(),
        description: String::new(),
        status: ImageStatus::Ready,
        format: Format::Jpg,
        width: 400,
        height: 300,
        size_bytes: 1000,
        original_key: "originals/x".into(),
        exif: ExifInfo::none(),
        exif_visibility: ExifVisibility::default(),
        visibility: None,
        taken_at: None,
        sort_at: 1,
        created_at: 1,
        position: None,
        membership: 0,
        takedown: Takedown::default(),
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
        repo.add_custom_crop(img.id, &spec(), 5, 2).await.unwrap();
        repo.set_render_spec(img.id, &spec(), SpecSource::Custom)
            .await
            .unwrap();
        assert_eq!(codes(repo, img.id).await, ["sq"]);
        repo.delete_custom_crop(img.id, "sq").await.unwrap();
        assert!(codes(repo, img.id).await.is_empty());
        // The job that read the crop before its deletion now records it.
        repo.set_render_spec(img.id, &spec(), SpecSource::Custom)
            .await
            .unwrap();
        assert!(codes(repo, img.id).await.is_empty());
        // A preset has no row to lose.
        repo.set_render_spec(img.id, &spec(), SpecSource::Preset)
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
        let rule = SpecSource::AlbumRule;
        repo.set_album_crop(img.album_id, &spec(), 2).await.unwrap();
        repo.set_render_spec(img.id, &spec(), rule).await.unwrap();
        assert_eq!(codes(repo, img.id).await, ["sq"]);
        // The rule's own job reads the rules after it is gone.
        assert!(repo.delete_album_crop(img.album_id, "sq").await.unwrap());
        repo.remove_renders_except(img.id, &[]).await.unwrap();
        assert!(codes(repo, img.id).await.is_empty());
        // Another folder's rule of that code does not count either.
        let other = image(repo).await;
        repo.set_album_crop(other.album_id, &spec(), 3)
            .await
            .unwrap();
        repo.set_render_spec(img.id, &spec(), rule).await.unwrap();
        assert!(codes(repo, img.id).await.is_empty());
    }
}

#[tokio::test]
async fn a_job_that_read_the_rules_before_a_new_one_keeps_its_render() {
    let engines = engines().await;
    for repo in &engines.repos {
        let img = image(repo).await;
        repo.set_album_crop(img.album_id, &spec(), 2).await.unwrap();
        repo.set_render_spec(img.id, &spec(), SpecSource::AlbumRule)
            .await
            .unwrap();
        // An older job whose list has no `sq` finishes after the rule's.
        let gone = repo.remove_renders_except(img.id, &[]).await.unwrap();
        assert!(gone.is_empty(), "{gone:?}");
        assert_eq!(codes(repo, img.id).await, ["sq"]);
        // A custom crop of the code is kept the same way.
        let own = image(repo).await;
        repo.add_custom_crop(own.id, &spec(), 5, 2).await.unwrap();
        repo.set_render_spec(own.id, &spec(), SpecSource::Custom)
            .await
            .unwrap();
        repo.remove_renders_except(own.id, &[]).await.unwrap();
        assert_eq!(codes(repo, own.id).await, ["sq"]);
    }
}
