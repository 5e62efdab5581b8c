//! Where a render's pixels come from: the geometry plan of a crop spec
//! (`domain::crop`) over a source of a given size. Pure: no I/O, no pixels.

use lightbox_domain::crop::{CropSpec, Mode};

/// Where a render's pixels come from and where they go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// The source region, in source pixels: (left, top, width, height).
    pub source: (f64, f64, f64, f64),
    /// The size the region is resized to.
    pub resized: (u32, u32),
    /// The output size (bigger than `resized` only when padding).
    pub canvas: (u32, u32),
    /// Where the resized region sits on the canvas.
    pub offset: (u32, u32),
}

fn px(v: f64) -> u32 {
    (v.round() as u32).max(1)
}

/// Plans a render of a `w`x`h` (already oriented) source. Nothing is ever
/// upscaled: a box larger than the source shrinks to what the source holds.
pub fn plan(w: u32, h: u32, spec: &CropSpec) -> Geometry {
    let (sw, sh) = (w as f64, h as f64);
    let whole = (0.0, 0.0, sw, sh);
    let (bw, bh) = (spec.width as f64, spec.height as f64);
    let fitted = |s: f64| {
        let s = s.min(1.0);
        let size = (px(sw * s), px(sh * s));
        Geometry {
            source: whole,
            resized: size,
            canvas: size,
            offset: (0, 0),
        }
    };
    if spec.height == 0 {
        return fitted(bw / sw);
    }
    if spec.width == 0 {
        return fitted(bh / sh);
    }
    match spec.mode {
        Mode::Fit => fitted((bw / sw).min(bh / sh)),
        Mode::Fill => {
            let s = (bw / sw).max(bh / sh);
            // A box too big for the source shrinks, keeping its shape.
            let (bw, bh) = if s > 1.0 { (bw / s, bh / s) } else { (bw, bh) };
            let s = s.min(1.0);
            let (cw, ch) = ((bw / s).min(sw), (bh / s).min(sh));
            let size = (px(bw), px(bh));
            Geometry {
                source: ((sw - cw) / 2.0, (sh - ch) / 2.0, cw, ch),
                resized: size,
                canvas: size,
                offset: (0, 0),
            }
        }
        Mode::Pad => {
            let s = (bw / sw).min(bh / sh);
            let (bw, bh) = if s > 1.0 { (bw / s, bh / s) } else { (bw, bh) };
            let s = s.min(1.0);
            let resized = (px(sw * s), px(sh * s));
            let canvas = (px(bw).max(resized.0), px(bh).max(resized.1));
            Geometry {
                source: whole,
                resized,
                canvas,
                offset: ((canvas.0 - resized.0) / 2, (canvas.1 - resized.1) / 2),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(w: u32, h: u32, mode: Mode) -> CropSpec {
        CropSpec::new("x", w, h, mode)
    }

    #[test]
    fn width_only_keeps_aspect_and_never_upscales() {
        let g = plan(6028, 3391, &spec(2048, 0, Mode::Fit));
        assert_eq!(g.canvas, (2048, 1152));
        assert_eq!(
            plan(1000, 500, &spec(2048, 0, Mode::Fill)).canvas,
            (1000, 500)
        );
        assert_eq!(
            plan(1000, 500, &spec(0, 100, Mode::Fill)).canvas,
            (200, 100)
        );
    }

    #[test]
    fn fill_is_the_exact_box_centre_cropped() {
        let g = plan(6000, 3000, &spec(400, 400, Mode::Fill));
        assert_eq!(g.canvas, (400, 400));
        assert_eq!(g.source, (1500.0, 0.0, 3000.0, 3000.0));
        // Box larger than the source: shrinks to what it holds, same shape.
        let g = plan(300, 200, &spec(400, 400, Mode::Fill));
        assert_eq!(g.canvas, (200, 200));
        assert_eq!(g.source, (50.0, 0.0, 200.0, 200.0));
    }

    #[test]
    fn fit_and_pad() {
        assert_eq!(
            plan(6000, 3000, &spec(400, 400, Mode::Fit)).canvas,
            (400, 200)
        );
        let g = plan(6000, 3000, &spec(400, 400, Mode::Pad));
        assert_eq!(
            (g.resized, g.canvas, g.offset),
            ((400, 200), (400, 400), (0, 100))
        );
        let g = plan(100, 50, &spec(400, 400, Mode::Pad));
        assert_eq!(
            (g.resized, g.canvas, g.offset),
            ((100, 50), (100, 100), (0, 25))
        );
    }
}
