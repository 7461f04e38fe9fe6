//! MCP servers as qore tools: [`config`] reads the servers users already configured
//! (`mcpServers` JSON, `[mcp_servers.NAME]` TOML), [`servers::McpTools`] starts them (stdio
//! or streamable HTTP, on rmcp) and hands their tools, named by [`names`], schemas fitted
//! by [`schema`] and results converted by [`result`], to a session's registry as
//! [`tool::McpTool`]s; [`edit`] adds and removes servers in `<config dir>/mcp.json`.
//!
//! Promises: nothing here panics on what a config file or a server says; a config problem
//! is an [`McpError`] naming the file, a server problem a status and an error result.

pub mod config;
mod confine;
pub mod edit;
pub mod error;
pub mod expand;
mod http;
pub mod names;
pub mod result;
pub mod schema;
pub mod serve;
pub mod server;
pub mod servers;
pub mod tool;
pub mod trust;
pub mod watch;

pub use error::McpError;
