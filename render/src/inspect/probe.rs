//! What an upload is, from its bytes alone: the format from the magic
//! number, the size from the header, and whether the file is complete. No
//! pixel is decoded here, so a decompression bomb costs nothing to refuse.

use lightbox_domain::crop::Format;
use std::io::Cursor;

/// Sniffs png, jpg or webp from the first bytes; the name and the declared
/// content type are never consulted.
pub fn sniff(head: &[u8]) -> Option<Format> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Format::Jpg)
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Format::Webp)
    } else {
        None
    }
}

/// Width and height as stored (before EXIF orientation), from the header.
pub fn stored_size(head: &[u8], format: Format) -> Option<(u32, u32)> {
    let f = match format {
        Format::Jpg => image::ImageFormat::Jpeg,
        Format::Png => image::ImageFormat::Png,
        Format::Webp => image::ImageFormat::WebP,
        Format::Avif => return None,
    };
    let (w, h) = image::ImageReader::with_format(Cursor::new(head), f)
        .into_dimensions()
        .ok()?;
    (w > 0 && h > 0).then_some((w, h))
}

/// Whether the file ends the way a whole file of its format ends: a JPEG
/// with its EOI marker (trailing padding allowed), a PNG with IEND, a WebP
/// whose RIFF length matches. A truncated upload fails here.
pub fn complete(format: Format, head: &[u8], tail: &[u8], total: u64) -> bool {
    match format {
        Format::Jpg => {
            let trimmed = tail
                .iter()
                .rposition(|b| *b != 0)
                .map_or(&tail[..0], |i| &tail[..=i]);
            trimmed.ends_with(&[0xFF, 0xD9])
        }
        Format::Png => {
            tail.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82])
        }
        Format::Webp => {
            let declared = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
            declared + 8 == total || declared + 9 == total
        }
        // Never an upload format (`sniff` does not return it).
        Format::Avif => false,
    }
}

/// The first and last bytes of a file seen as a stream, and its length.
pub struct Ends<'a> {
    pub head: &'a [u8],
    pub tail: &'a [u8],
    pub total: u64,
}

impl Ends<'_> {
    /// `len` bytes at `offset`, if they lie wholly in the head or the tail.
    pub fn read(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end <= self.head.len() as u64 {
            return Some(&self.head[offset as usize..end as usize]);
        }
        let tail_start = self.total - self.tail.len() as u64;
        if offset >= tail_start && end <= self.total {
            return Some(&self.tail[(offset - tail_start) as usize..(end - tail_start) as usize]);
        }
        None
    }
}

/// The payload of a WebP's EXIF chunk. Writers put it after the image data,
/// so the RIFF chunks are walked by their headers across head and tail.
pub fn webp_exif<'a>(ends: &'a Ends<'a>) -> Option<&'a [u8]> {
    let mut offset = 12u64;
    while offset + 8 <= ends.total {
        let header = ends.read(offset, 8)?;
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as u64;
        if &header[..4] == b"EXIF" {
            let data = ends.read(offset + 8, size)?;
            return Some(data.strip_prefix(b"Exif\0\0").unwrap_or(data));
        }
        offset += 8 + size + (size & 1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_ignores_everything_but_the_bytes() {
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(Format::Jpg));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(Format::Png));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::Webp));
        assert_eq!(sniff(b"GIF89a"), None);
        assert_eq!(sniff(b"<svg"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn completeness() {
        assert!(complete(Format::Jpg, &[], &[1, 0xFF, 0xD9], 3));
        assert!(complete(Format::Jpg, &[], &[1, 0xFF, 0xD9, 0, 0], 5));
        assert!(!complete(Format::Jpg, &[], &[1, 2, 3], 3));
        let head = b"RIFF\x04\0\0\0WEBP";
        assert!(complete(Format::Webp, head, b"", 12));
        assert!(!complete(Format::Webp, head, b"", 11));
    }

    #[test]
    fn webp_exif_is_found_across_head_and_tail() {
        let mut file = b"RIFF\0\0\0\0WEBP".to_vec();
        file.extend(b"VP8 \x10\0\0\0");
        file.extend([7u8; 16]);
        file.extend(b"EXIF\x05\0\0\0hello\0");
        let total = file.len() as u64;
        let ends = Ends {
            head: &file[..20],
            tail: &file[file.len() - 14..],
            total,
        };
        assert_eq!(webp_exif(&ends), Some(&b"hello"[..]));
    }
}
