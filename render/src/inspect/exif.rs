//! Reading the EXIF fields Lightbox keeps (`domain::exif::ExifInfo`), once
//! at upload. The original keeps its bytes; renders never carry metadata.

use exif::{In, Tag, Value};
use lightbox_domain::exif::{ExifInfo, Gps, Settings};

/// Parses an EXIF block (raw TIFF) or a whole container (jpg, png, webp).
pub fn read_container(bytes: &[u8]) -> ExifInfo {
    let reader = exif::Reader::new();
    let parsed = reader.read_from_container(&mut std::io::Cursor::new(bytes));
    parsed
        .map(|e| from_exif(&e))
        .unwrap_or_else(|_| ExifInfo::none())
}

pub fn read_raw(tiff: &[u8]) -> ExifInfo {
    exif::Reader::new()
        .read_raw(tiff.to_vec())
        .map(|e| from_exif(&e))
        .unwrap_or_else(|_| ExifInfo::none())
}

fn from_exif(e: &exif::Exif) -> ExifInfo {
    let settings = Settings {
        exposure_time: rational(e, Tag::ExposureTime).map(|(n, d)| {
            if n == 0 || d == 0 || n >= d {
                format!("{}", n as f64 / d.max(1) as f64)
            } else {
                format!("1/{}", (d as f64 / n as f64).round())
            }
        }),
        f_number: rational(e, Tag::FNumber)
            .filter(|r| r.1 != 0)
            .map(|(n, d)| n as f64 / d as f64),
        iso: uint(e, Tag::PhotographicSensitivity),
        focal_length_mm: rational(e, Tag::FocalLength)
            .filter(|r| r.1 != 0)
            .map(|(n, d)| n as f64 / d as f64),
    };
    ExifInfo {
        taken_at: taken_at(e),
        camera_make: text(e, Tag::Make),
        camera_model: text(e, Tag::Model),
        lens: text(e, Tag::LensModel),
        gps: gps(e),
        settings: (settings != Settings::default()).then_some(settings),
        orientation: uint(e, Tag::Orientation)
            .filter(|o| (1..=8).contains(o))
            .unwrap_or(1) as u16,
    }
}

/// The orientation a decoder reports, or else the one its raw EXIF holds:
/// older tools write a WebP's EXIF chunk with the JPEG-style `Exif\0\0`
/// prefix, which the decoder's own parser does not take.
pub fn orientation_of(decoder: &mut impl image::ImageDecoder) -> image::metadata::Orientation {
    use image::metadata::Orientation;
    match decoder.orientation() {
        Ok(o) if o != Orientation::NoTransforms => o,
        _ => decoder
            .exif_metadata()
            .ok()
            .flatten()
            .map(|raw| {
                raw.strip_prefix(b"Exif\0\0")
                    .map(<[u8]>::to_vec)
                    .unwrap_or(raw)
            })
            .map(|tiff| read_raw(&tiff).orientation)
            .and_then(|o| Orientation::from_exif(o as u8))
            .unwrap_or(Orientation::NoTransforms),
    }
}

fn text(e: &exif::Exif, tag: Tag) -> Option<String> {
    match &e.get_field(tag, In::PRIMARY)?.value {
        Value::Ascii(parts) => {
            let s: String = String::from_utf8_lossy(parts.first()?)
                .chars()
                .filter(|c| !c.is_control())
                .collect();
            let s = s.trim().to_owned();
            (!s.is_empty() && s.len() <= 256).then_some(s)
        }
        _ => None,
    }
}

fn uint(e: &exif::Exif, tag: Tag) -> Option<u32> {
    e.get_field(tag, In::PRIMARY)?.value.get_uint(0)
}

fn rational(e: &exif::Exif, tag: Tag) -> Option<(u32, u32)> {
    match &e.get_field(tag, In::PRIMARY)?.value {
        Value::Rational(v) => v.first().map(|r| (r.num, r.denom)),
        _ => None,
    }
}

fn taken_at(e: &exif::Exif) -> Option<String> {
    let raw = [Tag::DateTimeOriginal, Tag::DateTimeDigitized, Tag::DateTime]
        .into_iter()
        .find_map(|t| text(e, t))?;
    let mut dt = exif::DateTime::from_ascii(raw.as_bytes()).ok()?;
    if let Some(offset) = text(e, Tag::OffsetTimeOriginal) {
        let _ = dt.parse_offset(offset.as_bytes());
    }
    let date = chrono::NaiveDate::from_ymd_opt(dt.year as i32, dt.month as u32, dt.day as u32)?;
    let time = chrono::NaiveTime::from_hms_opt(dt.hour as u32, dt.minute as u32, dt.second as u32)?;
    let offset_min = dt.offset.unwrap_or(0) as i32;
    let tz = chrono::FixedOffset::east_opt(offset_min * 60)?;
    let local = date.and_time(time).and_local_timezone(tz).single()?;
    Some(local.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn gps(e: &exif::Exif) -> Option<Gps> {
    let coord = |tag: Tag, reference: Tag, negative: &str| -> Option<f64> {
        let Value::Rational(v) = &e.get_field(tag, In::PRIMARY)?.value else {
            return None;
        };
        if v.len() < 3 || v.iter().any(|r| r.denom == 0) {
            return None;
        }
        let deg = v[0].to_f64() + v[1].to_f64() / 60.0 + v[2].to_f64() / 3600.0;
        let sign = if text(e, reference).is_some_and(|r| r.eq_ignore_ascii_case(negative)) {
            -1.0
        } else {
            1.0
        };
        Some(deg * sign)
    };
    let lat = coord(Tag::GPSLatitude, Tag::GPSLatitudeRef, "S")?;
    let lon = coord(Tag::GPSLongitude, Tag::GPSLongitudeRef, "W")?;
    ((-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon)).then_some(Gps { lat, lon })
}
