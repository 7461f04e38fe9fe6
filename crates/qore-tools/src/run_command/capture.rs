//! Captured output of one stream: the first and the last `cap / 2` bytes, and a count.
//!
//! Promises: memory stays bounded by `cap` whatever the program prints; [`Capture::render`]
//! shows the kept bytes (invalid UTF-8 replaced) with a note of how many were cut between
//! head and tail.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The first and last `cap / 2` bytes of a stream, and how many there were.
pub(super) struct Capture {
    half: usize,
    pub(super) head: Vec<u8>,
    pub(super) tail: VecDeque<u8>,
    pub(super) total: u64,
}

impl Capture {
    pub(super) fn new(cap: usize) -> Self {
        Capture {
            half: cap / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.half - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.len() >= self.half {
            self.tail.clear();
            bytes = &bytes[bytes.len() - self.half..];
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.half);
        self.tail.drain(..excess);
    }

    pub(super) async fn read_all<R: AsyncRead + Unpin>(&mut self, pipe: Option<&mut R>) {
        let Some(pipe) = pipe else { return };
        let mut buf = vec![0u8; 8192];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => self.push(&buf[..n]),
            }
        }
    }

    pub(super) fn render(&self, name: &str) -> String {
        if self.total == 0 {
            return format!("{name}: (empty)");
        }
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let mut text = format!("{name}:\n{}", String::from_utf8_lossy(&self.head));
        if self.total > kept {
            text.push_str(&format!(
                "\n[… {} bytes of {name} cut ({} in total) …]\n",
                self.total - kept,
                self.total
            ));
        }
        text.push_str(&String::from_utf8_lossy(&tail));
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Capture;

    #[test]
    fn capture_keeps_head_and_tail_and_counts_the_rest() {
        let mut c = Capture::new(8);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qr"] {
            c.push(chunk);
        }
        assert_eq!(c.total, 18);
        assert_eq!(c.head, b"abcd");
        assert_eq!(c.tail.iter().copied().collect::<Vec<u8>>(), b"opqr");
        let shown = c.render("out");
        assert!(
            shown.starts_with("out:\nabcd\n[… 10 bytes of out cut (18 in total) …]\nopqr"),
            "{shown}"
        );
    }

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Capture::new(8);
        c.push(b"hi\n");
        c.push(b"yo");
        assert_eq!(c.render("out"), "out:\nhi\nyo\n");
    }
}
