//! Minimal HTTP/1.1 request reading for the replay server.
//!
//! Contract: [`read_request`] reads one request from a connection: the head up to `\r\n\r\n`
//! (at most [`MAX_HEAD`] bytes), then the body framed by `transfer-encoding: chunked` (trailers
//! are read and dropped) or by `content-length`, or no body when neither is present. Bytes
//! beyond the request stay in the caller's buffer for the next request (keep-alive, pipelining).
//! `expect: 100-continue` is answered with `100 Continue` before the body is read.
//! `Ok(None)` means the peer closed cleanly between requests. Malformed input is an
//! `InvalidData` error (the server answers 400 and closes).

use std::io::{Error, ErrorKind};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest accepted request head (request line + headers).
pub const MAX_HEAD: usize = 1 << 20;

/// One parsed request.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// Request target as sent: path plus query.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The client asked to close after this response (`connection: close`, or HTTP/1.0
    /// without `connection: keep-alive`).
    pub wants_close: bool,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidData, msg.into())
}

/// Reads more bytes into `buf`; `Ok(false)` on EOF.
async fn fill(stream: &mut TcpStream, buf: &mut BytesMut) -> std::io::Result<bool> {
    if buf.capacity() - buf.len() < 4096 {
        buf.reserve(16 * 1024);
    }
    Ok(stream.read_buf(buf).await? > 0)
}

/// Reads one request; see the module doc.
pub async fn read_request(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
) -> std::io::Result<Option<Request>> {
    let head_len = loop {
        if let Some(i) = memchr::memmem::find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(bad("request head too large"));
        }
        if !fill(stream, buf).await? {
            if buf.iter().all(|b| b.is_ascii_whitespace()) {
                return Ok(None);
            }
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                "eof inside request head",
            ));
        }
    };
    let head = buf.split_to(head_len);
    let text = std::str::from_utf8(&head).map_err(|_| bad("request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("bad request line {request_line:?}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("unsupported version {version:?}")));
    }
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad(format!("bad header line {line:?}")))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(",")
    };
    let has_token = |value: &str, token: &str| value.split(',').any(|t| t.trim() == token);
    let connection = header("connection");
    let wants_close = has_token(&connection, "close")
        || (version == "HTTP/1.0" && !has_token(&connection, "keep-alive"));
    if has_token(&header("expect"), "100-continue") {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        stream.flush().await?;
    }
    let body = if has_token(&header("transfer-encoding"), "chunked") {
        read_chunked(stream, buf).await?
    } else {
        let cl = header("content-length");
        let len = if cl.is_empty() {
            0
        } else {
            cl.parse::<usize>()
                .map_err(|_| bad(format!("bad content-length {cl:?}")))?
        };
        while buf.len() < len {
            if !fill(stream, buf).await? {
                return Err(Error::new(
                    ErrorKind::UnexpectedEof,
                    "eof inside request body",
                ));
            }
        }
        buf.split_to(len).to_vec()
    };
    Ok(Some(Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        body,
        wants_close,
    }))
}

/// Reads one CRLF-terminated line (without the CRLF).
async fn read_line(stream: &mut TcpStream, buf: &mut BytesMut) -> std::io::Result<Vec<u8>> {
    loop {
        if let Some(i) = memchr::memmem::find(buf, b"\r\n") {
            let line = buf.split_to(i).to_vec();
            buf.advance(2);
            return Ok(line);
        }
        if buf.len() > MAX_HEAD {
            return Err(bad("chunk line too long"));
        }
        if !fill(stream, buf).await? {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                "eof inside chunked body",
            ));
        }
    }
}

async fn read_chunked(stream: &mut TcpStream, buf: &mut BytesMut) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(stream, buf).await?;
        let line = String::from_utf8_lossy(&line);
        let hex = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(hex, 16)
            .map_err(|_| bad(format!("bad chunk size line {line:?}")))?;
        if size == 0 {
            // Trailers until the blank line.
            while !read_line(stream, buf).await?.is_empty() {}
            return Ok(body);
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf).await? {
                return Err(Error::new(ErrorKind::UnexpectedEof, "eof inside chunk"));
            }
        }
        body.extend_from_slice(&buf[..size]);
        if &buf[size..size + 2] != b"\r\n" {
            return Err(bad("chunk data not followed by CRLF"));
        }
        buf.advance(size + 2);
    }
}

/// Reason phrase for a status code (`"Status"` for codes not listed).
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}
