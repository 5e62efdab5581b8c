//! image.update, image.delete, custom crops, visibility and the public view.

use lightbox_e2e::{corpus, eventually, Server};
use serde_json::{json, Value};
use std::time::Duration;

async fn uploaded(srv: &Server, t: &str, file: &str, mime: &str) -> Value {
    let (status, img) = srv.upload(Some(t), corpus(file), file, mime, None).await;
    assert_eq!(status, 201, "{img}");
    srv.ready(t, &img["id"]).await
}

fn render<'a>(img: &'a Value, code: &str) -> Option<&'a Value> {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == code)
}

#[tokio::test]
async fn update_checks_and_pat_scopes() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = uploaded(&srv, &t, "sunset_4272x2848.jpg", "image/jpeg").await;
    let id = img["id"].clone();

    let updated = srv
        .ok(
            Some(&t),
            "image.update",
            json!({"id": id, "title": "Dusk", "description": "<b>hi</b>"}),
        )
        .await;
    assert_eq!(
        (updated["title"].clone(), updated["description"].clone()),
        (json!("Dusk"), json!("<b>hi</b>"))
    );
    let kept = srv
        .ok(
            Some(&t),
            "image.update",
            json!({"id": id, "description": "only this"}),
        )
        .await;
    assert_eq!(kept["title"], "Dusk", "omitted fields are unchanged");
    assert_eq!(
        srv.code(
            Some(&t),
            "image.update",
            json!({"id": id, "title": "x".repeat(201)})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "image.update",
            json!({"id": id, "album_id": uuid::Uuid::new_v4()})
        )
        .await,
        2001
    );

    let ro = srv
        .ok(
            Some(&t),
            "token.create",
            json!({"name": "ro", "scopes": ["read"]}),
        )
        .await;
    let ro = ro["token"].as_str().unwrap();
    assert_eq!(
        srv.code(Some(ro), "image.update", json!({"id": id, "title": "nope"}))
            .await,
        1003
    );
    assert_eq!(
        srv.code(Some(ro), "image.delete", json!({"id": id})).await,
        1003
    );
    srv.ok(Some(ro), "image.get", json!({"id": id})).await;
    assert_eq!(
        srv.ok(Some(&t), "image.get", json!({"id": id})).await["title"],
        "Dusk",
        "nothing changed"
    );
    let rw = srv
        .ok(Some(&t), "token.create", json!({"name": "rw"}))
        .await;
    srv.ok(
        rw["token"].as_str(),
        "image.update",
        json!({"id": id, "title": "By PAT"}),
    )
    .await;

    let other = srv.user("pete@example.com", "pete-password").await;
    assert_eq!(
        srv.code(
            Some(&other),
            "image.update",
            json!({"id": id, "title": "mine"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&other), "image.delete", json!({"id": id}))
            .await,
        2001
    );
}

#[tokio::test]
async fn custom_crops_render_and_are_limited_to_five() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = uploaded(&srv, &t, "seeding_5312x2988.jpg", "image/jpeg").await;
    let id = img["id"].clone();
    let crop =
        |code: &str| json!({"id": id, "code": code, "width": 100, "height": 100, "format": "png"});

    for (bad, why) in [
        (
            json!({"id": id, "code": "thumb", "width": 10, "height": 10}),
            "preset code",
        ),
        (
            json!({"id": id, "code": "Bad", "width": 10, "height": 10}),
            "code pattern",
        ),
        (
            json!({"id": id, "code": "z", "width": 0, "height": 0}),
            "no size",
        ),
        (
            json!({"id": id, "code": "z", "width": 15001, "height": 10}),
            "too wide",
        ),
        (
            json!({"id": id, "code": "z", "width": 10, "height": 10, "quality": 101}),
            "quality",
        ),
        (
            json!({"id": id, "code": "z", "width": 10, "height": 10, "mode": "stretch"}),
            "mode",
        ),
        (
            json!({"id": id, "code": "z", "width": 10, "height": 10, "format": "gif"}),
            "format",
        ),
    ] {
        assert_eq!(
            srv.code(Some(&t), "image.crop.add", bad).await,
            2002,
            "{why}"
        );
    }

    let added = srv.ok(Some(&t), "image.crop.add", crop("sq")).await;
    assert_eq!(added["custom_crops"][0]["code"], "sq");
    assert_eq!(added["custom_crops"][0]["quality"], 80);
    assert_eq!(render(&added, "sq").unwrap()["pending"], true);
    let done = eventually(Duration::from_secs(60), "the custom crop", || async {
        let img = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
        (render(&img, "sq").unwrap()["pending"] == false).then_some(img)
    })
    .await;
    let url = render(&done, "sq").unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let bytes = srv
        .http()
        .get(&url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let png = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap();
    assert_eq!((png.width(), png.height()), (100, 100));

    assert_eq!(
        srv.code(Some(&t), "image.crop.add", crop("sq")).await,
        2002,
        "duplicate code"
    );
    for c in ["c1", "c2", "c3", "c4"] {
        srv.ok(Some(&t), "image.crop.add", crop(c)).await;
    }
    let sixth = srv.fail(Some(&t), "image.crop.add", crop("c5")).await;
    assert_eq!(
        (sixth["code"].clone(), sixth["message"].clone()),
        (json!(4001), json!("custom_crop_limit_exceeded"))
    );

    let after = srv
        .ok(
            Some(&t),
            "image.crop.delete",
            json!({"id": id, "code": "sq"}),
        )
        .await;
    assert!(render(&after, "sq").is_none());
    assert_eq!(after["custom_crops"].as_array().unwrap().len(), 4);
    assert_eq!(
        srv.http().get(&url).send().await.unwrap().status().as_u16(),
        404
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "image.crop.delete",
            json!({"id": id, "code": "sq"})
        )
        .await,
        2001
    );
    srv.ok(Some(&t), "image.crop.add", crop("c5")).await;
}

#[tokio::test]
async fn public_photos_show_only_the_allowed_exif() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = uploaded(&srv, &t, "dragonfly_orient6_3168x4224.jpg", "image/jpeg").await;
    let id = img["id"].clone();
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": id})).await,
        2001,
        "private by default"
    );
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": "nope"}))
            .await,
        2001
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "image.setVisibility",
            json!({"id": id, "visibility": "friends"})
        )
        .await,
        2002
    );

    let set = srv
        .ok(
            Some(&t),
            "image.setVisibility",
            json!({"id": id, "visibility": "public"}),
        )
        .await;
    assert_eq!(set["visibility"], "public");
    let public = srv.ok(None, "image.getPublic", json!({"id": id})).await;
    assert_eq!(public["exif"]["camera_make"], "Xiaomi");
    assert!(
        public["exif"].get("gps").is_none(),
        "GPS is hidden by default: {public}"
    );
    assert_eq!(public["renders"].as_array().unwrap().len(), 4);
    let text = public.to_string();
    assert!(
        !text.contains("originals/") && !text.contains("admin@"),
        "{text}"
    );

    let v = srv
        .ok(
            Some(&t),
            "image.exif.setVisibility",
            json!({"id": id, "groups": {"gps": true}}),
        )
        .await;
    assert_eq!(
        v["exif_visibility"],
        json!({"gps": true, "camera": true, "datetime": true, "settings": true})
    );
    assert!(
        srv.ok(None, "image.getPublic", json!({"id": id})).await["exif"]["gps"]["lat"].is_number()
    );
    let v = srv
        .ok(
            Some(&t),
            "image.exif.setVisibility",
            json!({"id": id, "groups": {"camera": false, "settings": false}}),
        )
        .await;
    assert_eq!(
        v["exif_visibility"],
        json!({"gps": true, "camera": false, "datetime": true, "settings": false})
    );
    let public = srv.ok(None, "image.getPublic", json!({"id": id})).await;
    assert!(
        public["exif"].get("camera_make").is_none() && public["exif"].get("settings").is_none()
    );
    assert_eq!(public["exif"]["taken_at"], "2018-06-03T12:30:11Z");
    assert_eq!(
        srv.code(
            Some(&t),
            "image.exif.setVisibility",
            json!({"id": id, "groups": {"gps": "yes"}})
        )
        .await,
        2002
    );

    srv.ok(
        Some(&t),
        "image.setVisibility",
        json!({"id": id, "visibility": "private"}),
    )
    .await;
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": id})).await,
        2001
    );
}

#[tokio::test]
async fn delete_removes_the_original_and_every_render() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = uploaded(&srv, &t, "sunset_4272x2848.jpg", "image/jpeg").await;
    let id = img["id"].clone();
    assert!(!srv.blobs().is_empty());
    assert_eq!(
        srv.ok(Some(&t), "image.delete", json!({"id": id})).await,
        json!({})
    );
    assert_eq!(
        srv.code(Some(&t), "image.get", json!({"id": id})).await,
        2001
    );
    assert_eq!(
        srv.code(Some(&t), "image.delete", json!({"id": id})).await,
        2001
    );
    for r in img["renders"].as_array().unwrap() {
        let status = srv
            .http()
            .get(r["url"].as_str().unwrap())
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status.as_u16(), 404);
    }
    assert!(srv.blobs().is_empty(), "{:?}", srv.blobs());
}

#[tokio::test]
async fn the_public_photo_page_escapes_and_hides_what_it_must() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = uploaded(&srv, &t, "dragonfly_orient6_3168x4224.jpg", "image/jpeg").await;
    let id = img["id"].as_str().unwrap().to_owned();
    let page = |srv: &Server| {
        let url = format!("{}/p/{id}", srv.url);
        let http = srv.http().clone();
        async move {
            let r = http.get(url).send().await.unwrap();
            let csp = r
                .headers()
                .get("content-security-policy")
                .map(|v| v.to_str().unwrap().to_owned());
            (r.status().as_u16(), csp, r.text().await.unwrap())
        }
    };
    assert_eq!(page(&srv).await.0, 404, "private photos have no page");
    assert_eq!(
        srv.http()
            .get(format!("{}/p/nope", srv.url))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        404
    );

    let title = "<script>alert('x')</script> & \"quotes\"";
    srv.ok(
        Some(&t),
        "image.update",
        json!({"id": id, "title": title, "description": "<img src=x onerror=alert(1)>"}),
    )
    .await;
    srv.ok(
        Some(&t),
        "image.setVisibility",
        json!({"id": id, "visibility": "public"}),
    )
    .await;
    let (status, csp, html) = page(&srv).await;
    assert_eq!(status, 200);
    let csp = csp.expect("a Content-Security-Policy");
    assert!(
        csp.contains("default-src 'none'") && !csp.contains("script-src"),
        "{csp}"
    );
    assert!(
        !html.contains("<script") && !html.contains("<img src=x"),
        "escaped"
    );
    assert!(
        html.contains("&#60;script&#62;") && html.contains("&#60;img src=x"),
        "escaped as entities"
    );
    assert!(html.contains(&format!("/i/{id}/large.webp")) && html.contains("og:image"));
    assert!(html.contains("Xiaomi"), "camera shown by default");
    assert!(
        !html.contains("51.50") && !html.contains("Location"),
        "no GPS by default"
    );
    assert!(!html.contains("originals/") && !html.contains("admin@example.com"));

    srv.ok(
        Some(&t),
        "image.exif.setVisibility",
        json!({"id": id, "groups": {"gps": true, "camera": false}}),
    )
    .await;
    let (_, _, html) = page(&srv).await;
    assert!(html.contains("51.50735") && !html.contains("Xiaomi"));
}

fn waits(page: &str, ended: &str) -> f64 {
    lightbox_e2e::metric(
        page,
        &format!("lightbox_image_waits_total{{ended=\"{ended}\"}}"),
    )
}

/// `Prefer: wait` (RFC 7240) on `image.get`: the call is held while the
/// photo renders and answered as it settles, in one call, not a poll.
#[tokio::test]
async fn a_get_that_prefers_to_wait_is_answered_when_the_photo_settles() {
    let srv = Server::start();
    let t = srv.user("waiter@example.com", "waiter-password-1").await;
    // The 16 MB PNG takes hundreds of milliseconds to render: the call
    // below arrives while it is `processing`.
    let file = "picosdeeuropa_3264x2448.png";
    let (status, img) = srv
        .upload(Some(&t), corpus(file), file, "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    assert_eq!(img["status"], "processing", "{img}");
    // In a batch the header is not honoured: held calls would add up.
    let batch: Value = srv
        .http()
        .post(format!("{}/rpc", srv.url))
        .bearer_auth(&t)
        .header("prefer", "wait=5")
        .json(&json!([{"jsonrpc": "2.0", "id": 1, "method": "image.get", "params": {"id": img["id"]}}]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(batch[0]["result"]["status"], "processing", "{batch}");
    let (got, took) = srv.get_waiting(&t, &img["id"], 5).await;
    assert_eq!(got["status"], "ready", "{got}");
    assert!(
        took < Duration::from_secs(5),
        "held to the deadline: {took:?}"
    );
    let page = srv.metrics().await;
    assert_eq!(waits(&page, "settled"), 1.0, "{page}");
    assert_eq!(waits(&page, "deadline"), 0.0, "{page}");
    // Settled already: answered at once, and the same as without waiting.
    let (again, _) = srv.get_waiting(&t, &img["id"], 5).await;
    assert_eq!(
        again,
        srv.ok(Some(&t), "image.get", json!({ "id": img["id"] }))
            .await
    );
    assert_eq!(waits(&srv.metrics().await, "at_once"), 1.0);
    // Another owner's photo is 2001 whether or not the call waits.
    let other = srv.user("nosy@example.com", "nosy-password-1").await;
    let resp = srv
        .http()
        .post(format!("{}/rpc", srv.url))
        .bearer_auth(&other)
        .header("prefer", "wait=5")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "image.get", "params": {"id": img["id"]}}),
        )
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], 2001, "{body}");
}
