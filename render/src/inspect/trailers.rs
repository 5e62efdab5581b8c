//! The parts of an uploaded JPEG, found while it streams through: the
//! primary picture (SOI to its EOI), then whatever phones append after it:
//! more JPEGs (an MPF / Ultra HDR gain map), an MP4 (a motion photo), or
//! bytes this reader does not frame (a maker trailer, or padding).
//! `layouts` decides which of these sequences is a photo.
//!
//! Only marker and box headers are read, with constant memory: JPEG
//! segments by their lengths, entropy-coded data by scanning for markers,
//! MP4 boxes by their sizes.

/// One part of the file, as byte offsets `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Jpeg {
        start: u64,
        end: u64,
    },
    /// Boxes from `start` that tile the rest of the file exactly.
    Mp4 {
        start: u64,
        end: u64,
    },
    /// Bytes from `start` to the end that no framing here explains;
    /// `zeros` when every one of them is zero (padding).
    Opaque {
        start: u64,
        zeros: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a part boundary: the next bytes say what follows.
    Boundary,
    /// Inside a JPEG, expecting a marker's 0xFF.
    Marker,
    /// After 0xFF, expecting the marker's code.
    Code,
    /// Reading a segment's two length bytes (`sos`: the scan follows).
    Length {
        sos: bool,
        first: Option<u8>,
    },
    Skip {
        left: u64,
        then: Next,
    },
    /// Entropy-coded data; `ff` after a 0xFF byte.
    Entropy {
        ff: bool,
    },
    /// Reading an MP4 box header.
    Box,
    Opaque,
    /// Not a structure this reader follows.
    Broken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Marker,
    Entropy,
    Box,
}

/// Most top-level MP4 boxes a clip may have before it counts as broken.
const MAX_BOXES: u32 = 64;

/// Largest `ftyp` box a clip may start with: a brand list, never a payload.
const MAX_FTYP: u64 = 4096;

pub struct Framer {
    pos: u64,
    state: State,
    parts: Vec<Part>,
    start: u64,
    /// Bytes held while a boundary or box header is read.
    held: Vec<u8>,
    /// Zeros skipped since the last part ended.
    pad: u64,
    boxes: u32,
    /// Whether a `moov` box (the film's index) was seen: a clip without one
    /// plays nothing, so its bytes are not a clip.
    moov: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Framer {
            pos: 0,
            state: State::Boundary,
            parts: Vec::new(),
            start: 0,
            held: Vec::new(),
            pad: 0,
            boxes: 0,
            moov: false,
        }
    }
}

impl Framer {
    pub fn push(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let used = match self.state {
                State::Boundary => self.boundary(chunk),
                State::Box => self.box_header(chunk),
                _ => {
                    let used = self.step(chunk);
                    self.pos += used as u64;
                    used
                }
            };
            chunk = &chunk[used..];
        }
    }

    /// The parts, once the whole file went through; `None` when the first
    /// JPEG could not be framed to its EOI (the caller then looks at the
    /// file's end only, as before this reader existed).
    pub fn finish(mut self) -> Option<Vec<Part>> {
        let start = self.start;
        match self.state {
            State::Boundary if self.held.is_empty() => {}
            State::Boundary => {
                let zeros = self.held.iter().all(|b| *b == 0);
                self.parts.push(Part::Opaque { start, zeros });
            }
            State::Opaque => {}
            State::Box if self.held.is_empty() && self.moov => self.parts.push(Part::Mp4 {
                start,
                end: self.pos,
            }),
            _ if self.parts.is_empty() => return None,
            // A later part that ends early is no part: opaque bytes.
            _ => self.parts.push(Part::Opaque {
                start,
                zeros: false,
            }),
        }
        matches!(self.parts.first(), Some(Part::Jpeg { start: 0, .. })).then_some(self.parts)
    }

    /// Consumes a prefix of `b` (at least one byte) and moves the state on.
    fn step(&mut self, b: &[u8]) -> usize {
        match self.state {
            State::Marker => {
                self.state = if b[0] == 0xFF {
                    State::Code
                } else {
                    State::Broken
                };
                1
            }
            State::Code => {
                self.code(b[0]);
                1
            }
            State::Length { sos, first: None } => {
                self.state = State::Length {
                    sos,
                    first: Some(b[0]),
                };
                1
            }
            State::Length {
                sos,
                first: Some(hi),
            } => {
                let len = u16::from_be_bytes([hi, b[0]]) as u64;
                let then = if sos { Next::Entropy } else { Next::Marker };
                self.state = match len {
                    0 | 1 => State::Broken,
                    _ => State::Skip {
                        left: len - 2,
                        then,
                    },
                };
                1
            }
            State::Skip { left, then } => {
                let n = left.min(b.len() as u64);
                self.state = match (left - n, then) {
                    (0, Next::Marker) => State::Marker,
                    (0, Next::Entropy) => State::Entropy { ff: false },
                    (0, Next::Box) => State::Box,
                    (left, then) => State::Skip { left, then },
                };
                n as usize
            }
            State::Entropy { ff: false } => match memchr::memchr(0xFF, b) {
                Some(i) => {
                    self.state = State::Entropy { ff: true };
                    i + 1
                }
                None => b.len(),
            },
            State::Entropy { ff: true } => {
                match b[0] {
                    // Stuffed zero or restart marker: still scan data.
                    0x00 | 0xD0..=0xD7 => self.state = State::Entropy { ff: false },
                    0xFF => {}
                    code => self.code(code),
                }
                1
            }
            State::Opaque => {
                if let Some(Part::Opaque { zeros, .. }) = self.parts.last_mut() {
                    *zeros = *zeros && b.iter().all(|x| *x == 0);
                }
                b.len()
            }
            State::Broken | State::Boundary | State::Box => b.len(),
        }
    }

    fn code(&mut self, code: u8) {
        self.state = match code {
            0xFF => State::Code,
            0xD8 | 0x01 | 0xD0..=0xD7 => State::Marker,
            0xD9 => {
                self.parts.push(Part::Jpeg {
                    start: self.start,
                    end: self.pos + 1,
                });
                self.start = self.pos + 1;
                State::Boundary
            }
            0xDA => State::Length {
                sos: true,
                first: None,
            },
            0x00 => State::Broken,
            _ => State::Length {
                sos: false,
                first: None,
            },
        };
    }

    /// Holds the first 8 bytes after a part, decides what follows, then
    /// feeds the held bytes to that state. Leading zeros that start no MP4
    /// box are padding (MPF writers align pictures) and are dropped.
    fn boundary(&mut self, b: &[u8]) -> usize {
        let n = (8 - self.held.len()).min(b.len());
        self.held.extend_from_slice(&b[..n]);
        if self.held.len() < 8 {
            return n;
        }
        let mp4 = &self.held[4..8] == b"ftyp";
        if !mp4 && self.held[0] == 0 {
            let zeros = self.held.iter().take_while(|x| **x == 0).count();
            self.held.drain(..zeros);
            self.pos += zeros as u64;
            self.pad += zeros as u64;
            return n;
        }
        let held = std::mem::take(&mut self.held);
        // A picture or a clip starts after the padding; opaque bytes start
        // where the last part ended (a Samsung trailer's first block may
        // begin with zeros).
        if mp4 || held.starts_with(&[0xFF, 0xD8]) {
            self.start += std::mem::take(&mut self.pad);
        }
        self.pad = 0;
        self.state = if mp4 {
            State::Box
        } else if held.starts_with(&[0xFF, 0xD8]) {
            State::Marker
        } else {
            self.parts.push(Part::Opaque {
                start: self.start,
                zeros: true,
            });
            State::Opaque
        };
        self.push(&held);
        n
    }

    /// Reads a box header (8 bytes, or 16 with a 64-bit size), then skips
    /// the box's body.
    fn box_header(&mut self, b: &[u8]) -> usize {
        let size32 = |h: &[u8]| u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let want = match self.held.len() {
            n if n < 8 => 8 - n,
            _ => 16 - self.held.len(),
        };
        let n = want.min(b.len());
        self.held.extend_from_slice(&b[..n]);
        self.pos += n as u64;
        let len = self.held.len();
        if len < 8 || (len < 16 && size32(&self.held) == 1) {
            return n;
        }
        let held = std::mem::take(&mut self.held);
        let size = match size32(&held) {
            1 => u64::from_be_bytes(held[8..16].try_into().unwrap_or([0; 8])),
            s => s as u64,
        };
        self.boxes += 1;
        let named = held[4..8].iter().all(u8::is_ascii_graphic);
        let ftyp = &held[4..8] == b"ftyp";
        self.moov |= &held[4..8] == b"moov";
        // A size of 0 ("to the end of the file") would let any bytes pass
        // for a box body, so every box must say its size; the first is a
        // small ftyp, as the boundary that led here expects.
        let bad_first = self.boxes == 1 && (!ftyp || size > MAX_FTYP);
        let broken = self.boxes > MAX_BOXES || !named || size == 0 || size < len as u64;
        self.state = if broken || bad_first {
            State::Broken
        } else {
            State::Skip {
                left: size - len as u64,
                then: Next::Box,
            }
        };
        n
    }
}
