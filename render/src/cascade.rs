//! Every render of one decoded image, cascaded: renders are made largest
//! first, and each is resized from the smallest whole-frame render already
//! made that still has the pixels it needs (as libvips's thumbnail cascade
//! does), instead of from the full decode each time. A resize costs about
//! one pass over its source, so `medium`, `small` and `thumb` read the
//! 2048 px `large` (or each other) instead of a 24 MP original, and the
//! decode is freed as soon as no render left needs it. Encodes run on
//! their own threads as soon as their pixels are ready, and so does the
//! job's look at the photo (placeholder, cover point), which reads the
//! smallest whole-frame render that still has `LOOK_SIDE` pixels instead
//! of the decode.

use crate::cpu::CpuBudget;
use crate::geometry::spec::plan;
use crate::pipeline::{encode, resize, Output};
use crate::pixels::{Decoded, RenderError};
use lightbox_domain::crop::CropSpec;
use std::sync::Arc;
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

/// How many more pixels than it needs a render's source must have, so the
/// last Lanczos step still averages over a few source pixels (libvips's
/// cascade in the reference bench keeps about 1.6x).
const HEADROOM: f64 = 1.5;

/// The long side a render needs to stand in for the decode when the job
/// looks at the photo: the placeholder and the cover point average it
/// down to 100 and 128 pixels.
const LOOK_SIDE: u32 = 512;

/// What each render is resized from: the decode, or an earlier render.
#[derive(Debug, Clone, Copy, PartialEq)]
enum From {
    Decode,
    Render(usize),
}

/// The plan of a cascade, from the geometry alone: the order to make the
/// renders in (largest need first), what each resizes from, and the
/// whole-frame render to look at the photo in (`None`: the decode).
struct Plan {
    order: Vec<usize>,
    from: Vec<From>,
    look_at: Option<usize>,
}

fn cascade(src: &Decoded, specs: &[CropSpec]) -> Plan {
    let (ow, oh) = (src.source.0.max(1) as f64, src.source.1.max(1) as f64);
    let plans: Vec<_> = specs
        .iter()
        .map(|s| plan(src.source.0, src.source.1, s))
        .collect();
    let needed = |i: usize| {
        let (_, _, w, h) = plans[i].source;
        (plans[i].resized.0 as f64 / w.max(1.0)).max(plans[i].resized.1 as f64 / h.max(1.0))
    };
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by(|a, b| needed(*b).total_cmp(&needed(*a)));
    let decode_area = src.width as u64 * src.height as u64;
    // Whole-frame renders made so far: (index, scale, area).
    let mut frames: Vec<(usize, f64, u64)> = Vec::new();
    let mut from = vec![From::Decode; specs.len()];
    for &i in &order {
        let need = needed(i) * HEADROOM;
        from[i] = frames
            .iter()
            .filter(|(_, scale, area)| scale + 1e-9 >= need && *area < decode_area)
            .min_by_key(|(_, _, area)| *area)
            .map_or(From::Decode, |(j, _, _)| From::Render(*j));
        let g = plans[i];
        if g.canvas == g.resized && g.source == (0.0, 0.0, ow, oh) {
            let (w, h) = g.resized;
            let scale = (w as f64 / ow).min(h as f64 / oh);
            frames.push((i, scale, w as u64 * h as u64));
        }
    }
    let look_at = frames
        .iter()
        .filter(|(i, _, _)| {
            let (w, h) = plans[*i].resized;
            w.max(h) >= LOOK_SIDE.min(src.width.max(src.height))
        })
        .min_by_key(|(_, _, area)| *area)
        .map(|(i, _, _)| *i);
    Plan {
        order,
        from,
        look_at,
    }
}

enum Pixels {
    Own(Vec<u8>),
    Frame(Arc<Decoded>),
}

impl Pixels {
    fn bytes(&self) -> &[u8] {
        match self {
            Pixels::Own(v) => v,
            Pixels::Frame(f) => &f.pixels,
        }
    }
}

type Encoding<'s> = ScopedJoinHandle<'s, Result<Output, RenderError>>;

/// Every render in `specs`, in their order. Takes the decode so it can be
/// freed once the last render that reads it has been resized.
pub fn render_all(src: Decoded, specs: &[CropSpec]) -> Result<Vec<Output>, RenderError> {
    render_and_look(src, specs, |_| ()).map(|(outputs, ())| outputs)
}

/// `render_all`, and `look` run on the photo: on its own thread, on the
/// smallest whole-frame render with `LOOK_SIDE` pixels on its long side,
/// or on the decode when no render is such a frame.
pub fn render_and_look<T: Send>(
    src: Decoded,
    specs: &[CropSpec],
    look: impl FnOnce(&Decoded) -> T + Send,
) -> Result<(Vec<Output>, T), RenderError> {
    render_and_look_within(src, specs, look, &CpuBudget::unlimited())
}

/// `render_and_look` with every thread it starts counted against `budget`,
/// checked before each resize and once the encodes are in.
pub fn render_and_look_within<T: Send>(
    src: Decoded,
    specs: &[CropSpec],
    look: impl FnOnce(&Decoded) -> T + Send,
    budget: &CpuBudget,
) -> Result<(Vec<Output>, T), RenderError> {
    let Plan {
        order,
        from,
        look_at,
    } = cascade(&src, specs);
    let last_decode_use = order.iter().rposition(|i| from[*i] == From::Decode);
    let source = src.source;
    let mut look = Some(look);
    let mut seen = match look_at {
        None => look.take().map(|f| f(&src)),
        Some(_) => None,
    };
    let mut src = Some(src);
    std::thread::scope(|scope| {
        let mut looking = None;
        let mut frames: Vec<Option<Arc<Decoded>>> = specs.iter().map(|_| None).collect();
        let mut encodings: Vec<(usize, Encoding)> = Vec::with_capacity(specs.len());
        let mut failed = None;
        for (step, &i) in order.iter().enumerate() {
            if let Err(e) = budget.check() {
                failed = Some(e);
                break;
            }
            let spec = &specs[i];
            let started = Instant::now();
            let base = match from[i] {
                From::Render(j) => frames[j].as_deref(),
                From::Decode => src.as_ref(),
            };
            let Some(base) = base else {
                failed = Some(RenderError::Produce("cascade source missing".into()));
                break;
            };
            let resized = resize(base, spec);
            if Some(step) == last_decode_use {
                src = None;
            }
            let (px, w, h, alpha) = match resized {
                Ok(r) => r,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            let pixels = if from.contains(&From::Render(i)) || look_at == Some(i) {
                let frame = Arc::new(Decoded {
                    pixels: px,
                    width: w,
                    height: h,
                    alpha,
                    source,
                });
                if look_at == Some(i) {
                    if let Some(f) = look.take() {
                        let frame = frame.clone();
                        match spawn(scope, move || {
                            let _metered = budget.enter();
                            f(&frame)
                        }) {
                            Ok(handle) => looking = Some(handle),
                            Err(e) => {
                                failed = Some(e);
                                break;
                            }
                        }
                    }
                }
                frames[i] = Some(frame.clone());
                Pixels::Frame(frame)
            } else {
                Pixels::Own(px)
            };
            let resized_in = started.elapsed();
            match spawn(scope, move || {
                let _metered = budget.enter();
                encoded(pixels, w, h, alpha, spec, resized_in)
            }) {
                Ok(encoding) => encodings.push((i, encoding)),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // Frames no later resize needs go as their encodes finish.
        drop(frames);
        drop(src.take());
        let mut outputs: Vec<Option<Output>> = specs.iter().map(|_| None).collect();
        for (i, handle) in encodings {
            match handle.join() {
                Ok(Ok(out)) => outputs[i] = Some(out),
                Ok(Err(e)) => {
                    failed.get_or_insert(e);
                }
                Err(_) => {
                    failed.get_or_insert(RenderError::Produce("encoder panicked".into()));
                }
            }
        }
        if let Some(handle) = looking {
            match handle.join() {
                Ok(t) => seen = Some(t),
                Err(_) => {
                    failed.get_or_insert(RenderError::Produce("looking panicked".into()));
                }
            }
        }
        if failed.is_none() {
            failed = budget.check().err();
        }
        match (failed, seen) {
            (Some(e), _) => Err(e),
            (None, Some(seen)) => Ok((outputs.into_iter().flatten().collect(), seen)),
            (None, None) => Err(RenderError::Produce("the photo was not looked at".into())),
        }
    })
}

/// A scoped thread, or `Busy` when the machine has none to give (where
/// `Scope::spawn` would panic).
fn spawn<'s, T: Send + 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    f: impl FnOnce() -> T + Send + 's,
) -> Result<ScopedJoinHandle<'s, T>, RenderError> {
    std::thread::Builder::new()
        .spawn_scoped(scope, f)
        .map_err(|e| RenderError::Busy(format!("cannot start a thread: {e}")))
}

fn encoded(
    pixels: Pixels,
    w: u32,
    h: u32,
    alpha: bool,
    spec: &CropSpec,
    resized_in: Duration,
) -> Result<Output, RenderError> {
    let started = Instant::now();
    let bytes = encode(pixels.bytes(), w, h, alpha, spec)?;
    Ok(Output {
        code: spec.code.clone(),
        format: spec.format,
        width: w,
        height: h,
        bytes,
        took: resized_in + started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightbox_domain::crop::{default_presets, CropSpec, Mode};

    fn synthetic(w: u32, h: u32) -> Decoded {
        let pixels = (0..w * h * 3).map(|i| (i % 251) as u8).collect();
        Decoded {
            pixels,
            width: w,
            height: h,
            alpha: false,
            source: (w, h),
        }
    }

    fn code(specs: &[CropSpec], f: From) -> &str {
        match f {
            From::Decode => "decode",
            From::Render(j) => &specs[j].code,
        }
    }

    #[test]
    fn each_render_reads_the_smallest_render_big_enough() {
        let mut specs = default_presets();
        specs.push(CropSpec::new("sharp", 3000, 3000, Mode::Fill));
        specs.push(CropSpec::new("pad", 500, 500, Mode::Pad));
        let Plan { order, from, .. } = cascade(&synthetic(4000, 3000), &specs);
        let got: Vec<_> = order
            .iter()
            .map(|i| (specs[*i].code.as_str(), code(&specs, from[*i])))
            .collect();
        assert_eq!(
            got,
            [
                ("sharp", "decode"),
                ("large", "decode"),
                ("medium", "large"),
                ("small", "medium"),
                ("thumb", "medium"),
                ("pad", "medium"),
            ]
        );
    }

    #[test]
    fn a_small_photo_is_resized_from_its_decode() {
        // Renders as big as the decode are no smaller source, and `small`
        // has too few pixels for the thumb's crop.
        let specs = default_presets();
        let Plan { from, .. } = cascade(&synthetic(1000, 800), &specs);
        for (spec, f) in specs.iter().zip(from) {
            assert_eq!(code(&specs, f), "decode", "{}", spec.code);
        }
    }

    #[test]
    fn outputs_keep_the_order_and_sizes_of_the_specs() {
        let mut specs = default_presets();
        specs.push(CropSpec::new("pad", 500, 500, Mode::Pad));
        let out = render_all(synthetic(3000, 2000), &specs).unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|o| (o.code.as_str(), o.width, o.height))
            .collect();
        assert_eq!(
            got,
            [
                ("thumb", 400, 400),
                ("small", 640, 427),
                ("medium", 1280, 853),
                ("large", 2048, 1365),
                ("pad", 500, 500),
            ]
        );
    }

    #[test]
    fn the_photo_is_looked_at_in_the_smallest_frame_with_enough_pixels() {
        let specs = default_presets();
        let size = |d: &Decoded| (d.width, d.height);
        let (_, seen) = render_and_look(synthetic(3000, 2000), &specs, size).unwrap();
        assert_eq!(seen, (640, 427), "`small`, not the decode");
        // Only crops: no render is the whole frame, so the decode.
        let crop = [CropSpec::new("sq", 300, 300, Mode::Fill)];
        let (_, seen) = render_and_look(synthetic(3000, 2000), &crop, size).unwrap();
        assert_eq!(seen, (3000, 2000));
        // Smaller than LOOK_SIDE: renders the decode's size are as good.
        let (_, seen) = render_and_look(synthetic(300, 200), &specs, size).unwrap();
        assert_eq!(seen, (300, 200));
    }
}
