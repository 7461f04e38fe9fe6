//! qore's built-in tools (list, find, read, search, write, edit, run commands, todo) over
//! one project directory, served to any MCP client: over stdio by default, or streamable
//! HTTP on a loopback address.
//!
//! ```sh
//! # stdio, e.g. as an MCP server of Claude Desktop or an editor:
//! cargo run -p qore-mcp --example serve_tools -- /path/to/project
//! # streamable HTTP on 127.0.0.1:8765 (`http://127.0.0.1:8765/` in the client):
//! cargo run -p qore-mcp --example serve_tools -- /path/to/project --http 127.0.0.1:8765
//! ```
//!
//! The tools cannot leave the project (paths are resolved inside it; `.qoreignore` and
//! `.gitignore` hide files) and each is announced with the truth about it: `readOnlyHint`
//! for the reading tools, `destructiveHint` for the others, so the client knows what to
//! ask its user about. Any other [`qore_core::Tool`] can be served the same way.

use std::net::SocketAddr;
use std::path::PathBuf;

use qore_mcp::serve::ToolServer;
use qore_tools::{builtin_tools, Sandbox, ToolOptions};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let project: PathBuf = args.next().unwrap_or_else(|| ".".into()).into();
    let http = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => match addr.parse::<SocketAddr>() {
            Ok(addr) => Some(addr),
            Err(err) => {
                eprintln!("--http {addr}: {err}");
                return std::process::ExitCode::FAILURE;
            }
        },
        (None, _) => None,
        _ => {
            eprintln!("usage: serve_tools [PROJECT] [--http ADDR]");
            return std::process::ExitCode::FAILURE;
        }
    };
    let sandbox = match Sandbox::new(&project) {
        Ok(sandbox) => sandbox,
        Err(err) => {
            eprintln!("{}: {err}", project.display());
            return std::process::ExitCode::FAILURE;
        }
    };
    let server = ToolServer::new(builtin_tools(sandbox, &ToolOptions::default()));
    let served = match http {
        Some(addr) => {
            let bound = |addr: SocketAddr| eprintln!("serving qore's tools on http://{addr}/");
            server.serve_http(addr, bound).await
        }
        None => server.serve_stdio().await,
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            std::process::ExitCode::FAILURE
        }
    }
}
