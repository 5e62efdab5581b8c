//! End-to-end harness: starts the real binaries on 127.0.0.1 with a fresh
//! data dir, talks HTTP to them, and kills them by PID when dropped.

pub mod cluster;
pub mod files;
pub mod h2;
pub mod proc;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub const ADMIN_EMAIL: &str = "admin@example.com";
pub const ADMIN_PASSWORD: &str = "admin-password-1";
pub const SIGNING_KEY: &str = "e2e-signing-key-e2e-signing-key-0123456789";

/// Where the workspace's binaries are: `LIGHTBOX_BIN_DIR`, or the profile
/// folder this test executable was built into.
pub fn bin(name: &str) -> PathBuf {
    let dir = std::env::var_os("LIGHTBOX_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().expect("current_exe");
            exe.parent()
                .and_then(Path::parent)
                .expect("target dir")
                .to_path_buf()
        });
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/test.sh (it builds the binaries first)",
        path.display()
    );
    path
}

/// A temporary folder removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(format!("lightbox-e2e-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Default for TempDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if self.0.as_os_str().is_empty() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh PostgreSQL database for one server, dropped afterwards. Used when
/// `LIGHTBOX_TEST_POSTGRES` holds a server URL (without a database name),
/// so the same suite proves both engines.
pub struct PgDatabase {
    base: String,
    name: String,
}

impl PgDatabase {
    /// A fresh database when `LIGHTBOX_TEST_POSTGRES` is set.
    pub fn from_env() -> Option<PgDatabase> {
        let base = std::env::var("LIGHTBOX_TEST_POSTGRES")
            .ok()
            .filter(|v| !v.is_empty())?;
        Some(PgDatabase::create_on(&base))
    }

    /// A fresh database on the server at `base` (a URL without a database).
    pub fn create_on(base: &str) -> PgDatabase {
        let base = base.trim_end_matches('/').to_owned();
        let name = format!("lbx_e2e_{}", uuid::Uuid::new_v4().simple());
        let db = PgDatabase { base, name };
        db.exec(&format!("CREATE DATABASE {}", db.name));
        db
    }

    pub fn url(&self) -> String {
        format!("{}/{}", self.base, self.name)
    }

    fn exec(&self, sql: &str) {
        let (url, sql) = (format!("{}/postgres", self.base), sql.to_owned());
        // Own runtime on its own thread: this runs from Drop and from sync code.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(&url)
                    .await
                    .expect("connect to PostgreSQL");
                sqlx::query(&sql)
                    .execute(&mut c)
                    .await
                    .expect("admin statement");
            })
        })
        .join()
        .expect("postgres admin thread");
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        self.exec(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

pub struct Server {
    child: Child,
    pub url: String,
    /// The `/metrics` listener (`LIGHTBOX_METRICS_LISTEN`).
    pub metrics_url: Option<String>,
    pub data: TempDir,
    logs: Arc<Mutex<String>>,
    http: reqwest::Client,
    pg: Option<PgDatabase>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// Starts `lightbox-api` with the harness defaults plus `extra` variables.
    pub fn start_with(extra: &[(&str, &str)]) -> Server {
        Server::start_in(TempDir::new(), extra)
    }

    /// Stops the process and hands back its data folder, for a restart.
    pub fn stop(mut self) -> TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.data, TempDir(PathBuf::new()))
    }

    /// Starts on an existing data folder (SQLite embedded mode).
    pub fn start_in(data: TempDir, extra: &[(&str, &str)]) -> Server {
        let pg = if data.0.join("lightbox.db").exists() {
            None
        } else {
            PgDatabase::from_env()
        };
        let url = pg.as_ref().map(PgDatabase::url);
        let mut env: Vec<(&str, &str)> = Vec::new();
        if let Some(url) = &url {
            env.push(("DATABASE_URL", url));
        }
        env.extend_from_slice(extra);
        Server::spawn("lightbox-api", data, &env, pg)
    }

    /// Starts one of the workspace's binaries with the harness defaults plus
    /// `env`, and waits for its `listening on` line.
    pub fn spawn(
        binary: &str,
        data: TempDir,
        env: &[(&str, &str)],
        pg: Option<PgDatabase>,
    ) -> Server {
        let mut cmd = Command::new(bin(binary));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LIGHTBOX_LISTEN", "127.0.0.1:0")
            .env("LIGHTBOX_METRICS_LISTEN", "127.0.0.1:0")
            .env("LIGHTBOX_DATA_DIR", &data.0)
            .env("LIGHTBOX_ADMIN_EMAIL", ADMIN_EMAIL)
            .env("LIGHTBOX_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("LIGHTBOX_SIGNING_KEY", SIGNING_KEY)
            .env("LIGHTBOX_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {binary}: {e}"));
        let logs = Arc::new(Mutex::new(String::new()));
        let mut stderr = child.stderr.take().expect("stderr");
        let sink = logs.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("listening on ") {
                    let _ = tx.send((false, url.to_owned()));
                } else if let Some(url) = line.strip_prefix("metrics on ") {
                    let _ = tx.send((true, url.to_owned()));
                }
            }
        });
        // The metrics listener is announced first.
        let mut metrics_url = None;
        let url = loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok((true, url)) => metrics_url = Some(url),
                Ok((false, url)) => break url,
                Err(_) => {
                    let _ = child.kill();
                    panic!("{binary} did not start; logs:\n{}", logs.lock().unwrap());
                }
            }
        };
        Server {
            child,
            url,
            metrics_url,
            data,
            logs,
            http: reqwest::Client::new(),
            pg,
        }
    }

    /// SIGTERM, then waits for the process to exit by itself.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        self.child.wait().expect("wait")
    }

    /// SIGKILL: no chance to finish or hand anything back.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Every stored column of the personal access tokens, as text, for
    /// proving what is (and is not) kept at rest.
    pub fn stored_tokens(&self) -> String {
        let (url, engine) = match &self.pg {
            Some(db) => (db.url(), "pg"),
            None => (
                format!("sqlite://{}", self.data.0.join("lightbox.db").display()),
                "sqlite",
            ),
        };
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                use sqlx::{Connection, Row};
                let sql = "SELECT id, name, scopes, token_hash, prefix FROM personal_access_tokens";
                let rows: Vec<Vec<String>> = if engine == "pg" {
                    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
                    let rows = sqlx::query(sql).fetch_all(&mut c).await.unwrap();
                    rows.iter()
                        .map(|r| (0..5).map(|i| r.get::<String, _>(i)).collect())
                        .collect()
                } else {
                    let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
                    let rows = sqlx::query(sql).fetch_all(&mut c).await.unwrap();
                    rows.iter()
                        .map(|r| (0..5).map(|i| r.get::<String, _>(i)).collect())
                        .collect()
                };
                rows.concat().join("\n")
            })
        })
        .join()
        .unwrap()
    }

    /// The process id, for reading /proc.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn logs(&self) -> String {
        self.logs.lock().unwrap().clone()
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// POSTs raw bytes to `path`; returns status and body text.
    pub async fn post_raw(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<reqwest::Body>,
    ) -> (u16, String) {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("post");
        (r.status().as_u16(), r.text().await.expect("body"))
    }

    /// One JSON-RPC call; returns the whole response object.
    pub async fn call(&self, token: Option<&str>, method: &str, params: Value) -> Value {
        let mut req = self.http.post(format!("{}/rpc", self.url)).json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": method, "params": params
        }));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.expect("rpc");
        assert_eq!(resp.status().as_u16(), 200, "{method}: HTTP status");
        resp.json().await.expect("rpc json")
    }

    /// The `result` of a call that must succeed.
    pub async fn ok(&self, token: Option<&str>, method: &str, params: Value) -> Value {
        let r = self.call(token, method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// The error object of a call that must fail.
    pub async fn fail(&self, token: Option<&str>, method: &str, params: Value) -> Value {
        let r = self.call(token, method, params).await;
        assert!(
            r.get("result").is_none(),
            "{method} should have failed: {r}"
        );
        r["error"].clone()
    }

    pub async fn code(&self, token: Option<&str>, method: &str, params: Value) -> i64 {
        self.fail(token, method, params).await["code"]
            .as_i64()
            .expect("code")
    }

    /// Logs in and returns the token pair.
    pub async fn login(&self, email: &str, password: &str) -> Value {
        self.ok(
            None,
            "auth.login",
            json!({"email": email, "password": password}),
        )
        .await
    }

    pub async fn admin_token(&self) -> String {
        self.login(ADMIN_EMAIL, ADMIN_PASSWORD).await["access_token"]
            .as_str()
            .expect("token")
            .to_owned()
    }

    /// Creates a user through the admin and returns its access token.
    pub async fn user(&self, email: &str, password: &str) -> String {
        let admin = self.admin_token().await;
        self.ok(
            Some(&admin),
            "admin.user.create",
            json!({"email": email, "password": password}),
        )
        .await;
        self.login(email, password).await["access_token"]
            .as_str()
            .expect("token")
            .to_owned()
    }
}

/// Every photograph of the shared corpus, with its media type.
pub const PHOTOS: &[(&str, &str)] = &[
    ("kleiber_6028x3391.jpg", "image/jpeg"),
    ("sunset_4272x2848.jpg", "image/jpeg"),
    ("seeding_5312x2988.jpg", "image/jpeg"),
    ("elephants_5640x3172_prog.jpg", "image/jpeg"),
    ("dragonfly_orient6_3168x4224.jpg", "image/jpeg"),
    ("bridge_4352x2448.webp", "image/webp"),
    ("picosdeeuropa_3264x2448.png", "image/png"),
];

/// The value of an unlabelled metric in a /metrics page (0 when absent).
pub fn metric(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// The shared photographs beside the checkout.
pub fn corpus(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Server {
    /// POSTs a multipart upload; returns HTTP status and the JSON body.
    pub async fn upload(
        &self,
        token: Option<&str>,
        bytes: Vec<u8>,
        name: &str,
        mime: &str,
        meta: Option<&str>,
    ) -> (u16, Value) {
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(name.to_owned())
            .mime_str(mime)
            .unwrap();
        let mut form = reqwest::multipart::Form::new().part("file", part);
        if let Some(m) = meta {
            form = form.text("meta", m.to_owned());
        }
        let mut req = self
            .http
            .post(format!("{}/api/v1/images", self.url))
            .multipart(form);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.expect("upload");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// `image.get` asking to wait up to `secs` for the photo to settle
    /// (`Prefer: wait`): its ImageDTO and how long the answer took.
    pub async fn get_waiting(&self, token: &str, id: &Value, secs: u64) -> (Value, Duration) {
        let started = std::time::Instant::now();
        let resp = self
            .http
            .post(format!("{}/rpc", self.url))
            .bearer_auth(token)
            .header("prefer", format!("wait={secs}"))
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "image.get", "params": { "id": id }
            }))
            .send()
            .await
            .expect("rpc");
        let body: Value = resp.json().await.expect("rpc json");
        assert!(body.get("error").is_none(), "image.get failed: {body}");
        (body["result"].clone(), started.elapsed())
    }

    /// Waits until the image's status is `ready`, returning its ImageDTO.
    pub async fn ready(&self, token: &str, id: &Value) -> Value {
        eventually(Duration::from_secs(120), "the renders", || async {
            let img = self.ok(Some(token), "image.get", json!({ "id": id })).await;
            assert_ne!(img["status"], "failed", "{img}");
            (img["status"] == "ready").then_some(img)
        })
        .await
    }

    /// GETs a path: status, body and headers.
    pub async fn fetch(&self, path: &str) -> (u16, Vec<u8>, reqwest::header::HeaderMap) {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .expect("get");
        let (status, headers) = (r.status().as_u16(), r.headers().clone());
        (status, r.bytes().await.expect("body").to_vec(), headers)
    }

    /// The page of the metrics listener.
    pub async fn metrics(&self) -> String {
        let url = self.metrics_url.as_ref().expect("a metrics listener");
        let r = self.http.get(format!("{url}/metrics")).send().await;
        r.expect("get /metrics").text().await.expect("body")
    }

    /// Every file under the blob folder.
    pub fn blobs(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    walk(&p, out)
                } else {
                    out.push(p)
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.data.0.join("blobs"), &mut out);
        out
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The database goes after the process that used it.
        drop(self.pg.take());
    }
}

/// Polls `check` until it returns `Some`, failing after `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a download's headers keep a browser from showing or running it:
/// an attachment, `nosniff`, and a sandbox if it is opened anyway.
pub fn safe_download(headers: &reqwest::header::HeaderMap) -> Result<(), String> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let disposition = get("content-disposition").unwrap_or_default();
    if !disposition.starts_with("attachment") {
        return Err(format!("content-disposition: {disposition:?}"));
    }
    if get("x-content-type-options") != Some("nosniff") {
        return Err("no X-Content-Type-Options: nosniff".into());
    }
    let csp = get("content-security-policy").unwrap_or_default();
    if !csp.split(';').any(|d| d.trim() == "sandbox") {
        return Err(format!("content-security-policy: {csp:?}"));
    }
    Ok(())
}

/// A smooth colour gradient of the given size as JPEG: quick to render,
/// different for every `seed`.
pub fn synthetic_jpeg(width: u32, height: u32, seed: u8) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([
            (x * 255 / width.max(1)) as u8,
            (y * 255 / height.max(1)) as u8,
            seed,
        ])
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

impl Server {
    /// A 16 MB photo (bigger than the socket buffers), ready, and its zip link.
    pub async fn big_archive(&self, token: &str) -> String {
        let bytes = corpus("elephants_5640x3172_prog.jpg");
        let (status, img) = self
            .upload(Some(token), bytes, "e.jpg", "image/jpeg", None)
            .await;
        assert_eq!(status, 201, "{img}");
        self.ready(token, &img["id"]).await;
        let link = self
            .ok(Some(token), "image.archiveToken", json!({"id": img["id"]}))
            .await;
        link["url"].as_str().unwrap().to_owned()
    }

    /// Uploads a synthetic photo with a title and waits until it is ready.
    pub async fn photo(&self, token: &str, width: u32, height: u32, title: &str) -> Value {
        let meta = json!({ "title": title }).to_string();
        let bytes = synthetic_jpeg(width, height, title.len() as u8);
        let (status, img) = self
            .upload(Some(token), bytes, "p.jpg", "image/jpeg", Some(&meta))
            .await;
        assert_eq!(status, 201, "{img}");
        self.ready(token, &img["id"]).await
    }

    /// GETs a path without following redirects.
    pub async fn fetch_once(&self, path: &str) -> (u16, String, reqwest::header::HeaderMap) {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let r = client
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .expect("get");
        let (status, headers) = (r.status().as_u16(), r.headers().clone());
        (status, r.text().await.unwrap_or_default(), headers)
    }
}
