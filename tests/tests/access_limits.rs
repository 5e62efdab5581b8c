//! Issue 16, tried from outside: render URLs name exact versions that never
//! repeat, count limits hold under concurrency (this binary runs on SQLite
//! and again on PostgreSQL), pad is transparent, ids reveal nothing, alias
//! reservations are bounded and the embedded data is private. Each ran
//! against the previous code and failed there.

use lightbox_e2e::{eventually, Server};
use serde_json::{json, Value};
use std::time::Duration;

fn render<'a>(img: &'a Value, code: &str) -> Option<&'a Value> {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == code)
}

/// Waits until the `code` render of the photo is produced; its URL path.
async fn produced(srv: &Server, t: &str, id: &Value, code: &str) -> String {
    eventually(Duration::from_secs(60), "the render", || async {
        let img = srv.ok(Some(t), "image.get", json!({ "id": id })).await;
        let r = render(&img, code)?;
        (r["pending"] == false).then(|| r["url"].as_str().unwrap().replace(&srv.url, ""))
    })
    .await
}

fn with_config(toml: &str) -> Server {
    let dir =
        std::env::temp_dir().join(format!("lbx-access-{}-{}", std::process::id(), toml.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lightbox.toml");
    std::fs::write(&path, toml).unwrap();
    Server::start_with(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())])
}

#[tokio::test]
async fn render_urls_name_exact_versions_that_never_repeat() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = srv.photo(&t, 800, 600, "versions").await;
    let id = &img["id"];
    let add = |w: u32| json!({"id": id, "code": "sq", "width": w, "height": w});
    srv.ok(Some(&t), "image.crop.add", add(120)).await;
    let v1 = produced(&srv, &t, id, "sq").await;
    assert!(v1.ends_with("?v=1"), "{v1}");

    let (code, body, headers) = srv.fetch(&v1).await;
    assert_eq!(code, 200);
    assert!(headers["cache-control"]
        .to_str()
        .unwrap()
        .contains("immutable"));
    assert_eq!(image::load_from_memory(&body).unwrap().width(), 120);
    let bare = v1.trim_end_matches("?v=1");
    for wrong in [
        "?v=2",
        "?v=0",
        "?v=-1",
        "?v=x",
        "?v=1&v=2",
        "?v=01",
        "?v=+1",
        // Other spellings of the same URL: a cache in front would keep
        // a copy of the bytes for each.
        "?v=1&x=1",
        "?&v=1",
        "?v=1&",
        "?",
        "?v=1&dl=a&dl=b",
    ] {
        assert_eq!(srv.fetch(&format!("{bare}{wrong}")).await.0, 404, "{wrong}");
    }
    let encoded = bare.replacen("/sq.", "/%73q.", 1);
    assert_eq!(srv.fetch(&format!("{encoded}?v=1")).await.0, 404);
    let (code, _, headers) = srv.fetch(&format!("{v1}&dl=mine.webp")).await;
    assert_eq!(code, 200);
    assert!(headers["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    // One spelling of the photo's id too, so a cache in front holds one
    // copy: upper case, no hyphens, braces and `urn:uuid:` name nothing.
    let id_str = id.as_str().unwrap();
    let simple = id_str.replace('-', "");
    for other in [
        id_str.to_uppercase(),
        simple,
        format!("{{{id_str}}}"),
        format!("urn:uuid:{id_str}"),
    ] {
        let url = v1.replace(id_str, &other);
        assert_eq!(srv.fetch(&url).await.0, 404, "{url}");
    }
    let (code, _, headers) = srv.fetch(bare).await;
    assert_eq!(code, 200, "no v serves the current bytes");
    let cache = headers["cache-control"].to_str().unwrap();
    assert!(
        !cache.contains("immutable") && cache.contains("max-age=60"),
        "{cache}"
    );

    // Deleted and added again with the same code: a new version, the old
    // URL names nothing, and the new one serves the new bytes at once
    // (the in-memory cache never answers the old ones).
    srv.ok(
        Some(&t),
        "image.crop.delete",
        json!({"id": id, "code": "sq"}),
    )
    .await;
    assert_eq!(srv.fetch(&v1).await.0, 404);
    srv.ok(Some(&t), "image.crop.add", add(160)).await;
    let v2 = produced(&srv, &t, id, "sq").await;
    assert!(v2.ends_with("?v=2"), "versions never repeat: {v2}");
    assert_eq!(srv.fetch(&v1).await.0, 404, "a reused v");
    let (code, body, _) = srv.fetch(&v2).await;
    assert_eq!(code, 200);
    assert_eq!(image::load_from_memory(&body).unwrap().width(), 160);
}

#[tokio::test]
async fn custom_crops_per_photo_hold_under_concurrency() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = srv.photo(&t, 400, 300, "racing crops").await;
    let calls = (0..10).map(|n| {
        let (srv, t, id) = (&srv, &t, img["id"].clone());
        async move {
            let p = json!({"id": id, "code": format!("c{n}"), "width": 50, "height": 50});
            srv.call(Some(t), "image.crop.add", p).await
        }
    });
    let answers = futures::future::join_all(calls).await;
    let added = answers.iter().filter(|a| a.get("result").is_some()).count();
    assert_eq!(added, 5, "the limit is 5 custom crops: {answers:?}");
    for a in answers.iter().filter(|a| a.get("result").is_none()) {
        assert_eq!(a["error"]["code"], 4001, "{a}");
    }
    let img = srv
        .ok(Some(&t), "image.get", json!({"id": img["id"]}))
        .await;
    assert_eq!(img["custom_crops"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn aliases_per_owner_hold_under_concurrency() {
    let srv = with_config("[alias_limit]\ndefault = 2\n");
    let t = srv.admin_token().await;
    let mut folders = Vec::new();
    for n in 0..8 {
        let a = srv
            .ok(Some(&t), "album.create", json!({"name": format!("f{n}")}))
            .await;
        folders.push(a["id"].clone());
    }
    let calls = folders.iter().enumerate().map(|(n, a)| {
        let (srv, t) = (&srv, &t);
        let p = json!({"album_id": a, "mode": "public", "alias": format!("race-{n}")});
        async move { srv.call(Some(t), "album.sharing.setMode", p).await }
    });
    let answers = futures::future::join_all(calls).await;
    let won = answers.iter().filter(|a| a.get("result").is_some()).count();
    assert_eq!(won, 2, "the alias limit is 2: {answers:?}");
}

#[tokio::test]
async fn alias_reservations_per_owner_are_bounded() {
    // Limit 2: at most 4 names kept from others.
    let srv = with_config("[alias_limit]\ndefault = 2\n");
    let t = srv.admin_token().await;
    let other = srv.user("other@example.com", "other-password-1").await;
    let a = srv
        .ok(Some(&t), "album.create", json!({"name": "cycled"}))
        .await["id"]
        .clone();
    let mode = |m: &str, alias: Option<String>| {
        let mut p = json!({"album_id": a, "mode": m});
        if let Some(alias) = alias {
            p["alias"] = json!(alias);
        }
        p
    };
    for n in 0..8 {
        let p = mode("public", Some(format!("cycle-{n}")));
        srv.ok(Some(&t), "album.sharing.setMode", p).await;
        srv.ok(Some(&t), "album.sharing.setMode", mode("private", None))
            .await;
    }
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    let kept = s["aliases"].as_array().unwrap().len();
    assert!(kept <= 4, "{kept} names kept: {s}");
    // The oldest expired names were given up: another owner may take one.
    let b = srv
        .ok(Some(&other), "album.create", json!({"name": "mine"}))
        .await["id"]
        .clone();
    srv.ok(
        Some(&other),
        "album.sharing.setMode",
        json!({"album_id": b, "mode": "public", "alias": "cycle-0"}),
    )
    .await;

    // Released names are held for 90 days and count too: once they alone
    // fill the bound, a new name is refused.
    let c = srv
        .ok(Some(&t), "album.create", json!({"name": "releasing"}))
        .await["id"]
        .clone();
    let claim = |alias: String| json!({"album_id": c, "mode": "public", "alias": alias});
    let mut refused = None;
    for n in 0..8 {
        let answer = srv
            .call(Some(&t), "album.sharing.setMode", claim(format!("rel-{n}")))
            .await;
        if answer.get("error").is_some() {
            refused = Some(answer);
            break;
        }
        if n > 0 {
            let p = json!({"album_id": c, "alias": format!("rel-{}", n - 1)});
            srv.ok(Some(&t), "album.alias.release", p).await;
        }
    }
    let refused = refused.expect("released holds are bounded");
    assert_eq!(refused["error"]["code"], 2002, "{refused}");
    assert!(refused.to_string().contains("reserved"), "{refused}");
}

#[tokio::test]
async fn pad_is_transparent_in_png_and_webp() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = srv.photo(&t, 600, 300, "opaque jpeg").await;
    for format in ["png", "webp"] {
        let code = format!("pad-{format}");
        let spec = json!({"id": img["id"], "code": code, "width": 200, "height": 200,
                          "mode": "pad", "format": format});
        srv.ok(Some(&t), "image.crop.add", spec).await;
        let url = produced(&srv, &t, &img["id"], &code).await;
        let (status, body, _) = srv.fetch(&url).await;
        assert_eq!(status, 200);
        let px = image::load_from_memory(&body).unwrap().into_rgba8();
        assert_eq!(px.dimensions(), (200, 200));
        assert_eq!(
            px.get_pixel(0, 0).0[3],
            0,
            "{format}: padding is transparent"
        );
        assert_eq!(
            px.get_pixel(100, 100).0[3],
            255,
            "{format}: the photo is opaque"
        );
    }
}

#[tokio::test]
async fn image_ids_carry_random_bits_only() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv.photo(&t, 300, 200, "a").await;
    let b = srv.photo(&t, 300, 200, "b").await;
    let (a, b) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    for id in [a, b] {
        let u = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(u.get_version_num(), 4, "{id} is a random UUID");
    }
    assert_ne!(a[..8], b[..8], "no shared time prefix");
}

#[tokio::test]
async fn embedded_data_is_private_to_the_service_user() {
    use std::os::unix::fs::PermissionsExt;
    let srv = Server::start();
    let t = srv.admin_token().await;
    srv.photo(&t, 300, 200, "private bytes").await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&srv.data.0), 0o700, "the data folder");
    let db = srv.data.0.join("lightbox.db");
    if db.exists() {
        assert_eq!(mode(&db), 0o600, "the SQLite database");
    }
    let blobs = srv.blobs();
    assert!(!blobs.is_empty());
    for f in blobs {
        assert_eq!(mode(&f) & 0o077, 0, "{} is private", f.display());
    }
}
