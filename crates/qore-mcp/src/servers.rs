//! All configured servers started together, their tools ready for a registry.
//!
//! Promises: enabled servers start in parallel, each within its own startup timeout; one
//! that fails is a status (and a warning for the caller to show), the others still work;
//! disabled servers and, unless allowed, a project's servers are not started; tool names
//! are claimed in config order, then each server's listing order, so they are the same on
//! every run; the tool filters (`enabled_tools`/`disabled_tools`) apply before naming.

use std::sync::Arc;

use qore_core::Tool;
use rmcp::model::Tool as McpToolInfo;

use crate::config::{McpConfig, ServerConfig};
use crate::names::NameTable;
use crate::server::Server;
use crate::tool::McpTool;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Running,
    Disabled,
    /// From a project's `.mcp.json`, and project servers were not allowed.
    NotTrusted,
    Failed(String),
}

/// One server's state and the tools it offers (model-facing name, what the server said).
pub struct ServerReport {
    pub config: ServerConfig,
    pub status: Status,
    /// The protocol version negotiated, for a running server.
    pub protocol: Option<String>,
    pub tools: Vec<(String, McpToolInfo)>,
}

/// The started servers' tools and every server's report.
#[derive(Default)]
pub struct McpTools {
    pub tools: Vec<Arc<McpTool>>,
    pub reports: Vec<ServerReport>,
}

impl McpTools {
    /// Start `config`'s servers (see the module doc); names avoid `taken` (e.g. the
    /// built-in tools').
    pub async fn start(
        config: &McpConfig,
        taken: impl IntoIterator<Item = String>,
        allow_project: bool,
    ) -> McpTools {
        let starting = config.servers.iter().map(|cfg| async move {
            if !cfg.enabled {
                return (None, Err(Status::Disabled));
            }
            if cfg.project && !allow_project {
                return (None, Err(Status::NotTrusted));
            }
            let server = Arc::new(Server::new(cfg.clone()));
            let listed = server
                .start()
                .await
                .map_err(|err| Status::Failed(err.to_string()));
            let protocol = server.protocol().await;
            (Some(server), listed.map(|tools| (tools, protocol)))
        });
        let started = futures_util::future::join_all(starting).await;
        let mut names = NameTable::avoiding(taken);
        let mut out = McpTools::default();
        for (cfg, (server, listed)) in config.servers.iter().zip(started) {
            let (status, listed, protocol) = match listed {
                Ok((listed, protocol)) => (Status::Running, listed, protocol),
                Err(status) => (status, Vec::new(), None),
            };
            let mut tools = Vec::new();
            for info in listed.into_iter().filter(|t| cfg.offers(&t.name)) {
                let name = names.claim(&cfg.name, &info.name);
                if let Some(server) = &server {
                    out.tools
                        .push(Arc::new(McpTool::new(server.clone(), &info, name.clone())));
                }
                tools.push((name, info));
            }
            out.reports.push(ServerReport {
                config: cfg.clone(),
                status,
                protocol,
                tools,
            });
        }
        out
    }

    /// The tools as a registry takes them.
    pub fn as_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|t| t.clone() as Arc<dyn Tool>)
            .collect()
    }

    /// One line per server that failed to start.
    pub fn warnings(&self) -> Vec<String> {
        self.reports
            .iter()
            .filter_map(|r| match &r.status {
                Status::Failed(why) => Some(why.clone()),
                _ => None,
            })
            .collect()
    }
}
