//! Shared transport mechanics: HTTP with timeouts (streams, and whole `GET`s beside them),
//! stream framing, and what an answer that is not the API's becomes.
//!
//! Everything here is protocol-agnostic and lives once: codecs never open sockets or split
//! bytes into frames themselves.

pub mod bad_answer;
pub mod framing;
pub(crate) mod get;
pub mod http;
pub mod ndjson;
pub(crate) mod parsed_url;
pub mod retry;
pub mod sse;
