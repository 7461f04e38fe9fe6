//! A loopback proxy that records every request and forwards it to a real server on this
//! machine, so a test against a real model can check the bytes the engine sent.
//!
//! Contract: each request is read whole ([`crate::wire::read_request`]), recorded, and sent to
//! the upstream address as HTTP/1.1 with `connection: close` and a `content-length` body; the
//! upstream's answer is relayed byte for byte until it closes, then the client connection is
//! closed too (one request per connection). Only loopback upstreams make sense here.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use crate::server::RecordedRequest;
use crate::wire::read_request;

/// The recording proxy; see the module doc.
pub struct RecordingProxy {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    accept: JoinHandle<()>,
}

impl RecordingProxy {
    /// Listen on an ephemeral loopback port, forwarding to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<RecordingProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&requests);
        let accept = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                conns.spawn(relay(stream, upstream, Arc::clone(&shared)));
            }
        });
        Ok(RecordingProxy {
            addr,
            requests,
            accept,
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
) -> std::io::Result<()> {
    let mut buf = BytesMut::new();
    let Some(request) = read_request(&mut client, &mut buf).await? else {
        return Ok(());
    };
    let mut head = format!("{} {} HTTP/1.1\r\n", request.method, request.target);
    for (name, value) in &request.headers {
        let skip = ["host", "connection", "content-length", "transfer-encoding"]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h));
        if !skip {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str(&format!(
        "host: {upstream}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        request.body.len()
    ));
    requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(RecordedRequest {
            method: request.method,
            path: request.target,
            headers: request.headers,
            body: request.body.clone(),
        });
    let mut server = TcpStream::connect(upstream).await?;
    server.write_all(head.as_bytes()).await?;
    server.write_all(&request.body).await?;
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = server.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        client.write_all(&chunk[..n]).await?;
    }
    client.shutdown().await
}
