//! One client connection, from accept to close, holding its slot of the cap all along:
//!
//! - plain TCP: the first bytes must come within `header_read_timeout` (a connection that
//!   sends nothing is closed, not held); they choose HTTP/2 (the prior-knowledge preface,
//!   h2c) or HTTP/1.1;
//! - TLS: the handshake must finish within `tls_handshake_timeout`; ALPN chooses `h2` or
//!   `http/1.1`;
//! - HTTP/1.1 runs with hyper's timer, so `header_read_timeout` bounds each request head and
//!   each keep-alive wait (hyper ≥ 1.6); HTTP/2 with a bound on concurrent streams and
//!   keep-alive pings; hyper has no header timeout for HTTP/2, so an HTTP/2 connection with
//!   no request open for `header_read_timeout` is closed (GOAWAY) instead;
//! - every write goes through a write-stall timer: a client that reads nothing for
//!   `write_stall_timeout` while the server has bytes for it is closed, which drops its
//!   response and so cancels the upstream request (on HTTP/2, where flow control stops
//!   writes first, per stream: [`super::h2`]). Nothing bounds a stream's total time;
//! - each request body gets its total deadline ([`super::body`]);
//! - once the server is stopping, a connection still before its first request is dropped; an
//!   HTTP/1.1 connection finishes the request in flight and closes, an HTTP/2 one sends
//!   GOAWAY and finishes its streams.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use qore_client::CancellationToken;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio_io_timeout::TimeoutStream;

use super::counts::ConnectionCounts;
use super::h2::Activity;
use super::service::Routed;
use super::settings::ListenSettings;

/// HTTP/2's connection preface: a client that opens with it speaks h2c.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// HTTP/2 keep-alive pings: how often, and how long an answer may take.
const H2_PING_EVERY: Duration = Duration::from_secs(30);
const H2_PING_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an idle HTTP/2 connection has to send its GOAWAY before it is closed.
const IDLE_GOAWAY_GRACE: Duration = Duration::from_millis(250);

/// What every connection of one listener shares.
pub struct Serving {
    router: axum::Router,
    settings: ListenSettings,
    counts: ConnectionCounts,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stopping: CancellationToken,
    h1: http1::Builder,
    h2: http2::Builder<TokioExecutor>,
}

impl Serving {
    pub fn new(
        router: axum::Router,
        settings: ListenSettings,
        counts: ConnectionCounts,
        tls: Option<tokio_rustls::TlsAcceptor>,
        stopping: CancellationToken,
    ) -> Serving {
        let mut h1 = http1::Builder::new();
        h1.timer(TokioTimer::new())
            .header_read_timeout(settings.header_read_timeout)
            .max_buf_size(settings.max_header_bytes);
        if settings.max_headers != crate::config::DEFAULT_MAX_HEADERS {
            // Only when asked: a set value moves hyper's header array to the heap.
            h1.max_headers(settings.max_headers);
        }
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.timer(TokioTimer::new())
            .max_concurrent_streams(settings.h2_max_streams)
            .keep_alive_interval(H2_PING_EVERY)
            .keep_alive_timeout(H2_PING_TIMEOUT)
            .max_header_list_size(u32::try_from(settings.max_header_bytes).unwrap_or(u32::MAX));
        Serving {
            router,
            settings,
            counts,
            tls,
            stopping,
            h1,
            h2,
        }
    }

    /// Serve `tcp` until it closes; `slot` is its place under the cap.
    pub async fn serve(self: Arc<Self>, tcp: TcpStream, slot: OwnedSemaphorePermit) {
        let _slot = slot;
        let _open = self.counts.opened();
        // Each chunk of a stream goes out when written (Nagle's algorithm would hold a small
        // write until the client's delayed ACK: ~40 ms a delta).
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => {
                let first = self.settings.header_read_timeout;
                let h2 = tokio::select! {
                    () = self.stopping.cancelled() => return,
                    detected = tokio::time::timeout(first, detect(&tcp)) => match detected {
                        Ok(Ok(Some(h2))) => h2,
                        // Closed, or failed, before a byte.
                        Ok(Ok(None) | Err(_)) => return,
                        Err(_) => return self.counts.closed("first_byte_timeout"),
                    },
                };
                self.http(self.stalling(tcp), h2).await;
            }
            Some(acceptor) => {
                let limit = self.settings.tls_handshake_timeout;
                let io = self.stalling(tcp);
                let stream = tokio::select! {
                    () = self.stopping.cancelled() => return,
                    shaken = tokio::time::timeout(limit, acceptor.accept(io)) => match shaken {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(_)) => return self.counts.closed("tls_handshake_failed"),
                        Err(_) => return self.counts.closed("tls_handshake_timeout"),
                    },
                };
                let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                self.http(stream, h2).await;
            }
        }
    }

    /// `tcp` whose writes may not stall for longer than `write_stall_timeout`.
    fn stalling(&self, tcp: TcpStream) -> std::pin::Pin<Box<TimeoutStream<TcpStream>>> {
        let mut io = TimeoutStream::new(tcp);
        io.set_write_timeout(Some(self.settings.write_stall_timeout));
        Box::pin(io)
    }

    async fn http<I>(&self, io: I, h2: bool)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let io = TokioIo::new(io);
        let served = if h2 {
            let activity = Arc::new(Activity::default());
            let service = self.service(Some(activity.clone()));
            let conn = self.h2.serve_connection(io, service);
            let (idle, stall) = (
                self.settings.header_read_timeout,
                self.settings.write_stall_timeout,
            );
            let idle = async {
                tokio::select! {
                    () = activity.idle(idle) => {}
                    () = activity.sweep(stall, &self.counts) => {}
                }
            };
            let (served, idled) = drive(conn, &self.stopping, idle).await;
            if idled {
                self.counts.closed("h2_idle_timeout");
            }
            served
        } else {
            let conn = self.h1.serve_connection(io, self.service(None));
            drive(conn, &self.stopping, std::future::pending()).await.0
        };
        if let Err(err) = served {
            if err.is_timeout() {
                self.counts.closed("header_timeout");
            } else if stalled(&err) {
                self.counts.closed("write_stall");
            }
        }
    }

    /// The router with the per-request limits; `activity`: HTTP/2's open requests.
    fn service(&self, activity: Option<Arc<Activity>>) -> Routed {
        Routed {
            router: self.router.clone(),
            body_timeout: self.settings.body_timeout,
            counts: self.counts.clone(),
            activity,
        }
    }
}

/// Wait for the first bytes of `tcp`, without taking them: `Some(true)` for HTTP/2's
/// preface, `Some(false)` for anything else, `None` if it closed first.
async fn detect(tcp: &TcpStream) -> std::io::Result<Option<bool>> {
    let mut buf = [0u8; PREFACE.len()];
    loop {
        let n = tcp.peek(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        if buf[..n] != PREFACE[..n] {
            return Ok(Some(false));
        }
        if n == PREFACE.len() {
            return Ok(Some(true));
        }
        // Part of the preface: peek again once more may have come (bounded by the caller's
        // deadline).
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Run `conn`; once `stopping` or `idle`, shut it down gracefully and let it finish. How it
/// ended, and whether `idle` ended it.
async fn drive<C>(
    conn: C,
    stopping: &CancellationToken,
    idle: impl std::future::Future<Output = ()>,
) -> (Result<(), hyper::Error>, bool)
where
    C: GracefulConnection<Error = hyper::Error>,
{
    let mut conn = std::pin::pin!(conn);
    let idled = tokio::select! {
        served = conn.as_mut() => return (served, false),
        () = stopping.cancelled() => false,
        () = idle => true,
    };
    conn.as_mut().graceful_shutdown();
    if !idled {
        return (conn.await, false);
    }
    // Nothing is open: the GOAWAY goes out, then the connection closes whether or not the
    // client answers the shutdown's ping.
    match tokio::time::timeout(IDLE_GOAWAY_GRACE, conn).await {
        Ok(served) => (served, true),
        Err(_) => (Ok(()), true),
    }
}

/// Whether `err` is a write that stalled past its limit.
fn stalled(err: &hyper::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return true;
            }
        }
        next = err.source();
    }
    false
}
