//! The render memory budget. A small file can decode to a huge bitmap (a
//! 1 MB PNG of 100 MP at 16 bits per channel is 800 MB), and a pad crop's
//! canvas is its box, not its source. So every job is estimated from the
//! file's header before it decodes, and admitted against a per-process
//! budget (`LIGHTBOX_RENDER_MEMORY_MB`): jobs wait for room, and a job
//! larger than the whole budget fails with a reason instead of running.

use lightbox_domain::crop::{CropSpec, Format, Mode};
use lightbox_render::geometry::spec::plan;
use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

const MB: u64 = 1 << 20;

/// Half of the memory this process may use (the cgroup limit of its pod or
/// container when there is one, else the machine's), at least 256 MiB.
pub fn default_budget_mb() -> u64 {
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .or_else(|_| std::fs::read_to_string("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kb| kb * 1024);
    let limit = match (cgroup, machine) {
        (Some(c), Some(m)) => c.min(m),
        (c, m) => c.or(m).unwrap_or(2048 * MB),
    };
    (limit / 2 / MB).max(256)
}

/// How far a pad canvas may outgrow its source: 16 times its pixels...
const PAD_GROWTH: u64 = 16;
/// ...or this many pixels, whichever is more.
const PAD_FLOOR: u64 = 4_000_000;

/// The most pixels a pad canvas may have over a source of `source` pixels
/// (`None`: unknown) under `max_pixels`: a 1x15000 strip need not become a
/// 10000x10000 canvas of padding.
pub fn canvas_limit(max_pixels: u64, source: Option<u64>) -> u64 {
    match source {
        Some(px) => max_pixels.min(px.saturating_mul(PAD_GROWTH).max(PAD_FLOOR)),
        None => max_pixels,
    }
}

/// A pad box over `limit` pixels shrinks, aspect kept, so no canvas
/// exceeds it (`canvas_limit`).
pub fn cap_canvas(mut spec: CropSpec, limit: u64) -> CropSpec {
    let area = spec.width as u64 * spec.height as u64;
    if spec.mode == Mode::Pad && area > limit {
        let s = (limit as f64 / area as f64).sqrt();
        spec.width = ((spec.width as f64 * s).floor() as u32).max(1);
        spec.height = ((spec.height as f64 * s).floor() as u32).max(1);
    }
    spec
}

/// Bytes a render job may hold at its peak: the decoded source at its own
/// depth, the RGBA copy the pipeline works on, and for every output what
/// its format's encoder takes per pixel of its canvas (`per_canvas_pixel`).
/// `None` when the header cannot be read (the decode will fail on its
/// own, cheaply).
pub fn estimate(original: &[u8], specs: &[CropSpec]) -> Option<u64> {
    let (w, h, color) = header(original)?;
    let depth = color.bytes_per_pixel() as u64;
    let source = w as u64 * h as u64;
    let outputs: u64 = specs
        .iter()
        .map(|s| {
            let (cw, ch) = plan(w, h, s).canvas;
            cw as u64 * ch as u64 * per_canvas_pixel(s.format, color.has_alpha())
        })
        .sum();
    Some(source * depth + source * 4 + outputs)
}

/// The pixels of the file's image, from its header.
pub fn source_pixels(original: &[u8]) -> Option<u64> {
    header(original).map(|(w, h, _)| w as u64 * h as u64)
}

fn header(original: &[u8]) -> Option<(u32, u32, image::ColorType)> {
    let reader = image::ImageReader::new(Cursor::new(original))
        .with_guessed_format()
        .ok()?;
    let decoder = reader.into_decoder().ok()?;
    let (w, h) = image::ImageDecoder::dimensions(&decoder);
    Some((w, h, image::ImageDecoder::color_type(&decoder)))
}

/// Peak bytes per canvas pixel of one output in `format`: its resized
/// frame, its canvas and its encoder, rounded up from the peaks
/// `render-peak` measures (`bench/budget.sh`, bench/RESULTS.md) on noise,
/// the content that makes encoders hold the most (rav1e and libwebp keep
/// their whole output; with alpha libwebp also encodes a plane of it).
pub fn per_canvas_pixel(format: Format, alpha: bool) -> u64 {
    match (format, alpha) {
        (Format::Avif, _) | (Format::Webp, true) => 48,
        (Format::Webp, false) => 24,
        (Format::Png, _) => 16,
        (Format::Jpg, _) => 8,
    }
}

#[derive(Debug, thiserror::Error)]
#[error("needs about {needed_mb} MiB to render; the render memory budget is {budget_mb} MiB")]
pub struct OverBudget {
    pub needed_mb: u64,
    pub budget_mb: u64,
}

/// The per-process budget, in MiB units of a semaphore.
#[derive(Clone)]
pub struct RenderBudget {
    mb: Arc<Semaphore>,
    total_mb: u64,
    admitted: Arc<AtomicU64>,
}

impl RenderBudget {
    pub fn new(total_mb: u64) -> RenderBudget {
        let total_mb = total_mb.clamp(1, u32::MAX as u64);
        RenderBudget {
            mb: Arc::new(Semaphore::new(total_mb as usize)),
            total_mb,
            admitted: Arc::default(),
        }
    }

    pub fn total_mb(&self) -> u64 {
        self.total_mb
    }

    /// How many jobs have been admitted so far.
    pub fn admitted(&self) -> u64 {
        self.admitted.load(Ordering::Relaxed)
    }

    /// Whether no admitted job is still running.
    pub fn idle(&self) -> bool {
        self.mb.available_permits() as u64 == self.total_mb
    }

    /// Waits until `bytes` fit; refuses at once what can never fit.
    pub async fn admit(&self, bytes: u64) -> Result<OwnedSemaphorePermit, OverBudget> {
        let needed_mb = bytes.div_ceil(MB).max(1);
        if needed_mb > self.total_mb {
            return Err(OverBudget {
                needed_mb,
                budget_mb: self.total_mb,
            });
        }
        self.admitted.fetch_add(1, Ordering::Relaxed);
        Ok(self
            .mb
            .clone()
            .acquire_many_owned(needed_mb as u32)
            .await
            .expect("the budget is never closed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(w: u32, h: u32) -> CropSpec {
        let spec = serde_json::json!({"code": "p", "width": w, "height": h, "mode": "pad", "format": "jpg"});
        serde_json::from_value(spec).unwrap()
    }

    #[test]
    fn pad_canvases_are_capped_at_max_pixels() {
        let c = cap_canvas(pad(15000, 15000), 1_000_000);
        assert!(c.width as u64 * c.height as u64 <= 1_000_000);
        assert_eq!(c.width, c.height);
        assert_eq!(cap_canvas(pad(100, 50), 1_000_000).width, 100);
    }

    #[test]
    fn a_pad_canvas_is_tied_to_its_source() {
        // A 1x15000 strip: 16 x 15000 is under the floor of 4 MP.
        let limit = canvas_limit(100_000_000, Some(15_000));
        assert_eq!(limit, 4_000_000);
        let c = cap_canvas(pad(10000, 10000), limit);
        assert_eq!((c.width, c.height), (2000, 2000));
        // A 12 MP photo may fill a box up to maxPixels.
        assert_eq!(canvas_limit(100_000_000, Some(12_000_000)), 100_000_000);
        assert_eq!(canvas_limit(50_000_000, Some(1_000_000)), 16_000_000);
        assert_eq!(
            canvas_limit(2_000_000, Some(10)),
            2_000_000,
            "maxPixels wins"
        );
        assert_eq!(canvas_limit(9, None), 9);
    }

    #[tokio::test]
    async fn a_job_over_the_whole_budget_is_refused_and_others_wait() {
        let b = RenderBudget::new(10);
        assert!(b.admit(11 * MB).await.is_err());
        assert!(b.idle());
        let held = b.admit(8 * MB).await.unwrap();
        assert!(!b.idle());
        let waiting = tokio::spawn({
            let b = b.clone();
            async move { b.admit(4 * MB).await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(held);
        waiting.await.unwrap().unwrap();
        assert!(b.idle());
        assert_eq!(b.admitted(), 2);
    }
}
