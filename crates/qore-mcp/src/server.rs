//! One configured MCP server: started over stdio on rmcp, asked for its tools, called.
//!
//! Promises:
//! - the child runs `command` with `args`, `env` (added to qore's environment) and `cwd`;
//!   its stderr goes to qore's log (tracing target `qore_mcp::stderr`), never the terminal,
//!   and its last lines explain a server that fails to start; an HTTP server is reached
//!   over streamable HTTP at `url` with its `headers` and, when `bearer_token_env_var` is
//!   set, `Authorization: Bearer` with that variable's value (unset: an error naming it);
//! - the handshake is rmcp's automatic one: `server/discover` for servers without
//!   `initialize` (protocol 2026-07-28), `initialize` for the others; starting and listing
//!   tools together have the server's startup timeout;
//! - [`Server::call`] never fails: every problem is an error result the model can read; a
//!   call has the tool timeout, and a call dropped early (timeout, cancellation) sends
//!   `notifications/cancelled` (rmcp's cancel-on-drop); a server that died gives the
//!   pending call an error result and is started again on the next call;
//! - [`Server::changes`] moves whenever the server says its tools changed
//!   ([`crate::watch`]) and when it was started again.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use qore_core::ToolOutput;
use rmcp::model::{CallToolRequestParams, JsonObject, ProtocolVersion, Tool as McpToolInfo};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::RoleClient;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::Mutex;

use crate::config::{ServerConfig, Transport};
use crate::error::McpError;
use crate::result::{to_output, MAX_RESULT_CHARS};
use crate::watch::{listen, Changes, Counted};

/// How many of the child's last stderr lines explain a failed start.
const STDERR_TAIL: usize = 8;

type Service = RunningService<RoleClient, ()>;

/// A server and its connection, started when first needed and again after it died.
pub struct Server {
    pub config: ServerConfig,
    live: Mutex<Option<Arc<Service>>>,
    changes: Changes,
}

impl Server {
    pub fn new(config: ServerConfig) -> Self {
        Server {
            config,
            live: Mutex::new(None),
            changes: Changes::default(),
        }
    }

    /// A count that moves whenever the server's tools may have changed (see the module doc).
    pub fn changes(&self) -> u64 {
        self.changes.count()
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Start the server (if it is not running) and list its tools, within the startup
    /// timeout.
    pub async fn start(&self) -> Result<Vec<McpToolInfo>, McpError> {
        let starting = async {
            let service = self.connection().await?;
            (service.peer().list_all_tools().await)
                .map_err(|err| self.error(format!("listing its tools failed: {err}")))
        };
        match tokio::time::timeout(self.config.startup_timeout, starting).await {
            Ok(listed) => listed,
            Err(_) => Err(self.error(format!(
                "it did not start and list its tools within {} s (startup_timeout_sec)",
                self.config.startup_timeout.as_secs_f64()
            ))),
        }
    }

    /// Call `tool` with `arguments` (see the module doc).
    pub async fn call(&self, tool: &str, arguments: JsonObject) -> ToolOutput {
        let service = match self.connection().await {
            Ok(service) => service,
            Err(err) => return ToolOutput::error(err.to_string()),
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let timeout = self.config.tool_timeout;
        match tokio::time::timeout(timeout, service.peer().call_tool(params)).await {
            Ok(Ok(result)) => to_output(result, MAX_RESULT_CHARS),
            Ok(Err(ServiceError::McpError(err))) => ToolOutput::error(format!(
                "MCP server '{}' refused the call of {tool}: {}",
                self.name(),
                err.message
            )),
            Ok(Err(err)) if service.is_closed() || matches!(err, ServiceError::TransportClosed) => {
                self.forget(&service).await;
                ToolOutput::error(format!(
                    "MCP server '{}' stopped during the call of {tool} ({err}); it is started \
                     again on the next call",
                    self.name()
                ))
            }
            Ok(Err(err)) => ToolOutput::error(format!(
                "MCP server '{}': the call of {tool} failed: {err}",
                self.name()
            )),
            Err(_) => ToolOutput::error(format!(
                "MCP tool {tool} on '{}' took longer than {} s (tool_timeout_sec) and was cancelled",
                self.name(),
                timeout.as_secs_f64()
            )),
        }
    }

    /// The protocol version the live connection negotiated (`2026-07-28` for a server
    /// without `initialize`, an older one for the others).
    pub async fn protocol(&self) -> Option<String> {
        let live = self.live.lock().await;
        let info = live.as_ref()?.peer_info()?;
        Some(info.protocol_version.to_string())
    }

    /// Whether a connection is up now.
    pub async fn running(&self) -> bool {
        matches!(&*self.live.lock().await, Some(service) if !service.is_closed())
    }

    fn error(&self, message: String) -> McpError {
        McpError::Server {
            server: self.config.name.clone(),
            message,
        }
    }

    async fn forget(&self, dead: &Arc<Service>) {
        let mut live = self.live.lock().await;
        if live.as_ref().is_some_and(|s| Arc::ptr_eq(s, dead)) {
            *live = None;
        }
    }

    /// The live connection, started (again) when there is none.
    async fn connection(&self) -> Result<Arc<Service>, McpError> {
        let mut live = self.live.lock().await;
        if let Some(service) = live.as_ref().filter(|s| !s.is_closed()) {
            return Ok(service.clone());
        }
        if live.take().is_some() {
            tracing::warn!(server = %self.name(), "MCP server stopped; starting it again");
            self.changes.bump();
        }
        let service = Arc::new(self.connect().await?);
        *live = Some(service.clone());
        Ok(service)
    }

    async fn connect(&self) -> Result<Service, McpError> {
        let (command, args, env, cwd) = match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => (command, args, env, cwd),
            Transport::Http {
                url,
                headers,
                bearer_token_env_var,
            } => {
                let transport =
                    crate::http::transport(url, headers, bearer_token_env_var.as_deref())
                        .map_err(|message| self.error(message))?;
                return self
                    .handshake(transport)
                    .await
                    .map_err(|why| self.error(why));
            }
        };
        let mut cmd = match self.config.sandbox {
            None => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args);
                cmd
            }
            Some(mode) => crate::confine::command(mode, command, args, env, cwd.as_deref())
                .map_err(|why| self.error(why))?,
        };
        cmd.envs(env);
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| self.error(format!("cannot run {command:?}: {err}")))?;
        let tail = Arc::new(StdMutex::new(VecDeque::new()));
        let pump = stderr
            .map(|stderr| tokio::spawn(pump_stderr(self.name().to_string(), stderr, tail.clone())));
        let why = match self.handshake(transport).await {
            Ok(service) => return Ok(service),
            Err(why) => why,
        };
        // A crashed child closes stderr: let the pump read its last words.
        if let Some(pump) = pump {
            let _ = tokio::time::timeout(Duration::from_secs(1), pump).await;
        }
        let tail: Vec<String> = match tail.lock() {
            Ok(lines) => lines.iter().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().iter().cloned().collect(),
        };
        Err(self.error(if tail.is_empty() {
            why
        } else {
            format!("{why}; its stderr ended with:\n  {}", tail.join("\n  "))
        }))
    }
}

impl Server {
    /// rmcp's handshake over `transport`, within the startup timeout.
    async fn handshake<T, E, A>(&self, transport: T) -> Result<Service, String>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let transport = Counted::new(transport.into_transport(), &self.changes);
        let started = tokio::time::timeout(
            self.config.startup_timeout,
            ().serve_with_lifecycle(transport, lifecycle),
        )
        .await;
        match started {
            Ok(Ok(service)) => {
                listen(self.name(), service.peer());
                Ok(service)
            }
            Ok(Err(err)) => Err(format!("it did not start: {err}")),
            Err(_) => Err(format!(
                "it did not answer within {} s (startup_timeout_sec)",
                self.config.startup_timeout.as_secs_f64()
            )),
        }
    }
}

/// The child's stderr into the log, keeping the last lines.
/// Bytes that are not UTF-8 are replaced, so the pipe is read to its end whatever comes.
async fn pump_stderr(server: String, stderr: ChildStderr, tail: Arc<StdMutex<VecDeque<String>>>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        tracing::info!(target: "qore_mcp::stderr", server = %server, "{line}");
        let mut kept = match tail.lock() {
            Ok(kept) => kept,
            Err(poisoned) => poisoned.into_inner(),
        };
        if kept.len() == STDERR_TAIL {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}
