//! All configured servers started together, their tools ready for a registry.
//!
//! Promises: enabled servers start in parallel, each within its own startup timeout; one
//! that fails is a status (and a warning for the caller to show), the others still work;
//! disabled servers and, unless allowed, a project's servers are not started; tool names
//! are claimed in config order, then each server's listing order, so they are the same on
//! every run; the tool filters (`enabled_tools`/`disabled_tools`) apply before naming.
//! As a [`ToolSource`], the tools follow the servers' changes: a server that said its tools
//! changed (or was started again) is asked for its list again, and every name is claimed
//! again by the same rule; a server that cannot answer keeps its last list (a log line) until its next change.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};

use qore_core::{Tool, ToolSource};
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
    /// The tools as the servers first listed them.
    pub tools: Vec<Arc<McpTool>>,
    pub reports: Vec<ServerReport>,
    /// The names the tools avoid.
    taken: Vec<String>,
    /// The running servers, in config order.
    running: Vec<Arc<Server>>,
    listed: StdMutex<Listed>,
}

/// The servers' lists as last fetched.
#[derive(Default, Clone)]
struct Listed {
    /// The sum of the servers' change counts the lists reflect.
    version: u64,
    /// Per running server: its change count when listed, and its (filtered) tools.
    lists: Vec<(u64, Vec<McpToolInfo>)>,
    tools: Vec<Arc<McpTool>>,
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
        let taken: Vec<String> = taken.into_iter().collect();
        let mut names = NameTable::avoiding(taken.clone());
        let mut out = McpTools {
            taken,
            ..McpTools::default()
        };
        let mut listed_now = Listed::default();
        for (cfg, (server, listed)) in config.servers.iter().zip(started) {
            let (status, listed, protocol) = match listed {
                Ok((listed, protocol)) => (Status::Running, listed, protocol),
                Err(status) => (status, Vec::new(), None),
            };
            let listed: Vec<McpToolInfo> =
                listed.into_iter().filter(|t| cfg.offers(&t.name)).collect();
            let mut tools = Vec::new();
            for info in &listed {
                let name = names.claim(&cfg.name, &info.name);
                if let (Some(server), Status::Running) = (&server, &status) {
                    out.tools
                        .push(Arc::new(McpTool::new(server.clone(), info, name.clone())));
                }
                tools.push((name, info.clone()));
            }
            if let (Some(server), Status::Running) = (&server, &status) {
                // A new server's count was 0 before it listed: a change heard while or
                // after listing makes the next refetch ask again.
                listed_now.lists.push((0, listed));
                out.running.push(server.clone());
            }
            out.reports.push(ServerReport {
                config: cfg.clone(),
                status,
                protocol,
                tools,
            });
        }
        listed_now.tools = out.tools.clone();
        out.listed = StdMutex::new(listed_now);
        out
    }

    fn listed(&self) -> Listed {
        match self.listed.lock() {
            Ok(listed) => listed.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Ask the servers that changed for their tools again and name them all again.
    async fn refetch_changed(&self) {
        let mut listed = self.listed();
        for (server, (seen, tools)) in self.running.iter().zip(listed.lists.iter_mut()) {
            let count = server.changes();
            if count == *seen {
                continue;
            }
            // Asked once per change: a server that cannot answer keeps its last list
            // until it says its tools changed again.
            *seen = count;
            match server.start().await {
                Ok(now) => {
                    *tools = now
                        .into_iter()
                        .filter(|t| server.config.offers(&t.name))
                        .collect()
                }
                Err(err) => tracing::warn!("{err}; its last list of tools stays"),
            }
        }
        let mut names = NameTable::avoiding(self.taken.clone());
        listed.version = listed.lists.iter().map(|(seen, _)| seen).sum();
        listed.tools.clear();
        for (server, (_, tools)) in self.running.iter().zip(&listed.lists) {
            for info in tools {
                let name = names.claim(server.name(), &info.name);
                (listed.tools).push(Arc::new(McpTool::new(server.clone(), info, name)));
            }
        }
        match self.listed.lock() {
            Ok(mut kept) => *kept = listed,
            Err(poisoned) => *poisoned.into_inner() = listed,
        }
    }

    /// The tools as a registry takes them, as last listed.
    pub fn as_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.snapshot().1
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

impl ToolSource for McpTools {
    fn snapshot(&self) -> (u64, Vec<Arc<dyn Tool>>) {
        let listed = self.listed();
        let tools = (listed.tools.into_iter())
            .map(|t| t as Arc<dyn Tool>)
            .collect();
        (listed.version, tools)
    }

    fn version(&self) -> u64 {
        self.running.iter().map(|s| s.changes()).sum()
    }

    fn refetch(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(self.refetch_changed())
    }
}
