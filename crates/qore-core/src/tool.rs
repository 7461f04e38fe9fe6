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
//! A call may ask for more rights than the tool has by default ([`Tool::rights_asked`], a
//! [`RightsRequest`]): the approval code then asks a person whatever its mode, and only a
//! granted call runs through [`Tool::call_with_rights`]; [`Tool::call`] never widens rights.

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

/// More rights than its default that one call of a tool asks for: a sandboxed command asking
/// to run in another sandbox mode or with the network, or any command on a kernel that cannot
/// confine it. Only a person grants it, one call at a time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RightsRequest {
    /// The sandbox mode asked (`full-access`), when the call asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The network asked (`true`), when the call asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Why, in the model's words (a request without one, and without a `note`, is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// Why the tool itself asks (a kernel that cannot confine commands), for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RightsRequest {
    /// The rights asked, for people: `sandbox mode full-access, network on`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(mode) = &self.mode {
            parts.push(format!("sandbox mode {mode}"));
        }
        match self.network {
            Some(true) => parts.push("network on".to_owned()),
            Some(false) => parts.push("network off".to_owned()),
            None => {}
        }
        if parts.is_empty() {
            "more rights".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// Whether someone said why (the model's justification or the tool's note).
    pub fn explained(&self) -> bool {
        let said = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
        said(&self.justification) || said(&self.note)
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
    /// A call whose `input` asks for more rights ([`Tool::rights_asked`]) is not granted
    /// them here.
    fn call(&self, input: serde_json::Value, cancel: CancellationToken) -> ToolFuture;

    /// The rights this call asks for beyond the tool's default, if any: the approval code
    /// then asks a person (never `auto`, a rule or a remembered answer), and refuses the call
    /// when nobody can be asked. `None` (the default): an ordinary call.
    fn rights_asked(&self, _input: &serde_json::Value) -> Option<RightsRequest> {
        None
    }

    /// Run a call whose [`Tool::rights_asked`] a person granted (`granted`). The default
    /// ignores the grant and runs [`Tool::call`].
    fn call_with_rights(
        &self,
        input: serde_json::Value,
        _granted: RightsRequest,
        cancel: CancellationToken,
    ) -> ToolFuture {
        self.call(input, cancel)
    }
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

    #[test]
    fn rights_requests_describe_what_they_ask() {
        let cases = [
            (Some("full-access"), None, "sandbox mode full-access"),
            (None, Some(true), "network on"),
            (
                Some("read-only"),
                Some(false),
                "sandbox mode read-only, network off",
            ),
            (None, None, "more rights"),
        ];
        for (mode, network, want) in cases {
            let asked = RightsRequest {
                mode: mode.map(str::to_owned),
                network,
                justification: None,
                note: None,
            };
            assert_eq!(asked.describe(), want);
            assert!(!asked.explained());
        }
        let blank = RightsRequest {
            mode: None,
            network: Some(true),
            justification: Some("  ".into()),
            note: None,
        };
        assert!(!blank.explained());
        assert!(RightsRequest {
            justification: Some("fetch crates".into()),
            ..blank
        }
        .explained());
    }
}
