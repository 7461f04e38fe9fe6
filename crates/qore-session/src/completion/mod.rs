//! Code completion and quick refactor for editors: what is sent to the model around the
//! cursor ([`context`]), what the editor inserts from the model's reply ([`clean`]), and the
//! two requests on a reached model ([`request`]: a completion, [`refactor`]: a rewritten
//! selection). No LSP here: `qore complete`, `qore refactor` and qore-lsp call these.

pub mod clean;
pub mod context;
pub mod refactor;
pub mod request;

use qore_client::ResponseStream;
use qore_core::{ErrorCategory, ErrorInfo, StreamOutcome};

use crate::target::Target;

/// The system prompt a completion or refactor request carries: the agent's, else the one
/// given without an agent, else `fallback`.
fn system_prompt<'a>(target: &'a Target, fallback: &'a str) -> &'a str {
    let own = match &target.agent {
        Some(agent) => agent.system.as_deref(),
        None => target.system.as_deref(),
    };
    own.unwrap_or(fallback)
}

/// The text of `stream`'s answer; a failure as it came; a cancellation as an error saying
/// `what` (e.g. "the completion") was cancelled.
async fn answer_text(stream: ResponseStream, what: &str) -> Result<String, ErrorInfo> {
    match stream.finish().await {
        StreamOutcome::Finished { message, .. } => Ok(message.text()),
        StreamOutcome::Failed { error, .. } => Err(error),
        StreamOutcome::Cancelled { .. } => Err(ErrorInfo::new(
            ErrorCategory::Limit,
            format!("{what} was cancelled"),
        )),
    }
}
