//! The placeholders visitor pages paint while photos load, as `data:` URLs
//! made from the ThumbHash the render job recorded. Making one is a
//! ThumbHash decode and a PNG encode, for every photo of every page, and
//! visitors ask for the same pages again and again: what was made is kept,
//! by hash, within a bound in bytes.

use lightbox_render::encode::placeholder;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::mem::size_of;

/// Keys and URLs together (a URL is 1.5-3.6 KB): some 2,000-5,000 photos.
const KEPT_BYTES: u64 = 8 << 20;

#[derive(Clone)]
struct Bytesize;

impl Weighter<Box<str>, String> for Bytesize {
    fn weight(&self, hash: &Box<str>, url: &String) -> u64 {
        (size_of::<(Box<str>, String)>() + hash.len() + url.len()) as u64
    }
}

pub struct Placeholders(Cache<Box<str>, String, Bytesize>);

impl Default for Placeholders {
    fn default() -> Self {
        Placeholders::within(KEPT_BYTES)
    }
}

impl Placeholders {
    fn within(bytes: u64) -> Self {
        Placeholders(Cache::with_weighter(4_000, bytes, Bytesize))
    }

    /// The placeholder of `hash` as a `data:` URL; `None` for anything
    /// that is not a ThumbHash (and then nothing is kept).
    pub fn data_url(&self, hash: &str) -> Option<String> {
        if let Some(url) = self.0.get(hash) {
            return Some(url);
        }
        // Made outside any lock: two pages making one URL at once is cheap.
        let url = placeholder::data_url(hash)?;
        self.0.insert(hash.into(), url.clone());
        Some(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightbox_render::encode::placeholder::thumbhash;
    use lightbox_render::pixels::Decoded;

    #[test]
    fn kept_as_made_within_the_bound() {
        let kept = Placeholders::within(64 << 10);
        let flat = |v: u8| Decoded {
            pixels: vec![v; 8 * 6 * 3],
            width: 8,
            height: 6,
            alpha: false,
            source: (8, 6),
        };
        let hashes: Vec<String> = (0..=255u8).map(|v| thumbhash(&flat(v))).collect();
        let first = kept.data_url(&hashes[0]).unwrap();
        assert_eq!(Some(first.clone()), placeholder::data_url(&hashes[0]));
        assert_eq!(kept.0.get(hashes[0].as_str()), Some(first), "kept");
        assert!(kept.data_url("not a hash").is_none());
        assert!(kept.0.get("not a hash").is_none(), "nothing kept");
        for h in &hashes {
            kept.data_url(h);
        }
        assert!(kept.0.weight() <= 64 << 10, "{}", kept.0.weight());
    }
}
