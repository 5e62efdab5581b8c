//! Which bytes of a connection count as it doing something, for the idle
//! watchdog (`slow::Activity`). On HTTP/1 every byte. On HTTP/2 only the
//! response frames the server writes (HEADERS, CONTINUATION, DATA), with
//! requests and their body pieces counted as they reach the service
//! (`server::connection`, `slow::deadline_body`): frames as they come
//! would let a client that gives a response no flow-control window keep
//! its connection for ever with PINGs, or with frames h2 drops unanswered
//! (new streams past a GOAWAY, DATA on a closed stream).

/// The client's first bytes on an HTTP/2 connection (RFC 9113, 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEAD: usize = 9;

/// One connection's bytes, read by the protocol its client speaks.
pub struct Progress {
    /// How much of the HTTP/2 preface the client has sent so far; `None`
    /// once its bytes are known to be something else (HTTP/1).
    preface: Option<usize>,
    writes: Frames,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            preface: Some(0),
            writes: Frames::default(),
        }
    }

    /// Whether bytes the client sent count: on HTTP/1 all, on HTTP/2
    /// none (the service counts what reaches it).
    pub fn read(&mut self, bytes: &[u8]) -> bool {
        let Some(matched) = self.preface else {
            return true;
        };
        if matched < PREFACE.len() {
            let n = bytes.len().min(PREFACE.len() - matched);
            if bytes[..n] != PREFACE[matched..matched + n] {
                self.preface = None;
                return true;
            }
            self.preface = Some(matched + n);
        }
        false
    }

    /// Whether bytes sent to the client carry a response.
    pub fn wrote(&mut self, bytes: &[u8]) -> bool {
        match self.preface {
            Some(matched) if matched == PREFACE.len() => self.writes.carry(bytes),
            _ => true,
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

/// Where one direction's byte stream is in its frames.
#[derive(Default)]
struct Frames {
    head: [u8; FRAME_HEAD],
    have: usize,
    payload_left: usize,
    carrying: bool,
}

impl Frames {
    fn carry(&mut self, mut bytes: &[u8]) -> bool {
        let mut carried = false;
        while !bytes.is_empty() {
            if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len());
                carried |= self.carrying;
                self.payload_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (FRAME_HEAD - self.have).min(bytes.len());
            self.head[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == FRAME_HEAD {
                let h = self.head;
                self.have = 0;
                self.payload_left = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
                // DATA, HEADERS, CONTINUATION; an empty DATA ending a
                // stream counts too.
                self.carrying = matches!(h[3], 0 | 1 | 9);
                carried |= self.carrying;
            }
        }
        carried
    }
}

#[cfg(test)]
mod tests {
    use super::{Progress, PREFACE};

    fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
        let len = (payload.len() as u32).to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], kind, 0, 0, 0, 0, 1];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn every_http1_byte_counts() {
        let mut p = Progress::new();
        assert!(p.read(b"GET / HTTP/1.1\r\n"));
        assert!(p.wrote(b"HTTP/1.1 200 OK\r\n"));
        assert!(p.read(b"PRI * HTTP/2.0"), "no preface after other bytes");
    }

    #[test]
    fn on_http2_only_response_frames_count_even_split_anywhere() {
        let ping = frame(6, &[0; 8]);
        let settings = frame(4, &[0; 6]);
        let window = frame(8, &[0, 0, 1, 0]);
        let data = frame(0, &[1; 100]);
        let mut p = Progress::new();
        // The preface and a SETTINGS frame, a byte at a time.
        for b in PREFACE.iter().chain(&settings) {
            assert!(!p.read(std::slice::from_ref(b)));
        }
        assert!(!p.read(&[ping.clone(), window.clone(), ping.clone()].concat()));
        assert!(
            !p.read(&frame(1, &[0x82, 0x86, 0x84])),
            "counted by the service"
        );
        assert!(!p.wrote(&[settings.clone(), ping.clone()].concat()));
        // A DATA frame after a PING in the same write, cut inside its
        // head (not known to be DATA yet), then in pieces: each is progress.
        let both = [ping.clone(), data.clone()].concat();
        assert!(!p.wrote(&both[..ping.len() + 4]));
        assert!(p.wrote(&both[ping.len() + 4..ping.len() + 12]));
        assert!(p.wrote(&both[ping.len() + 12..ping.len() + 50]));
        assert!(p.wrote(&both[ping.len() + 50..]));
        assert!(!p.wrote(&ping));
        assert!(p.wrote(&frame(0, &[])), "an empty DATA ends a stream");
    }
}
