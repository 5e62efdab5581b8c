//! Where a `fill` crop cuts: the centred window of `spec::plan`, moved to
//! an edge, to the photo's focal point, or to its most salient part (the
//! rules of which renders take the focal point are `domain::focus`).

use crate::geometry::smart;
use crate::geometry::spec::{plan, Geometry};
use crate::pixels::Decoded;
use lightbox_domain::crop::{CropSpec, Mode};
use lightbox_domain::focus::Focus;

/// Whether a render depends on where it cuts: a `fill` whose box crops
/// something off a `w` x `h` photo. Only such renders change with a focus.
pub fn cuts(w: u32, h: u32, spec: &CropSpec) -> bool {
    if spec.mode != Mode::Fill || spec.width == 0 || spec.height == 0 {
        return false;
    }
    let (_, _, cw, ch) = plan(w, h, spec).source;
    cw + 0.5 < w as f64 || ch + 0.5 < h as f64
}

/// The window's centre, as fractions of the source, that `focus` asks for.
fn centre(src: &Decoded, g: &Geometry, focus: Focus) -> (f64, f64) {
    let (sw, sh) = (src.source.0 as f64, src.source.1 as f64);
    match focus {
        Focus::Center => (0.5, 0.5),
        Focus::Top => (0.5, 0.0),
        Focus::Bottom => (0.5, 1.0),
        Focus::Left => (0.0, 0.5),
        Focus::Right => (1.0, 0.5),
        Focus::Smart => smart::best_centre(src, g.source.2 / sw, g.source.3 / sh),
    }
}

/// Moves a planned `fill` window so its centre sits where the photo's
/// focal point (`spec.at`) or else the spec's focus says, as near as the
/// window can without leaving the photo.
pub fn aim(g: Geometry, src: &Decoded, spec: &CropSpec) -> Geometry {
    let focus = spec.focus.filter(|f| *f != Focus::Center);
    if spec.at.is_none() && focus.is_none() {
        return g;
    }
    let (sw, sh) = (src.source.0 as f64, src.source.1 as f64);
    let (_, _, cw, ch) = g.source;
    if spec.mode != Mode::Fill || (cw + 0.5 >= sw && ch + 0.5 >= sh) {
        return g;
    }
    let (cx, cy) = match (spec.at, focus) {
        (Some(at), _) => at.fractions(),
        (None, Some(focus)) => centre(src, &g, focus),
        (None, None) => return g,
    };
    let left = (cx * sw - cw / 2.0).clamp(0.0, sw - cw);
    let top = (cy * sh - ch / 2.0).clamp(0.0, sh - ch);
    Geometry {
        source: (left, top, cw, ch),
        ..g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightbox_domain::crop::{takes_point, SpecSource};
    use lightbox_domain::focus::Point;

    fn flat(w: u32, h: u32) -> Decoded {
        Decoded::flat(w, h, 128)
    }

    fn spec(focus: Option<Focus>) -> CropSpec {
        let mut s = CropSpec::new("x", 100, 100, Mode::Fill);
        s.focus = focus;
        s
    }

    fn at(x: f64, y: f64) -> CropSpec {
        let mut s = spec(None);
        s.at = Some(Point { x, y }.at());
        s
    }

    #[test]
    fn edges_and_points_move_the_window_inside_the_photo() {
        let src = flat(600, 300);
        let go = |s: CropSpec| aim(plan(600, 300, &s), &src, &s).source;
        assert_eq!(go(spec(None)), (150.0, 0.0, 300.0, 300.0));
        assert_eq!(go(spec(Some(Focus::Left))), (0.0, 0.0, 300.0, 300.0));
        assert_eq!(go(spec(Some(Focus::Right))), (300.0, 0.0, 300.0, 300.0));
        assert_eq!(go(spec(Some(Focus::Top))), (150.0, 0.0, 300.0, 300.0));
        assert_eq!(go(at(0.9, 0.5)), (300.0, 0.0, 300.0, 300.0));
        assert_eq!(go(at(0.4, 0.5)), (90.0, 0.0, 300.0, 300.0));
    }

    #[test]
    fn only_cutting_fills_depend_on_focus() {
        assert!(cuts(600, 300, &spec(None)));
        assert!(!cuts(300, 300, &spec(None)));
        assert!(!cuts(600, 300, &CropSpec::new("f", 100, 100, Mode::Fit)));
        assert!(!cuts(600, 300, &CropSpec::new("w", 100, 0, Mode::Fill)));
        assert!(takes_point(&spec(Some(Focus::Top)), SpecSource::AlbumRule));
        assert!(!takes_point(&spec(Some(Focus::Top)), SpecSource::Custom));
        assert!(takes_point(&spec(None), SpecSource::Custom));
    }
}
