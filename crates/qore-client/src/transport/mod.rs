//! Shared transport mechanics: HTTP with timeouts, and stream framing.
//!
//! Everything here is protocol-agnostic and lives once: codecs never open sockets or split
//! bytes into frames themselves.

pub mod bad_answer;
pub mod framing;
pub mod http;
pub mod ndjson;
pub mod retry;
pub mod sse;
