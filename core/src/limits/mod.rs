//! Budgets for every resource an anonymous or hostile client could exhaust:
//! connections and slow clients, password hashing, zips, render memory and
//! uploads. The knobs are read from the environment only (`LIGHTBOX_*`,
//! listed in the README); each has a default sized for one small machine.

pub mod client;
pub mod connections;
pub mod gate;
pub mod heap;
pub mod login;
pub mod memory;
pub mod storage;
pub mod zips;

use anyhow::Context;
use client::{ForwardedHeader, TrustedProxies};
use std::time::Duration;

/// Crop rules one folder may hold (a further one is 4001, like a sixth
/// custom crop on a photo): each is one more render of every photo.
pub const MAX_ALBUM_RULES: usize = 10;

#[derive(Debug, Clone)]
pub struct Limits {
    /// Time a client has to send a request head (also the keep-alive idle
    /// time before its next request: hyper runs one timer for both).
    pub header_read_timeout: Duration,
    /// A connection with no byte read or written for this long is closed,
    /// whatever it is doing (a client that stopped reading a response).
    pub idle_timeout: Duration,
    /// Total time to receive one request body.
    pub body_read_timeout: Duration,
    /// Open connections; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Of those, open from one client address (not a trusted proxy's).
    pub max_connections_per_address: usize,
    pub trusted_proxies: TrustedProxies,
    /// Login attempts per client address per minute, before any hashing.
    pub login_per_address_per_minute: u32,
    /// Login attempts per account per minute from addresses that have not
    /// signed in to it before (the owner's own address is never held back).
    pub login_per_account_per_minute: u32,
    pub zip_max: usize,
    pub zip_max_per_album: usize,
    /// A zip whose client reads nothing for this long is abandoned.
    pub zip_send_timeout: Duration,
    /// Memory render jobs may use at once, in MiB.
    pub render_memory_mb: u64,
    /// CPU time one render job may use.
    pub render_cpu: Duration,
    pub uploads_per_owner: usize,
    /// Bytes of originals one owner may store; `None` is unlimited.
    pub storage_per_owner: Option<u64>,
}

/// A setting that must be a positive whole number.
pub(crate) fn positive(key: &str, raw: &str) -> anyhow::Result<u64> {
    raw.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .with_context(|| format!("{key} must be a positive whole number"))
}

impl Limits {
    pub fn load(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Limits> {
        let num = |key: &str, default: u64| -> anyhow::Result<u64> {
            env(key).map_or(Ok(default), |v| positive(key, &v))
        };
        let secs = |key: &str, default: u64| num(key, default).map(Duration::from_secs);
        let proxies = env("LIGHTBOX_TRUSTED_PROXIES").unwrap_or_default();
        let header = env("LIGHTBOX_FORWARDED_HEADER")
            .map_or(Ok(ForwardedHeader::default()), |v| {
                ForwardedHeader::parse(&v)
            })
            .context("LIGHTBOX_FORWARDED_HEADER")?;
        Ok(Limits {
            header_read_timeout: secs("LIGHTBOX_HEADER_READ_TIMEOUT_S", 10)?,
            idle_timeout: secs("LIGHTBOX_IDLE_TIMEOUT_S", 60)?,
            body_read_timeout: secs("LIGHTBOX_BODY_READ_TIMEOUT_S", 300)?,
            max_connections: num("LIGHTBOX_MAX_CONNECTIONS", 1024)? as usize,
            max_connections_per_address: num("LIGHTBOX_MAX_CONNECTIONS_PER_ADDRESS", 256)? as usize,
            trusted_proxies: TrustedProxies::parse(&proxies)
                .context("LIGHTBOX_TRUSTED_PROXIES")?
                .reading(header),
            login_per_address_per_minute: num("LIGHTBOX_LOGIN_PER_ADDRESS_PER_MINUTE", 20)? as u32,
            login_per_account_per_minute: num("LIGHTBOX_LOGIN_PER_ACCOUNT_PER_MINUTE", 20)? as u32,
            zip_max: num("LIGHTBOX_ZIP_MAX", 32)? as usize,
            zip_max_per_album: num("LIGHTBOX_ZIP_MAX_PER_FOLDER", 4)? as usize,
            zip_send_timeout: secs("LIGHTBOX_ZIP_SEND_TIMEOUT_S", 30)?,
            render_memory_mb: num("LIGHTBOX_RENDER_MEMORY_MB", memory::default_budget_mb())?,
            render_cpu: secs("LIGHTBOX_RENDER_CPU_SECONDS", 60)?,
            uploads_per_owner: num("LIGHTBOX_UPLOADS_PER_OWNER", 4)? as usize,
            storage_per_owner: env("LIGHTBOX_STORAGE_PER_OWNER_BYTES")
                .map(|_| num("LIGHTBOX_STORAGE_PER_OWNER_BYTES", 0))
                .transpose()?,
        })
    }
}

/// `image.get` calls held at once waiting for a photo to settle (`Prefer:
/// wait`), in the process and per owner: each holds a connection. Past
/// either, a call is answered at once, as if it had not asked to wait.
pub const MAX_WAITS: usize = 256;
pub const MAX_WAITS_PER_OWNER: usize = 8;

/// The in-memory gates the API process shares between requests.
pub struct Guards {
    pub login: login::LoginGuard,
    pub zips: zips::ZipGate,
    /// Held `image.get` calls, by owner.
    pub waits: gate::KeyedGate,
    /// Uploads running at once, by owner: an upload holds a connection, a
    /// temporary file and a hashing task until its last byte, and one
    /// account must not hold the server's share of them all.
    pub uploads: gate::KeyedGate,
    /// Bytes promised to uploads settling, for the storage quota.
    pub storage: storage::Reservations,
    pub proxies: std::sync::Arc<TrustedProxies>,
}

impl Guards {
    pub fn new(l: &Limits) -> Guards {
        Guards {
            login: login::LoginGuard::new(
                l.login_per_address_per_minute,
                l.login_per_account_per_minute,
            ),
            zips: zips::ZipGate::new(l.zip_max, l.zip_max_per_album),
            waits: gate::KeyedGate::new(MAX_WAITS, MAX_WAITS_PER_OWNER),
            uploads: gate::KeyedGate::per_key(l.uploads_per_owner),
            storage: storage::Reservations::default(),
            proxies: std::sync::Arc::new(l.trusted_proxies.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn defaults_and_bad_values() {
        let l = super::Limits::load(|_| None).unwrap();
        assert_eq!(l.max_connections, 1024);
        assert_eq!(l.max_connections_per_address, 256);
        assert!(l.render_memory_mb >= 256);
        assert!(l.storage_per_owner.is_none());
        assert!(
            super::Limits::load(|k| (k == "LIGHTBOX_MAX_CONNECTIONS").then(|| "0".into())).is_err()
        );
        assert!(
            super::Limits::load(|k| (k == "LIGHTBOX_TRUSTED_PROXIES").then(|| "nope".into()))
                .is_err()
        );
        assert_eq!(
            l.trusted_proxies.header(),
            super::ForwardedHeader::XForwardedFor
        );
        let fwd = |v: &'static str| {
            super::Limits::load(move |k| (k == "LIGHTBOX_FORWARDED_HEADER").then(|| v.into()))
        };
        assert_eq!(
            fwd("Forwarded").unwrap().trusted_proxies.header(),
            super::ForwardedHeader::Forwarded
        );
        assert!(fwd("x-real-ip").is_err());
    }
}
