//! Folders over HTTP: lifecycle, order, crop rules and their re-renders,
//! owner lookups and folder zips.

use lightbox_e2e::{eventually, Server};
use serde_json::{json, Value};
use std::io::Read;
use std::time::Duration;

fn render<'a>(img: &'a Value, code: &str) -> Option<&'a Value> {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == code)
}

async fn image(srv: &Server, t: &str, id: &Value) -> Value {
    srv.ok(Some(t), "image.get", json!({ "id": id })).await
}

#[tokio::test]
async fn lifecycle_of_a_folder() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let user = srv.user("owner@example.com", "owner-password-1").await;

    let list = srv.ok(Some(&user), "album.list", json!({})).await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(
        items.len(),
        1,
        "a new account has its default folder: {list}"
    );
    let default = items[0].clone();
    assert_eq!(
        (default["is_default"].clone(), default["visibility"].clone()),
        (json!(true), json!("private"))
    );

    let a = srv
        .ok(
            Some(&user),
            "album.create",
            json!({"name": "Trip", "description": "Summer"}),
        )
        .await;
    assert_eq!(a["is_default"], false);
    assert_eq!(a["visibility"], "private");
    assert_eq!(a["image_count"], 0);
    for bad in [
        json!({"name": ""}),
        json!({"name": "x".repeat(201)}),
        json!({}),
    ] {
        assert_eq!(srv.code(Some(&user), "album.create", bad).await, 2002);
    }
    let changed = srv
        .ok(
            Some(&user),
            "album.update",
            json!({"id": a["id"], "name": "Trip 2"}),
        )
        .await;
    assert_eq!(
        (changed["name"].clone(), changed["description"].clone()),
        (json!("Trip 2"), json!("Summer"))
    );
    assert_eq!(
        srv.code(
            Some(&user),
            "album.update",
            json!({"id": default["id"], "name": "x"})
        )
        .await,
        1003,
        "the default folder cannot be updated"
    );
    assert_eq!(
        srv.code(Some(&user), "album.delete", json!({"id": default["id"]}))
            .await,
        1003
    );
    // Another owner's folder does not exist for the caller.
    assert_eq!(
        srv.code(Some(&t), "album.get", json!({"id": a["id"]}))
            .await,
        2001
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "album.update",
            json!({"id": a["id"], "name": "mine"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&t), "album.delete", json!({"id": a["id"]}))
            .await,
        2001
    );

    // Photos move in, are ordered, and go back to the default folder when
    // the folder is deleted.
    let p1 = srv.photo(&user, 500, 400, "one").await;
    let p2 = srv.photo(&user, 500, 400, "two").await;
    assert_eq!(
        p1["album_id"], default["id"],
        "uploads land in the default folder"
    );
    for p in [&p1, &p2] {
        srv.ok(
            Some(&user),
            "image.update",
            json!({"id": p["id"], "album_id": a["id"]}),
        )
        .await;
    }
    assert_eq!(
        srv.ok(Some(&user), "album.get", json!({"id": a["id"]}))
            .await["image_count"],
        2
    );
    srv.ok(
        Some(&user),
        "album.reorder",
        json!({"album_id": a["id"], "ordered_ids": [p1["id"], p2["id"]]}),
    )
    .await;
    let foreign = srv.photo(&t, 300, 300, "admin's").await;
    assert_eq!(
        srv.code(
            Some(&user),
            "album.reorder",
            json!({"album_id": a["id"], "ordered_ids": [foreign["id"]]})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&user),
            "album.reorder",
            json!({"album_id": a["id"], "ordered_ids": [p1["id"], p1["id"]]})
        )
        .await,
        2002
    );

    let job = srv
        .ok(Some(&user), "album.delete", json!({"id": a["id"]}))
        .await;
    assert!(job["job_id"].as_i64().unwrap() > 0, "{job}");
    assert_eq!(
        srv.code(Some(&user), "album.get", json!({"id": a["id"]}))
            .await,
        2001
    );
    for p in [&p1, &p2] {
        assert_eq!(
            image(&srv, &user, &p["id"]).await["album_id"],
            default["id"]
        );
    }
    let empty = srv
        .ok(Some(&user), "album.create", json!({"name": "Empty"}))
        .await;
    let job = srv
        .ok(Some(&user), "album.delete", json!({"id": empty["id"]}))
        .await;
    assert_eq!(job["job_id"], 0, "nothing to re-render");
    let names: Vec<Value> = srv.ok(Some(&user), "album.list", json!({})).await["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].clone())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "deleted folders are gone from the list: {names:?}"
    );
}

#[tokio::test]
async fn crop_rules_re_render_the_folder() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv
        .ok(Some(&t), "album.create", json!({"name": "Rules"}))
        .await;
    let p1 = srv.photo(&t, 900, 600, "one").await;
    let p2 = srv.photo(&t, 600, 900, "two").await;
    for p in [&p1, &p2] {
        srv.ok(
            Some(&t),
            "image.update",
            json!({"id": p["id"], "album_id": a["id"]}),
        )
        .await;
    }
    let thumb_v1 = render(&srv.ready(&t, &p1["id"]).await, "thumb").unwrap()["url"].clone();

    for bad in [
        json!({"album_id": a["id"], "code": "Bad", "width": 10, "height": 10}),
        json!({"album_id": a["id"], "code": "sq", "width": 0, "height": 0}),
        json!({"album_id": a["id"], "code": "sq", "width": 15001, "height": 10}),
        json!({"album_id": a["id"], "code": "sq", "width": 10, "height": 10, "quality": 0}),
    ] {
        assert_eq!(srv.code(Some(&t), "album.crop.set", bad).await, 2002);
    }
    let job = srv
        .ok(
            Some(&t),
            "album.crop.set",
            json!({"album_id": a["id"], "code": "square", "width": 200, "height": 200, "format": "png"}),
        )
        .await;
    assert!(job["job_id"].as_i64().unwrap() > 0);
    // A rule with a preset's code replaces that preset for the folder.
    srv.ok(
        Some(&t),
        "album.crop.set",
        json!({"album_id": a["id"], "code": "thumb", "width": 100, "height": 50, "mode": "fill"}),
    )
    .await;
    for p in [&p1, &p2] {
        let img = eventually(Duration::from_secs(60), "folder renders", || async {
            let img = image(&srv, &t, &p["id"]).await;
            let sq = render(&img, "square")?;
            let th = render(&img, "thumb")?;
            (sq["pending"] == false && th["pending"] == false && th["width"] == 100).then_some(img)
        })
        .await;
        let sq = render(&img, "square").unwrap();
        assert_eq!(
            (
                sq["width"].clone(),
                sq["height"].clone(),
                sq["format"].clone()
            ),
            (json!(200), json!(200), json!("png"))
        );
        let (status, body, _) = srv.fetch(&url_path(&sq["url"])).await;
        assert_eq!(status, 200);
        let decoded = image::load_from_memory(&body).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (200, 200));
        assert_eq!(render(&img, "thumb").unwrap()["height"], 50);
    }
    let thumb_v2 = render(&image(&srv, &t, &p1["id"]).await, "thumb").unwrap()["url"].clone();
    assert_ne!(thumb_v1, thumb_v2, "the changed spec is a new version");

    // An image crop may not take a rule's code.
    assert_eq!(
        srv.code(
            Some(&t),
            "image.crop.add",
            json!({"id": p1["id"], "code": "square", "width": 10, "height": 10})
        )
        .await,
        2002
    );

    assert_eq!(
        srv.code(
            Some(&t),
            "album.crop.delete",
            json!({"album_id": a["id"], "code": "nope"})
        )
        .await,
        2001
    );
    let job = srv
        .ok(
            Some(&t),
            "album.crop.delete",
            json!({"album_id": a["id"], "code": "square"}),
        )
        .await;
    assert!(job["job_id"].as_i64().unwrap() > 0);
    eventually(
        Duration::from_secs(60),
        "the rule's renders to go",
        || async {
            let img = image(&srv, &t, &p2["id"]).await;
            render(&img, "square").is_none().then_some(())
        },
    )
    .await;
    let empty = srv
        .ok(Some(&t), "album.create", json!({"name": "Nobody"}))
        .await;
    let job = srv
        .ok(
            Some(&t),
            "album.crop.set",
            json!({"album_id": empty["id"], "code": "wide", "width": 300, "height": 0}),
        )
        .await;
    assert_eq!(job["job_id"], 0, "an empty folder has nothing to re-render");
    // Moving out of the folder drops its rules from the photo.
    let default = srv.ok(Some(&t), "album.list", json!({})).await["items"][0]["id"].clone();
    srv.ok(
        Some(&t),
        "image.update",
        json!({"id": p1["id"], "album_id": default}),
    )
    .await;
    eventually(Duration::from_secs(60), "the preset back", || async {
        let img = image(&srv, &t, &p1["id"]).await;
        let th = render(&img, "thumb")?;
        (th["width"] == 400 && th["pending"] == false).then_some(())
    })
    .await;
}

fn url_path(url: &Value) -> String {
    let url = url.as_str().unwrap();
    let at = url.find("/i/").unwrap();
    url[at..].to_owned()
}

fn zip_names(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().into_owned(), data)
        })
        .collect()
}

#[tokio::test]
async fn folder_downloads_and_owner_status() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let other = srv.user("other@example.com", "other-password-1").await;
    let a = srv
        .ok(Some(&t), "album.create", json!({"name": "Zip me"}))
        .await;
    assert_eq!(
        srv.fail(
            Some(&t),
            "album.downloadToken",
            json!({"album_id": a["id"], "variant": "full"})
        )
        .await["data"]["state"],
        "unavailable",
        "an empty folder has nothing to download"
    );
    let p1 = srv.photo(&t, 800, 600, "one").await;
    let small = srv.photo(&t, 150, 100, "tiny").await;
    for p in [&p1, &small] {
        srv.ok(
            Some(&t),
            "image.update",
            json!({"id": p["id"], "album_id": a["id"]}),
        )
        .await;
    }
    assert_eq!(
        srv.code(
            Some(&t),
            "album.downloadToken",
            json!({"album_id": a["id"], "variant": "raw"})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&other),
            "album.downloadToken",
            json!({"album_id": a["id"], "variant": "full"})
        )
        .await,
        2001
    );
    for (variant, ext) in [("full", "jpg"), ("screen", "webp")] {
        let link = srv
            .ok(
                Some(&t),
                "album.downloadToken",
                json!({"album_id": a["id"], "variant": variant}),
            )
            .await;
        let url = link["url"].as_str().unwrap();
        assert!(url.starts_with(&format!(
            "/api/v1/albums/{}/download?token=",
            a["id"].as_str().unwrap()
        )));
        let (status, body, headers) = srv.fetch(url).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "application/zip");
        let files = zip_names(&body);
        assert_eq!(
            files.len(),
            1,
            "only visitor-eligible photos: {:?}",
            files.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        assert_eq!(
            files[0].0,
            format!("001-{}.{ext}", p1["id"].as_str().unwrap())
        );
        let decoded = image::load_from_memory(&files[0].1).unwrap();
        if variant == "full" {
            assert_eq!((decoded.width(), decoded.height()), (800, 600));
        }
        let head = srv
            .http()
            .head(format!("{}{url}", srv.url))
            .send()
            .await
            .unwrap();
        assert_eq!(head.status(), 200);
    }
    let (status, _, _) = srv
        .fetch(&format!(
            "/api/v1/albums/{}/download?token=nonsense",
            a["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 401);
    // The link is rechecked: once the folder is gone it no longer works.
    let link = srv
        .ok(
            Some(&t),
            "album.downloadToken",
            json!({"album_id": a["id"], "variant": "full"}),
        )
        .await;
    srv.ok(Some(&t), "album.delete", json!({"id": a["id"]}))
        .await;
    let (status, _, _) = srv.fetch(link["url"].as_str().unwrap()).await;
    assert_eq!(status, 404);

    // ownerStatus: exactly one of id, alias, token; only the caller's.
    let b = srv
        .ok(Some(&t), "album.create", json!({"name": "Shared"}))
        .await;
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": b["id"], "mode": "unlisted"}),
        )
        .await;
    let token = s["links"]["share_url"]
        .as_str()
        .unwrap()
        .trim_start_matches("/s/")
        .to_owned();
    let by_id = srv
        .ok(Some(&t), "album.ownerStatus", json!({"id": b["id"]}))
        .await;
    assert_eq!(
        by_id,
        json!({"album_id": b["id"], "name": "Shared", "state": "live", "manage_url": format!("/manage/albums/{}", b["id"].as_str().unwrap())})
    );
    let by_token = srv
        .ok(Some(&t), "album.ownerStatus", json!({"token": token}))
        .await;
    assert_eq!(by_token["album_id"], b["id"]);
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": b["id"], "mode": "public", "alias": "Shared-Folder"}),
    )
    .await;
    let by_alias = srv
        .ok(
            Some(&t),
            "album.ownerStatus",
            json!({"alias": "shared-folder"}),
        )
        .await;
    assert_eq!(by_alias["album_id"], b["id"]);
    assert_eq!(
        srv.code(Some(&t), "album.ownerStatus", json!({"token": token}))
            .await,
        2001,
        "a retired link"
    );
    assert_eq!(
        srv.code(
            Some(&other),
            "album.ownerStatus",
            json!({"alias": "shared-folder"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&other), "album.ownerStatus", json!({"id": b["id"]}))
            .await,
        2001
    );
    for bad in [json!({}), json!({"id": b["id"], "alias": "shared-folder"})] {
        assert_eq!(srv.code(Some(&t), "album.ownerStatus", bad).await, 2002);
    }
}
