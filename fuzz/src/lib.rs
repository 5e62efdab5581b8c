//! One embedded Lightbox (SQLite and blobs in a temp folder, no workers)
//! shared by every run of a fuzz target, called in process through the
//! same axum router the binary serves, with a signed-in admin's token.

use axum::body::{to_bytes, Body};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::Router;
use lightbox_api::AppState;
use lightbox_core::config::Config;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tower::ServiceExt;

const EMAIL: &str = "fuzz@example.com";
const PASSWORD: &str = "fuzz-password-1";
/// Access tokens last 15 minutes; long runs sign in again before that.
const TOKEN_AGE: Duration = Duration::from_secs(600);

pub struct Harness {
    rt: Runtime,
    router: Router,
    token: Mutex<(String, Instant)>,
}

impl Harness {
    pub fn get() -> &'static Harness {
        static H: OnceLock<Harness> = OnceLock::new();
        H.get_or_init(Harness::start)
    }

    fn start() -> Harness {
        let dir = std::env::temp_dir().join(format!("lightbox-fuzz-{}", std::process::id()));
        let vars: HashMap<&str, String> = [
            ("LIGHTBOX_DATA_DIR", dir.display().to_string()),
            (
                "LIGHTBOX_SIGNING_KEY",
                "fuzz-signing-key-of-at-least-32-bytes".into(),
            ),
            ("LIGHTBOX_ADMIN_EMAIL", EMAIL.into()),
            ("LIGHTBOX_ADMIN_PASSWORD", PASSWORD.into()),
        ]
        .into();
        let config = Config::load(|k| vars.get(k).cloned()).expect("config");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let state = rt.block_on(async {
            let state = AppState::build(config, "http://fuzz.invalid".into())
                .await
                .expect("state");
            lightbox_core::accounts::bootstrap_admin(state.repo.as_ref(), EMAIL, PASSWORD.into())
                .await
                .expect("admin");
            state
        });
        let router = lightbox_api::app(state);
        let h = Harness {
            rt,
            router,
            token: Mutex::new((String::new(), Instant::now() - TOKEN_AGE)),
        };
        h.bearer();
        h
    }

    /// A fresh enough access token.
    pub fn bearer(&self) -> String {
        let mut t = self.token.lock().unwrap();
        if t.1.elapsed() >= TOKEN_AGE {
            let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "auth.login",
                "params": {"email": EMAIL, "password": PASSWORD}});
            let (status, out) = self.send(
                "/rpc",
                "application/json",
                None,
                body.to_string().into_bytes(),
            );
            assert_eq!(status, StatusCode::OK);
            let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
            let token = v["result"]["access_token"]
                .as_str()
                .expect("a token")
                .to_owned();
            *t = (token, Instant::now());
        }
        t.0.clone()
    }

    /// POSTs `body` to `path`; the status and the whole answer.
    pub fn send(
        &self,
        path: &str,
        content_type: &str,
        bearer: Option<&str>,
        body: Vec<u8>,
    ) -> (StatusCode, Vec<u8>) {
        let mut req = Request::post(path).header("content-type", content_type);
        if let Some(b) = bearer {
            req = req.header("authorization", format!("Bearer {b}"));
        }
        let mut req = req.body(Body::from(body)).expect("request");
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
        self.rt.block_on(async {
            let res = self.router.clone().oneshot(req).await.expect("infallible");
            let status = res.status();
            let bytes = to_bytes(res.into_body(), usize::MAX).await.expect("body");
            (status, bytes.to_vec())
        })
    }
}

/// The answer of a failure the server did not mean: a 5xx or JSON-RPC's
/// internal error. Panics, so libFuzzer keeps the input.
pub fn assert_handled(status: StatusCode, body: &[u8], input: &str) {
    let text = String::from_utf8_lossy(body);
    assert!(
        !status.is_server_error() && !text.contains("-32603"),
        "{input}: {status} {text}"
    );
}
