//! Raw loopback servers' side of HTTP: reading one request off a socket.

use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;

/// Read one HTTP/1.1 request (head and `content-length` body); returns the head.
pub async fn read_request(socket: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut piece = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut piece).await.expect("read the request");
        assert!(n > 0, "the client hung up before sending a request");
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut piece).await.expect("read the body");
        assert!(n > 0, "the client hung up mid-body");
        buf.extend_from_slice(&piece[..n]);
    }
    head
}
