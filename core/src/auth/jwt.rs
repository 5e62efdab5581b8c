//! Access tokens: HS256 JWTs that live 15 minutes and name their session, so
//! ending a session ends its access tokens too.

use crate::config::Config;
use crate::time::MINUTE_MS;
use crate::{Error, Result};
use anyhow::Context;
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lightbox_domain::error::AuthFailure;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

pub const ACCESS_TTL_MS: i64 = 15 * MINUTE_MS;
const TYP: &str = "lbx_access";

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: Uuid,
    pub sid: Uuid,
    pub iat: i64,
    pub exp: i64,
    pub typ: String,
}

pub struct Signer {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Derived from the signing key; makes share-link tokens from their
    /// stored nonces (`share_token`).
    share_key: [u8; 32],
}

impl Signer {
    pub fn new(key: &[u8]) -> Signer {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let mut derive = Sha256::new();
        derive.update(b"lightbox share links\0");
        derive.update(key);
        Signer {
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
            validation,
            share_key: derive.finalize().into(),
        }
    }

    /// The bearer token of a share link: an HMAC of its stored nonce, so the
    /// owner can be shown it again while the database alone cannot make it.
    pub fn share_token(&self, nonce: &str) -> String {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine;
        use hmac::{Hmac, Mac};
        let mut mac = <Hmac<Sha256>>::new_from_slice(&self.share_key).expect("any key length");
        mac.update(nonce.as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// The configured key, or one generated once and kept in the data dir
    /// (mode 0600) so tokens survive restarts of an embedded install.
    pub fn from_config(config: &Config) -> anyhow::Result<Signer> {
        if let Some(key) = &config.signing_key {
            anyhow::ensure!(
                key.expose().len() >= 32,
                "LIGHTBOX_SIGNING_KEY must be at least 32 characters"
            );
            return Ok(Signer::new(key.expose().as_bytes()));
        }
        let path = config.data_dir.join("signing.key");
        if let Ok(existing) = std::fs::read(&path) {
            anyhow::ensure!(existing.len() >= 32, "{} is too short", path.display());
            return Ok(Signer::new(&existing));
        }
        std::fs::create_dir_all(&config.data_dir)?;
        let mut key = [0u8; 64];
        rand::rngs::OsRng.fill_bytes(&mut key);
        write_private(&path, &key).with_context(|| format!("writing {}", path.display()))?;
        Ok(Signer::new(&key))
    }

    /// A token and its expiry in Unix milliseconds.
    pub fn issue(&self, user: Uuid, session: Uuid, now_ms: i64) -> Result<(String, i64)> {
        let exp_ms = now_ms + ACCESS_TTL_MS;
        let claims = Claims {
            sub: user,
            sid: session,
            iat: now_ms / 1000,
            exp: exp_ms / 1000,
            typ: TYP.into(),
        };
        let token = encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(e.into()))?;
        Ok((token, exp_ms))
    }

    /// Signs any claims with a type tag and an expiry (Unix seconds).
    pub(super) fn sign_claims<T: Serialize>(
        &self,
        claims: &T,
        typ: &str,
        exp: i64,
    ) -> Result<String> {
        let mut value = serde_json::to_value(claims).map_err(|e| Error::Internal(e.into()))?;
        value["typ"] = typ.into();
        value["exp"] = exp.into();
        encode(&Header::new(Algorithm::HS256), &value, &self.encoding)
            .map_err(|e| Error::Internal(e.into()))
    }

    pub(super) fn verify_claims<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        typ: &str,
    ) -> Result<T> {
        let mut validation = self.validation.clone();
        validation.set_required_spec_claims(&["exp"]);
        let data =
            decode::<serde_json::Value>(token, &self.decoding, &validation).map_err(refused)?;
        if data.claims.get("typ").and_then(|t| t.as_str()) != Some(typ) {
            return Err(Error::auth(AuthFailure::Malformed));
        }
        serde_json::from_value(data.claims).map_err(|_| Error::auth(AuthFailure::Malformed))
    }

    /// Signature, algorithm, expiry and type; any failure is 1001.
    pub fn verify(&self, token: &str) -> Result<Claims> {
        let data = decode::<Claims>(token, &self.decoding, &self.validation).map_err(refused)?;
        if data.claims.typ != TYP {
            return Err(Error::auth(AuthFailure::Malformed));
        }
        Ok(data.claims)
    }
}

/// 1001 for a token the library refused: expired, or anything else wrong.
fn refused(e: jsonwebtoken::errors::Error) -> Error {
    match e.kind() {
        jsonwebtoken::errors::ErrorKind::ExpiredSignature => Error::auth(AuthFailure::Expired),
        _ => Error::auth(AuthFailure::Malformed),
    }
}

#[cfg(unix)]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_expiry_and_tampering() {
        let s = Signer::new(b"0123456789abcdef0123456789abcdef");
        let (u, sid) = (Uuid::new_v4(), Uuid::new_v4());
        let now = crate::time::now_ms();
        let (token, exp) = s.issue(u, sid, now).unwrap();
        assert_eq!(exp - now, ACCESS_TTL_MS);
        let c = s.verify(&token).unwrap();
        assert_eq!((c.sub, c.sid), (u, sid));

        let (old, _) = s.issue(u, sid, now - 16 * MINUTE_MS).unwrap();
        assert!(s.verify(&old).is_err());

        let mut bad = token.clone();
        let last = bad.pop().unwrap();
        bad.push(if last == 'A' { 'B' } else { 'A' });
        assert!(s.verify(&bad).is_err());

        let other = Signer::new(b"another-key-another-key-another-key");
        assert!(other.verify(&token).is_err());
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;
    use lightbox_domain::links::{Link, LinkKind};

    #[test]
    fn links_are_typed_and_expire() {
        let s = Signer::new(b"0123456789abcdef0123456789abcdef");
        let link = Link::new(LinkKind::Archive, Uuid::new_v4(), Uuid::new_v4());
        let now = crate::time::now_ms();
        let (t, exp) = s.issue_link(&link, now).unwrap();
        assert_eq!(exp - now, 5 * MINUTE_MS);
        assert_eq!(s.verify_link(&t), Some(link.clone()));
        let (old, _) = s.issue_link(&link, now - 6 * MINUTE_MS).unwrap();
        assert_eq!(s.verify_link(&old), None);
        // An access token is not a link, nor the other way round.
        let (access, _) = s.issue(link.owner, link.subject, now).unwrap();
        assert_eq!(s.verify_link(&access), None);
        assert!(s.verify(&t).is_err());
        // Opened only for its own kind and subject.
        let subject = link.subject.to_string();
        assert!(s.open_link(LinkKind::Archive, &subject, Some(&t)).is_ok());
        let other = Uuid::new_v4().to_string();
        let code = |r: crate::Result<Link>| r.unwrap_err().code();
        assert_eq!(code(s.open_link(LinkKind::Archive, &other, Some(&t))), 1001);
        assert_eq!(
            code(s.open_link(LinkKind::Download, &subject, Some(&t))),
            1001
        );
        assert_eq!(code(s.open_link(LinkKind::Archive, "x", Some(&t))), 2001);
        assert_eq!(code(s.open_link(LinkKind::Archive, &subject, None)), 1001);
    }
}
