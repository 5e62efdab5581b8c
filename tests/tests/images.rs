//! Uploads, renders and `/i` serving over real HTTP with real photographs.

use lightbox_e2e::files::declared_png;
use lightbox_e2e::{corpus, eventually, Server};
use serde_json::{json, Value};
use std::time::Duration;

const JPEG: &str = "image/jpeg";

async fn get(srv: &Server, url: &str) -> reqwest::Response {
    srv.http().get(url).send().await.unwrap()
}

fn no_metadata(bytes: &[u8], needles: &[&str]) {
    let text = String::from_utf8_lossy(bytes);
    for n in ["EXIF", "Exif", "XMP ", "<x:xmpmeta", "ICCP"]
        .iter()
        .chain(needles)
    {
        assert!(!text.contains(n), "render carries metadata: {n}");
    }
}

/// Fetches every render of a ready image and checks it against its DTO.
async fn check_renders(
    srv: &Server,
    img: &Value,
    mime: &str,
    needles: &[&str],
) -> Vec<image::DynamicImage> {
    let mut out = Vec::new();
    for r in img["renders"].as_array().unwrap() {
        assert_eq!(r["pending"], false);
        let url = r["url"].as_str().unwrap();
        assert!(url.contains(&format!(
            "/i/{}/{}.",
            img["id"].as_str().unwrap(),
            r["crop"].as_str().unwrap()
        )));
        assert!(url.contains("?v="), "{url}");
        let resp = get(srv, url).await;
        assert_eq!(resp.status().as_u16(), 200, "{url}");
        assert_eq!(resp.headers()["content-type"], mime);
        let bytes = resp.bytes().await.unwrap();
        assert_eq!(bytes.len() as u64, r["size_bytes"].as_u64().unwrap());
        no_metadata(&bytes, needles);
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!(
            (decoded.width() as u64, decoded.height() as u64),
            (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap())
        );
        out.push(decoded);
    }
    out
}

fn sizes(img: &Value) -> Vec<(String, u64, u64)> {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["crop"].as_str().unwrap().to_owned(),
                r["width"].as_u64().unwrap(),
                r["height"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn expect(v: &[(&str, u64, u64)]) -> Vec<(String, u64, u64)> {
    let mut v: Vec<_> = v.iter().map(|(c, w, h)| (c.to_string(), *w, *h)).collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_jpeg_with_exif_and_orientation_6_renders_upright_without_metadata() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (status, img) = srv
        .upload(
            Some(&t),
            corpus("dragonfly_orient6_3168x4224.jpg"),
            "IMG_0001.jpg",
            JPEG,
            Some(r#"{"title":"Dragonfly"}"#),
        )
        .await;
    assert_eq!(status, 201, "{img}");
    assert_eq!(
        (img["width"].clone(), img["height"].clone()),
        (json!(4224), json!(3168)),
        "displayed size"
    );
    assert_eq!(img["format"], "jpg");
    assert_eq!(img["title"], "Dragonfly");
    assert_eq!(img["status"], "processing");
    assert_eq!(img["exif"]["camera_make"], "Xiaomi");
    assert_eq!(img["exif"]["camera_model"], "Redmi Note 4");
    assert_eq!(img["exif"]["taken_at"], "2018-06-03T12:30:11Z");
    assert!((img["exif"]["gps"]["lat"].as_f64().unwrap() - 51.507351).abs() < 1e-4);
    assert_eq!(
        img["exif_visibility"],
        json!({"gps": false, "camera": true, "datetime": true, "settings": true})
    );
    assert!(img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["pending"] == true));

    let ready = srv.ready(&t, &img["id"]).await;
    let expected = expect(&[
        ("thumb", 400, 400),
        ("small", 640, 480),
        ("medium", 1280, 960),
        ("large", 2048, 1536),
    ]);
    let mut got = sizes(&ready);
    got.sort();
    assert_eq!(got, expected);
    let rendered = check_renders(&srv, &ready, "image/webp", &["Xiaomi", "Redmi"]).await;
    assert!(
        rendered.iter().all(|r| r.width() >= r.height()),
        "landscape: orientation applied"
    );
}

fn png_with_alpha() -> Vec<u8> {
    let img = image::RgbaImage::from_fn(600, 400, |x, _| {
        if x < 300 {
            image::Rgba([0, 0, 0, 0])
        } else {
            image::Rgba([200, 30, 30, 255])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgba8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test]
async fn a_png_with_alpha_keeps_transparency_and_is_never_upscaled() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (status, img) = srv
        .upload(Some(&t), png_with_alpha(), "a.png", "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let ready = srv.ready(&t, &img["id"]).await;
    let mut got = sizes(&ready);
    got.sort();
    assert_eq!(
        got,
        expect(&[
            ("thumb", 400, 400),
            ("small", 600, 400),
            ("medium", 600, 400),
            ("large", 600, 400)
        ])
    );
    let rendered = check_renders(&srv, &ready, "image/webp", &[]).await;
    for r in rendered {
        let rgba = r.to_rgba8();
        assert_eq!(
            rgba.get_pixel(5, r.height() / 2).0[3],
            0,
            "left side stays transparent"
        );
        assert!(rgba.get_pixel(r.width() - 5, r.height() / 2).0[3] > 250);
    }
}

#[tokio::test]
async fn a_webp_with_a_trailing_exif_chunk() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (status, img) = srv
        .upload(
            Some(&t),
            corpus("bridge_4352x2448.webp"),
            "b.webp",
            "image/webp",
            None,
        )
        .await;
    assert_eq!(status, 201, "{img}");
    assert_eq!(
        (
            img["width"].clone(),
            img["height"].clone(),
            img["format"].clone()
        ),
        (json!(4352), json!(2448), json!("webp"))
    );
    assert_eq!(img["exif"]["camera_make"], "SONY");
    assert_eq!(img["exif"]["taken_at"], "2018-08-02T14:03:27Z");
    let ready = srv.ready(&t, &img["id"]).await;
    check_renders(&srv, &ready, "image/webp", &["SONY", "ILCE"]).await;
}

#[tokio::test]
async fn bad_uploads_are_refused_and_leave_nothing_behind() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let sunset = corpus("sunset_4272x2848.jpg");
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "truncated jpeg",
            sunset[..sunset.len() / 2].to_vec(),
            "sunset.jpg",
            JPEG,
        ),
        (
            "text named .jpg",
            b"hello, I am not a photo".repeat(100),
            "photo.jpg",
            JPEG,
        ),
        (
            "gif",
            b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec(),
            "a.gif",
            "image/gif",
        ),
        ("empty", Vec::new(), "e.jpg", JPEG),
        (
            "decompression bomb",
            declared_png(100_000, 100_000, &[]),
            "bomb.png",
            "image/png",
        ),
        (
            "svg",
            b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
            "x.png",
            "image/png",
        ),
    ];
    for (what, bytes, name, mime) in cases {
        let (status, body) = srv.upload(Some(&t), bytes, name, mime, None).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert_eq!(body["error"]["code"], 2002, "{what}");
    }
    // A real png mislabelled as jpeg is accepted for what it is.
    let (status, img) = srv
        .upload(Some(&t), png_with_alpha(), "fake.jpg", JPEG, None)
        .await;
    assert_eq!((status, img["format"].clone()), (201, json!("png")));
    let id = img["id"].clone();

    let (status, _) = srv
        .upload(
            Some(&t),
            png_with_alpha(),
            "x.png",
            "image/png",
            Some("{not json"),
        )
        .await;
    assert_eq!(status, 400, "bad meta");
    let (status, _) = srv
        .upload(None, png_with_alpha(), "x.png", "image/png", None)
        .await;
    assert_eq!(status, 401);
    let (status, _) = srv
        .upload(
            Some("lbx_pat_nope"),
            png_with_alpha(),
            "x.png",
            "image/png",
            None,
        )
        .await;
    assert_eq!(status, 401);
    let ro = srv
        .ok(
            Some(&t),
            "token.create",
            json!({"name": "ro", "scopes": ["read"]}),
        )
        .await;
    let (status, _) = srv
        .upload(
            ro["token"].as_str(),
            png_with_alpha(),
            "x.png",
            "image/png",
            None,
        )
        .await;
    assert_eq!(status, 403, "a read-only token cannot upload");

    srv.ready(&t, &id).await;
    let list = srv.ok(Some(&t), "image.list", json!({})).await;
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        1,
        "only the one good upload is stored"
    );
    let blobs = srv.blobs();
    assert_eq!(
        blobs
            .iter()
            .filter(|p| p.to_string_lossy().contains("/originals/"))
            .count(),
        1,
        "{blobs:?}"
    );
    assert_eq!(
        blobs.len(),
        5,
        "one original and its four renders: {blobs:?}"
    );
}

#[tokio::test]
async fn an_upload_over_the_maximum_is_413_and_leaves_nothing() {
    let srv = Server::start_with(&[("LIGHTBOX_UPLOAD_MAX_BYTES", "1000000")]);
    let t = srv.admin_token().await;
    let (status, _) = srv
        .upload(
            Some(&t),
            corpus("sunset_4272x2848.jpg"),
            "s.jpg",
            JPEG,
            None,
        )
        .await;
    assert_eq!(status, 413);
    assert_eq!(
        srv.ok(Some(&t), "image.list", json!({})).await["items"],
        json!([])
    );
    assert!(srv.blobs().is_empty(), "{:?}", srv.blobs());
}

#[tokio::test]
async fn renders_are_served_with_cache_headers_ranges_and_never_originals() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (_, img) = srv
        .upload(Some(&t), png_with_alpha(), "a.png", "image/png", None)
        .await;
    let ready = srv.ready(&t, &img["id"]).await;
    let id = ready["id"].as_str().unwrap();
    let url = ready["renders"][0]["url"].as_str().unwrap().to_owned();

    let r = get(&srv, &url).await;
    assert_eq!(
        r.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let etag = r.headers()["etag"].clone();
    let full = r.bytes().await.unwrap();

    let r = srv
        .http()
        .get(&url)
        .header("if-none-match", etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 304);
    let r = srv.http().head(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.headers()["content-length"].to_str().unwrap(),
        full.len().to_string()
    );
    let r = srv
        .http()
        .get(&url)
        .header("range", "bytes=0-9")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 206);
    assert_eq!(
        r.headers()["content-range"].to_str().unwrap(),
        format!("bytes 0-9/{}", full.len())
    );
    assert_eq!(r.bytes().await.unwrap(), full.slice(0..10));
    let r = srv
        .http()
        .get(&url)
        .header("range", format!("bytes={}-", full.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 416);

    let base = &srv.url;
    for path in [
        format!("/i/{id}/original.png"),
        format!("/i/{id}/original.jpg"),
        format!("/i/{id}/thumb.jpg"),
        format!("/i/{id}/nope.webp"),
        format!("/i/{id}/thumb"),
        format!("/i/{}/thumb.webp", uuid::Uuid::new_v4()),
        "/i/not-a-uuid/thumb.webp".to_owned(),
        format!("/i/{id}/..%2F..%2Fsigning.key"),
        format!("/i/{id}/%2e%2e%2foriginals.webp"),
    ] {
        assert_eq!(
            get(&srv, &format!("{base}{path}")).await.status().as_u16(),
            404,
            "{path}"
        );
    }
}

#[tokio::test]
async fn image_list_pages_newest_first_and_is_owner_scoped() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let mut ids = Vec::new();
    // Taken 2017-10-21, 2018-08-02 and 2018-05-12: uploaded out of order.
    for (file, mime) in [
        ("sunset_4272x2848.jpg", JPEG),
        ("bridge_4352x2448.webp", "image/webp"),
        ("seeding_5312x2988.jpg", JPEG),
    ] {
        let (status, img) = srv.upload(Some(&t), corpus(file), file, mime, None).await;
        assert_eq!(status, 201);
        ids.push(img["id"].clone());
    }
    let page = srv.ok(Some(&t), "image.list", json!({"limit": 2})).await;
    let got: Vec<Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(got, vec![ids[1].clone(), ids[2].clone()]);
    let cursor = page["next_cursor"].as_str().unwrap();
    assert!(!cursor.is_empty());
    let page = srv
        .ok(
            Some(&t),
            "image.list",
            json!({"limit": 2, "cursor": cursor}),
        )
        .await;
    assert_eq!(
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].clone())
            .collect::<Vec<_>>(),
        vec![ids[0].clone()]
    );
    assert_eq!(page["next_cursor"], "");

    assert_eq!(
        srv.code(Some(&t), "image.list", json!({"cursor": "bogus"}))
            .await,
        2002
    );
    assert_eq!(
        srv.code(Some(&t), "image.list", json!({"limit": 0})).await,
        2002
    );
    assert_eq!(
        srv.code(Some(&t), "image.list", json!({"limit": 201}))
            .await,
        2002
    );
    assert_eq!(
        srv.code(Some(&t), "image.get", json!({"id": "nope"})).await,
        2002
    );

    let other = srv.user("olga@example.com", "olga-password").await;
    assert_eq!(
        srv.code(Some(&other), "image.get", json!({"id": ids[0]}))
            .await,
        2001
    );
    assert_eq!(
        srv.ok(Some(&other), "image.list", json!({})).await["items"],
        json!([])
    );
    for id in &ids {
        srv.ready(&t, id).await;
    }
}

fn thumb(img: &Value) -> Value {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == "thumb")
        .unwrap()
        .clone()
}

/// Embedded mode takes presets from the TOML file; changing one and
/// restarting re-renders the images it affects, at a new version.
#[tokio::test]
async fn a_changed_preset_re_renders_at_a_new_version() {
    if std::env::var("LIGHTBOX_TEST_POSTGRES").is_ok_and(|v| !v.is_empty()) {
        return; // a restart on the same database is exercised on SQLite
    }
    let config = lightbox_e2e::TempDir::new();
    let path = config.0.join("lightbox.toml");
    let write = |side: u32| {
        let toml = format!("[[presets]]\ncode = \"thumb\"\nwidth = {side}\nheight = {side}\n\n[[presets]]\ncode = \"large\"\nwidth = 2048\nheight = 0\nmode = \"fit\"\n");
        std::fs::write(&path, toml).unwrap();
    };
    write(100);
    let cfg = path.to_str().unwrap().to_owned();
    let srv = Server::start_with(&[("LIGHTBOX_CONFIG", &cfg)]);
    let t = srv.admin_token().await;
    let (_, img) = srv
        .upload(Some(&t), png_with_alpha(), "a.png", "image/png", None)
        .await;
    let before = thumb(&srv.ready(&t, &img["id"]).await);
    assert_eq!(
        (
            before["width"].clone(),
            before["url"].as_str().unwrap().ends_with("?v=1")
        ),
        (json!(100), true)
    );

    let data = srv.stop();
    write(120);
    let srv = Server::start_in(data, &[("LIGHTBOX_CONFIG", &cfg)]);
    let t = srv.admin_token().await;
    let after = eventually(Duration::from_secs(60), "the re-render", || async {
        let img = srv
            .ok(Some(&t), "image.get", json!({"id": img["id"]}))
            .await;
        let th = thumb(&img);
        (th["pending"] == false && th["width"] == 120).then_some(th)
    })
    .await;
    assert!(after["url"].as_str().unwrap().ends_with("?v=2"), "{after}");
    let bytes = srv
        .http()
        .get(after["url"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(image::load_from_memory(&bytes).unwrap().width(), 120);
    // The old bytes go after the new render is recorded, so a reader can
    // see v2 a moment before v1 leaves the store.
    let thumbs = || {
        srv.blobs()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("thumb."))
            .collect::<Vec<_>>()
    };
    let left = eventually(Duration::from_secs(30), "the old version's removal", || {
        let now = thumbs();
        async move { (now.len() == 1).then_some(now) }
    })
    .await;
    assert!(
        left[0].to_string_lossy().ends_with("thumb.v2.webp"),
        "{left:?}"
    );
}

/// A file that looks whole (readable header, proper end) but whose pixel
/// data is corrupt passes the upload checks; the worker then marks it
/// `failed`, and nothing serves it.
#[tokio::test]
async fn an_undecodable_original_ends_failed() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    // The IDAT holds a zlib header followed by bytes that are not deflate.
    let garbage = [0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x13, 0x37];
    let (status, img) = srv
        .upload(
            Some(&t),
            declared_png(300, 200, &garbage),
            "hollow.png",
            "image/png",
            None,
        )
        .await;
    assert_eq!(status, 201, "{img}");
    let id = img["id"].clone();
    let failed = eventually(Duration::from_secs(60), "the failure", || async {
        let img = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
        (img["status"] == "failed").then_some(img)
    })
    .await;
    assert_eq!(failed["visitor_eligibility"], "failed");
    assert!(failed["renders"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["pending"] == true));
    let choices = srv
        .ok(Some(&t), "image.download.status", json!({"id": id}))
        .await;
    assert_eq!(choices["variants"][0]["state"], "unavailable");
    let url = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": id}))
        .await["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(srv.fetch(&url).await.0, 409);
    let render = failed["renders"][0]["url"].as_str().unwrap();
    assert_eq!(
        srv.http()
            .get(render)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        404
    );
}

/// A preset dropped from the configuration is removed at the next start:
/// its render rows and blobs go, the others stay.
#[tokio::test]
async fn a_preset_removed_from_the_configuration_loses_its_renders() {
    if std::env::var("LIGHTBOX_TEST_POSTGRES").is_ok_and(|v| !v.is_empty()) {
        return; // a restart on the same database is exercised on SQLite
    }
    let config = lightbox_e2e::TempDir::new();
    let path = config.0.join("lightbox.toml");
    let thumb_only = "[[presets]]\ncode = \"thumb\"\nwidth = 100\nheight = 100\n";
    std::fs::write(
        &path,
        format!(
            "{thumb_only}\n[[presets]]\ncode = \"wide\"\nwidth = 300\nheight = 0\nmode = \"fit\"\n"
        ),
    )
    .unwrap();
    let cfg = path.to_str().unwrap().to_owned();
    let srv = Server::start_with(&[("LIGHTBOX_CONFIG", &cfg)]);
    let t = srv.admin_token().await;
    let (_, img) = srv
        .upload(Some(&t), png_with_alpha(), "a.png", "image/png", None)
        .await;
    let ready = srv.ready(&t, &img["id"]).await;
    assert_eq!(ready["renders"].as_array().unwrap().len(), 2);
    let wide_blobs = |srv: &Server| {
        srv.blobs()
            .iter()
            .filter(|p| p.to_string_lossy().contains("wide."))
            .count()
    };
    assert_eq!(wide_blobs(&srv), 1);

    let data = srv.stop();
    std::fs::write(&path, thumb_only).unwrap();
    let srv = Server::start_in(data, &[("LIGHTBOX_CONFIG", &cfg)]);
    let t = srv.admin_token().await;
    eventually(
        Duration::from_secs(60),
        "the wide render removed",
        || async {
            let got = srv
                .ok(Some(&t), "image.get", json!({"id": img["id"]}))
                .await;
            let codes: Vec<_> = got["renders"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["crop"].as_str().unwrap().to_owned())
                .collect();
            (codes == ["thumb"] && wide_blobs(&srv) == 0).then_some(())
        },
    )
    .await;
}
