//! The state every handler shares: [`App`] (the session manager, router, gate, metrics,
//! settings, the shutdown tokens and the server's own tools), and the one instance of each
//! chat dialect ([`CHAT`], [`MESSAGES`], [`RESPONSES`]). Holds no handler: handlers depend
//! on this module, never the other way.

use qore_client::CancellationToken;
use qore_session::SessionManager;

use crate::config::ServeSettings;
use crate::dialect::anthropic::AnthropicMessages;
use crate::dialect::openai_chat::OpenAiChat;
use crate::dialect::openai_responses::OpenAiResponses;
use crate::gate::Gate;
use crate::metrics::Metrics;
use crate::route::Router;

/// What every request handler shares.
pub struct App {
    pub manager: SessionManager,
    pub router: Router,
    pub gate: Gate,
    pub metrics: Metrics,
    pub settings: ServeSettings,
    /// Cancelled at SIGTERM: the server stops accepting and `/readyz` says so.
    pub stopping: CancellationToken,
    /// Cancelled when the drain time after SIGTERM is over: streams still open end.
    pub shutdown: CancellationToken,
    /// The tools the server runs itself, when `[serve] tools` allows any.
    pub server_tools: Option<crate::server_tools::ServerTools>,
}

pub static CHAT: OpenAiChat = OpenAiChat;
pub static MESSAGES: AnthropicMessages = AnthropicMessages;
pub static RESPONSES: OpenAiResponses = OpenAiResponses;
