//! Renders sent without a copy: on an HTTP/1 connection, a render on the
//! local disk goes from the page cache to the socket with `sendfile(2)`,
//! as nginx's `sendfile on` does, instead of being copied through this
//! process's memory (for a 100-200 KB render that copy was most of the gap
//! to nginx).
//!
//! hyper writes bodies from memory and has no way to take a file, so the
//! body (`FileBody`) gives hyper placeholder chunks that point into one
//! buffer no one ever reads or writes (`placeholder`), and queues on the
//! connection (`Pieces`) the file range each stands for. The socket under
//! hyper (`Wire`) knows those chunks by their address when hyper writes
//! them, and sends the file range in their place. HTTP/1 writes responses
//! whole and in order, so the chunk being written is always the queue's
//! front; a chunk that is not (or a file shorter than recorded) fails the
//! write, which closes the connection: never a wrong byte.
//!
//! HTTP/2 frames bodies itself, copying them, so only HTTP/1 requests get
//! the queue (`server` inserts it); without it `/i/` serves from memory.

// sendfile(2) has no std wrapper.
#![allow(unsafe_code)]

use bytes::Bytes;
use hyper::body::Frame;
use socket2::SockRef;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::fs::File;
use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// The largest placeholder chunk; a longer body is several.
const CHUNK: usize = 256 << 10;

/// The placeholders' memory: zeroed on allocation, never touched after, so
/// it takes address space and no resident memory.
fn placeholder() -> &'static [u8] {
    static MEMORY: OnceLock<&'static [u8]> = OnceLock::new();
    MEMORY.get_or_init(|| Vec::leak(vec![0u8; CHUNK]))
}

/// Where `data` starts inside the placeholder memory, if it is a chunk of it.
fn placeholder_offset(data: &[u8]) -> Option<usize> {
    let base = placeholder().as_ptr() as usize;
    let at = (data.as_ptr() as usize).checked_sub(base)?;
    (!data.is_empty() && at + data.len() <= CHUNK).then_some(at)
}

/// A file range one placeholder chunk stands for.
struct Piece {
    file: Arc<File>,
    offset: u64,
    len: usize,
    sent: usize,
}

/// The file ranges of the placeholder chunks given to hyper on one
/// connection and not yet written, in the order hyper took them.
#[derive(Clone, Default)]
pub struct Pieces(Arc<Mutex<VecDeque<Piece>>>);

/// `range` of `file` as a response body of placeholder chunks.
pub struct FileBody {
    pieces: Pieces,
    file: Arc<File>,
    next: u64,
    end: u64,
}

impl FileBody {
    pub fn new(pieces: Pieces, file: Arc<File>, range: std::ops::Range<u64>) -> FileBody {
        FileBody {
            pieces,
            file,
            next: range.start,
            end: range.end,
        }
    }
}

impl hyper::body::Body for FileBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let left = self.end.saturating_sub(self.next);
        if left == 0 {
            return Poll::Ready(None);
        }
        let len = left.min(CHUNK as u64) as usize;
        let piece = Piece {
            file: self.file.clone(),
            offset: self.next,
            len,
            sent: 0,
        };
        // Queued as hyper takes the chunk: a body never polled (HEAD, a
        // dropped response) leaves nothing behind.
        self.pieces.0.lock().expect("pieces").push_back(piece);
        self.next += len as u64;
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
            &placeholder()[..len],
        )))))
    }

    fn is_end_stream(&self) -> bool {
        self.next >= self.end
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.end.saturating_sub(self.next))
    }
}

/// The connection's socket, sending placeholder chunks' file ranges.
pub struct Wire {
    tcp: TcpStream,
    pieces: Pieces,
}

impl Wire {
    pub fn new(tcp: TcpStream) -> (Wire, Pieces) {
        let pieces = Pieces::default();
        let wire = Wire {
            tcp,
            pieces: pieces.clone(),
        };
        (wire, pieces)
    }

    /// Runs `op` once the socket is writable, until it does not block.
    fn poll_op(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut() -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.tcp.poll_write_ready(cx))?;
            match self.tcp.try_io(Interest::WRITABLE, &mut op) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                done => return Poll::Ready(done),
            }
        }
    }

    /// Writes what comes before a placeholder, telling the kernel more
    /// follows so the head and the file leave in the same segments.
    fn poll_before_file(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let socket = SockRef::from(&self.tcp);
        self.poll_op(cx, || socket.send_vectored_with_flags(bufs, libc::MSG_MORE))
    }

    /// Sends the file range of the placeholder chunk `data`, which must be
    /// the rest of the queue's front piece.
    fn poll_file(&self, cx: &mut Context<'_>, data: &[u8], at: usize) -> Poll<io::Result<usize>> {
        let mut pieces = self.pieces.0.lock().expect("pieces");
        let Some(piece) = pieces.front_mut() else {
            return Poll::Ready(Err(out_of_order()));
        };
        if at != piece.sent || data.len() != piece.len - piece.sent {
            return Poll::Ready(Err(out_of_order()));
        }
        let (out, file) = (self.tcp.as_raw_fd(), piece.file.as_raw_fd());
        let mut offset = (piece.offset + piece.sent as u64) as libc::off_t;
        let count = data.len();
        let n = ready!(self.poll_op(cx, || {
            // SAFETY: both descriptors are open for the call (the socket
            // is `self.tcp`, the file is held by `piece`), and `offset`
            // is a live local the kernel updates.
            let n = unsafe { libc::sendfile(out, file, &mut offset, count) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        }))?;
        if n == 0 {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "a render file ended before its recorded length",
            )));
        }
        piece.sent += n;
        if piece.sent == piece.len {
            pieces.pop_front();
        }
        Poll::Ready(Ok(n))
    }
}

fn out_of_order() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a render placeholder out of order",
    )
}

impl AsyncRead for Wire {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Wire {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(data)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let first = bufs
            .iter()
            .enumerate()
            .find_map(|(i, b)| placeholder_offset(b).map(|at| (i, at)));
        match first {
            None => Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs),
            Some((0, at)) => self.poll_file(cx, &bufs[0], at),
            Some((i, _)) => self.poll_before_file(cx, &bufs[..i]),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
