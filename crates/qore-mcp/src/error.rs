//! The MCP crate's error type.
//!
//! Promises: a config problem names its file (and, for a parse error, the line the parser
//! reports) and the server; a server problem names the server.

use std::path::PathBuf;

/// What went wrong with MCP configs or servers.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid JSON/TOML or does not have the expected shape.
    #[error("{}: {message}", .path.display())]
    Parse { path: PathBuf, message: String },
    /// `config.toml` cannot be read or parsed, or its `[mcp_servers]` has the wrong shape
    /// (the message names the file and the line).
    #[error(transparent)]
    Config(#[from] qore_config::ConfigError),
    /// One server entry is unusable.
    #[error("{}: server '{server}': {message}", .path.display())]
    Invalid {
        path: PathBuf,
        server: String,
        message: String,
    },
    #[error("{}: cannot write: {message}", .path.display())]
    Write { path: PathBuf, message: String },
    /// A server could not be started or reached.
    #[error("MCP server '{server}': {message}")]
    Server { server: String, message: String },
}
