//! LSP base-protocol framing: `Content-Length: N\r\n` (other headers allowed and ignored),
//! a blank line, then N bytes of body.
//!
//! Promises:
//! - [`read_frame`] gives the next frame's body, `Ok(None)` at a clean end of input (EOF
//!   before any header byte), or a [`FrameError`]: a header block without a valid
//!   `Content-Length` is [`FrameError::Header`] and the reader stays in step (the next call
//!   reads the next header block), a body cut short by EOF or an oversized length is fatal
//!   for the stream ([`FrameError::Truncated`], [`FrameError::TooLarge`]). Never a panic.
//! - [`encode`] frames a body with a `Content-Length` header only.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

use crate::error::FrameError;

/// The largest body accepted (64 MiB): a bigger length is taken as garbage, not allocated.
pub const MAX_BODY: usize = 64 << 20;

/// A header block longer than this many bytes is not a header block.
const MAX_HEADER_LINE: usize = 8 << 10;

/// Read the next frame's body from `input`.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = (&mut *input)
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return match first {
                true => Ok(None),
                false => Err(FrameError::Truncated),
            };
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if first {
                continue; // stray blank lines between frames
            }
            break;
        }
        first = false;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                let value = value.trim();
                length = Some(value.parse().map_err(|_| value.to_string()));
            }
        }
    }
    let length = match length {
        Some(Ok(n)) => n,
        Some(Err(value)) => return Err(FrameError::Header(format!("Content-Length {value:?}"))),
        None => return Err(FrameError::Header("no Content-Length".into())),
    };
    if length > MAX_BODY {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = vec![0u8; length];
    match input.read_exact(&mut body).await {
        Ok(_) => Ok(Some(body)),
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => Err(FrameError::Truncated),
        Err(err) => Err(err.into()),
    }
}

/// `body` as one frame on the wire.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
