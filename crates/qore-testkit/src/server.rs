//! A loopback HTTP/1.1 server that replays canned responses, sliced at chosen places.
//!
//! It is written on raw `tokio::net` rather than hyper on purpose: the point is exact control
//! over how the response bytes are cut and flushed (one HTTP chunk per slice, one write + flush
//! per chunk, TCP_NODELAY), which hyper's buffering and framing hide.
//!
//! Contract:
//! - [`ReplayServer::start`] binds `127.0.0.1:0` and serves the given replies in order, one per
//!   incoming request, across connections (keep-alive supported). When they run out, every
//!   further request gets `500` with a JSON error body saying so.
//!   [`ReplayServer::start_repeating`] serves the same reply to every request forever;
//!   [`ReplayServer::start_cycling`] serves the given replies in order, then again from the
//!   first, forever (a scripted conversation that a benchmark replays many times).
//! - Requests are read as documented in the private `wire` module: head up to `\r\n\r\n`, body by `content-length`
//!   or `transfer-encoding: chunked` (reqwest sends `content-length` for JSON bodies). Each one
//!   is recorded and visible through [`ReplayServer::requests`]; [`ReplayServer::take_requests`]
//!   hands them over and forgets them (a long benchmark keeps memory flat).
//! - Responses: status line with reason phrase, the reply's headers minus any recorded
//!   `content-length`, `transfer-encoding` and `connection`, then the framing:
//!   `Slicing::Whole` sends `content-length` and the body in one write; every other mode sends
//!   `transfer-encoding: chunked`, each non-empty slice as ONE chunk written with one
//!   `write_all` + `flush`, then `0\r\n\r\n`. `HEAD` requests and 1xx/204/304 get no body.
//! - The connection is kept for the next request unless the client sent `connection: close`
//!   (then the response carries `connection: close` and the server closes).
//! - A client that goes away while the response is written is not an error: the server stops
//!   writing quietly and counts it in [`ReplayServer::disconnects`] (every failed response write
//!   counts; on loopback that only happens when the peer closed or reset).
//! - Dropping the server aborts the accept loop and, with it, all connection tasks.
//! - `start*` must be called inside a tokio runtime.

use std::collections::VecDeque;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use crate::cassette::Exchange;
use crate::slicing::Slicing;
use crate::wire::{read_request, reason};

/// A canned response. Cloning is cheap (the body is a [`Bytes`]).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub slicing: Slicing,
    /// Close the connection instead of finishing the reply (transport failures).
    pub hang_up: Option<HangUp>,
}

/// Where a reply breaks off by closing the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HangUp {
    /// Read the request, then close without writing anything.
    BeforeHead,
    /// Write the head and this many body bytes (chunked), then close without the last chunk.
    AfterBodyBytes(usize),
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
        }
    }

    /// A connection closed right after the request was read.
    pub fn hang_up() -> Self {
        let mut reply = Reply::new(200, Bytes::new());
        reply.hang_up = Some(HangUp::BeforeHead);
        reply
    }

    /// This reply, broken off after `n` body bytes (the connection closes mid-body).
    pub fn cut_after(mut self, n: usize) -> Self {
        self.hang_up = Some(HangUp::AfterBodyBytes(n));
        if matches!(self.slicing, Slicing::Whole) {
            self.slicing = Slicing::Fixed(usize::MAX);
        }
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
    }
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    /// Request target: path including the query string.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// First header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A reply with its response head and slice boundaries computed once.
struct Prepared {
    /// Status line and headers, without framing headers and the final blank line.
    head: Vec<u8>,
    status: u16,
    body: Bytes,
    /// `None` for `Slicing::Whole` (content-length framing).
    ends: Option<Vec<usize>>,
    hang_up: Option<HangUp>,
}

impl Prepared {
    fn new(reply: Reply) -> Self {
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
        }
    }
}

enum Source {
    Queue {
        items: VecDeque<Arc<Prepared>>,
        total: usize,
    },
    /// The replies in order, then again from the first; never empty.
    Cycle {
        items: Vec<Arc<Prepared>>,
        next: usize,
    },
}

struct Shared {
    source: Mutex<Source>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Requests received, including the ones handed over by `take_requests`.
    received: AtomicUsize,
    disconnects: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// The next reply, or an explanatory 500 when the queue is exhausted.
    fn next_reply(&self, method: &str, target: &str, index: usize) -> Arc<Prepared> {
        match &mut *lock(&self.source) {
            Source::Cycle { items, next } => {
                let p = Arc::clone(&items[*next % items.len()]);
                *next = (*next + 1) % items.len();
                p
            }
            Source::Queue { items, total } => items.pop_front().unwrap_or_else(|| {
                let msg = format!(
                    "qore-testkit ReplayServer: no reply left for request #{} ({method} {target}); \
                     {total} replies were configured",
                    index + 1
                );
                let body =
                    serde_json::json!({"error": {"type": "replay_exhausted", "message": msg}});
                Arc::new(Prepared::new(Reply::json(500, body.to_string())))
            }),
        }
    }
}

/// The loopback replay server; see the module doc.
pub struct ReplayServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl ReplayServer {
    /// Serves `replies` in order, one per request; then 500s.
    pub async fn start(replies: Vec<Reply>) -> std::io::Result<ReplayServer> {
        let total = replies.len();
        let items = replies
            .into_iter()
            .map(|r| Arc::new(Prepared::new(r)))
            .collect();
        Self::launch(Source::Queue { items, total }).await
    }

    /// Serves the same reply to every request, forever (slices are computed once).
    pub async fn start_repeating(reply: Reply) -> std::io::Result<ReplayServer> {
        Self::start_cycling(vec![reply]).await
    }

    /// Serves `replies` in order, then again from the first, forever (slices are computed
    /// once). An empty list is an `InvalidInput` error.
    pub async fn start_cycling(replies: Vec<Reply>) -> std::io::Result<ReplayServer> {
        if replies.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "start_cycling needs at least one reply",
            ));
        }
        let items = replies
            .into_iter()
            .map(|r| Arc::new(Prepared::new(r)))
            .collect();
        Self::launch(Source::Cycle { items, next: 0 }).await
    }

    async fn launch(source: Source) -> std::io::Result<ReplayServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            source: Mutex::new(source),
            requests: Mutex::new(Vec::new()),
            received: AtomicUsize::new(0),
            disconnects: AtomicUsize::new(0),
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(ReplayServer {
            addr,
            shared,
            accept,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The requests received so far, in arrival order; they are forgotten here (a later
    /// call returns only the ones received after this one).
    pub fn take_requests(&self) -> Vec<RecordedRequest> {
        std::mem::take(&mut *lock(&self.shared.requests))
    }

    /// Number of responses whose write failed because the client went away.
    pub fn disconnects(&self) -> usize {
        self.shared.disconnects.load(Ordering::SeqCst)
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Connection tasks live in this JoinSet, so aborting the accept task aborts them too.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    conns.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn serve_connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut inbound = BytesMut::with_capacity(16 * 1024);
    let mut out = Vec::with_capacity(64 * 1024 + 32);
    loop {
        let req = match read_request(&mut stream, &mut inbound).await {
            Ok(Some(req)) => req,
            Ok(None) => return,
            Err(e) => {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    let body = serde_json::json!({"error": {"type": "bad_request", "message": e.to_string()}});
                    let p = Prepared::new(Reply::json(400, body.to_string()));
                    let _ = write_response(&mut stream, &p, false, true, &mut out).await;
                }
                return;
            }
        };
        let index = shared.received.fetch_add(1, Ordering::SeqCst);
        lock(&shared.requests).push(RecordedRequest {
            method: req.method.clone(),
            path: req.target.clone(),
            headers: req.headers,
            body: req.body,
        });
        let reply = shared.next_reply(&req.method, &req.target, index);
        let head_only = req.method.eq_ignore_ascii_case("HEAD");
        let res = write_response(&mut stream, &reply, head_only, req.wants_close, &mut out).await;
        if res.is_err() {
            shared.disconnects.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if req.wants_close {
            let _ = stream.shutdown().await;
            return;
        }
    }
}

/// Slices at least this big are written without copying them into the chunk buffer.
const COPY_LIMIT: usize = 256 * 1024;

async fn write_response(
    stream: &mut TcpStream,
    p: &Prepared,
    head_only: bool,
    close: bool,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let bodiless = (100..200).contains(&p.status) || p.status == 204 || p.status == 304;
    let cut = match p.hang_up {
        Some(HangUp::BeforeHead) => return Err(std::io::ErrorKind::ConnectionAborted.into()),
        Some(HangUp::AfterBodyBytes(n)) => n,
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
            return Err(std::io::ErrorKind::ConnectionAborted.into());
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
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await
}
