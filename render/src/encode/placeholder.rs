//! The photo's placeholder: a ThumbHash (about 25 bytes) of the decoded
//! pixels the render job already holds, and the tiny image visitor pages
//! paint from it while the photo loads.

use crate::geometry::small::thumbnail;
use crate::pixels::Decoded;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use image::ImageEncoder;
use lightbox_domain::focus::Point;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// ThumbHash takes at most 100 x 100 pixels.
const HASH_SIDE: u32 = 100;

/// The ThumbHash of the pixels, base64 with the standard alphabet.
pub fn thumbhash(src: &Decoded) -> String {
    let (rgba, w, h) = thumbnail(src, HASH_SIDE);
    STANDARD.encode(thumbhash::rgba_to_thumb_hash(w as usize, h as usize, &rgba))
}

/// What the render job records of the pixels it decoded: the placeholder
/// and the most salient point (for covers with `cover_focus: smart`).
pub fn seen(src: &Decoded) -> (String, Point) {
    let (x, y) = crate::geometry::smart::cover_point(src);
    (thumbhash(src), Point { x, y })
}

/// Data URLs made so far, by hash. Making one costs about 50 us (the
/// ThumbHash decode 36, the PNG 15), so 2.5 ms of every 48-photo page,
/// and visitors ask for the same pages again and again.
static MADE: LazyLock<Memo> = LazyLock::new(|| Memo::new(KEPT_BYTES));

/// Keys and URLs together (a URL is 1.5-3.6 KB): some 2,000-5,000 photos.
const KEPT_BYTES: usize = 8 << 20;

/// A ThumbHash is at most about 32 bytes, 44 in base64; the decoder
/// ignores what follows, so a longer string is not one of ours.
const MAX_HASH: usize = 64;

/// The placeholder decoded into a small PNG, as a `data:` URL for an
/// `<img>` (pages run no script, so the browser cannot decode it itself).
/// `None` for anything that is not a ThumbHash.
pub fn data_url(hash: &str) -> Option<String> {
    if hash.len() > MAX_HASH {
        return None;
    }
    MADE.get_or_make(hash, || make_data_url(hash))
}

/// Answers by key within twice `half` bytes, in two generations: new
/// answers and hits go to the young one; when it has taken `half` the old
/// one is dropped and the young one becomes old. So what pages still ask
/// for survives a visitor walking through more photos than fit.
struct Memo {
    half: usize,
    gens: Mutex<Gens>,
}

#[derive(Default)]
struct Gens {
    young: HashMap<String, String>,
    young_bytes: usize,
    old: HashMap<String, String>,
}

impl Gens {
    fn keep(&mut self, key: String, url: String, half: usize) {
        let size = key.len() + url.len();
        if self.young_bytes + size > half {
            self.old = std::mem::take(&mut self.young);
            self.young_bytes = 0;
        }
        self.young_bytes += size;
        self.young.insert(key, url);
    }
}

impl Memo {
    fn new(cap: usize) -> Self {
        Memo {
            half: cap / 2,
            gens: Mutex::new(Gens::default()),
        }
    }

    fn get_or_make(&self, key: &str, make: impl FnOnce() -> Option<String>) -> Option<String> {
        {
            let mut gens = self.lock();
            if let Some(hit) = gens.young.get(key) {
                return Some(hit.clone());
            }
            if let Some((key, url)) = gens.old.remove_entry(key) {
                gens.keep(key, url.clone(), self.half);
                return Some(url);
            }
        }
        // Made outside the lock: two pages making one URL at once is cheap.
        let made = make()?;
        self.lock().keep(key.to_owned(), made.clone(), self.half);
        Some(made)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Gens> {
        // Maps of finished strings are whole even if a holder panicked.
        self.gens.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        let gens = self.lock();
        let size = |m: &HashMap<String, String>| -> usize {
            m.iter().map(|(k, v)| k.len() + v.len()).sum()
        };
        size(&gens.young) + size(&gens.old)
    }
}

fn make_data_url(hash: &str) -> Option<String> {
    let bytes = STANDARD.decode(hash).ok()?;
    let (w, h, rgba) = thumbhash::thumb_hash_to_rgba(&bytes).ok()?;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgba, w as u32, h as u32, image::ExtendedColorType::Rgba8)
        .ok()?;
    Some(format!("data:image/png;base64,{}", STANDARD.encode(png)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_to_the_photos_rough_colours() {
        // Left half red, right half blue.
        let (w, h) = (120u32, 80u32);
        let pixels = (0..w * h)
            .flat_map(|i| {
                if i % w < w / 2 {
                    [200, 30, 30]
                } else {
                    [30, 40, 200]
                }
            })
            .collect();
        let src = Decoded {
            pixels,
            width: w,
            height: h,
            alpha: false,
            source: (w, h),
        };
        let hash = thumbhash(&src);
        let raw = STANDARD.decode(&hash).unwrap();
        assert!(raw.len() < 40, "{} bytes", raw.len());
        let (tw, th, rgba) = thumbhash::thumb_hash_to_rgba(&raw).unwrap();
        let px = |x: usize, y: usize| &rgba[(y * tw + x) * 4..][..3];
        let left = px(tw / 8, th / 2);
        let right = px(tw * 7 / 8, th / 2);
        assert!(left[0] > left[2] + 60, "left is red: {left:?}");
        assert!(right[2] > right[0] + 60, "right is blue: {right:?}");
        assert!(tw > th, "keeps the landscape shape");
        assert!(data_url(&hash)
            .unwrap()
            .starts_with("data:image/png;base64,"));
        assert!(data_url("not a hash").is_none());
        assert_eq!(data_url(&hash), make_data_url(&hash), "remembered as made");
    }

    #[test]
    fn the_memo_stays_within_its_bytes_and_keeps_what_is_asked_for() {
        // Entries of 9 bytes (key 1, answer 8) in a memo of 40: two a
        // generation.
        let memo = Memo::new(40);
        let made = std::cell::Cell::new(0);
        let make = |k: &str| {
            made.set(made.get() + 1);
            Some(format!("{k}-answer"))
        };
        let get = |k: &str| memo.get_or_make(k, || make(k));
        assert_eq!(get("a"), Some("a-answer".into()));
        assert_eq!(
            memo.get_or_make("a", || Some("other".into())),
            Some("a-answer".into())
        );
        assert_eq!(made.get(), 1, "a hit makes nothing");
        assert_eq!(memo.get_or_make("x", || None), None);
        assert_eq!(memo.bytes(), 9, "no answer, nothing kept");
        // A walk through many keys, "a" asked for between them: it stays.
        for k in ["b", "c", "d", "e", "f", "g", "h"] {
            get(k);
            get("a");
            assert!(memo.bytes() <= 40, "{} bytes", memo.bytes());
        }
        let before = made.get();
        get("a");
        assert_eq!(made.get(), before, "still kept");
        get("b");
        assert_eq!(made.get(), before + 1, "long gone");
    }

    fn tiny_hash() -> String {
        thumbhash(&Decoded::flat(8, 6, 90))
    }

    #[test]
    fn a_string_longer_than_any_thumbhash_is_not_one() {
        let mut raw = STANDARD.decode(tiny_hash()).unwrap();
        raw.extend([0; MAX_HASH]);
        let padded = STANDARD.encode(raw);
        assert!(make_data_url(&padded).is_some(), "the decoder takes it");
        assert_eq!(data_url(&padded), None);
        // The longest hashes: most coefficients, with and without alpha.
        for alpha in [false, true] {
            let channels = if alpha { 4 } else { 3 };
            let noisy = Decoded {
                pixels: (0..100 * 100 * channels)
                    .map(|i| (i * 7919 % 251) as u8)
                    .collect(),
                width: 100,
                height: 100,
                alpha,
                source: (100, 100),
            };
            assert!(thumbhash(&noisy).len() <= 44, "{}", thumbhash(&noisy));
        }
    }
}
