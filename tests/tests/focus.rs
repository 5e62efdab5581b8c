//! Where fills cut: `focus` on presets, folder rules and custom crops, the
//! owner's focal point (which re-renders exactly the renders it affects),
//! the smart crop, AVIF renders and the placeholder, end to end.

use lightbox_e2e::{eventually, Server, TempDir};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// 600x200: grey, with a red block in the right third that a centred
/// square crop misses.
fn photo() -> Vec<u8> {
    let img = image::RgbImage::from_fn(600, 200, |x, y| {
        if (450..560).contains(&x) && (50..150).contains(&y) {
            image::Rgb([210, 30, 30])
        } else {
            let g = 100 + (y / 20) as u8;
            image::Rgb([g, g, g])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

const PRESETS: &str =
    "[[presets]]\ncode = \"thumb\"\nwidth = 100\nheight = 100\nfocus = \"right\"\n\n\
[[presets]]\ncode = \"small\"\nwidth = 640\nheight = 0\nmode = \"fit\"\n\n\
[[presets]]\ncode = \"av\"\nwidth = 300\nheight = 0\nmode = \"fit\"\nformat = \"avif\"\n";

fn render<'a>(img: &'a Value, code: &str) -> &'a Value {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == code)
        .unwrap_or_else(|| panic!("no {code} in {img}"))
}

fn versions(img: &Value) -> BTreeMap<String, String> {
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let url = r["url"].as_str().unwrap();
            (
                r["crop"].as_str().unwrap().to_owned(),
                url.rsplit("v=").next().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn bytes(srv: &Server, url: &str) -> (String, Vec<u8>) {
    let r = srv.http().get(url).send().await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
    (kind, r.bytes().await.unwrap().to_vec())
}

/// Whether the render is mostly red (it kept the block).
async fn red(srv: &Server, img: &Value, code: &str) -> bool {
    let (_, data) = bytes(srv, render(img, code)["url"].as_str().unwrap()).await;
    let px = image::load_from_memory(&data).unwrap().into_rgb8();
    let n = px.pixels().filter(|p| p[0] > 150 && p[1] < 90).count();
    n * 5 > px.pixels().count()
}

async fn settled(srv: &Server, t: &str, id: &Value) -> Value {
    eventually(Duration::from_secs(120), "renders", || async {
        let img = srv.ok(Some(t), "image.get", json!({"id": id})).await;
        let all = img["renders"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["pending"] == false);
        (img["status"] == "ready" && all).then_some(img)
    })
    .await
}

#[tokio::test]
async fn focus_on_every_kind_of_crop_and_the_focal_point() {
    let config = TempDir::new();
    let path = config.0.join("lightbox.toml");
    std::fs::write(&path, PRESETS).unwrap();
    let srv = Server::start_with(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())]);
    let t = srv.admin_token().await;
    let (status, img) = srv
        .upload(Some(&t), photo(), "p.png", "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let id = img["id"].clone();
    let square = |code: &str, focus: &str| json!({"id": id, "code": code, "width": 100, "height": 100, "focus": focus});
    srv.ok(Some(&t), "image.crop.add", square("smart", "smart"))
        .await;
    srv.ok(Some(&t), "image.crop.add", square("mid", "center"))
        .await;
    srv.ok(
        Some(&t),
        "image.crop.add",
        json!({"id": id, "code": "plain", "width": 100, "height": 100}),
    )
    .await;
    srv.ok(
        Some(&t),
        "image.crop.add",
        json!({"id": id, "code": "wide", "width": 150, "height": 0, "format": "avif"}),
    )
    .await;
    let bad = json!({"id": id, "code": "x", "width": 10, "height": 10, "focus": "middle"});
    assert_eq!(srv.code(Some(&t), "image.crop.add", bad).await, 2002);
    let album = img["album_id"].clone();
    let rule = json!({"album_id": album, "code": "rule", "width": 100, "height": 100, "focus": "left", "format": "avif"});
    srv.ok(Some(&t), "album.crop.set", rule).await;
    let img = settled(&srv, &t, &id).await;

    // Presets, custom crops and folder rules each cut where they say.
    assert!(red(&srv, &img, "thumb").await, "preset focus right");
    assert!(red(&srv, &img, "smart").await, "smart keeps the red block");
    assert!(
        !red(&srv, &img, "mid").await && !red(&srv, &img, "plain").await,
        "centre misses it"
    );
    let (kind, avif) = bytes(&srv, render(&img, "rule")["url"].as_str().unwrap()).await;
    assert_eq!(kind, "image/avif");
    assert_eq!(
        lightbox_core::render::encode::avif::declared_size(&avif),
        Some((100, 100))
    );
    let (kind, avif) = bytes(&srv, render(&img, "wide")["url"].as_str().unwrap()).await;
    assert_eq!(
        (kind.as_str(), &avif[4..12]),
        ("image/avif", &b"ftypavif"[..])
    );
    assert_eq!(
        lightbox_core::render::encode::avif::declared_size(&avif),
        Some((150, 50))
    );
    assert_eq!(
        (
            render(&img, "wide")["width"].clone(),
            render(&img, "av")["width"].clone()
        ),
        (json!(150), json!(300))
    );

    // A focal point on the red block: exactly the fills that take it move.
    let before = versions(&img);
    let focus = json!({"id": id, "focus": {"x": 0.84, "y": 0.5}});
    let dto = srv.ok(Some(&t), "image.update", focus).await;
    assert_eq!(dto["focus"], json!({"x": 0.84, "y": 0.5}));
    let moved: Vec<_> = versions(&dto)
        .into_iter()
        .filter(|(code, v)| before[code] != *v)
        .map(|(code, _)| code)
        .collect();
    // thumb (preset), plain (custom without focus), rule (folder rule); not
    // the fits, nor the custom crops that name their own focus.
    assert_eq!(moved, ["plain", "rule", "thumb"]);
    let img = settled(&srv, &t, &id).await;
    assert!(red(&srv, &img, "plain").await && red(&srv, &img, "thumb").await);
    assert!(
        !red(&srv, &img, "mid").await,
        "an explicit centre stays centred"
    );
    // The same point again changes nothing; clearing it moves them back.
    let again = json!({"id": id, "focus": {"x": 0.84, "y": 0.5}});
    assert_eq!(
        versions(&srv.ok(Some(&t), "image.update", again).await),
        versions(&img)
    );
    let bad_points = [
        json!({"x": 1.5, "y": 0}),
        json!({"x": 0.5}),
        json!("left"),
        json!([0.5, 0.5]),
    ];
    for bad in bad_points {
        let code = srv
            .code(Some(&t), "image.update", json!({"id": id, "focus": bad}))
            .await;
        assert_eq!(code, 2002, "{bad}");
    }
    let cleared = srv
        .ok(Some(&t), "image.update", json!({"id": id, "focus": null}))
        .await;
    assert!(cleared.get("focus").is_none(), "{cleared}");
    let after = versions(&cleared);
    let moved = after
        .iter()
        .filter(|(c, v)| versions(&img)[*c] != **v)
        .count();
    assert_eq!(moved, 3);
    let img = settled(&srv, &t, &id).await;
    assert!(!red(&srv, &img, "plain").await && red(&srv, &img, "thumb").await);

    // The placeholder: in the owner's view and the public one, painted on
    // the photo page, and decoding to the photo's rough colours.
    let hash = img["placeholder"]
        .as_str()
        .expect("a placeholder")
        .to_owned();
    let url = lightbox_core::render::encode::placeholder::data_url(&hash).unwrap();
    let png = base64_png(&url);
    let (w, h) = png.dimensions();
    assert!(w > 2 * h, "keeps the wide shape: {w}x{h}");
    // ThumbHash keeps low frequencies only: the block tints its whole
    // right side red, the far left stays near grey.
    let redness = |p: &image::Rgb<u8>| p[0] as i32 - p[2] as i32;
    let (left, right) = (
        png.get_pixel(w / 10, h / 2),
        png.get_pixel(w * 5 / 6, h / 2),
    );
    assert!(redness(left) < 45, "near grey on the left: {left:?}");
    assert!(
        redness(right) > redness(left) + 30,
        "red on the right: {right:?}"
    );
    srv.ok(
        Some(&t),
        "image.setVisibility",
        json!({"id": id, "visibility": "public"}),
    )
    .await;
    let public = srv.ok(None, "image.getPublic", json!({"id": id})).await;
    assert_eq!(public["placeholder"], json!(hash));
    let (status, page, headers) = srv.fetch(&format!("/p/{}", id.as_str().unwrap())).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("data:image/png;base64,"));
    assert!(headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("data:"));
}

fn base64_png(url: &str) -> image::RgbImage {
    use base64::Engine;
    let b64 = url.strip_prefix("data:image/png;base64,").unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    image::load_from_memory(&png).unwrap().into_rgb8()
}
