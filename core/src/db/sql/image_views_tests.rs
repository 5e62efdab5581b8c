//! The owner's view read in one statement (`image_views`) against the
//! separate reads it replaced, on a photo with every part filled in and
//! one with none, on both engines.

use super::super::album_views::tests::{drop_database, owner_with_album, photo, repo};
use super::super::SqlRepo;
use crate::db::{BudgetRepo, DetailsRepo, ImageRepo, ImageView, RenderRepo};
use lightbox_domain::crop::{default_presets, CropSpec, Format, Mode, SpecSource};
use lightbox_domain::details::Clip;
use lightbox_domain::focus::Point;
use lightbox_domain::image::ImageStatus;
use lightbox_domain::render::{Produced, Render};
use uuid::Uuid;

/// The view as the five statements before it read it.
async fn separately(repo: &SqlRepo, owner: Uuid, id: Uuid) -> ImageView {
    let image = repo.image(Some(owner), id).await.unwrap().unwrap();
    let reason =
        sqlx::query_scalar::<_, String>("SELECT reason FROM image_failures WHERE image_id = $1")
            .bind(id.to_string())
            .fetch_optional(&repo.pool)
            .await
            .unwrap();
    ImageView {
        failure_reason: reason.filter(|_| image.status == ImageStatus::Failed),
        renders: repo.renders(id).await.unwrap(),
        custom_crops: repo.custom_crops(id).await.unwrap(),
        details: repo.details(id).await.unwrap(),
        image,
    }
}

/// A render produced at version 1 with these values.
fn produced(width: u32, height: u32, size_bytes: u64) -> Produced {
    Produced {
        version: 1,
        width,
        height,
        size_bytes,
        blob_key: format!("renders/x/{width}/1"),
    }
}

/// The folder's photos in the list's order, as the database sorts them.
async fn walk_order(repo: &SqlRepo, album: Uuid) -> Vec<Uuid> {
    let q = "SELECT id FROM images WHERE album_id = $1 ORDER BY sort_at DESC, id DESC";
    let ids: Vec<String> = sqlx::query_scalar(q)
        .bind(album.to_string())
        .fetch_all(&repo.pool)
        .await
        .unwrap();
    ids.iter().map(|id| id.parse().unwrap()).collect()
}

#[tokio::test]
async fn one_statement_reads_what_the_separate_reads_did() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    // n = 1 is a failed photo, n = 2 a ready one (`photo`'s rules).
    let (full, bare) = (photo(1, owner, album.id), photo(2, owner, album.id));
    let presets: Vec<Render> = default_presets()
        .into_iter()
        .map(|spec| Render::pending(full.id, spec))
        .collect();
    repo.insert_image(&full, &presets).await.unwrap();
    repo.insert_image(&bare, &[]).await.unwrap();

    // Two produced renders with different values: a render put together
    // from two photos' or two renders' columns shows.
    let (produced, medium) = (produced(400, 267, 12_345), produced(1280, 853, 98_765));
    for (code, p) in [("thumb", &produced), ("medium", &medium)] {
        repo.render_produced(full.id, code, p).await.unwrap();
    }
    let mut custom = CropSpec::new("zz-quote\"d", 300, 200, Mode::Fill);
    custom.format = Format::Avif;
    repo.add_custom_crop(full.id, &custom, 10, 7).await.unwrap();
    let second = CropSpec::new("aa", 120, 0, Mode::Fit);
    repo.add_custom_crop(full.id, &second, 10, 8).await.unwrap();
    repo.set_render_spec(full.id, &second, SpecSource::Custom)
        .await
        .unwrap();
    repo.set_failure_reason(full.id, "decode: <truncated>", 9)
        .await
        .unwrap();
    repo.set_failure_reason(bare.id, "an old failure", 9)
        .await
        .unwrap();
    // Every column that may be NULL holds a value on `full`, so a column
    // read from the wrong place of the JSON array shows.
    let q = "UPDATE images SET taken_at = -7, position = 3, taken_down_at = 5, \
             takedown_reason = 'spam \"x\"', visibility = 'public' WHERE id = $1";
    sqlx::query(q)
        .bind(full.id.to_string())
        .execute(&repo.pool)
        .await
        .unwrap();
    let point: Point = serde_json::from_str(r#"{"x": 0.25, "y": 0.75}"#).unwrap();
    repo.set_focus(full.id, Some(point), &[]).await.unwrap();
    repo.set_placeholder(full.id, "3OcRJYB4d3h/iIeHeEh3eIhw+j2w", point)
        .await
        .unwrap();
    repo.set_motion(
        full.id,
        Clip {
            offset: 10,
            len: 20,
        },
    )
    .await
    .unwrap();

    let view = repo.image_view(owner, full.id).await.unwrap().unwrap();
    assert_eq!(view, separately(&repo, owner, full.id).await);
    assert_eq!(view.renders.len(), 6, "five presets and the custom crop");
    assert_eq!(
        view.renders
            .iter()
            .find(|r| r.code == "thumb")
            .unwrap()
            .produced,
        Some(produced)
    );
    let found = view.renders.iter().find(|r| r.code == "medium").unwrap();
    assert_eq!(found.produced, Some(medium));
    assert_eq!(view.custom_crops, vec![custom, second]);
    assert_eq!(view.failure_reason.as_deref(), Some("decode: <truncated>"));
    assert_eq!(
        view.details.motion,
        Some(Clip {
            offset: 10,
            len: 20
        })
    );
    assert_eq!(view.image.taken_at, Some(-7));
    assert_eq!(view.image.position, Some(3));
    assert_eq!(view.image.takedown.at, Some(5));

    let empty = repo.image_view(owner, bare.id).await.unwrap().unwrap();
    assert_eq!(empty, separately(&repo, owner, bare.id).await);
    assert!(empty.renders.is_empty() && empty.custom_crops.is_empty());
    assert_eq!(
        empty.failure_reason, None,
        "a reason shows only while failed"
    );

    let page = repo
        .list_images(owner, Some(album.id), None, 10)
        .await
        .unwrap();
    let ids: Vec<Uuid> = page.iter().map(|v| v.image.id).collect();
    assert_eq!(ids, walk_order(&repo, album.id).await);
    for listed in page {
        assert_eq!(listed, separately(&repo, owner, listed.image.id).await);
    }

    let stranger = crate::ids::new_id();
    assert_eq!(repo.image_view(stranger, full.id).await.unwrap(), None);
    let theirs = repo.list_images(stranger, None, None, 10).await.unwrap();
    assert!(theirs.is_empty());
    drop_database(repo).await;
}

#[tokio::test]
async fn pages_keep_the_list_order_through_ties() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    // `photo` gives 40 photos 13 sort keys: ties are decided by the id.
    for n in 0..40 {
        repo.insert_image(&photo(n, owner, album.id), &[])
            .await
            .unwrap();
    }
    let mut walked: Vec<Uuid> = Vec::new();
    let mut after = None;
    loop {
        let page = repo.list_images(owner, None, after, 7).await.unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.image.sort_at, last.image.id));
        walked.extend(page.iter().map(|v| v.image.id));
    }
    assert_eq!(walked, walk_order(&repo, album.id).await);
    drop_database(repo).await;
}

/// PostgreSQL plans a page's statements once: after a dozen pages and
/// views the typed pool's connections have run them on generic plans
/// only, and never compiles them (`jit` off on both pools). (With the page
/// size and cursor as parameters it had judged a custom plan cheaper and
/// planned every call again.)
#[tokio::test]
async fn pages_are_planned_once_on_postgres() {
    let repo = repo().await;
    let Some(pg) = repo.typed.clone() else {
        return drop_database(repo).await;
    };
    let (owner, album) = owner_with_album(&repo).await;
    for n in 0..12 {
        let p = photo(n, owner, album.id);
        repo.insert_image(&p, &[]).await.unwrap();
        repo.image_view(owner, p.id).await.unwrap().unwrap();
    }
    for folder in [None, Some(album.id), None, Some(album.id)] {
        let mut after = None;
        loop {
            let page = repo.list_images(owner, folder, after, 4).await.unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.image.sort_at, last.image.id));
        }
    }
    // Every connection the pool may hold, so each one's statements are seen.
    let mut held = Vec::new();
    for _ in 0..super::super::pools::TYPED_CONNECTIONS {
        held.push(pg.acquire().await.unwrap());
    }
    let (mut generic, mut custom) = (0i64, 0i64);
    for conn in &mut held {
        let (g, c): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT SUM(generic_plans)::int8, SUM(custom_plans)::int8 \
             FROM pg_prepared_statements WHERE statement LIKE '%FROM images%' \
               AND statement NOT LIKE '%pg_prepared_statements%'",
        )
        .fetch_one(&mut **conn)
        .await
        .unwrap();
        generic += g.unwrap_or(0);
        custom += c.unwrap_or(0);
    }
    assert_eq!(
        custom, 0,
        "pages planned per call ({generic} on a kept plan)"
    );
    assert!(generic >= 12 + 16, "{generic} pages on a kept plan");
    let jit = "SELECT current_setting('jit')";
    for conn in &mut held {
        let on: String = sqlx::query_scalar(jit)
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(on, "off", "the typed pool compiles statements");
    }
    let on: String = sqlx::query_scalar(jit).fetch_one(&repo.pool).await.unwrap();
    assert_eq!(on, "off", "the Any pool compiles statements");
    drop(held);
    drop_database(repo).await;
}
