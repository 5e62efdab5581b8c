//! The README's walk-through, run as written: the `sh` blocks marked
//! `<!-- walkthrough -->` are extracted, joined and run by bash (with
//! `set -euo pipefail`) against a fresh server, so the README cannot rot.

use lightbox_e2e::{Server, TempDir, ADMIN_EMAIL};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn walkthrough() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let mut script = String::from("set -euo pipefail\n");
    let mut blocks = 0;
    for part in readme.split("<!-- walkthrough -->\n```sh\n").skip(1) {
        let (block, _) = part.split_once("```").expect("a closed block");
        script.push_str(block);
        blocks += 1;
    }
    assert!(
        blocks >= 4,
        "only {blocks} walk-through blocks in the README"
    );
    script
}

#[test]
fn the_readme_walkthrough_runs_as_written() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let srv = Server::start_with(&[("LIGHTBOX_ADMIN_PASSWORD", "change-me-please")]);
    let dir = TempDir::new();
    let photo = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/pillow/hopper.jpg");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(walkthrough())
        .current_dir(&dir.0)
        .env("LB", &srv.url)
        .env("PHOTO", photo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + Duration::from_secs(180);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the walk-through did not finish in 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("\"admin@example.com\""), "{stdout}");
    assert!(stdout.contains("<title>Harbour</title>"), "{stdout}");
    let large = std::fs::read(dir.0.join("large.webp")).expect("large.webp fetched");
    assert_eq!(&large[8..12], b"WEBP");
    // What the walk-through left on the server: two photos, one in the folder.
    let pair = rt.block_on(srv.login(ADMIN_EMAIL, "change-me-please"));
    let admin = pair["access_token"].as_str().unwrap().to_owned();
    let all = rt.block_on(srv.ok(Some(&admin), "image.list", serde_json::json!({})));
    assert_eq!(all["items"].as_array().map(Vec::len), Some(2), "{all}");
}
