//! image.archiveToken and GET /api/v1/images/{id}/archive.

use lightbox_e2e::{corpus, Server};
use serde_json::json;
use std::io::Read;

#[tokio::test]
async fn the_archive_holds_the_original_and_every_render() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let original = corpus("elephants_5640x3172_prog.jpg");
    let (status, img) = srv
        .upload(
            Some(&t),
            original.clone(),
            "elephants.jpg",
            "image/jpeg",
            None,
        )
        .await;
    assert_eq!(status, 201);
    let id = img["id"].clone();

    let link = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": id}))
        .await;
    let url = link["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&format!(
        "/api/v1/images/{}/archive?token=",
        id.as_str().unwrap()
    )));
    assert!(link["expires_at"].is_string());
    let (early, _, _) = srv.fetch(&url).await;
    let now = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
    if now["status"] == "processing" {
        assert_eq!(early, 409, "not ready yet");
    }

    srv.ready(&t, &id).await;
    let (status, body, headers) = srv.fetch(&url).await;
    assert_eq!(
        (status, headers["content-type"].to_str().unwrap()),
        (200, "application/zip")
    );
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(body)).unwrap();
    let mut names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "large.webp",
            "medium.webp",
            "original.jpg",
            "small.webp",
            "thumb.webp"
        ]
    );
    let mut stored = Vec::new();
    zip.by_name("original.jpg")
        .unwrap()
        .read_to_end(&mut stored)
        .unwrap();
    assert!(stored == original, "the original comes back byte for byte");
    let mut thumb = Vec::new();
    zip.by_name("thumb.webp")
        .unwrap()
        .read_to_end(&mut thumb)
        .unwrap();
    assert_eq!(image::load_from_memory(&thumb).unwrap().width(), 400);
}

#[tokio::test]
async fn archive_links_are_checked_every_time() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let bob = srv.user("bob@example.com", "bob-password").await;
    let (_, mine) = srv
        .upload(
            Some(&t),
            corpus("sunset_4272x2848.jpg"),
            "s.jpg",
            "image/jpeg",
            None,
        )
        .await;
    let (_, his) = srv
        .upload(
            Some(&bob),
            corpus("seeding_5312x2988.jpg"),
            "b.jpg",
            "image/jpeg",
            None,
        )
        .await;
    let mine_id = mine["id"].as_str().unwrap().to_owned();
    srv.ready(&t, &mine["id"]).await;

    let his_link = srv
        .ok(Some(&bob), "image.archiveToken", json!({"id": his["id"]}))
        .await;
    let his_token = his_link["url"]
        .as_str()
        .unwrap()
        .split("token=")
        .nth(1)
        .unwrap()
        .to_owned();
    assert_eq!(
        srv.code(Some(&bob), "image.archiveToken", json!({"id": mine_id}))
            .await,
        2001
    );

    let base = format!("/api/v1/images/{mine_id}/archive");
    for (what, path) in [
        ("no token", base.clone()),
        ("garbage", format!("{base}?token=garbage")),
        ("another image's token", format!("{base}?token={his_token}")),
        ("an access token", format!("{base}?token={t}")),
    ] {
        assert_eq!(srv.fetch(&path).await.0, 401, "{what}");
    }

    let link = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": mine_id}))
        .await;
    let url = link["url"].as_str().unwrap().to_owned();
    assert_eq!(srv.fetch(&url).await.0, 200);
    srv.ok(Some(&t), "image.delete", json!({"id": mine_id}))
        .await;
    assert_eq!(srv.fetch(&url).await.0, 404, "rechecked: the image is gone");
}
