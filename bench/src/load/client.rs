//! The calls the load makes, each timed and classified.

use crate::args::Args;
use crate::report::{Outcome, Tally};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub struct Client {
    http: reqwest::Client,
    url: String,
    token: String,
}

pub struct Fixture {
    pub album: String,
    pub images: usize,
    /// Paths of ready renders, `/i/{id}/{file}?v=N`.
    pub renders: Vec<String>,
}

/// A photo-like JPEG, different for every `seed`.
fn photo(width: u32, height: u32, seed: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        let v = x.wrapping_mul(seed | 1) ^ y.wrapping_mul(31);
        image::Rgb([(x * 255 / width) as u8, (y * 255 / height) as u8, v as u8])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(
            &mut std::io::Cursor::new(&mut out),
            image::ImageFormat::Jpeg,
        )
        .expect("encode jpeg");
    out
}

/// Rate limiting and the method time cap are documented answers under load.
fn classify_rpc(status: u16, body: &Value) -> Outcome {
    if status == 200 && body.get("result").is_some() {
        return Outcome::Ok;
    }
    match body["error"]["code"].as_i64() {
        Some(4002 | 5001) => Outcome::Documented,
        _ => Outcome::Undocumented,
    }
}

impl Client {
    pub async fn sign_in(args: &Args) -> Client {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(args.connections + 2)
            .build()
            .expect("client");
        let mut c = Client {
            http,
            url: args.url.clone(),
            token: String::new(),
        };
        let (_, r) = c
            .rpc(
                "auth.login",
                json!({"email": args.email, "password": args.password}),
            )
            .await;
        c.token = r["result"]["access_token"]
            .as_str()
            .expect("signed in")
            .to_owned();
        c
    }

    async fn rpc(&self, method: &str, params: Value) -> (u16, Value) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let sent = self
            .http
            .post(format!("{}/rpc", self.url))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await;
        match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.json().await.unwrap_or(Value::Null))
            }
            Err(e) => (0, json!({"transport": e.to_string()})),
        }
    }

    async fn ok(&self, method: &str, params: Value) -> Value {
        let (status, r) = self.rpc(method, params).await;
        assert!(r.get("result").is_some(), "{method}: {status} {r}");
        r["result"].clone()
    }

    async fn upload(&self, bytes: Vec<u8>) -> (u16, Value) {
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name("load.jpg")
            .mime_str("image/jpeg")
            .unwrap();
        let form = reqwest::multipart::Form::new().part("file", part);
        let sent = self
            .http
            .post(format!("{}/api/v1/images", self.url))
            .bearer_auth(&self.token)
            .multipart(form)
            .send()
            .await;
        match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.json().await.unwrap_or(Value::Null))
            }
            Err(e) => (0, json!({"transport": e.to_string()})),
        }
    }

    /// A folder of `n` ready photos, shared unlisted, and their render paths.
    pub async fn fixture(&self, n: u32) -> Fixture {
        let album = self.ok("album.create", json!({"name": "load"})).await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut ids = Vec::new();
        for seed in 0..n {
            let (status, img) = self.upload(photo(1600, 1200, seed)).await;
            assert_eq!(status, 201, "fixture upload: {img}");
            let id = img["id"].as_str().unwrap().to_owned();
            self.ok("image.update", json!({"id": id, "album_id": album}))
                .await;
            ids.push(id);
        }
        let mut renders = Vec::new();
        let until = Instant::now() + Duration::from_secs(300);
        for id in &ids {
            let img = loop {
                let img = self.ok("image.get", json!({"id": id})).await;
                if img["status"] == "ready" {
                    break img;
                }
                assert!(
                    Instant::now() < until,
                    "fixture photo {id} never got ready: {img}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            };
            for r in img["renders"].as_array().unwrap() {
                let url = r["url"].as_str().unwrap();
                renders.push(url.find("/i/").map_or(url, |i| &url[i..]).to_owned());
            }
        }
        self.ok(
            "album.sharing.setMode",
            json!({"album_id": album, "mode": "unlisted"}),
        )
        .await;
        Fixture {
            album,
            images: ids.len(),
            renders,
        }
    }

    /// Reads until the deadline: 35% `image.list`, 25% `album.preview`,
    /// 40% render fetches.
    pub async fn read_loop(&self, seed: u64, f: &Fixture, deadline: Instant) -> Tally {
        let mut tally = Tally::default();
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        while Instant::now() < deadline {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let start = Instant::now();
            let (op, outcome) = match x % 100 {
                0..35 => {
                    let (s, r) = self.rpc("image.list", json!({"limit": 50})).await;
                    ("image.list", classify_rpc(s, &r))
                }
                35..60 => {
                    let (s, r) = self
                        .rpc("album.preview", json!({"album_id": f.album}))
                        .await;
                    ("album.preview", classify_rpc(s, &r))
                }
                _ => (
                    "render",
                    self.fetch(&f.renders[(x / 100) as usize % f.renders.len()])
                        .await,
                ),
            };
            tally.record(op, start.elapsed(), outcome);
        }
        tally
    }

    async fn fetch(&self, path: &str) -> Outcome {
        match self.http.get(format!("{}{path}", self.url)).send().await {
            Ok(r) if r.status().as_u16() == 200 => match r.bytes().await {
                Ok(b) if !b.is_empty() => Outcome::Ok,
                _ => Outcome::Undocumented,
            },
            _ => Outcome::Undocumented,
        }
    }

    /// One upload (into the folder) every `every` until the deadline.
    pub async fn upload_loop(&self, f: &Fixture, every: Duration, deadline: Instant) -> Tally {
        let mut tally = Tally::default();
        let mut tick = tokio::time::interval(every);
        let mut seed = 1000;
        while Instant::now() < deadline {
            tick.tick().await;
            seed += 1;
            let bytes = photo(1024, 768, seed);
            let start = Instant::now();
            let (status, img) = self.upload(bytes).await;
            let outcome = if status == 201 {
                let (s, r) = self
                    .rpc(
                        "image.update",
                        json!({"id": img["id"], "album_id": f.album}),
                    )
                    .await;
                classify_rpc(s, &r)
            } else {
                Outcome::Undocumented
            };
            tally.record("upload", start.elapsed(), outcome);
        }
        tally
    }
}
