//! Bad files end to end: truncated and corrupt photos of every format,
//! headers declaring giant images, huge and malformed EXIF, polyglots and
//! hostile `meta`. An upload is refused with 400 and 2002, or accepted and
//! ends `ready` or `failed`; never a 5xx, the process stays up, and only
//! what was accepted is stored.

use lightbox_e2e::files::{
    corrupt_middle, declared_png, jpeg_declaring, jpeg_with_scans, jpeg_with_segment, looping_exif,
    png_chunk, png_with_chunk, webp_declaring,
};
use lightbox_e2e::{corpus, eventually, synthetic_jpeg, Server};
use serde_json::{json, Value};
use std::time::Duration;

const JPEG: &str = "image/jpeg";

async fn refused(
    srv: &Server,
    t: &str,
    what: &str,
    bytes: Vec<u8>,
    mime: &str,
    meta: Option<&str>,
) {
    let (status, body) = srv.upload(Some(t), bytes, "x.jpg", mime, meta).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(2002)),
        "{what}: {body}"
    );
}

/// Accepted: waits for its end state and returns the image.
async fn accepted(srv: &Server, t: &str, what: &str, bytes: Vec<u8>, mime: &str) -> Value {
    let (status, img) = srv.upload(Some(t), bytes, "x.jpg", mime, None).await;
    assert_eq!(status, 201, "{what}: {img}");
    let id = img["id"].clone();
    eventually(Duration::from_secs(90), what, || async {
        let img = srv.ok(Some(t), "image.get", json!({"id": id})).await;
        matches!(img["status"].as_str(), Some("ready" | "failed")).then_some(img)
    })
    .await
}

#[tokio::test]
async fn truncated_corrupt_and_giant_files_of_every_format() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let mut kept = 0;
    for (file, mime) in [
        ("sunset_4272x2848.jpg", JPEG),
        ("elephants_5640x3172_prog.jpg", JPEG),
        ("picosdeeuropa_3264x2448.png", "image/png"),
        ("bridge_4352x2448.webp", "image/webp"),
    ] {
        let bytes = corpus(file);
        for (what, cut) in [
            ("half", bytes.len() / 2),
            ("header only", 40),
            ("all but 1 byte", bytes.len() - 1),
        ] {
            refused(
                &srv,
                &t,
                &format!("{file}: {what}"),
                bytes[..cut].to_vec(),
                mime,
                None,
            )
            .await;
        }
        // Whole-looking, but 64 KiB of the middle is noise: the upload
        // cannot know, so the worker decides; either end is documented.
        let img = accepted(
            &srv,
            &t,
            &format!("{file} corrupt"),
            corrupt_middle(&bytes, 64 << 10),
            mime,
        )
        .await;
        assert!(
            img["status"] == "ready" || img["visitor_eligibility"] == "failed",
            "{img}"
        );
        kept += 1;
    }
    let small = synthetic_jpeg(64, 48, 3);
    for (what, bytes) in [
        (
            "jpeg declaring 65000x65000",
            jpeg_declaring(&small, 65000, 65000),
        ),
        (
            "png declaring 100000x100000",
            declared_png(100_000, 100_000, &[0x78, 0x9C, 3, 0, 0, 0, 0, 1]),
        ),
        ("webp declaring 16384x16384", webp_declaring(16384, 16384)),
        ("jpeg declaring 0x0", jpeg_declaring(&small, 0, 0)),
    ] {
        refused(&srv, &t, what, bytes, JPEG, None).await;
    }
    let list = srv.ok(Some(&t), "image.list", json!({})).await;
    assert_eq!(list["items"].as_array().unwrap().len(), kept);
    let originals = srv
        .blobs()
        .iter()
        .filter(|p| p.to_string_lossy().contains("/originals/"))
        .count();
    assert_eq!(originals, kept, "a refused upload left a blob");
    assert_eq!(srv.fetch("/healthz").await.0, 200);
}

#[tokio::test]
async fn a_jpeg_of_too_many_scans_fails_with_its_reason() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    // A photo with its scan 150 times over (a few KB that would cost 150
    // decodes): refused before any decoder walks it, and said why; the
    // photo itself renders.
    let photo = synthetic_jpeg(1600, 1200, 5);
    let bomb = jpeg_with_scans(&photo, 150);
    let bomb = accepted(&srv, &t, "scan bomb", bomb, JPEG).await;
    assert_eq!(bomb["status"], "failed", "{bomb}");
    let reason = bomb["failure_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("151 scans"), "{bomb}");
    let fine = accepted(&srv, &t, "the photo", photo, JPEG).await;
    assert_eq!(fine["status"], "ready", "{fine}");
    assert_eq!(srv.fetch("/healthz").await.0, 200);
}

#[tokio::test]
async fn a_flood_of_empty_segments_costs_one_walk_not_one_per_segment() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    // A review's file: the progressive photo after a million empty APP2
    // segments (4 MB more). libjpeg, told to keep APP2 segments (where ICC
    // profiles are), walked the list of those kept for each new one:
    // hours for this file, on a render worker.
    let photo = corpus("elephants_5640x3172_prog.jpg");
    let mut flood = photo[..2].to_vec();
    flood.extend([0xFF, 0xE2, 0, 2].repeat(1_000_000));
    flood.extend(&photo[2..]);
    let img = accepted(&srv, &t, "APP2 flood", flood, JPEG).await;
    assert_eq!(img["status"], "ready", "{img}");
    assert_eq!(srv.fetch("/healthz").await.0, 200);
}

#[tokio::test]
async fn huge_and_malformed_exif_is_ignored_not_fatal() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let small = synthetic_jpeg(320, 240, 9);
    let mut many = small.clone();
    for _ in 0..24 {
        many = jpeg_with_segment(&many, 0xE1, &looping_exif(0xFFFF, 65533));
    }
    for (what, bytes) in [
        (
            "a 64 KiB EXIF claiming 65535 entries",
            jpeg_with_segment(&small, 0xE1, &looping_exif(0xFFFF, 65533)),
        ),
        (
            "an IFD that points at itself",
            jpeg_with_segment(&small, 0xE1, &looping_exif(2, 64)),
        ),
        (
            "an EXIF header and nothing else",
            jpeg_with_segment(&small, 0xE1, b"Exif\0\0"),
        ),
        (
            "TIFF with a bad byte order",
            jpeg_with_segment(&small, 0xE1, b"Exif\0\0XX*\0\x08\0\0\0"),
        ),
        ("24 EXIF segments, 1.5 MiB", many),
    ] {
        let img = accepted(&srv, &t, what, bytes, JPEG).await;
        assert_eq!(img["status"], "ready", "{what}: {img}");
        assert_eq!(
            (img["width"].clone(), img["height"].clone()),
            (json!(320), json!(240)),
            "{what}"
        );
        assert!(img["exif"]["camera_make"].is_null(), "{what}: {img}");
    }
}

#[tokio::test]
async fn polyglots_and_hostile_meta() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let small = synthetic_jpeg(320, 240, 5);
    let script = b"<html><script>alert(document.cookie)</script></html>";

    // A JPEG that is also a zip: data after the image's end is refused.
    let mut zipped = small.clone();
    zipped.extend(b"PK\x03\x04\x14\0\0\0\0\0");
    zipped.extend(script);
    refused(&srv, &t, "jpeg + zip", zipped, JPEG, None).await;
    // HTML first, a JPEG after it: not an image.
    let mut html_first = script.to_vec();
    html_first.extend(&small);
    refused(&srv, &t, "html + jpeg", html_first, "text/html", None).await;
    for (what, meta) in [
        (
            "a NUL in the title",
            json!({"title": "a\u{0}b"}).to_string(),
        ),
        (
            "a title of 100 000 chars",
            json!({"title": "x".repeat(100_000)}).to_string(),
        ),
        ("meta that is an array", "[1,2]".to_owned()),
        ("meta that is a string", "\"hello\"".to_owned()),
        ("a title that is a number", json!({"title": 7}).to_string()),
    ] {
        let (status, body) = srv
            .upload(Some(&t), small.clone(), "x.jpg", JPEG, Some(&meta))
            .await;
        assert!(status == 400 || status == 413, "{what}: {status} {body}");
        assert_eq!(body["error"]["code"], 2002, "{what}: {body}");
    }

    // Valid images that carry HTML in a comment or a text chunk are kept;
    // what is served is a re-encoded render, never the carrier.
    let mut png = Vec::new();
    image::DynamicImage::new_rgb8(300, 200)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let mut text = b"Comment\0".to_vec();
    text.extend(script);
    for (what, bytes) in [
        (
            "jpeg with an HTML comment",
            jpeg_with_segment(&small, 0xFE, script),
        ),
        (
            "png with an HTML text chunk",
            png_with_chunk(&png, &png_chunk(b"tEXt", &text)),
        ),
    ] {
        let img = accepted(&srv, &t, what, bytes, "text/html").await;
        assert_eq!(img["status"], "ready", "{what}");
        for render in img["renders"].as_array().unwrap() {
            let r = srv
                .http()
                .get(render["url"].as_str().unwrap())
                .send()
                .await
                .unwrap();
            let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
            assert!(kind.starts_with("image/"), "{what}: served as {kind}");
            assert_eq!(r.headers()["x-content-type-options"], "nosniff");
            let body = r.bytes().await.unwrap();
            assert!(
                !body.windows(8).any(|w| w == b"<script>"),
                "{what}: the payload was served"
            );
        }
    }
    let list = srv.ok(Some(&t), "image.list", json!({})).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
}
