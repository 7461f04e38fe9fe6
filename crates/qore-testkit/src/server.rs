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
//! - Faults: a reply may break off ([`HangUp`]): close before the head, or after some body
//!   bytes close (FIN), reset (RST: `SO_LINGER` 0), or stall (send nothing more, keep the
//!   connection open until the client closes it); and it may drip, sleeping
//!   [`Reply::pace`] before each slice.
//! - A client that goes away while the response is written is not an error: the server stops
//!   writing quietly and counts it in [`ReplayServer::disconnects`] (every failed response write
//!   counts; on loopback that only happens when the peer closed or reset).
//! - Dropping the server aborts the accept loop and, with it, all connection tasks.
//! - `start*` must be called inside a tokio runtime.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::BytesMut;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

pub use crate::reply::{reply_from_exchange, HangUp, Reply};
use crate::reply::{write_response, Prepared};
use crate::wire::read_request;

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
