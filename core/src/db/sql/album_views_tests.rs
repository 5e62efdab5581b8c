//! The SQL walks and counts of `folders` against the domain's own rules
//! (`Policy::sort`, `Image::is_visible`, `sharing::stats::stats`), on a
//! folder with every kind of photo, ties in every sort key and positions
//! given twice.

use super::SqlRepo;
use crate::db::{
    AlbumRepo, AlbumViewRepo, ImageChange, ImageRepo, Moderated, SharingRepo, UserRepo, Walk,
};
use lightbox_domain::accounts::User;
use lightbox_domain::album::{Album, Order, Policy};
use lightbox_domain::counts::count;
use lightbox_domain::crop::Format;
use lightbox_domain::exif::{ExifInfo, ExifVisibility, Gps};
use lightbox_domain::image::{Image, ImageStatus};
use lightbox_domain::moderation::Takedown;
use uuid::Uuid;

pub(crate) fn photo(n: u32, owner: Uuid, album: Uuid) -> Image {
    let status = match n % 9 {
        0 => ImageStatus::Processing,
        1 => ImageStatus::Failed,
        _ => ImageStatus::Ready,
    };
    let side = if n % 11 == 3 { 150 } else { 1200 };
    let exif = ExifInfo {
        taken_at: n
            .is_multiple_of(2)
            .then(|| "2024-03-03T14:05:09Z".to_owned()),
        camera_make: n.is_multiple_of(3).then(|| "Canon".to_owned()),
        gps: n.is_multiple_of(4).then_some(Gps { lat: 1.0, lon: 2.0 }),
        ..ExifInfo::none()
    };
    Image {
        id: crate::ids::new_id(),
        owner_id: owner,
        album_id: album,
        title: if n.is_multiple_of(5) {
            "Harbour".into()
        } else {
            "  ".into()
        },
        description: String::new(),
        status,
        format: Format::Jpg,
        width: side,
        height: side * 2 / 3,
        size_bytes: 1000,
        original_key: format!("o/{n}"),
        exif,
        exif_visibility: ExifVisibility {
            gps: n % 3 != 1,
            camera: n % 7 != 2,
            datetime: n.is_multiple_of(2),
            settings: true,
        },
        visibility: None,
        taken_at: None,
        // Ties in both keys, so the id decides.
        sort_at: i64::from(n % 13),
        created_at: i64::from(n % 6),
        position: None,
        membership: 0,
        takedown: Takedown::default(),
    }
}

/// A fresh database: PostgreSQL when `LIGHTBOX_TEST_POSTGRES` names a
/// server (the test script's second pass), else SQLite.
pub(crate) async fn repo() -> SqlRepo {
    let name = format!("lbx_folders_{}", crate::ids::new_id().simple());
    let url = match std::env::var("LIGHTBOX_TEST_POSTGRES") {
        Ok(base) if !base.is_empty() => {
            sqlx::any::install_default_drivers();
            let admin = sqlx::AnyPool::connect(&format!("{base}/postgres"))
                .await
                .unwrap();
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&admin)
                .await
                .unwrap();
            format!("{base}/{name}")
        }
        _ => {
            let dir = std::env::temp_dir().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            format!("sqlite://{}?mode=rwc", dir.join("t.db").display())
        }
    };
    SqlRepo::connect(&url).await.unwrap()
}

/// Every outbox row, sent or not.
pub(crate) async fn outbox_rows(repo: &SqlRepo) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM render_outbox")
        .fetch_one(&repo.pool)
        .await
        .unwrap()
}

/// Marks every outbox row sent at `at` (a test's clock).
pub(crate) async fn outbox_sent_at(repo: &SqlRepo, at: i64) {
    sqlx::query("UPDATE render_outbox SET sent_at = $1")
        .bind(at)
        .execute(&repo.pool)
        .await
        .unwrap();
}

/// The ids of the walk, a page of `size` at a time.
async fn walked(repo: &SqlRepo, album: Uuid, order: Order, size: u32) -> Vec<Uuid> {
    let mut out: Vec<Uuid> = Vec::new();
    loop {
        let walk = Walk::forward(order, out.last().copied(), size);
        let page = repo.album_walk(album, walk).await.unwrap().unwrap();
        if page.is_empty() {
            return out;
        }
        out.extend(page.iter().map(|i| i.id));
    }
}

/// A new owner with one folder `A`.
pub(crate) async fn owner_with_album(repo: &SqlRepo) -> (Uuid, Album) {
    owner_with_album_as(repo, "o@example.com").await
}

pub(crate) async fn owner_with_album_as(repo: &SqlRepo, email: &str) -> (Uuid, Album) {
    let owner = crate::ids::new_id();
    let user = User {
        id: owner,
        email: email.into(),
        password_hash: String::new(),
        is_admin: false,
        created_at: 0,
    };
    repo.insert_user(&user).await.unwrap();
    let album = Album::new(crate::ids::new_id(), owner, "A", "", 0);
    repo.insert_album(&album).await.unwrap();
    (owner, album)
}

#[tokio::test]
async fn walks_and_counts_follow_the_domain_rules() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let other = Album::new(crate::ids::new_id(), owner, "B", "", 0);
    repo.insert_album(&other).await.unwrap();
    let photos: Vec<Image> = (0..90).map(|n| photo(n, owner, album.id)).collect();
    for p in &photos {
        repo.insert_image(p, &[]).await.unwrap();
    }
    // Placed photos, one position given twice; a photo taken down on its
    // own, one carrying a folder's takedown, one moved away and one gone.
    let placed: Vec<Uuid> = photos.iter().step_by(4).map(|p| p.id).collect();
    repo.set_positions(album.id, &placed).await.unwrap();
    let q = "UPDATE images SET position = 1 WHERE id = $1";
    sqlx::query(q)
        .bind(placed[5].to_string())
        .execute(&repo.pool)
        .await
        .unwrap();
    let q = "UPDATE images SET taken_down_at = 5 WHERE id = $1";
    sqlx::query(q)
        .bind(photos[2].id.to_string())
        .execute(&repo.pool)
        .await
        .unwrap();
    let q = "INSERT INTO takedown_covers (image_id, album_id, at) VALUES ($1, $2, 7)";
    sqlx::query(q)
        .bind(photos[4].id.to_string())
        .bind(other.id.to_string())
        .execute(&repo.pool)
        .await
        .unwrap();
    let moved = ImageChange {
        album_id: Some(other.id),
        ..Default::default()
    };
    repo.update_image(owner, photos[6].id, &moved)
        .await
        .unwrap();
    repo.delete_image(owner, photos[7].id).await.unwrap();
    let retitled = ImageChange {
        title: Some("Now captioned".into()),
        exif_visibility: Some(ExifVisibility::default()),
        ..Default::default()
    };
    repo.update_image(owner, photos[8].id, &retitled)
        .await
        .unwrap();

    let stored = repo.album(None, album.id).await.unwrap().unwrap();
    assert_eq!(stored.image_count, 88);
    assert_eq!(
        repo.album(None, other.id)
            .await
            .unwrap()
            .unwrap()
            .image_count,
        1
    );

    let all = repo.album_images(album.id).await.unwrap();
    for order in Order::ALL {
        let policy = Policy {
            order: *order,
            ..Policy::default()
        };
        let mut expected = all.clone();
        policy.sort(&mut expected);
        let expected: Vec<Uuid> = expected
            .iter()
            .filter(|i| i.is_visible())
            .map(|i| i.id)
            .collect();
        assert!(expected.len() > 40, "{order:?}");
        for size in [1, 7, 100] {
            assert_eq!(
                walked(&repo, album.id, *order, size).await,
                expected,
                "{order:?} by {size}"
            );
        }
        for (at, id) in expected.iter().enumerate() {
            let rank = repo.album_rank(album.id, *order, Some(*id)).await.unwrap();
            assert_eq!(rank, Some(at as i64), "{order:?}");
            let back = Walk {
                backward: true,
                skip: 2,
                ..Walk::forward(*order, Some(*id), 1)
            };
            let before = repo.album_walk(album.id, back).await.unwrap().unwrap();
            let want = at.checked_sub(3).map(|b| expected[b]);
            assert_eq!(before.first().map(|i| i.id), want, "{order:?} at {at}");
        }
        let total = repo.album_rank(album.id, *order, None).await.unwrap();
        assert_eq!(total, Some(expected.len() as i64));
        let counts = repo.album_counts(album.id).await.unwrap();
        assert_eq!(counts, count(&all), "{order:?}");
    }
    kept_counts_follow_changes(&repo, owner, &photos, album.id, other.id).await;
    // A photo no visitor sees starts no walk.
    let hidden = Walk::forward(Order::TakenDesc, Some(photos[2].id), 5);
    assert!(repo.album_walk(album.id, hidden).await.unwrap().is_none());
    assert!(repo
        .album_photo(album.id, photos[6].id)
        .await
        .unwrap()
        .is_none());
    // A placed photo moved to another folder leaves its place behind: it
    // joins the unplaced photos there, not someone else's position.
    repo.update_image(owner, placed[3], &moved).await.unwrap();
    let there = repo.image(None, placed[3]).await.unwrap().unwrap();
    assert_eq!((there.album_id, there.position), (other.id, None));
    let count = repo
        .album(None, other.id)
        .await
        .unwrap()
        .unwrap()
        .image_count;
    assert_eq!(count, 3, "photos 6 and 4 moved there before");
    drop_database(repo).await;
}

/// The counts the database keeps (migration 0014) against the domain's
/// count of the folder's photos, after each kind of change. Both sides
/// read `images.carried`, so each photo's `carried` is also held to its
/// covers, counted here: a drift would show a taken-down photo as
/// visible on both sides at once.
async fn kept_counts_follow_changes(
    repo: &SqlRepo,
    owner: Uuid,
    photos: &[Image],
    album: Uuid,
    other: Uuid,
) {
    let check = |when: &'static str| async move {
        for folder in [album, other] {
            let all = repo.album_images(folder).await.unwrap();
            let kept = repo.album_counts(folder).await.unwrap();
            assert_eq!(kept, count(&all), "{when}");
        }
        let drifted: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM images i WHERE i.carried <> \
             (SELECT COUNT(*) FROM takedown_covers c WHERE c.image_id = i.id)",
        )
        .fetch_one(&repo.pool)
        .await
        .unwrap();
        assert_eq!(drifted, 0, "{when}: carried against the covers");
    };
    check("at the start").await;
    repo.set_status(photos[9].id, ImageStatus::Ready)
        .await
        .unwrap();
    repo.set_status(photos[12].id, ImageStatus::Failed)
        .await
        .unwrap();
    check("after status changes").await;
    let hide = ExifVisibility {
        gps: false,
        camera: false,
        datetime: false,
        settings: false,
    };
    let change = ImageChange {
        exif_visibility: Some(hide),
        description: Some("A caption".into()),
        ..Default::default()
    };
    repo.update_image(owner, photos[16].id, &change)
        .await
        .unwrap();
    check("after a visibility and caption change").await;
    let moved = ImageChange {
        album_id: Some(other),
        ..Default::default()
    };
    repo.update_image(owner, photos[4].id, &moved)
        .await
        .unwrap();
    repo.update_image(owner, photos[20].id, &moved)
        .await
        .unwrap();
    check("after a carried photo moved").await;
    let (down, up) = (Some("Reported"), None);
    for (target, reason) in [
        (Moderated::Image(photos[22].id), down),
        (Moderated::Album(other), down),
    ] {
        assert!(repo.set_takedown(target, reason, 9).await.unwrap());
    }
    check("after takedowns").await;
    let back = ImageChange {
        album_id: Some(album),
        ..Default::default()
    };
    repo.update_image(owner, photos[20].id, &back)
        .await
        .unwrap();
    check("after a photo carried a folder's takedown back").await;
    for (target, reason) in [
        (Moderated::Image(photos[22].id), up),
        (Moderated::Album(other), up),
    ] {
        assert!(repo.set_takedown(target, reason, 10).await.unwrap());
    }
    repo.delete_image(owner, photos[23].id).await.unwrap();
    check("after restores and a deletion").await;
}

pub(crate) async fn drop_database(repo: SqlRepo) {
    let Ok(base) = std::env::var("LIGHTBOX_TEST_POSTGRES") else {
        return;
    };
    if base.is_empty() {
        return;
    }
    let name: String = sqlx::query_scalar("SELECT current_database()::text")
        .fetch_one(&repo.pool)
        .await
        .unwrap();
    repo.pool.close().await;
    let admin = sqlx::AnyPool::connect(&format!("{base}/postgres"))
        .await
        .unwrap();
    let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
    sqlx::query(&drop).execute(&admin).await.unwrap();
}

/// A folder's zip reads the renders of every photo: more ids than one
/// statement may bind (32,766 on SQLite) still answer.
#[tokio::test]
async fn renders_of_a_whole_big_folder() {
    use crate::db::RenderRepo;
    let repo = repo().await;
    let ids: Vec<Uuid> = (0..40_000).map(|_| crate::ids::new_id()).collect();
    assert!(repo.renders_of(&ids).await.unwrap().is_empty());
    assert!(repo.custom_crops_of(&ids).await.unwrap().is_empty());
    assert!(crate::db::DetailsRepo::details_of(&repo, &ids)
        .await
        .unwrap()
        .is_empty());
    drop_database(repo).await;
}
