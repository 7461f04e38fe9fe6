//! Reading untrusted JSON field by field: Chat Completions' accessors
//! (`openai_chat::json`: every one names the field at fault in its 400, reads `null` as
//! absent, never panics), plus the 400 for what this dialect does not support.

pub use crate::dialect::openai_chat::json::*;

use crate::ServeError;

/// A 400: what the field at `path` asks is not supported here.
pub fn unsupported(path: &str, what: &str) -> ServeError {
    ServeError::invalid(path, format!("`{path}`: {what} is not supported"))
}
