//! The compatibility corpus (tests/corpus, SOURCES.md says where each file
//! comes from): every file is uploaded and must end as `expected.tsv`
//! says, which is what the README documents: ready at its displayed size
//! (and, for the EXIF orientation sets, upright), refused with 400, or
//! accepted and `failed` when only decoding finds the damage. The made
//! motion photos also carry their clip, which only the owner can fetch.

use lightbox_e2e::{eventually, Server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

struct Case {
    file: String,
    outcome: String,
    checks: Vec<String>,
}

fn cases() -> Vec<Case> {
    let table = std::fs::read_to_string(corpus_dir().join("expected.tsv")).unwrap();
    table
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut cols = l.split('\t');
            Case {
                file: cols.next().unwrap().to_owned(),
                outcome: cols.next().expect("an outcome").to_owned(),
                checks: cols.map(str::to_owned).collect(),
            }
        })
        .collect()
}

fn mime(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("png") => "image/png",
        Some("webp") => "image/webp",
        _ => "image/jpeg",
    }
}

/// The photo at 24x24, for comparing orientation and content.
fn tiny(bytes: &[u8]) -> image::RgbImage {
    let img = image::load_from_memory(bytes).expect("a decodable render");
    img.resize_exact(24, 24, image::imageops::FilterType::Triangle)
        .into_rgb8()
}

fn distance(a: &image::RgbImage, b: &image::RgbImage) -> f64 {
    let sum: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y) as u64)
        .sum();
    sum as f64 / a.as_raw().len() as f64
}

async fn small_render(srv: &Server, img: &Value) -> Vec<u8> {
    let small = img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == "small")
        .expect("a small render");
    let url = small["url"].as_str().unwrap();
    let r = srv.http().get(url).send().await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    r.bytes().await.unwrap().to_vec()
}

/// The clip of a motion photo, through an owner's download link.
async fn check_motion(srv: &Server, t: &str, img: &Value, bytes: &[u8]) {
    assert_eq!(img["motion"], true, "{img}");
    let link = srv
        .ok(
            Some(t),
            "image.downloadToken",
            json!({"id": img["id"], "variant": "motion"}),
        )
        .await;
    let (status, body, headers) = srv.fetch(link["url"].as_str().unwrap()).await;
    assert_eq!(
        (status, headers["content-type"].to_str().unwrap()),
        (200, "video/mp4")
    );
    assert_eq!(&body[4..8], b"ftyp");
    assert!(
        bytes.ends_with(&body),
        "the clip is the original's last bytes"
    );
    if let Err(e) = lightbox_e2e::safe_download(&headers) {
        panic!("the clip: {e}");
    }
}

async fn run(srv: &Server, t: &str, case: &Case, upright: &image::RgbImage) -> Result<(), String> {
    let bytes = std::fs::read(corpus_dir().join(&case.file)).unwrap();
    let (status, img) = srv
        .upload(Some(t), bytes.clone(), "x", mime(&case.file), None)
        .await;
    if case.outcome == "refused" {
        return match status {
            400 => Ok(()),
            s => Err(format!("{}: expected 400, got {s} {img}", case.file)),
        };
    }
    if status != 201 {
        return Err(format!("{}: expected 201, got {status} {img}", case.file));
    }
    let id = img["id"].clone();
    let img = eventually(Duration::from_secs(120), &case.file, || async {
        let img = srv.ok(Some(t), "image.get", json!({"id": id})).await;
        matches!(img["status"].as_str(), Some("ready" | "failed")).then_some(img)
    })
    .await;
    let got = match img["status"].as_str() {
        Some("ready") => format!("ready {}x{}", img["width"], img["height"]),
        other => other.unwrap_or_default().to_owned(),
    };
    if got != case.outcome {
        return Err(format!(
            "{}: expected {}, got {got}",
            case.file, case.outcome
        ));
    }
    for check in &case.checks {
        match check.as_str() {
            "upright" => {
                let d = distance(&tiny(&small_render(srv, &img).await), upright);
                if d > 12.0 {
                    return Err(format!("{}: not upright (distance {d:.1})", case.file));
                }
            }
            "motion" => check_motion(srv, t, &img, &bytes).await,
            "still" if img["motion"] != false => {
                return Err(format!("{}: no clip expected: {img}", case.file))
            }
            "placeholder" if img["placeholder"].as_str().is_none_or(str::is_empty) => {
                return Err(format!("{}: no placeholder: {img}", case.file))
            }
            _ => {}
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_corpus_file_ends_as_documented() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let cases = cases();
    assert!(cases.len() >= 40, "{} files", cases.len());
    let hopper = std::fs::read(corpus_dir().join("pillow/hopper.jpg")).unwrap();
    let upright = tiny(&hopper);
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run(&srv, &t, case, &upright).await {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
