//! A deliberately dumb raw-TCP HTTP/1.1 client for testing the replay server: it writes a
//! request by hand and reads the response, keeping each HTTP chunk separate.
#![allow(dead_code)]

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The HTTP chunks as received (one element with the whole body for content-length).
    pub chunks: Vec<Vec<u8>>,
    pub chunked: bool,
}

impl Response {
    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: std::net::SocketAddr) -> Client {
        Client {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, method: &str, path: &str, extra: &[(&str, &str)], body: &[u8]) {
        let mut req = format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n");
        for (n, v) in extra {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await.expect("write request");
    }

    /// Reads more bytes; returns false on EOF.
    pub async fn fill(&mut self) -> bool {
        let mut tmp = vec![0u8; 64 * 1024];
        let n = self.stream.read(&mut tmp).await.expect("read");
        self.buf.extend_from_slice(&tmp[..n]);
        n > 0
    }

    async fn line(&mut self) -> Vec<u8> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..i].to_vec();
                self.buf.drain(..i + 2);
                return line;
            }
            assert!(self.fill().await, "eof while reading a line");
        }
    }

    async fn exact(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            assert!(self.fill().await, "eof while reading {n} bytes");
        }
        self.buf.drain(..n).collect()
    }

    pub async fn read_head(&mut self) -> (u16, Vec<(String, String)>) {
        let status_line = String::from_utf8(self.line().await).expect("utf8 status line");
        let status: u16 = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let mut headers = Vec::new();
        loop {
            let line = String::from_utf8(self.line().await).expect("utf8 header");
            if line.is_empty() {
                return (status, headers);
            }
            let (n, v) = line.split_once(':').expect("header colon");
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }

    pub async fn read_response(&mut self) -> Response {
        let (status, headers) = self.read_head().await;
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut chunks = Vec::new();
        let chunked = find("transfer-encoding").as_deref() == Some("chunked");
        if chunked {
            loop {
                let size_line = String::from_utf8(self.line().await).expect("utf8 size");
                let size = usize::from_str_radix(size_line.trim(), 16).expect("hex size");
                if size == 0 {
                    assert!(self.line().await.is_empty(), "trailers not expected");
                    break;
                }
                chunks.push(self.exact(size).await);
                assert_eq!(self.exact(2).await, b"\r\n");
            }
        } else if let Some(cl) = find("content-length") {
            let n: usize = cl.parse().expect("content-length");
            chunks.push(self.exact(n).await);
        }
        Response {
            status,
            headers,
            chunks,
            chunked,
        }
    }

    pub async fn get(&mut self, path: &str) -> Response {
        self.send("GET", path, &[], b"").await;
        self.read_response().await
    }
}
