//! MCP servers as qore tools.
pub mod config;
pub mod error;
pub mod expand;
