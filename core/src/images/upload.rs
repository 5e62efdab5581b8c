//! A streamed upload: bytes go to the blob store as they arrive, and only
//! the first MiB (to probe) and the last 256 KiB (to check completeness and
//! find a trailing WebP EXIF chunk) are kept in memory. The header is
//! checked before a single byte is stored, so a decompression bomb is
//! refused without decoding and without writing.

use crate::store::{BlobStore, ObjectWriter};
use crate::Error;
use lightbox_domain::crop::Format;
use lightbox_domain::details::Clip;
use lightbox_domain::exif::ExifInfo;
use lightbox_render::inspect::probe::{self, Ends};
use lightbox_render::inspect::trailers::Framer;
use lightbox_render::inspect::{exif, layouts};

const HEAD: usize = 1 << 20;
/// How far a JPEG's metadata (ICC, XMP, EXIF segments) may push its frame
/// header before the upload is refused as unreadable.
const MAX_HEAD: usize = 8 << 20;
const TAIL: usize = 256 << 10;

#[derive(Debug)]
pub enum Rejected {
    /// Not a whole png, jpg or webp image within the limits: HTTP 400.
    Invalid(&'static str),
    /// Over the upload maximum: HTTP 413.
    TooLarge,
    Failed(Error),
}

impl From<Error> for Rejected {
    fn from(e: Error) -> Self {
        Rejected::Failed(e)
    }
}

impl From<object_store::Error> for Rejected {
    fn from(e: object_store::Error) -> Self {
        Rejected::Failed(crate::error::store_failure(e))
    }
}

/// A stored original, probed.
#[derive(Debug)]
pub struct Accepted {
    pub key: String,
    pub format: Format,
    /// Displayed size (after EXIF orientation).
    pub width: u32,
    pub height: u32,
    pub size: u64,
    pub exif: ExifInfo,
    /// A motion photo's clip, inside the original.
    pub motion: Option<Clip>,
}

pub struct Upload {
    store: BlobStore,
    key: String,
    max_bytes: u64,
    max_pixels: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    writer: Option<ObjectWriter>,
    probed: Option<(Format, u32, u32)>,
    probe_at: usize,
    /// Frames a JPEG's parts as they stream by (see `render::layouts`).
    framer: Framer,
}

impl Upload {
    pub fn new(store: BlobStore, key: String, max_bytes: u64, max_pixels: u64) -> Upload {
        Upload {
            store,
            key,
            max_bytes,
            max_pixels,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            writer: None,
            probed: None,
            probe_at: HEAD,
            framer: Framer::default(),
        }
    }

    pub async fn push(&mut self, chunk: &[u8]) -> Result<(), Rejected> {
        self.total += chunk.len() as u64;
        if self.total > self.max_bytes {
            return Err(Rejected::TooLarge);
        }
        self.framer.push(chunk);
        match &mut self.writer {
            None => {
                self.head.extend_from_slice(chunk);
                if self.head.len() >= self.probe_at {
                    if self.head.len() < MAX_HEAD && self.header_still_coming() {
                        self.probe_at *= 2;
                    } else {
                        self.start().await?;
                    }
                }
            }
            Some(w) => {
                w.write(chunk);
                w.wait_for_capacity(4).await?;
                self.tail.extend_from_slice(chunk);
                if self.tail.len() > 2 * TAIL {
                    self.tail.drain(..self.tail.len() - TAIL);
                }
            }
        }
        Ok(())
    }

    /// A known format whose size is not readable yet: more header to come.
    fn header_still_coming(&self) -> bool {
        probe::sniff(&self.head)
            .is_some_and(|format| probe::stored_size(&self.head, format).is_none())
    }

    /// Checks the header, then starts writing.
    async fn start(&mut self) -> Result<(), Rejected> {
        let format =
            probe::sniff(&self.head).ok_or(Rejected::Invalid("not a png, jpg or webp image"))?;
        let (w, h) = probe::stored_size(&self.head, format)
            .ok_or(Rejected::Invalid("unreadable image header"))?;
        if w as u64 * h as u64 > self.max_pixels {
            return Err(Rejected::Invalid("image has more pixels than allowed"));
        }
        self.probed = Some((format, w, h));
        let mut writer = self.store.writer(&self.key).await?;
        writer.write(&self.head);
        self.tail = self.head[self.head.len().saturating_sub(TAIL)..].to_vec();
        self.writer = Some(writer);
        Ok(())
    }

    /// Completes the write once the whole file is known to be sound.
    pub async fn finish(mut self) -> Result<Accepted, Rejected> {
        if self.total == 0 {
            return Err(Rejected::Invalid("empty file"));
        }
        if self.writer.is_none() {
            self.start().await?;
        }
        let (format, w, h) = self
            .probed
            .ok_or(Rejected::Invalid("unreadable image header"))?;
        let ends = Ends {
            head: &self.head,
            tail: &self.tail,
            total: self.total,
        };
        let motion = match format {
            Format::Jpg => {
                let parts = std::mem::take(&mut self.framer).finish();
                layouts::judge(parts.as_deref(), &ends).map_err(Rejected::Invalid)?
            }
            _ if !probe::complete(format, &self.head, &self.tail, self.total) => {
                return Err(Rejected::Invalid(layouts::REFUSED));
            }
            _ => None,
        };
        let exif = match format {
            Format::Webp => {
                let ends = Ends {
                    head: &self.head,
                    tail: &self.tail,
                    total: self.total,
                };
                probe::webp_exif(&ends)
                    .map(exif::read_raw)
                    .unwrap_or_else(ExifInfo::none)
            }
            _ => exif::read_container(&self.head),
        };
        if let Some(writer) = self.writer.take() {
            writer.finish().await?;
        }
        let (width, height) = if exif.swaps_axes() { (h, w) } else { (w, h) };
        Ok(Accepted {
            key: self.key.clone(),
            format,
            width,
            height,
            size: self.total,
            exif,
            motion,
        })
    }
}
