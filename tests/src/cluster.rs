//! Cluster mode under test: a fresh PostgreSQL database, the machine's NATS
//! JetStream under a fresh subject prefix, and an S3-compatible server
//! (moto, installed by scripts/test.sh) started on a free port and stopped
//! by its PID.

use crate::{PgDatabase, Server, TempDir};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

pub const NATS: &str = "127.0.0.1:4222";
pub const BUCKET: &str = "lightbox-e2e";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// moto's S3 server.
pub struct S3Server {
    child: Child,
    pub endpoint: String,
}

impl S3Server {
    pub async fn start() -> S3Server {
        let path = std::env::var_os("LIGHTBOX_TEST_MOTO")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../target/tools/moto/bin/moto_server")
            });
        assert!(
            path.exists(),
            "{} is missing: scripts/test.sh installs the S3 test server",
            path.display()
        );
        let port = free_port();
        let child = Command::new(&path)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn moto_server");
        let s3 = S3Server {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let http = reqwest::Client::new();
        crate::eventually(Duration::from_secs(60), "the S3 server", || async {
            http.put(format!("{}/{BUCKET}", s3.endpoint))
                .send()
                .await
                .ok()
                .filter(|r| r.status().is_success())
                .map(|_| ())
        })
        .await;
        s3
    }

    /// Every key under `prefix` in the bucket, through ListObjectsV2.
    pub async fn keys(&self, prefix: &str) -> Vec<String> {
        let http = reqwest::Client::new();
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut req = http
                .get(format!("{}/{BUCKET}", self.endpoint))
                .query(&[("list-type", "2"), ("prefix", prefix)]);
            if let Some(t) = &token {
                req = req.query(&[("continuation-token", t.as_str())]);
            }
            let xml = req.send().await.expect("list").text().await.expect("xml");
            keys.extend(tags(&xml, "Key"));
            token = tags(&xml, "NextContinuationToken").into_iter().next();
            if token.is_none() {
                return keys;
            }
        }
    }
}

fn tags(xml: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    xml.split(&open)
        .skip(1)
        .filter_map(|rest| rest.split_once(&close).map(|(v, _)| v.to_owned()))
        .collect()
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP relay in front of a dependency (NATS by default) that can be cut
/// and restored on the same port, to take it away from running processes.
pub struct Relay {
    pub port: u16,
    target: String,
    tasks: Arc<Mutex<Option<JoinSet<()>>>>,
}

impl Relay {
    pub async fn start() -> Relay {
        Relay::to(NATS).await
    }

    /// A relay to `target` (`host:port`).
    pub async fn to(target: &str) -> Relay {
        let relay = Relay {
            port: free_port(),
            target: target.to_owned(),
            tasks: Arc::default(),
        };
        relay.up().await;
        relay
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// `url` (any scheme) pointed at the relay instead of at its target.
    pub fn redirect(&self, url: &str) -> String {
        url.replacen(&self.target, &format!("127.0.0.1:{}", self.port), 1)
    }

    /// Accepts connections again and relays them to NATS.
    pub async fn up(&self) {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let listener = crate::eventually(Duration::from_secs(10), "the relay port", || async {
            TcpListener::bind(addr).await.ok()
        })
        .await;
        let mut set = JoinSet::new();
        let conns = Arc::new(Mutex::new(JoinSet::new()));
        let held = conns.clone();
        let target = self.target.clone();
        set.spawn(async move {
            let _held = held;
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                conns.lock().unwrap().spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        *self.tasks.lock().unwrap() = Some(set);
    }

    /// Closes the port and every relayed connection.
    pub fn down(&self) {
        if let Some(mut set) = self.tasks.lock().unwrap().take() {
            set.abort_all();
        }
    }
}

/// One installation: its database, blob bucket and queue prefix, and the
/// environment every binary of it gets.
pub struct Cluster {
    pub pg: Option<PgDatabase>,
    pub s3: S3Server,
    pub prefix: String,
    pub nats_url: String,
    pub extra: Vec<(String, String)>,
}

impl Cluster {
    pub async fn new(nats_url: String, extra: &[(&str, &str)]) -> Cluster {
        let base = std::env::var("LIGHTBOX_TEST_POSTGRES_CLUSTER")
            .or_else(|_| std::env::var("LIGHTBOX_TEST_POSTGRES"))
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".into());
        let cluster = Cluster {
            pg: Some(PgDatabase::create_on(&base)),
            s3: S3Server::start().await,
            prefix: format!("e2e{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
            nats_url,
            extra: extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        cluster.migrate();
        cluster
    }

    /// `lightbox-api migrate`, as the chart's Job runs it before the pods
    /// start (which then only check the schema).
    pub fn migrate(&self) {
        let out = std::process::Command::new(crate::bin("lightbox-api"))
            .arg("migrate")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env())
            .output()
            .expect("run lightbox-api migrate");
        assert!(
            out.status.success(),
            "lightbox-api migrate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn env(&self) -> Vec<(String, String)> {
        let pg = self.pg.as_ref().expect("database").url();
        let mut env = vec![
            ("DATABASE_URL".into(), pg),
            ("NATS_URL".into(), self.nats_url.clone()),
            ("LIGHTBOX_NATS_PREFIX".into(), self.prefix.clone()),
            ("LIGHTBOX_STORAGE_URL".into(), format!("s3://{BUCKET}")),
            ("AWS_ENDPOINT_URL".into(), self.s3.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID".into(), "e2e".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "e2e-secret".into()),
            ("AWS_REGION".into(), "us-east-1".into()),
        ];
        env.extend(self.extra.iter().cloned());
        env
    }

    fn start(&self, binary: &str, extra: &[(&str, &str)]) -> Server {
        let mut env = self.env();
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Server::spawn(binary, TempDir::new(), &pairs, None)
    }

    pub fn api(&self) -> Server {
        self.start("lightbox-api", &[])
    }

    pub fn worker(&self) -> Server {
        self.start("lightbox-worker", &[])
    }

    /// A worker with some variables of its own (they win over the cluster's).
    pub fn worker_with(&self, extra: &[(&str, &str)]) -> Server {
        self.start("lightbox-worker", extra)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Streams live on in the shared NATS server: remove this one.
        let stream = format!("{}_renders", self.prefix);
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok(client) = async_nats::connect(NATS).await {
                    let _ = async_nats::jetstream::new(client)
                        .delete_stream(stream)
                        .await;
                }
            })
        })
        .join();
    }
}

/// Polls a GET until it answers `status`; the body it answered with.
pub async fn wait_status(url: &str, status: u16, deadline: Duration) -> String {
    let http = reqwest::Client::new();
    let what = format!("{url} to answer {status}");
    crate::eventually(deadline, &what, || async {
        let r = http.get(url).send().await.ok()?;
        if r.status().as_u16() != status {
            return None;
        }
        Some(r.text().await.unwrap_or_default())
    })
    .await
}
