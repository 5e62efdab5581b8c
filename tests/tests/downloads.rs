//! image.download.status, image.downloadToken and GET/HEAD …/download.

use lightbox_e2e::{corpus, safe_download, synthetic_jpeg, Server};
use serde_json::json;

#[tokio::test]
async fn screen_and_full_downloads() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let original = corpus("sunset_4272x2848.jpg");
    let (_, img) = srv
        .upload(Some(&t), original.clone(), "DSC_1.jpg", "image/jpeg", None)
        .await;
    let id = img["id"].clone();
    srv.ready(&t, &id).await;

    let choices = srv
        .ok(Some(&t), "image.download.status", json!({"id": id}))
        .await;
    assert_eq!(choices["enabled"], true);
    let screen = &choices["variants"][0];
    assert_eq!(
        (screen["variant"].clone(), screen["state"].clone()),
        (json!("screen"), json!("ready"))
    );
    assert_eq!(
        (
            screen["crop"].clone(),
            screen["spec"].clone(),
            screen["width"].clone()
        ),
        (json!("large"), json!(1), json!(2048))
    );
    let full = &choices["variants"][1];
    assert_eq!(
        (
            full["variant"].clone(),
            full["state"].clone(),
            full["format"].clone()
        ),
        (json!("full"), json!("ready"), json!("jpg"))
    );
    assert_eq!(full["size_bytes"], original.len());
    assert!(
        !choices.to_string().contains("DSC_1") && !choices.to_string().contains("originals/"),
        "{choices}"
    );

    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "screen", "crop": "thumb", "spec": 1}),
        )
        .await;
    let url = link["url"].as_str().unwrap().to_owned();
    let (status, body, headers) = srv.fetch(&url).await;
    assert_eq!(
        (status, headers["content-type"].to_str().unwrap()),
        (200, "image/webp")
    );
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains("-thumb.webp"));
    assert_eq!(image::load_from_memory(&body).unwrap().width(), 400);
    let head = srv
        .http()
        .head(format!("{}{url}", srv.url))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            head.status().as_u16(),
            head.headers()["content-length"].to_str().unwrap()
        ),
        (200, body.len().to_string().as_str())
    );

    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "full"}),
        )
        .await;
    let (status, body, _) = srv.fetch(link["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(body == original, "the original, byte for byte");

    let stale = srv
        .fail(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "screen", "crop": "thumb", "spec": 7}),
        )
        .await;
    assert_eq!(
        (stale["code"].clone(), stale["data"]["state"].clone()),
        (json!(2006), json!("stale"))
    );
    let stale = srv
        .fail(
            Some(&t),
            "image.download.status",
            json!({"id": id, "crop": "thumb", "spec": 7}),
        )
        .await;
    assert_eq!(stale["data"]["state"], "stale");
    assert_eq!(
        srv.code(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "huge"})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "screen", "crop": "nope"})
        )
        .await,
        2002
    );
    let other = srv.user("zoe@example.com", "zoe-password").await;
    assert_eq!(
        srv.code(
            Some(&other),
            "image.downloadToken",
            json!({"id": id, "variant": "full"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&other), "image.download.status", json!({"id": id}))
            .await,
        2001
    );
}

#[tokio::test]
async fn links_are_rechecked_on_every_request() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (_, img) = srv
        .upload(
            Some(&t),
            corpus("seeding_5312x2988.jpg"),
            "s.jpg",
            "image/jpeg",
            None,
        )
        .await;
    let id = img["id"].clone();
    let early = srv
        .call(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "screen"}),
        )
        .await;
    let now = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
    if now["status"] == "processing" {
        assert_eq!(
            (
                early["error"]["code"].clone(),
                early["error"]["data"]["state"].clone()
            ),
            (json!(2006), json!("preparing"))
        );
    }
    srv.ready(&t, &id).await;

    srv.ok(
        Some(&t),
        "image.crop.add",
        json!({"id": id, "code": "sq", "width": 50, "height": 50}),
    )
    .await;
    let sq = lightbox_e2e::eventually(std::time::Duration::from_secs(60), "the crop", || async {
        srv.call(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "screen", "crop": "sq"}),
        )
        .await["result"]["url"]
            .as_str()
            .map(str::to_owned)
    })
    .await;
    assert_eq!(srv.fetch(&sq).await.0, 200);
    srv.ok(
        Some(&t),
        "image.crop.delete",
        json!({"id": id, "code": "sq"}),
    )
    .await;
    let (status, body, _) = srv.fetch(&sq).await;
    let err: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (
            status,
            err["error"]["code"].clone(),
            err["error"]["data"]["state"].clone()
        ),
        (409, json!(2006), json!("unavailable"))
    );

    let full = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "full"}),
        )
        .await;
    let full = full["url"].as_str().unwrap().to_owned();
    let archive = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": id}))
        .await;
    let archive_token = archive["url"]
        .as_str()
        .unwrap()
        .split("token=")
        .nth(1)
        .unwrap()
        .to_owned();
    let base = format!("/api/v1/images/{}/download", id.as_str().unwrap());
    assert_eq!(srv.fetch(&base).await.0, 401);
    assert_eq!(srv.fetch(&format!("{base}?token=junk")).await.0, 401);
    assert_eq!(
        srv.fetch(&format!("{base}?token={archive_token}")).await.0,
        401,
        "an archive link is not a download link"
    );
    assert_eq!(srv.fetch(&full).await.0, 200);
    srv.ok(Some(&t), "image.delete", json!({"id": id})).await;
    assert_eq!(srv.fetch(&full).await.0, 404);
}

/// An original is the uploader's bytes and may carry anything beside its
/// image (issue 54, item 8: an HTML page, a zip): every download is an
/// attachment a browser neither sniffs nor runs.
#[tokio::test]
async fn downloads_are_attachments_never_sniffed_or_run() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    // A page in a comment segment: the file is a valid JPEG all the same.
    let page = b"<html><script>alert(document.domain)</script></html>";
    let jpeg = synthetic_jpeg(640, 480, 9);
    let mut bytes = jpeg[..2].to_vec();
    bytes.extend_from_slice(&[0xFF, 0xFE, 0, page.len() as u8 + 2]);
    bytes.extend_from_slice(page);
    bytes.extend_from_slice(&jpeg[2..]);
    let (status, img) = srv
        .upload(Some(&t), bytes.clone(), "x.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let id = img["id"].clone();
    srv.ready(&t, &id).await;
    let mut urls = Vec::new();
    for variant in ["full", "screen"] {
        let link = json!({"id": id, "variant": variant});
        let link = srv.ok(Some(&t), "image.downloadToken", link).await;
        urls.push(link["url"].as_str().unwrap().to_owned());
    }
    let archive = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": id}))
        .await;
    urls.push(archive["url"].as_str().unwrap().to_owned());
    let album = srv.ok(Some(&t), "image.get", json!({"id": id})).await["album_id"].clone();
    let link = json!({"album_id": album, "variant": "full"});
    let link = srv.ok(Some(&t), "album.downloadToken", link).await;
    urls.push(link["url"].as_str().unwrap().to_owned());
    for url in &urls {
        let (status, body, headers) = srv.fetch(url).await;
        assert_eq!(status, 200, "{url}");
        if let Err(e) = safe_download(&headers) {
            panic!("{url}: {e}");
        }
        if url == &urls[0] {
            assert!(body == bytes, "the original, its comment and all");
        }
    }
}
