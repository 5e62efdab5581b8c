//! Reading the configuration: environment over file over defaults.

use super::*;
use std::collections::HashMap;

fn load(vars: &[(&str, &str)]) -> anyhow::Result<Config> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::load(|k| map.get(k).cloned())
}

#[test]
fn defaults() {
    let c = load(&[]).unwrap();
    assert_eq!(c.listen, "127.0.0.1:8080");
    assert_eq!(c.upload_max_bytes, 100_000_000);
    assert!(c.server_publishing);
    assert!(c.database_url.expose().starts_with("sqlite://"));
    assert!(c.storage_url.starts_with("file://"));
    assert!(c.admin.is_none());
    assert_eq!(c.presets, default_presets());
    assert_eq!(c.max_pixels, DEFAULT_MAX_PIXELS);
}

#[test]
fn presets_and_quota_from_the_file() {
    let dir = std::env::temp_dir().join(format!("lbx-cfg3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        "[render_quota]\nmaxPixels = 5000\n\n[alias_limit]\ndefault = 3\noverrides = [{ email = \"Big@Example.com\", limit = 50 }]\n\n[[presets]]\ncode = \"tiny\"\nwidth = 64\nheight = 64\nformat = \"png\"\n",
    )
    .unwrap();
    let c = load(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())]).unwrap();
    assert_eq!(c.max_pixels, 5000);
    assert_eq!(c.presets.len(), 1);
    assert_eq!(c.presets[0].quality, 80);
    assert_eq!(c.alias_limit.for_email("big@example.com"), 50);
    assert_eq!(c.alias_limit.for_email("other@example.com"), 3);
    std::fs::write(
        &path,
        "[[presets]]\ncode = \"Bad\"\nwidth = 64\nheight = 0\n",
    )
    .unwrap();
    assert!(load(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())]).is_err());
}

#[test]
fn environment_wins_over_file() {
    let dir = std::env::temp_dir().join(format!("lbx-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        "listen = \"0.0.0.0:1\"\nupload_max_bytes = 5\nnats_prefix = \"x\"\n",
    )
    .unwrap();
    let c = load(&[
        ("LIGHTBOX_CONFIG", path.to_str().unwrap()),
        ("LIGHTBOX_LISTEN", "127.0.0.1:9"),
    ])
    .unwrap();
    assert_eq!(c.listen, "127.0.0.1:9");
    assert_eq!(c.upload_max_bytes, 5);
    assert_eq!(c.nats_prefix, "x");
}

#[test]
fn unknown_file_keys_and_bad_values_are_refused() {
    let dir = std::env::temp_dir().join(format!("lbx-cfg2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.toml");
    std::fs::write(&path, "lisen = \"typo\"\n").unwrap();
    assert!(load(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())]).is_err());
    assert!(load(&[("LIGHTBOX_UPLOAD_MAX_BYTES", "lots")]).is_err());
}

#[test]
fn secrets_do_not_print() {
    let c = load(&[
        ("LIGHTBOX_ADMIN_EMAIL", "a@b.io"),
        ("LIGHTBOX_ADMIN_PASSWORD", "hunter2hunter2"),
        ("LIGHTBOX_SIGNING_KEY", "topsecretkey"),
    ])
    .unwrap();
    let shown = format!("{c:?}");
    assert!(!shown.contains("hunter2") && !shown.contains("topsecretkey"));
}
