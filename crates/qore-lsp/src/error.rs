//! The crate's errors: what can go wrong reading the client's byte stream ([`FrameError`])
//! and serving it ([`LspError`]). Request-level failures are JSON-RPC errors instead.

/// A frame that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The header block has no usable `Content-Length`; the stream stays in step.
    #[error("bad LSP header: {0}")]
    Header(String),
    /// The input ended inside a frame.
    #[error("the input ended inside a frame")]
    Truncated,
    /// A `Content-Length` beyond [`crate::frame::MAX_BODY`].
    #[error("a frame of {0} bytes is over the limit")]
    TooLarge(usize),
    #[error("reading the input: {0}")]
    Io(#[from] std::io::Error),
}

/// Why serving stopped early.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("writing the output: {0}")]
    Write(#[source] std::io::Error),
}
