//! qore's tools offered to other programs as an MCP server (`qore mcp serve`).
//!
//! Promises: the server lists exactly the tools it is given, each with annotations that
//! tell the truth (`readOnlyHint` for tools that change nothing, `destructiveHint` for the
//! others); a call runs the tool with its own timeout and the request's cancellation; a
//! tool's error is an `isError` result carrying its message; an unknown tool is a JSON-RPC
//! `invalid params` error naming it; image results are MCP images, image URLs a text line.
//! Over stdio ([`ToolServer::serve_stdio`]) or streamable HTTP ([`ToolServer::serve_http`]:
//! on the address given, rmcp's default host check allowing only localhost names).

use std::future::Future;
use std::sync::Arc;

use base64::Engine as _;
use qore_core::{ImageData, Tool, ToolOutput, ToolResultPart};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig as ServerDescription,
    Tool as McpToolInfo, ToolAnnotations,
};
use rmcp::service::{MaybeSendFuture, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value};

use crate::error::McpError;

/// The tools, served.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<Vec<Arc<dyn Tool>>>,
}

impl ToolServer {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        ToolServer {
            tools: Arc::new(tools),
        }
    }

    /// Serve over stdin/stdout until the client leaves.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let fail = |message: String| McpError::Server {
            server: "qore mcp serve".into(),
            message,
        };
        let service = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| fail(e.to_string()))?;
        service.waiting().await.map_err(|e| fail(e.to_string()))?;
        Ok(())
    }

    /// Serve streamable HTTP on `addr` until the process ends; `bound` hears the address
    /// actually bound (port 0 picks one).
    pub async fn serve_http(
        self,
        addr: std::net::SocketAddr,
        bound: impl FnOnce(std::net::SocketAddr),
    ) -> Result<(), McpError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let fail = |message: String| McpError::Server {
            server: format!("qore mcp serve on {addr}"),
            message,
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| fail(e.to_string()))?;
        bound(listener.local_addr().map_err(|e| fail(e.to_string()))?);
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    tracing::warn!("qore mcp serve: accept failed: {err}");
                    continue;
                }
            };
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let served = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
                if let Err(err) = served {
                    tracing::debug!("qore mcp serve: connection from {peer}: {err}");
                }
            });
        }
    }
}

/// How a client sees `tool`.
fn describe(tool: &dyn Tool) -> McpToolInfo {
    let spec = tool.spec();
    let schema = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    McpToolInfo::new(spec.name.clone(), spec.description.clone(), schema).with_annotations(
        ToolAnnotations::new()
            .read_only(!tool.destructive())
            .destructive(tool.destructive()),
    )
}

/// `output` as an MCP result.
pub fn to_result(output: ToolOutput) -> CallToolResult {
    let content: Vec<ContentBlock> = output
        .content
        .into_iter()
        .map(|part| match part {
            ToolResultPart::Text { text } => ContentBlock::text(text),
            ToolResultPart::Image(image) => match image.data {
                ImageData::Bytes(bytes) => ContentBlock::image(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                    image.media_type.unwrap_or_else(|| "image/png".into()),
                ),
                ImageData::Url(url) => ContentBlock::text(format!("[image {url}]")),
            },
        })
        .collect();
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = output.structured;
    result
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerDescription {
        ServerDescription::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("qore", env!("CARGO_PKG_VERSION")))
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        let tools = self.tools.iter().map(|t| describe(t.as_ref())).collect();
        std::future::ready(Ok(ListToolsResult::with_all_items(tools)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let Some(tool) = self.tools.iter().find(|t| t.spec().name == name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!("no tool called {name:?}"),
                None,
            ));
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let timeout = tool.timeout();
        let running = tool.call(arguments, context.ct.child_token());
        let output = match tokio::time::timeout(timeout, running).await {
            Ok(output) => output,
            Err(_) => ToolOutput::error(format!(
                "{name} timed out after {} s and was stopped",
                timeout.as_secs_f64()
            )),
        };
        Ok(CallToolResponse::Complete(to_result(output)))
    }
}

#[cfg(test)]
mod tests {
    use qore_core::ImageSource;
    use serde_json::json;

    use super::*;

    #[test]
    fn outputs_become_mcp_results() {
        let image = |data| {
            ToolResultPart::Image(ImageSource {
                media_type: None,
                data,
            })
        };
        let cases = [
            (
                ToolOutput::text("hi"),
                json!({"content": [{"type": "text", "text": "hi"}], "isError": false}),
            ),
            (
                ToolOutput::error("no"),
                json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
            ),
            (
                ToolOutput {
                    content: vec![
                        image(ImageData::Bytes(vec![1, 2, 3])),
                        image(ImageData::Url("u".into())),
                    ],
                    is_error: false,
                    structured: Some(json!({"n": 1})),
                },
                json!({"content": [{"type": "image", "data": "AQID", "mimeType": "image/png"},
                                   {"type": "text", "text": "[image u]"}],
                       "structuredContent": {"n": 1}, "isError": false}),
            ),
        ];
        for (output, want) in cases {
            let mut got = serde_json::to_value(to_result(output)).unwrap();
            got.as_object_mut().unwrap().remove("resultType");
            assert_eq!(got, want);
        }
    }
}
