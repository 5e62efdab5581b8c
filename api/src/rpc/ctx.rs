//! What one RPC handler gets. Its own module, so that the handlers, the
//! method table and the dispatcher all depend on it and not on each other.

use crate::state::AppState;
use axum::http::{header::HeaderName, HeaderMap};
use lightbox_core::auth::Caller;
use lightbox_core::domain::error::AuthFailure;
use lightbox_core::{Error, Result};
use std::time::Duration;
use uuid::Uuid;

/// The longest `Prefer: wait` honoured, well inside the per-call time cap
/// and shutdown's grace, so a held call never outlives either.
pub const MAX_WAIT: Duration = Duration::from_secs(5);

/// What a request says of itself beyond its bearer.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The client's address (`limits::client`).
    pub client: String,
    /// How long the client will wait for a photo to settle (RFC 7240's
    /// `Prefer: wait=<seconds>`), at most `MAX_WAIT`.
    pub wait: Option<Duration>,
}

impl Origin {
    pub fn new(client: String, headers: &HeaderMap) -> Origin {
        Origin {
            client,
            wait: prefer_wait(headers),
        }
    }
}

/// The `wait` preference of every `Prefer` header, in whole seconds; `None`
/// when absent, malformed or zero (a preference the server may ignore).
pub fn prefer_wait(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get_all(HeaderName::from_static("prefer"))
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|pref| {
            let pref = pref.split(';').next()?.trim();
            let (name, value) = pref.split_once('=')?;
            if !name.trim().eq_ignore_ascii_case("wait") {
                return None;
            }
            let digits = value.trim().trim_matches('"');
            match digits.parse::<u64>() {
                Ok(s) => Some(s),
                // All digits and too many of them: a very long wait.
                Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    Some(u64::MAX)
                }
                Err(_) => None,
            }
        })
        .next()
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s).min(MAX_WAIT))
}

/// What one handler gets: the state, the caller when the method needs one,
/// the client's address and how long it will wait.
#[derive(Clone)]
pub struct Ctx {
    pub state: AppState,
    caller: Option<Caller>,
    pub client: String,
    pub wait: Option<Duration>,
}

impl Ctx {
    pub fn new(state: AppState, caller: Option<Caller>, origin: &Origin) -> Ctx {
        Ctx {
            state,
            caller,
            client: origin.client.clone(),
            wait: origin.wait,
        }
    }

    /// The authenticated caller; the table guarantees one for non-public methods.
    pub fn caller(&self) -> Result<&Caller> {
        self.caller
            .as_ref()
            .ok_or(Error::auth(AuthFailure::Missing))
    }

    /// The authenticated caller's user id: whose things a call acts on.
    pub fn owner(&self) -> Result<Uuid> {
        Ok(self.caller()?.user_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_of(values: &[&str]) -> Option<Duration> {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("prefer", v.parse().unwrap());
        }
        prefer_wait(&h)
    }

    #[test]
    fn reads_rfc_7240_wait_and_caps_it() {
        assert_eq!(wait_of(&[]), None);
        assert_eq!(wait_of(&["wait=3"]), Some(Duration::from_secs(3)));
        assert_eq!(
            wait_of(&["respond-async, WAIT = \"2\""]),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            wait_of(&["return=minimal", "wait=1; x=y"]),
            Some(Duration::from_secs(1))
        );
        assert_eq!(wait_of(&["wait=3600"]), Some(MAX_WAIT));
        assert_eq!(wait_of(&["wait=99999999999999999999999"]), Some(MAX_WAIT));
        for bad in [
            "wait=0",
            "wait=-1",
            "wait=soon",
            "wait",
            "waiting=3",
            "wait=1.5",
        ] {
            assert_eq!(wait_of(&[bad]), None, "{bad}");
        }
    }
}
