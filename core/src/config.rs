//! Configuration: defaults, then the optional TOML file named by
//! `LIGHTBOX_CONFIG`, then the environment, which always wins.
//! Every `LIGHTBOX_X` variable is the key `x` in the file; `DATABASE_URL`
//! and `NATS_URL` are `database_url` and `nats_url`.

use anyhow::{bail, Context};
use lightbox_domain::crop::{default_presets, CropSpec};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A value that must never reach a log line.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// The TOML file; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    metrics_listen: Option<String>,
    data_dir: Option<PathBuf>,
    base_url: Option<String>,
    image_host: Option<String>,
    database_url: Option<Secret>,
    nats_url: Option<String>,
    nats_prefix: Option<String>,
    nats_ack_wait_s: Option<u64>,
    nats_max_deliver: Option<u32>,
    worker_concurrency: Option<usize>,
    storage_url: Option<String>,
    admin_email: Option<String>,
    admin_password: Option<Secret>,
    upload_max_bytes: Option<u64>,
    server_publishing: Option<bool>,
    signing_key: Option<Secret>,
    log_format: Option<LogFormat>,
    presets: Option<Vec<CropSpec>>,
    render_quota: Option<RenderQuota>,
    alias_limit: Option<AliasLimit>,
}

/// The AliasLimit spec (../shared/spec/decisions.md), as the TOML `[alias_limit]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AliasLimit {
    #[serde(default = "default_alias_limit")]
    pub default: u32,
    #[serde(default)]
    pub overrides: Vec<AliasOverride>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AliasOverride {
    pub email: String,
    pub limit: u32,
}

fn default_alias_limit() -> u32 {
    20
}

impl Default for AliasLimit {
    fn default() -> Self {
        AliasLimit {
            default: default_alias_limit(),
            overrides: Vec::new(),
        }
    }
}

impl AliasLimit {
    /// The limit of the account with this email (compared case-insensitively).
    pub fn for_email(&self, email: &str) -> u32 {
        self.overrides
            .iter()
            .find(|o| o.email.eq_ignore_ascii_case(email))
            .map_or(self.default, |o| o.limit)
    }
}

/// The RenderQuota spec (../shared/spec/decisions.md), as the TOML `[render_quota]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderQuota {
    pub max_pixels: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pending_per_owner: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_renders_per_minute_per_owner: Option<u64>,
}

/// Photos one owner may have waiting for renders when no RenderQuota (or
/// one without `maxPendingPerOwner`) says otherwise.
pub const DEFAULT_MAX_PENDING_PER_OWNER: u64 = 1000;

/// `maxPendingPerOwner` of a quota, or its default.
pub fn max_pending_per_owner(quota: Option<&RenderQuota>) -> u64 {
    quota
        .and_then(|q| q.max_pending_per_owner)
        .unwrap_or(DEFAULT_MAX_PENDING_PER_OWNER)
}

/// Uploads over this many pixels are refused when no quota says otherwise.
pub const DEFAULT_MAX_PIXELS: u64 = 100_000_000;

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: String,
    /// The second listener, serving only `/metrics` (never the public port).
    pub metrics_listen: String,
    pub data_dir: PathBuf,
    /// `None` means "the address the server actually bound".
    pub base_url: Option<String>,
    pub image_host: Option<String>,
    pub database_url: Secret,
    /// `LIGHTBOX_MIGRATE_ON_START`; unset, each binary has its default
    /// (`migrations`).
    pub migrate_on_start: Option<bool>,
    pub nats_url: Option<String>,
    pub nats_prefix: String,
    /// Seconds a render delivery may go unanswered before redelivery.
    pub nats_ack_wait_s: u64,
    /// Deliveries of one render job before it is marked failed.
    pub nats_max_deliver: u32,
    /// Render jobs one worker process runs at once.
    pub worker_concurrency: usize,
    pub storage_url: String,
    pub admin: Option<(String, Secret)>,
    pub upload_max_bytes: u64,
    pub server_publishing: bool,
    /// HMAC key for access tokens; when absent one is kept in the data dir.
    pub signing_key: Option<Secret>,
    pub log_format: LogFormat,
    /// The preset renders every image gets.
    pub presets: Vec<CropSpec>,
    pub max_pixels: u64,
    pub render_quota: Option<RenderQuota>,
    pub alias_limit: AliasLimit,
    /// Abuse budgets (`limits`), from the environment only.
    pub limits: crate::limits::Limits,
}

impl Config {
    /// Whether a start migrates the database or only checks it: as
    /// `LIGHTBOX_MIGRATE_ON_START` says, else `by_default` (the embedded
    /// server migrates; cluster processes leave it to `lightbox-api
    /// migrate`, the chart's pre-upgrade Job).
    pub fn migrations(&self, by_default: bool) -> crate::db::Migrations {
        if self.migrate_on_start.unwrap_or(by_default) {
            crate::db::Migrations::Run
        } else {
            crate::db::Migrations::Check
        }
    }

    /// Reads the process environment (and the file it names).
    pub fn from_env() -> anyhow::Result<Config> {
        Self::load(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
    }

    /// `env` looks a variable up; tests pass a map instead of the process env.
    pub fn load(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Config> {
        let file = match env("LIGHTBOX_CONFIG") {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading LIGHTBOX_CONFIG file {path}"))?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("parsing LIGHTBOX_CONFIG file {path}"))?
            }
            None => FileConfig::default(),
        };
        Self::merge(file, env)
    }

    fn merge(f: FileConfig, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Config> {
        let data_dir: PathBuf = env("LIGHTBOX_DATA_DIR")
            .map(PathBuf::from)
            .or(f.data_dir)
            .unwrap_or_else(|| PathBuf::from("./data"));
        let database_url = env("DATABASE_URL")
            .map(Secret)
            .or(f.database_url)
            .unwrap_or_else(|| {
                Secret(format!(
                    "sqlite://{}?mode=rwc",
                    data_dir.join("lightbox.db").display()
                ))
            });
        let storage_url = env("LIGHTBOX_STORAGE_URL")
            .or(f.storage_url)
            .unwrap_or_else(|| format!("file://{}", absolute(&data_dir.join("blobs")).display()));
        let admin_email = env("LIGHTBOX_ADMIN_EMAIL").or(f.admin_email);
        let admin_password = env("LIGHTBOX_ADMIN_PASSWORD")
            .map(Secret)
            .or(f.admin_password);
        let upload_max_bytes = match env("LIGHTBOX_UPLOAD_MAX_BYTES") {
            Some(v) => v
                .parse()
                .context("LIGHTBOX_UPLOAD_MAX_BYTES must be a whole number")?,
            None => f.upload_max_bytes.unwrap_or(100_000_000),
        };
        let migrate_on_start = env("LIGHTBOX_MIGRATE_ON_START")
            .map(|v| parse_bool(&v).context("LIGHTBOX_MIGRATE_ON_START must be true or false"))
            .transpose()?;
        let server_publishing = match env("LIGHTBOX_SERVER_PUBLISHING") {
            Some(v) => {
                parse_bool(&v).context("LIGHTBOX_SERVER_PUBLISHING must be true or false")?
            }
            None => f.server_publishing.unwrap_or(true),
        };
        let number = |key: &str, file: Option<u64>, default: u64| -> anyhow::Result<u64> {
            match env(key) {
                Some(v) => crate::limits::positive(key, &v),
                None => Ok(file.unwrap_or(default)),
            }
        };
        let nats_ack_wait_s = number("LIGHTBOX_NATS_ACK_WAIT_S", f.nats_ack_wait_s, 30)?;
        let nats_max_deliver = number(
            "LIGHTBOX_NATS_MAX_DELIVER",
            f.nats_max_deliver.map(u64::from),
            5,
        )?
        .min(100) as u32;
        let worker_concurrency = number(
            "LIGHTBOX_WORKER_CONCURRENCY",
            f.worker_concurrency.map(|n| n as u64),
            std::thread::available_parallelism().map_or(2, |n| n.get() as u64),
        )?
        .min(64) as usize;
        let log_format = match env("LIGHTBOX_LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("text") => LogFormat::Text,
            Some(other) => bail!("LIGHTBOX_LOG_FORMAT must be text or json, not {other}"),
            None => f.log_format.unwrap_or(LogFormat::Text),
        };
        Ok(Config {
            listen: env("LIGHTBOX_LISTEN")
                .or(f.listen)
                .unwrap_or_else(|| "127.0.0.1:8080".into()),
            metrics_listen: env("LIGHTBOX_METRICS_LISTEN")
                .or(f.metrics_listen)
                .unwrap_or_else(|| "127.0.0.1:9090".into()),
            data_dir,
            base_url: env("LIGHTBOX_BASE_URL").or(f.base_url).map(trim_slash),
            image_host: env("LIGHTBOX_IMAGE_HOST").or(f.image_host).map(trim_slash),
            database_url,
            nats_url: env("NATS_URL").or(f.nats_url),
            nats_prefix: env("LIGHTBOX_NATS_PREFIX")
                .or(f.nats_prefix)
                .unwrap_or_else(|| "lightbox".into()),
            nats_ack_wait_s,
            nats_max_deliver,
            worker_concurrency,
            storage_url,
            admin: admin_email.zip(admin_password),
            upload_max_bytes,
            server_publishing,
            migrate_on_start,
            signing_key: env("LIGHTBOX_SIGNING_KEY").map(Secret).or(f.signing_key),
            log_format,
            presets: presets(f.presets)?,
            max_pixels: f
                .render_quota
                .as_ref()
                .map_or(DEFAULT_MAX_PIXELS, |q| q.max_pixels),
            render_quota: f.render_quota,
            alias_limit: f.alias_limit.unwrap_or_default(),
            limits: crate::limits::Limits::load(&env)?,
        })
    }
}

fn presets(configured: Option<Vec<CropSpec>>) -> anyhow::Result<Vec<CropSpec>> {
    let presets = configured.unwrap_or_else(default_presets);
    for p in &presets {
        p.validate()
            .map_err(|e| anyhow::anyhow!("preset {}: {e:?}", p.code))?;
    }
    let mut codes: Vec<_> = presets.iter().map(|p| &p.code).collect();
    codes.sort();
    codes.dedup();
    anyhow::ensure!(codes.len() == presets.len(), "preset codes must be unique");
    Ok(presets)
}

fn parse_bool(v: &str) -> anyhow::Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => bail!("not a boolean: {v}"),
    }
}

fn trim_slash(s: String) -> String {
    s.trim_end_matches('/').to_owned()
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
