//! The photo's placeholder: a ThumbHash (about 25 bytes) of the decoded
//! pixels the render job already holds, and the tiny image visitor pages
//! paint from it while the photo loads.

use super::pixels::Decoded;
use super::small::thumbnail;
use crate::domain::focus::Point;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use image::ImageEncoder;
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
    let (x, y) = super::smart::cover_point(src);
    (thumbhash(src), Point { x, y })
}

/// Data URLs made so far, by hash. Making one costs about 50 us (the
/// ThumbHash decode 36, the PNG 15), so 2.5 ms of every 48-photo page,
/// and visitors ask for the same pages again and again.
static MADE: LazyLock<Memo> = LazyLock::new(|| Memo::new(KEPT));

/// About 6 MiB of 1.5 KB URLs.
const KEPT: usize = 4096;

/// The placeholder decoded into a small PNG, as a `data:` URL for an
/// `<img>` (pages run no script, so the browser cannot decode it itself).
/// `None` for anything that is not a ThumbHash.
pub fn data_url(hash: &str) -> Option<String> {
    MADE.get_or_make(hash, || make_data_url(hash))
}

/// At most `cap` answers by key; emptied when full, which keeps it bounded
/// without bookkeeping on every hit.
struct Memo {
    cap: usize,
    made: Mutex<HashMap<String, String>>,
}

impl Memo {
    fn new(cap: usize) -> Self {
        Memo {
            cap,
            made: Mutex::new(HashMap::new()),
        }
    }

    fn get_or_make(&self, key: &str, make: impl FnOnce() -> Option<String>) -> Option<String> {
        if let Some(hit) = self.lock().get(key) {
            return Some(hit.clone());
        }
        // Made outside the lock: two pages making one URL at once is cheap.
        let made = make()?;
        let mut map = self.lock();
        if map.len() >= self.cap {
            map.clear();
        }
        map.insert(key.to_owned(), made.clone());
        Some(made)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // A map of finished strings is whole even if a holder panicked.
        self.made.lock().unwrap_or_else(|e| e.into_inner())
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
    fn the_memo_stays_within_its_bound_and_remembers_only_answers() {
        let memo = Memo::new(3);
        let made = std::cell::Cell::new(0);
        let make = |v: &str| {
            made.set(made.get() + 1);
            Some(v.to_owned())
        };
        assert_eq!(memo.get_or_make("a", || make("A")), Some("A".into()));
        assert_eq!(memo.get_or_make("a", || make("other")), Some("A".into()));
        assert_eq!(made.get(), 1, "a hit makes nothing");
        assert_eq!(memo.get_or_make("bad", || None), None);
        assert_eq!(memo.lock().len(), 1, "no answer, nothing kept");
        for k in ["b", "c", "d", "e"] {
            memo.get_or_make(k, || make(k));
            assert!(memo.lock().len() <= 3);
        }
        assert_eq!(memo.get_or_make("e", || make("new")), Some("e".into()));
    }
}
