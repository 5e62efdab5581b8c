//! Which JPEG layouts are photos: the plain one, and the known ones phones
//! write, each checked as far as its own framing allows. The parts come
//! from `trailers::Framer`; what the primary picture announces (its XMP
//! and MPF segments) comes from the head of the file.
//!
//! - more JPEGs after the primary (MPF multi-picture, Ultra HDR gain map):
//!   each must sit where the MPF index or the XMP container says, with
//!   the size it says;
//! - an MP4 after them (Google/Pixel motion photo): its boxes must tile
//!   the rest of the file, and the XMP must announce a clip of its length
//!   (`Container:Item` of `Item:Semantic="MotionPhoto"`, or the older
//!   `GCamera:MicroVideoOffset`);
//! - a Samsung trailer (SEF): its `SEFH` directory, found from the `SEFT`
//!   at the very end, must account for the bytes from the EOI onwards;
//! - zero padding (between the parts too, as MPF writers align them).
//!
//! Anything else after the EOI is refused.

use crate::inspect::probe::{self, Ends};
use crate::inspect::trailers::Part;
use lightbox_domain::crop::Format;
use lightbox_domain::details::Clip;

pub const REFUSED: &str = "truncated image, or data after its end";

/// What the primary picture announces about the parts after it.
#[derive(Debug, Default, PartialEq)]
struct Announced {
    /// (semantic, mime, length) of each XMP container item after the primary.
    items: Vec<(String, String, u64)>,
    micro_video: Option<u64>,
    /// (offset, size) of each MPF image after the first, in file offsets.
    mpf: Vec<(u64, u64)>,
}

/// The clip a photo carries, or why the file is refused.
pub fn judge(parts: Option<&[Part]>, ends: &Ends) -> Result<Option<Clip>, &'static str> {
    let Some(parts) = parts else {
        return match probe::complete(Format::Jpg, ends.head, ends.tail, ends.total) {
            true => Ok(None),
            false => Err(REFUSED),
        };
    };
    let said = announced(ends.head);
    let mut clip = None;
    for part in &parts[1..] {
        let fine = match *part {
            Part::Jpeg { start, end } => jpeg_announced(&said, start, end - start),
            Part::Mp4 { start, end } => {
                clip = Some(Clip {
                    offset: start,
                    len: end - start,
                });
                motion_announced(&said, end - start)
            }
            Part::Opaque { zeros: true, .. } => true,
            Part::Opaque { start, .. } => samsung(ends) == Some(start),
        };
        if !fine {
            return Err(REFUSED);
        }
    }
    Ok(clip)
}

fn jpeg_announced(said: &Announced, start: u64, len: u64) -> bool {
    said.mpf.contains(&(start, len))
        || said
            .items
            .iter()
            .any(|(_, mime, l)| mime == "image/jpeg" && *l == len)
}

fn motion_announced(said: &Announced, len: u64) -> bool {
    said.micro_video == Some(len)
        || said
            .items
            .iter()
            .any(|(sem, mime, l)| (sem == "MotionPhoto" || mime.starts_with("video/")) && *l == len)
}

fn announced(head: &[u8]) -> Announced {
    let mut said = Announced {
        mpf: mpf(head).unwrap_or_default(),
        ..Default::default()
    };
    let Some(xmp) = xmp(head) else {
        return said;
    };
    said.micro_video = attr(&xmp, "GCamera:MicroVideoOffset").and_then(|v| v.parse().ok());
    for item in xmp.split("<Container:Item").skip(1) {
        let item = item.split('>').next().unwrap_or("");
        let length = attr(item, "Item:Length").and_then(|v| v.parse().ok());
        let semantic = attr(item, "Item:Semantic").unwrap_or_default();
        if let (Some(length), false) = (length, semantic == "Primary") {
            let mime = attr(item, "Item:Mime").unwrap_or_default();
            said.items.push((semantic, mime, length));
        }
    }
    said
}

/// The primary's XMP packet (the first one in the file).
fn xmp(head: &[u8]) -> Option<String> {
    let start = find(head, b"<x:xmpmeta")?;
    let len = find(&head[start..], b"</x:xmpmeta>")?;
    Some(String::from_utf8_lossy(&head[start..start + len]).into_owned())
}

/// The value of `name="value"` in an XML fragment.
fn attr(xml: &str, name: &str) -> Option<String> {
    let at = xml.find(&format!("{name}=\""))? + name.len() + 2;
    let end = xml[at..].find('"')?;
    Some(xml[at..at + end].trim().to_owned())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// The MPF index (CIPA DC-007) of the primary's APP2 segment: where the
/// other pictures are, as (file offset, size).
fn mpf(head: &[u8]) -> Option<Vec<(u64, u64)>> {
    let i = find(head, b"MPF\0").filter(|i| *i >= 4 && head[i - 4..i - 2] == [0xFF, 0xE2])?;
    let tiff = i + 4;
    let t = head.get(tiff..)?;
    let le = t.starts_with(b"II");
    let u16_at = |o: usize| {
        let b = t.get(o..o + 2)?;
        Some(if le {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    };
    let u32_at = |o: usize| {
        let b = t.get(o..o + 4)?;
        let a = [b[0], b[1], b[2], b[3]];
        Some(if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    };
    let ifd = u32_at(4)? as usize;
    let count = u16_at(ifd)? as usize;
    let entry = (0..count.min(64))
        .map(|i| ifd + 2 + 12 * i)
        .find(|e| u16_at(*e) == Some(0xB002))?;
    let (n, data) = (
        u32_at(entry + 4)? as usize / 16,
        u32_at(entry + 8)? as usize,
    );
    let mut out = Vec::new();
    for i in 0..n.min(16) {
        let e = data + 16 * i;
        let (size, offset) = (u32_at(e + 4)? as u64, u32_at(e + 8)? as u64);
        if offset != 0 {
            out.push((tiff as u64 + offset, size));
        }
    }
    Some(out)
}

/// Where a Samsung trailer starts, if the file ends with a consistent one:
/// `SEFH` directory + its length + `SEFT`; each entry points back (from
/// the directory) at a block, and the farthest block is the trailer's
/// start. (Layout as ExifTool's Samsung module reads it.)
pub fn samsung(ends: &Ends) -> Option<u64> {
    let end = ends.read(ends.total.checked_sub(8)?, 8)?;
    if &end[4..] != b"SEFT" {
        return None;
    }
    let len = u32::from_le_bytes(end[..4].try_into().ok()?) as u64;
    let dir_pos = ends.total.checked_sub(8 + len)?;
    let dir = ends.read(dir_pos, len)?;
    let le32 = |o: usize| {
        dir.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
    };
    if !dir.starts_with(b"SEFH") || len < 12 {
        return None;
    }
    let count = le32(8)? as usize;
    if count == 0 || 12 + 12 * count as u64 > len {
        return None;
    }
    let mut farthest = 0;
    for i in 0..count {
        let (noff, size) = (le32(12 + 12 * i + 4)?, le32(12 + 12 * i + 8)?);
        if noff > dir_pos || size > noff || size < 8 {
            return None;
        }
        farthest = farthest.max(noff);
    }
    Some(dir_pos - farthest)
}

#[cfg(test)]
#[path = "layouts_tests.rs"]
mod tests;
