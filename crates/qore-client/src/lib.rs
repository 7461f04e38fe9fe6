//! qore-client: the engine's transport and wire codecs.
//!
//! This crate promises:
//! - one [`Protocol`] implementation per wire protocol, each in its own module under
//!   [`protocols`] with the same file set (`request.rs` encoding, `stream.rs` decoding,
//!   `error.rs` error envelopes, `models.rs` model listing);
//! - shared mechanics written once in [`transport`]: HTTP with connect and idle timeouts,
//!   SSE framing correct at every byte split;
//! - [`Client`]: encode a request from history, stream the answer as
//!   [`qore_core::ResponseEvent`]s through a [`ResponseStream`] that folds them into the
//!   assistant message as they pass, and ends in exactly one
//!   [`qore_core::StreamOutcome`]: finished, failed (with status and body kept) or cancelled;
//! - decoding happens in the task that reads the socket: no channel, no extra thread;
//! - [`tool_loop`]: the tool-use loop as one component ([`tool_loop::ToolLoopRunner`]):
//!   tools registered once, approval decided in one place, identical on every wire.
//!
//! A streamed answer (the wire is a name: `openai-chat`, `openai-responses`, `anthropic`,
//! `gemini`, `ollama`, `llamacpp`, `mistral`):
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use qore_client::{protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions};
//! use qore_core::{History, Message, ResponseEvent};
//!
//! # async fn demo() -> Result<(), qore_core::ErrorInfo> {
//! let protocol = protocols::by_name("openai-chat").expect("a known wire");
//! let client = Client::new(protocol, ClientConfig::new("http://127.0.0.1:18080/v1"))?;
//! let history = History::from(vec![Message::user("Write a haiku about the sea.")]);
//! let options = RequestOptions::default();
//! let request = ChatRequest { model: "default", history: &history, tools: &[], options: &options };
//! let mut stream = client.stream(&request, CancellationToken::new());
//! while let Some(event) = stream.next().await {
//!     if let ResponseEvent::TextDelta { text } = event {
//!         print!("{text}");
//!     }
//! }
//! println!("\n{:?}", stream.finish().await);
//! # Ok(()) }
//! ```
//!
//! The examples (`cargo run -p qore-client --example stream_chat`, `--example tool_loop`)
//! are whole programs; `tests/examples.rs` runs them against loopback servers.
#![warn(missing_docs)]

mod cancel;
mod client;
mod codec;
mod encode_cache;
mod endpoint;
#[doc(hidden)]
pub mod fuzz_targets;
mod idle;
pub mod local;
mod models;
pub mod protocols;
mod stream;
pub mod tool_loop;
pub mod transport;

pub use client::{Client, ClientConfig};
pub use codec::{
    body_bytes, BodyRenderer, ChatRequest, Conversation, FimFile, FimRequest, Framing, Protocol,
    RequestOptions, StreamDecoder,
};
pub use encode_cache::{message_key, EncodeCache, KeyHasher};
pub use endpoint::join_endpoint;
pub use models::{ModelCapabilities, ModelInfo};
pub use stream::ResponseStream;
pub use tokio_util::sync::CancellationToken;
pub use transport::http::Timeouts;
pub use transport::retry::RetryPolicy;
