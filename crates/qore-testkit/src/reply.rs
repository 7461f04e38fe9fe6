//! A canned response ([`Reply`]) and how it is written on the wire: head, body sliced into
//! HTTP chunks, and the faults a reply may carry (see the server's module doc, whose
//! contract this implements).

use std::io::Write as _;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::cassette::Exchange;
use crate::slicing::Slicing;
use crate::wire::reason;

/// A canned response. Cloning is cheap (the body is a [`Bytes`]).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub slicing: Slicing,
    /// Close the connection instead of finishing the reply (transport failures).
    pub hang_up: Option<HangUp>,
    /// Sleep this long before writing each slice (a slow drip).
    pub pace: Option<Duration>,
}

/// Where a reply breaks off by closing the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HangUp {
    /// Read the request, then close without writing anything.
    BeforeHead,
    /// Write the head and this many body bytes (chunked), then close without the last chunk.
    AfterBodyBytes(usize),
    /// The same, but reset the connection (RST) instead of closing it.
    ResetAfterBodyBytes(usize),
    /// Write the head and this many body bytes, then send nothing more: the connection
    /// stays open, silent, until the client closes it.
    StallAfterBodyBytes(usize),
}

impl Reply {
    /// A reply with no headers, sent whole.
    pub fn new(status: u16, body: impl Into<Bytes>) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            slicing: Slicing::Whole,
            hang_up: None,
            pace: None,
        }
    }

    /// A connection closed right after the request was read.
    pub fn hang_up() -> Self {
        let mut reply = Reply::new(200, Bytes::new());
        reply.hang_up = Some(HangUp::BeforeHead);
        reply
    }

    /// This reply, broken off after `n` body bytes (the connection closes mid-body).
    pub fn cut_after(self, n: usize) -> Self {
        self.breaking_off(HangUp::AfterBodyBytes(n))
    }

    /// This reply, reset (RST) after `n` body bytes.
    pub fn reset_after(self, n: usize) -> Self {
        self.breaking_off(HangUp::ResetAfterBodyBytes(n))
    }

    /// This reply, silent after `n` body bytes with the connection left open.
    pub fn stall_after(self, n: usize) -> Self {
        self.breaking_off(HangUp::StallAfterBodyBytes(n))
    }

    fn breaking_off(mut self, how: HangUp) -> Self {
        self.hang_up = Some(how);
        if matches!(self.slicing, Slicing::Whole) {
            self.slicing = Slicing::Fixed(usize::MAX);
        }
        self
    }

    /// Sleep `pace` before each slice (with a slicing that cuts small, a slow drip).
    pub fn with_pace(mut self, pace: Duration) -> Self {
        self.pace = Some(pace);
        self
    }

    /// `200 text/event-stream`, one chunk per SSE frame.
    pub fn sse(body: impl Into<Bytes>) -> Self {
        Reply::new(200, body)
            .with_header("content-type", "text/event-stream")
            .with_slicing(Slicing::PerSseFrame)
    }

    /// A JSON reply with this status, sent whole.
    pub fn json(status: u16, body: impl Into<Bytes>) -> Self {
        Reply::new(status, body).with_header("content-type", "application/json")
    }

    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn with_slicing(mut self, slicing: Slicing) -> Self {
        self.slicing = slicing;
        self
    }
}

/// The reply recorded in `ex` (status, headers, body bytes, base64-decoded when recorded so).
pub fn reply_from_exchange(ex: &Exchange, slicing: Slicing) -> Reply {
    Reply {
        status: ex.status,
        headers: ex.response_headers.clone(),
        body: Bytes::from(ex.response_bytes()),
        slicing,
        hang_up: None,
        pace: None,
    }
}

/// A reply with its response head and slice boundaries computed once.
pub(crate) struct Prepared {
    /// Status line and headers, without framing headers and the final blank line.
    head: Vec<u8>,
    status: u16,
    body: Bytes,
    /// `None` for `Slicing::Whole` (content-length framing).
    ends: Option<Vec<usize>>,
    hang_up: Option<HangUp>,
    pace: Option<Duration>,
}

impl Prepared {
    pub(crate) fn new(reply: Reply) -> Self {
        let mut head = Vec::with_capacity(256);
        let _ = write!(
            head,
            "HTTP/1.1 {} {}\r\n",
            reply.status,
            reason(reply.status)
        );
        for (n, v) in &reply.headers {
            let skip = ["content-length", "transfer-encoding", "connection"]
                .iter()
                .any(|h| n.eq_ignore_ascii_case(h));
            if !skip {
                let _ = write!(head, "{n}: {v}\r\n");
            }
        }
        let ends = match reply.slicing {
            Slicing::Whole => None,
            ref s => Some(s.slice_ends(&reply.body)),
        };
        Prepared {
            head,
            status: reply.status,
            body: reply.body,
            ends,
            hang_up: reply.hang_up,
            pace: reply.pace,
        }
    }
}

/// Slices at least this big are written without copying them into the chunk buffer.
const COPY_LIMIT: usize = 256 * 1024;

pub(crate) async fn write_response(
    stream: &mut TcpStream,
    p: &Prepared,
    head_only: bool,
    close: bool,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let bodiless = (100..200).contains(&p.status) || p.status == 204 || p.status == 304;
    let cut = match p.hang_up {
        Some(HangUp::BeforeHead) => return Err(std::io::ErrorKind::ConnectionAborted.into()),
        Some(
            HangUp::AfterBodyBytes(n)
            | HangUp::ResetAfterBodyBytes(n)
            | HangUp::StallAfterBodyBytes(n),
        ) => n,
        None => usize::MAX,
    };
    out.clear();
    out.extend_from_slice(&p.head);
    if !bodiless {
        match &p.ends {
            None => {
                let _ = write!(out, "content-length: {}\r\n", p.body.len());
            }
            Some(_) => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        }
    }
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if head_only || bodiless {
        stream.write_all(out).await?;
        return stream.flush().await;
    }
    let Some(ends) = &p.ends else {
        if p.body.len() < COPY_LIMIT {
            out.extend_from_slice(&p.body);
            stream.write_all(out).await?;
        } else {
            stream.write_all(out).await?;
            stream.write_all(&p.body).await?;
        }
        return stream.flush().await;
    };
    stream.write_all(out).await?;
    stream.flush().await?;
    let mut start = 0;
    for &end in ends {
        if start >= cut {
            return break_off(stream, p.hang_up).await;
        }
        if let Some(pace) = p.pace {
            tokio::time::sleep(pace).await;
        }
        let data = &p.body[start..end.min(cut)];
        start = end;
        if data.is_empty() {
            continue;
        }
        out.clear();
        let _ = write!(out, "{:x}\r\n", data.len());
        if data.len() < COPY_LIMIT {
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
            stream.write_all(out).await?;
        } else {
            stream.write_all(out).await?;
            stream.write_all(data).await?;
            stream.write_all(b"\r\n").await?;
        }
        stream.flush().await?;
    }
    if cut < p.body.len() {
        // The cut fell inside the last slice.
        return break_off(stream, p.hang_up).await;
    }
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await
}

/// End a reply that breaks off mid-body, as its [`HangUp`] says. Always an error: the
/// connection is not to be used again.
async fn break_off(stream: &mut TcpStream, how: Option<HangUp>) -> std::io::Result<()> {
    match how {
        Some(HangUp::ResetAfterBodyBytes(_)) => {
            // Closing with a zero linger sends RST instead of FIN.
            let _ = stream.set_zero_linger();
        }
        Some(HangUp::StallAfterBodyBytes(_)) => {
            let mut scratch = [0u8; 1024];
            while let Ok(n) = stream.read(&mut scratch).await {
                if n == 0 {
                    break;
                }
            }
        }
        _ => {}
    }
    Err(std::io::ErrorKind::ConnectionAborted.into())
}
