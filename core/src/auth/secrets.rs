//! Bearer secrets: generated from the OS RNG, stored only as SHA-256 hashes
//! (they carry 256 bits of entropy, so a fast hash is enough), compared in
//! constant time.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const PAT_PREFIX: &str = "lbx_pat_";
pub const REFRESH_PREFIX: &str = "lbx_rt_";

/// `prefix` followed by 32 random bytes in URL-safe base64.
pub fn random_token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `token` has the shape `random_token(prefix)` gives: the prefix
/// and 43 URL-safe base64 characters. Says nothing of whether it is live.
pub fn well_formed(token: &str, prefix: &str) -> bool {
    token.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == 43
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

pub fn hash(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn ct_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unique_prefixed_and_hash_stably() {
        let a = random_token(PAT_PREFIX);
        let b = random_token(PAT_PREFIX);
        assert!(a.starts_with("lbx_pat_") && a.len() == 8 + 43);
        assert_ne!(a, b);
        assert_eq!(hash(&a), hash(&a));
        assert_ne!(hash(&a), hash(&b));
        assert!(ct_eq(&hash(&a), &hash(&a)));
        assert!(!ct_eq(&hash(&a), &hash(&b)));
        let r = random_token(REFRESH_PREFIX);
        assert!(well_formed(&r, REFRESH_PREFIX) && well_formed(&a, PAT_PREFIX));
        assert!(!well_formed(&a, REFRESH_PREFIX));
        assert!(!well_formed("garbage", REFRESH_PREFIX));
        assert!(!well_formed(&format!("{r}x"), REFRESH_PREFIX));
        assert!(!well_formed(&r.replace('_', "/"), REFRESH_PREFIX));
    }
}
