//! An MCP server's tool as a qore [`Tool`].
//!
//! Promises: the spec carries the model-facing name ([`crate::names`]), the server's
//! description and the fitted schema ([`crate::schema`]); a tool is destructive (needs
//! confirmation unless the approval mode is `auto`) unless its server is `trusted` and it
//! says `readOnlyHint: true`; arguments that are not an object are an error result; a
//! cancelled call stops waiting at once (dropping the request sends
//! `notifications/cancelled`).

use std::sync::Arc;
use std::time::Duration;

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use rmcp::model::Tool as McpToolInfo;
use serde_json::{Map, Value};

use crate::schema::fit;
use crate::server::Server;

/// Extra time the loop's own timeout gives a call, so the server's message comes first.
const LOOP_MARGIN: Duration = Duration::from_secs(5);

/// One tool of one server.
pub struct McpTool {
    spec: ToolSpec,
    server: Arc<Server>,
    /// The tool's name on its server.
    remote: String,
    destructive: bool,
}

impl McpTool {
    /// `info` from `server`, offered to models as `name`.
    pub fn new(server: Arc<Server>, info: &McpToolInfo, name: String) -> Self {
        let read_only = info
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let description = info
            .description
            .as_deref()
            .or(info.title.as_deref())
            .unwrap_or_default()
            .to_string();
        McpTool {
            spec: ToolSpec {
                name,
                description,
                input_schema: fit(&info.input_schema),
            },
            destructive: !(server.config.trusted && read_only),
            server,
            remote: info.name.to_string(),
        }
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn destructive(&self) -> bool {
        self.destructive
    }

    fn timeout(&self) -> Duration {
        self.server.config.tool_timeout + LOOP_MARGIN
    }

    fn call(&self, input: Value, cancel: CancellationToken) -> ToolFuture {
        let server = self.server.clone();
        let remote = self.remote.clone();
        Box::pin(async move {
            let arguments = match input {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return ToolOutput::error(format!(
                        "{remote}: the arguments must be a JSON object, not {other}"
                    ))
                }
            };
            tokio::select! {
                output = server.call(&remote, arguments) => output,
                () = cancel.cancelled() => ToolOutput::error(format!("{remote} was cancelled")),
            }
        })
    }
}
