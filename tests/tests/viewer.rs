//! The visitor's photo viewer: a grid photo opens its page within the
//! folder (`/a/{alias}/{photo}`, `/s/{token}/{photo}`), with the way back,
//! previous and next in the folder's order; only photos the folder shows
//! are reachable there; unlisted views are noindex and die with the link;
//! pages carry OpenGraph and Twitter tags; dates and cameras read well;
//! downloads are named after titles; the Atom ids survive a rename.

use lightbox_e2e::Server;
use serde_json::{json, Value};

async fn page(srv: &Server, path: &str) -> (u16, String, reqwest::header::HeaderMap) {
    let (status, body, headers) = srv.fetch(path).await;
    (status, String::from_utf8_lossy(&body).into_owned(), headers)
}

/// A folder with three ready photos, in upload order; (album id, photo ids).
async fn folder(srv: &Server, t: &str) -> (Value, Vec<String>) {
    let album = srv
        .ok(Some(t), "album.create", json!({"name": "Picos de Europa"}))
        .await["id"]
        .clone();
    let mut ids = Vec::new();
    for title in ["Naranjo / de Bulnes", "Fuente Dé", ""] {
        let p = srv.photo(t, 600, 400, title).await;
        srv.ok(
            Some(t),
            "image.update",
            json!({"id": p["id"], "album_id": album}),
        )
        .await;
        ids.push(p["id"].as_str().unwrap().to_owned());
    }
    (album, ids)
}

fn between<'a>(html: &'a str, from: &str, to: &str) -> Option<&'a str> {
    let start = html.find(from)? + from.len();
    let end = html[start..].find(to)? + start;
    Some(&html[start..end])
}

#[tokio::test]
async fn a_public_folder_opens_each_photo_with_its_neighbours() {
    let srv = Server::start();
    let t = srv.user("viewer@example.com", "viewer-password-1").await;
    let (album, ids) = folder(&srv, &t).await;
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": album, "allow_download": true, "feed": true, "order": "uploaded_asc"}),
    )
    .await;
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": album, "mode": "public", "alias": "picos"}),
    )
    .await;
    let (status, grid, _) = page(&srv, "/a/picos").await;
    assert_eq!(status, 200);
    for id in &ids {
        assert!(grid.contains(&format!("href=\"/a/picos/{id}\"")), "{grid}");
    }
    assert!(grid.contains("property=\"og:url\""), "{grid}");
    assert!(grid.contains("name=\"twitter:card\""), "{grid}");
    assert!(grid.contains("rel=\"icon\""), "{grid}");
    // The automatic cover is the first photo: not repeated above the grid.
    assert!(!grid.contains("class=\"lbx-cover"), "{grid}");
    assert!(
        grid.contains("download=\"Naranjo - de Bulnes.webp\""),
        "{grid}"
    );
    assert!(
        grid.contains(&format!("download=\"{}.webp\"", ids[2])),
        "{grid}"
    );

    // The Download link names the file itself, also across origins.
    let named = grid.find("download=\"Naranjo - de Bulnes.webp\"").unwrap();
    let href = grid[..named].rfind("href=\"").unwrap() + 6;
    let dl = &grid[href..grid[href..].find('"').unwrap() + href];
    let dl = dl
        .replace("&#38;", "&")
        .replace("&amp;", "&")
        .replacen(&srv.url, "", 1);
    assert!(dl.contains("&dl="), "{dl}");
    let (status, _, headers) = srv.fetch(&dl).await;
    assert_eq!(status, 200, "{dl}");
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"Naranjo - de Bulnes.webp\""),
        "{disposition}"
    );
    let (status, first, headers) = page(&srv, &format!("/a/picos/{}", ids[0])).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert!(
        first.contains("<span class=\"lbx-pos\">1 / 3</span>"),
        "{first}"
    );
    assert!(first.contains(&format!("rel=\"next\" href=\"/a/picos/{}\"", ids[1])));
    assert!(!first.contains("rel=\"prev\""), "the first has no previous");
    assert!(
        first.contains(&format!("href=\"/a/picos#photo-{}\"", ids[0])),
        "the way back"
    );
    let og = between(&first, "og:url\" content=\"", "\"").unwrap();
    assert_eq!(og, format!("{}/a/picos/{}", srv.url, ids[0]));
    let w: u32 = between(&first, "og:image:width\" content=\"", "\"")
        .unwrap()
        .parse()
        .unwrap();
    assert!(w > 0 && first.contains("og:image:height"), "{first}");
    assert!(
        first.contains("srcset=") && first.contains("width=\""),
        "{first}"
    );
    let (_, last, _) = page(&srv, &format!("/a/picos/{}", ids[2])).await;
    assert!(last.contains(&format!("rel=\"prev\" href=\"/a/picos/{}\"", ids[1])));
    assert!(!last.contains("rel=\"next\""), "the last has no next");

    // A photo of another folder, a private photo, garbage: the same 404.
    let other = srv.photo(&t, 300, 200, "elsewhere").await;
    for path in [
        format!("/a/picos/{}", other["id"].as_str().unwrap()),
        "/a/picos/not-a-uuid".into(),
        format!("/a/nobody/{}", ids[0]),
    ] {
        assert_eq!(page(&srv, &path).await.0, 404, "{path}");
    }
    // A taken-down photo leaves the sequence.
    let admin = srv.admin_token().await;
    srv.ok(
        Some(&admin),
        "admin.takedown",
        json!({"image_id": ids[1], "reason": "test"}),
    )
    .await;
    assert_eq!(page(&srv, &format!("/a/picos/{}", ids[1])).await.0, 404);
    let (_, first, _) = page(&srv, &format!("/a/picos/{}", ids[0])).await;
    assert!(first.contains(&format!("rel=\"next\" href=\"/a/picos/{}\"", ids[2])));

    // The feed's ids are the folder's and photos' UUIDs: a rename keeps them.
    let (_, feed, _) = page(&srv, "/a/picos/feed.xml").await;
    assert!(feed.contains(&format!("<id>urn:uuid:{}</id>", album.as_str().unwrap())));
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": album, "mode": "public", "alias": "picos-2026"}),
    )
    .await;
    let (_, renamed, _) = page(&srv, "/a/picos-2026/feed.xml").await;
    let ids_of = |xml: &str| -> Vec<String> {
        xml.split("<id>")
            .skip(1)
            .map(|s| s.split('<').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids_of(&feed), ids_of(&renamed));
    // The old alias forwards the feed, the zip and a photo view.
    let (status, _, headers) = srv.fetch_once("/a/picos/feed.xml").await;
    assert_eq!(
        (status, &headers["location"]),
        (
            301,
            &"/a/picos-2026/feed.xml"
                .parse::<reqwest::header::HeaderValue>()
                .unwrap()
        )
    );
    let (status, _, headers) = srv.fetch_once("/a/picos/download.zip").await;
    assert_eq!(status, 301);
    assert_eq!(headers["location"], "/a/picos-2026/download.zip");
    let (status, _, headers) = srv.fetch_once(&format!("/a/picos/{}", ids[0])).await;
    assert_eq!(status, 301);
    assert_eq!(headers["location"], format!("/a/picos-2026/{}", ids[0]));
}

#[tokio::test]
async fn unlisted_views_stay_behind_the_link_and_out_of_indexes() {
    let srv = Server::start();
    let t = srv
        .user("unlisted@example.com", "unlisted-password-1")
        .await;
    let (album, ids) = folder(&srv, &t).await;
    let shared = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": album, "mode": "unlisted"}),
        )
        .await;
    let link = shared["links"]["share_url"].as_str().unwrap().to_owned();
    let (status, view, headers) = page(&srv, &format!("{link}/{}", ids[1])).await;
    assert_eq!(status, 200, "{view}");
    assert!(view.contains("name=\"robots\" content=\"noindex"), "{view}");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["x-robots-tag"], "noindex");
    // Not by id, and not after the link is reset.
    assert_eq!(page(&srv, &format!("/p/{}", ids[1])).await.0, 404);
    srv.ok(
        Some(&t),
        "album.sharing.resetToken",
        json!({"album_id": album}),
    )
    .await;
    assert_eq!(page(&srv, &format!("{link}/{}", ids[1])).await.0, 404);
}

#[tokio::test]
async fn a_public_photo_page_leads_back_to_its_public_folder() {
    let srv = Server::start();
    let t = srv.user("single@example.com", "single-password-1").await;
    let (album, ids) = folder(&srv, &t).await;
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": album, "mode": "public", "alias": "singles"}),
    )
    .await;
    let (status, html, _) = page(&srv, &format!("/p/{}", ids[0])).await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&format!("href=\"/a/singles/{}\"", ids[0])),
        "{html}"
    );
    assert!(
        html.contains("og:url") && html.contains("twitter:card"),
        "{html}"
    );
    // A photo public by itself that its folder does not show (too small
    // for the grid): its page has no way back to a page that would 404.
    let (status, tiny) = srv
        .upload(
            Some(&t),
            lightbox_e2e::synthetic_jpeg(120, 90, 7),
            "t.jpg",
            "image/jpeg",
            None,
        )
        .await;
    assert_eq!(status, 201, "{tiny}");
    let tiny = srv.ready(&t, &tiny["id"]).await;
    srv.ok(
        Some(&t),
        "image.update",
        json!({"id": tiny["id"], "album_id": album}),
    )
    .await;
    srv.ok(
        Some(&t),
        "image.setVisibility",
        json!({"id": tiny["id"], "visibility": "public"}),
    )
    .await;
    let tiny_id = tiny["id"].as_str().unwrap();
    let (status, html, _) = page(&srv, &format!("/p/{tiny_id}")).await;
    assert_eq!(status, 200, "{html}");
    assert!(!html.contains("/a/singles/"), "{html}");
    assert_eq!(page(&srv, &format!("/a/singles/{tiny_id}")).await.0, 404);
    let (status, icon, headers) = srv.fetch("/favicon.ico").await;
    assert_eq!(
        (status, &headers["content-type"]),
        (
            200,
            &"image/svg+xml"
                .parse::<reqwest::header::HeaderValue>()
                .unwrap()
        )
    );
    assert!(String::from_utf8_lossy(&icon).starts_with("<svg"));
}
