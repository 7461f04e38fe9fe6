//! Tools: how the engine describes them to a model ([`ToolSpec`]) and how it runs them
//! ([`Tool`]).
//!
//! Promises: a tool is data plus one async call. Its flags are the loop's whole knowledge of
//! it: `destructive` (default true, so an unclassified tool needs approval), `parallel_safe`
//! (default false) and a timeout. [`Tool::call`] never panics on bad input: arguments that
//! do not fit come back as an error [`ToolOutput`] the model can read. The future it returns
//! owns what it needs (`'static`), so the loop can run several at once and drop them on
//! cancellation. No runtime is needed to define one. A [`ToolSource`] is a set of tools that
//! can change while a session runs (an MCP server's), fetched again when its version moves.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
pub use tokio_util::sync::CancellationToken;

use crate::ToolResultPart;

/// A tool the model may call: its name, what it does, and the JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (unique in a request).
    pub name: String,
    /// What the tool does, for the model to decide when to call it.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: serde_json::Value,
}

/// What running a tool produced: the content the model sees, whether it is an error, and
/// optional structured data for programs (MCP's `structuredContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The parts the model reads: text and images.
    pub content: Vec<ToolResultPart>,
    /// Whether the call failed; the content then says why, for the model to act on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Structured data for programs (MCP `structuredContent`); models see `content` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ToolResultPart::Text { text: text.into() }],
            is_error: false,
            structured: None,
        }
    }

    /// An error result the model can read and act on.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput {
            is_error: true,
            ..ToolOutput::text(message)
        }
    }

    /// All text parts, joined with newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|p| match p {
                ToolResultPart::Text { text } => Some(text.as_str()),
                ToolResultPart::Image(_) => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// The future a tool call returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'static>>;

/// A tool the engine can run. Built-in tools, MCP tools and skills all implement it.
pub trait Tool: Send + Sync + 'static {
    /// Name, description and argument schema, as put into requests.
    fn spec(&self) -> &ToolSpec;

    /// Whether running it changes anything outside the conversation (files, processes,
    /// the network). Unclassified tools are destructive.
    fn destructive(&self) -> bool {
        true
    }

    /// Whether it may run at the same time as other calls of the same turn.
    fn parallel_safe(&self) -> bool {
        false
    }

    /// How long one call may take before the loop gives up on it.
    fn timeout(&self) -> Duration {
        Duration::from_secs(60)
    }

    /// Run it with `input` (the parsed arguments object). Stop early when `cancel` fires.
    fn call(&self, input: serde_json::Value, cancel: CancellationToken) -> ToolFuture;
}

/// Tools that can change while a session runs.
pub trait ToolSource: Send + Sync {
    /// The tools as last fetched, and the version they reflect.
    fn snapshot(&self) -> (u64, Vec<Arc<dyn Tool>>);
    /// The version now: it differs from the snapshot's when the tools may have changed.
    fn version(&self) -> u64;
    /// Fetch the tools again (what the next [`ToolSource::snapshot`] answers).
    fn refetch(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_round_trip_and_join_their_text() {
        let out = ToolOutput {
            content: vec![
                ToolResultPart::Text { text: "a".into() },
                ToolResultPart::Text { text: "b".into() },
            ],
            is_error: true,
            structured: Some(serde_json::json!({"n": 1})),
        };
        let json = serde_json::to_string(&out).unwrap();
        assert_eq!(serde_json::from_str::<ToolOutput>(&json).unwrap(), out);
        assert_eq!(out.text_content(), "a\nb");
        assert!(ToolOutput::error("x").is_error);
        assert!(!ToolOutput::text("x").is_error);
    }
}
