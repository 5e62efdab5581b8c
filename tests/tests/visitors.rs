//! What visitors see: escaping, EXIF under photo and policy, the preview
//! and its cursor, stats, the cover, the feed, visitor zips and takedowns.

use lightbox_e2e::{corpus, Server};
use serde_json::{json, Value};

async fn into_album(srv: &Server, t: &str, album: &Value, image: &Value) {
    srv.ok(
        Some(t),
        "image.update",
        json!({"id": image["id"], "album_id": album}),
    )
    .await;
}

#[tokio::test]
async fn titles_are_escaped_and_gps_needs_photo_and_policy() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv
        .ok(Some(&t), "album.create", json!({"name": "<b>Folder</b>"}))
        .await["id"]
        .clone();
    let meta = json!({"title": "<script>alert(1)</script>", "description": "a & b"}).to_string();
    let (code, img) = srv
        .upload(
            Some(&t),
            corpus("sunset_4272x2848.jpg"),
            "sunset.jpg",
            "image/jpeg",
            Some(&meta),
        )
        .await;
    assert_eq!(code, 201, "{img}");
    let img = srv.ready(&t, &img["id"]).await;
    assert!(img["exif"].to_string().contains("taken_at"));
    into_album(&srv, &t, &a, &img).await;
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public", "alias": "escape-test"}),
        )
        .await;
    assert_eq!(s["stats"]["visible"], 1);

    let preview = srv
        .ok(Some(&t), "album.preview", json!({"album_id": a}))
        .await;
    let (code, page, headers) = srv.fetch_once("/a/escape-test").await;
    assert_eq!(code, 200);
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    for html in [preview["html"].as_str().unwrap(), page.as_str()] {
        assert!(!html.contains("<script>"), "escaped: {html}");
        assert!(
            html.contains("&#60;script&#62;") || html.contains("&lt;script&gt;"),
            "{html}"
        );
        assert!(!html.contains("Location"), "GPS off by default");
        assert!(html.contains("Camera"), "camera shown by default");
    }
    // The same markup, but for where a photo leads: its page in the folder
    // for a visitor, its render in the owner's preview (a private folder
    // has no visitor address).
    let hrefless = |html: &str| {
        let mut out = String::new();
        let mut rest = html;
        while let Some(at) = rest.find(" href=\"") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 7..];
            rest = after.find('"').map_or("", |end| &after[end + 1..]);
        }
        out + rest
    };
    assert!(
        hrefless(&page).contains(&hrefless(preview["html"].as_str().unwrap())),
        "the page embeds the preview markup"
    );
    assert!(!page.contains("<b>Folder</b>"));
    assert!(page.contains("og:image"));
    assert!(!page.contains("sunset.jpg"), "never the uploaded file name");

    // The policy alone does not expose GPS ...
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setPolicy",
            json!({"album_id": a, "show_location": true}),
        )
        .await;
    assert_eq!(s["stats"]["exposing_location"], 0);
    assert_eq!(
        s["stats"]["exif"]["location"],
        json!({"visible": 0, "disabled_on_photo": 1})
    );
    assert!(!srv
        .fetch_once("/a/escape-test")
        .await
        .1
        .contains("Location"));
    // ... nor the photo alone ...
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "show_location": false}),
    )
    .await;
    srv.ok(
        Some(&t),
        "image.exif.setVisibility",
        json!({"id": img["id"], "groups": {"gps": true}}),
    )
    .await;
    assert!(!srv
        .fetch_once("/a/escape-test")
        .await
        .1
        .contains("Location"));
    let public = srv
        .ok(None, "image.getPublic", json!({"id": img["id"]}))
        .await;
    assert!(
        public["exif"].get("gps").is_none(),
        "folder visitors: policy applies"
    );
    // ... both together do.
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setPolicy",
            json!({"album_id": a, "show_location": true}),
        )
        .await;
    assert_eq!(s["stats"]["exposing_location"], 1);
    assert!(srv
        .fetch_once("/a/escape-test")
        .await
        .1
        .contains("Location"));
    // The date goes with show_date.
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "show_date": false}),
    )
    .await;
    assert!(!srv.fetch_once("/a/escape-test").await.1.contains("Taken"));

    // An image takedown hides it everywhere, renders included.
    let url = img["renders"][0]["url"].as_str().unwrap().to_owned();
    let path = &url[url.find("/i/").unwrap()..];
    assert_eq!(srv.fetch_once(path).await.0, 200);
    srv.ok(
        Some(&t),
        "admin.takedown",
        json!({"image_id": img["id"], "reason": "report"}),
    )
    .await;
    assert_eq!(srv.fetch_once(path).await.0, 404);
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": img["id"]}))
            .await,
        2001
    );
    let owner = srv
        .ok(Some(&t), "image.get", json!({"id": img["id"]}))
        .await;
    assert_eq!(owner["visitor_eligibility"], "taken_down");
    assert_eq!(owner["moderation"]["state"], "taken_down");
    assert_eq!(owner["frozen"], true);
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(
        (
            s["stats"]["visible"].clone(),
            s["stats"]["breakdown"]["taken_down"].clone()
        ),
        (json!(0), json!(1))
    );
    let preview = srv
        .ok(Some(&t), "album.preview", json!({"album_id": a}))
        .await;
    assert_eq!(preview["visitor_state"], "empty");
    srv.ok(Some(&t), "admin.restore", json!({"image_id": img["id"]}))
        .await;
    assert_eq!(srv.fetch_once(path).await.0, 200);
}

#[tokio::test]
async fn preview_paging_stats_cover_feed_and_zip() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv
        .ok(
            Some(&t),
            "album.create",
            json!({"name": "Many", "description": "Lots"}),
        )
        .await["id"]
        .clone();
    let mut photos = Vec::new();
    for i in 0..50 {
        let p = srv.photo(&t, 320, 240, &format!("photo {i:02}")).await;
        into_album(&srv, &t, &a, &p).await;
        photos.push(p);
    }
    let small = srv.photo(&t, 120, 90, "").await;
    into_album(&srv, &t, &a, &small).await;

    let p = srv
        .ok(Some(&t), "album.preview", json!({"album_id": a}))
        .await;
    assert_eq!(p["visitor_state"], "private", "shown in every state");
    assert_eq!(p["stats"]["total"], 51);
    assert_eq!(p["stats"]["visible"], 50);
    assert_eq!(p["stats"]["breakdown"]["too_small"], 1);
    assert_eq!(p["stats"]["captioned"], 50);
    assert!(p["stylesheet_url"]
        .as_str()
        .unwrap()
        .ends_with("/static/lightbox.css"));
    let first = p["html"].as_str().unwrap().matches("<figure").count();
    let after = p["next_after"].as_str().unwrap().to_owned();
    assert!(!after.is_empty());
    let p2 = srv
        .ok(
            Some(&t),
            "album.preview",
            json!({"album_id": a, "after": after}),
        )
        .await;
    assert_eq!(
        first + p2["html"].as_str().unwrap().matches("<figure").count(),
        50
    );
    assert_eq!(p2["next_after"], "", "the end");
    // The newest photo is first (taken_desc falls back to upload time).
    assert!(
        p["html"].as_str().unwrap().find("photo 49").unwrap()
            < p["html"].as_str().unwrap().find("photo 48").unwrap()
    );
    // The cursor photo leaves the folder: 2003.
    let default = srv.ok(Some(&t), "album.list", json!({})).await["items"][0]["id"].clone();
    let last_on_page: Vec<&Value> = photos
        .iter()
        .filter(|p| {
            let id = p["id"].as_str().unwrap();
            let bytes = uuid::Uuid::parse_str(id).unwrap();
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes.as_bytes()) == after
        })
        .collect();
    assert_eq!(last_on_page.len(), 1);
    into_album(&srv, &t, &default, last_on_page[0]).await;
    assert_eq!(
        srv.code(
            Some(&t),
            "album.preview",
            json!({"album_id": a, "after": after})
        )
        .await,
        2003
    );

    // Order policy: oldest first.
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "order": "uploaded_asc"}),
    )
    .await;
    let p = srv
        .ok(Some(&t), "album.preview", json!({"album_id": a}))
        .await;
    let html = p["html"].as_str().unwrap();
    assert!(html.find("photo 00").unwrap() < html.find("photo 01").unwrap());

    // Cover: only visible photos of the folder; null restores automatic.
    let chosen = &photos[10];
    let s = srv
        .ok(
            Some(&t),
            "album.cover.set",
            json!({"album_id": a, "image_id": chosen["id"]}),
        )
        .await;
    assert_eq!(s["cover"]["is_default"], false);
    assert_eq!(
        srv.code(
            Some(&t),
            "album.cover.set",
            json!({"album_id": a, "image_id": small["id"]})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "album.cover.set",
            json!({"album_id": a, "image_id": uuid::Uuid::new_v4()})
        )
        .await,
        2001
    );
    let p = srv
        .ok(Some(&t), "album.preview", json!({"album_id": a}))
        .await;
    let cover_url = p["og_image_url"].as_str().unwrap();
    assert!(cover_url.contains(chosen["id"].as_str().unwrap()));
    into_album(&srv, &t, &default, chosen).await;
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(
        (
            s["cover"]["is_default"].clone(),
            s["cover"]["was_reset"].clone()
        ),
        (json!(true), json!(true))
    );
    let s = srv
        .ok(
            Some(&t),
            "album.cover.set",
            json!({"album_id": a, "image_id": null}),
        )
        .await;
    assert_eq!(
        s["cover"],
        json!({"is_default": true, "was_reset": false, "image_id": s["cover"]["image_id"]})
    );

    into_album(&srv, &t, &a, chosen).await;

    // Public with feed and downloads: 49 visible photos now.
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": a, "mode": "public", "alias": "many-photos"}),
    )
    .await;
    assert_eq!(
        srv.fetch_once("/a/many-photos/feed.xml").await.0,
        404,
        "feed off by default"
    );
    assert_eq!(
        srv.fetch_once("/a/many-photos/download.zip").await.0,
        404,
        "downloads off by default"
    );
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "feed": true, "allow_download": true}),
    )
    .await;
    let (code, feed, headers) = srv.fetch_once("/a/many-photos/feed.xml").await;
    assert_eq!(code, 200);
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/atom+xml"));
    assert!(feed.contains("<feed xmlns=\"http://www.w3.org/2005/Atom\">"));
    assert_eq!(feed.matches("<entry>").count(), 49);
    let (code, page, _) = srv.fetch_once("/a/many-photos").await;
    assert_eq!(code, 200);
    assert!(page.contains("application/atom+xml") && page.contains("download.zip"));
    assert!(page.contains("?after="), "a page links to the next one");
    let (code, zip, _) = srv.fetch("/a/many-photos/download.zip").await;
    assert_eq!(code, 200);
    let z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    assert_eq!(z.len(), 49);
    let names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    assert!(
        names.iter().all(|n| n.ends_with(".webp")),
        "renders, never originals: {names:?}"
    );
    // Unknown addresses say nothing.
    for path in [
        "/a/no-such-alias",
        "/s/nope",
        "/albums/not-a-uuid",
        "/a/many-photos/../x",
    ] {
        assert_eq!(srv.fetch_once(path).await.0, 404, "{path}");
    }
    let (code, css, _) = srv.fetch_once("/static/lightbox.css").await;
    assert_eq!(code, 200);
    assert!(css.contains(".lbx-grid"));
}
