//! Argon2id password hashing, on the hashing threads (each hash costs ~19 MiB
//! and tens of milliseconds by design).

use super::hashing::{self, Whose};
use crate::Result;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::RngCore;
use std::sync::OnceLock;

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 256;

fn hash_blocking(password: &str) -> Result<String> {
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("salt: {e}"))?;
    let hash = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("argon2: {e}"))?;
    Ok(hash.to_string())
}

fn verify_blocking(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

pub async fn hash(whose: Whose<'_>, password: String) -> Result<String> {
    hashing::run(whose, move || hash_blocking(&password)).await?
}

pub async fn verify(whose: Whose<'_>, password: String, stored: String) -> Result<bool> {
    hashing::run(whose, move || verify_blocking(&password, &stored)).await
}

/// Spends the same time as a real check, so an unknown email cannot be told
/// from a wrong password by timing.
pub async fn verify_against_nothing(whose: Whose<'_>, password: String) -> Result<()> {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let stored = match DUMMY.get() {
        Some(h) => h.clone(),
        None => {
            let h = hash(whose, "lightbox-dummy-password".into()).await?;
            DUMMY.get_or_init(|| h).clone()
        }
    };
    verify(whose, password, stored).await.map(|_| ())
}

pub fn valid_length(password: &str) -> bool {
    lightbox_domain::checks::char_len_between(password, MIN_LEN, MAX_LEN)
}

#[cfg(test)]
mod tests {
    use crate::auth::hashing::{Lane, Whose};

    const KNOWN: Whose = Whose {
        lane: Lane::Known,
        account: "a@example.com",
    };
    const STRANGER: Whose = Whose {
        lane: Lane::Stranger,
        account: "a@example.com",
    };

    #[tokio::test]
    async fn hashes_are_argon2id_salted_and_verify() {
        let a = super::hash(KNOWN, "correct horse".into()).await.unwrap();
        let b = super::hash(STRANGER, "correct horse".into()).await.unwrap();
        assert!(a.starts_with("$argon2id$"));
        assert_ne!(a, b);
        assert!(super::verify(KNOWN, "correct horse".into(), a.clone())
            .await
            .unwrap());
        assert!(!super::verify(STRANGER, "wrong horse".into(), a)
            .await
            .unwrap());
        assert!(!super::verify(STRANGER, "x".into(), "not a hash".into())
            .await
            .unwrap());
    }
}
